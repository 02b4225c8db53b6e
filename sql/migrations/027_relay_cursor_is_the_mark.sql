-- The relay's cursor is its published mark (issue 21): a pass no longer
-- rewrites the rows it published.
--
-- Until now each pass's claim marked the previous pass's rows one by one
-- (published_at, a heap-only update of every relayed row: about one row
-- version and 149 WAL bytes per fact, the most of a pass's cost), though
-- the same statement then moved the cursor (ops.relay_lease cursor_*) past
-- them, and below the cursor every row of domain_event_outbox_due_idx is
-- published already (migration 020). Now the claim writes a mark only for
-- a row the cursor does not pass (past the cursor's bound — a transaction
-- that may still commit, or an earlier row read later —, backing off, or
-- in a pass whose lease was not fresh, which does not move the cursor);
-- for the rest the cursor's move is the mark, and one row of
-- ops.relay_published records when it moved: a fact's publication time is
-- its published_at when it has one, else the time the cursor first passed
-- it (ops.outbox_facts).
--
-- Readers of publication read ops.outbox_facts (a view with the caller's
-- own grants): its published_at is what the column meant before, for
-- every row. The table's published_at stays, written for the rows marked
-- one by one. Retention (pkg/postgres PruneOutbox) prunes a row passed by
-- the cursor before the cutoff by the newest ops.relay_published row older
-- than the cutoff, and prunes ops.relay_published itself below that row.
--
-- ops.claim_facts is replaced with pkg/postgres's relayClaimSQL as it now
-- is (TestRelayClaimFunctionRunsTheClaimStatement). Deploy the functions
-- of this release with it: an older on-call or sweeper reading published_at
-- from the table would take a row the cursor passed for unpublished (the
-- prune keeps it; `why` shows it unpublished) until it is redeployed.

CREATE TABLE IF NOT EXISTS ops.relay_published (
    cursor_xid   xid8        NOT NULL,
    cursor_at    timestamptz NOT NULL,
    cursor_id    uuid        NOT NULL,
    published_at timestamptz NOT NULL,
    PRIMARY KEY (cursor_xid, cursor_at, cursor_id)
);
CREATE INDEX IF NOT EXISTS relay_published_at_idx ON ops.relay_published (published_at);

COMMENT ON COLUMN ops.domain_event_outbox.published_at IS
    'set only for a fact marked one by one; a fact in the due index below the relay''s cursor (ops.relay_lease) is published without it (migration 027): read publication from ops.outbox_facts';

CREATE OR REPLACE VIEW ops.outbox_facts WITH (security_invoker = true) AS
SELECT o.event_id, o.firm_id, o.matter_id, o.event_name, o.payload, o.occurred_at,
       coalesce(o.published_at, (
           SELECT p.published_at FROM ops.relay_published p
           WHERE o.parked_at IS NULL AND o.next_attempt_at IS NULL
             AND (o.relay_xid, o.occurred_at, o.event_id) < (
                 SELECT l.cursor_xid, l.cursor_at, l.cursor_id FROM ops.relay_lease l WHERE l.lease = 'outbox')
             AND (p.cursor_xid, p.cursor_at, p.cursor_id) > (o.relay_xid, o.occurred_at, o.event_id)
           ORDER BY p.cursor_xid, p.cursor_at, p.cursor_id
           LIMIT 1)) AS published_at,
       o.trace_header, o.publish_attempts, o.publish_refusals, o.last_error, o.next_attempt_at,
       o.parked_at, o.parked_reason, o.relay_xid
FROM ops.domain_event_outbox o;
COMMENT ON VIEW ops.outbox_facts IS
    'every outbox fact with its publication time: published_at, else when the relay''s cursor first passed it (ops.relay_published)';

CREATE OR REPLACE FUNCTION ops.claim_facts(integer, text[], text, double precision)
    RETURNS TABLE (r_present boolean, r_token bigint, r_took boolean, r_took_over boolean, r_marked bigint,
                   r_event_id uuid, r_firm_id uuid, r_matter_id uuid, r_event_name text, r_payload jsonb,
                   r_occurred_at timestamptz, r_trace_header text, r_publish_attempts integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $fn$
BEGIN
    RETURN QUERY
WITH cur AS (
    SELECT holder, token, lease_until, cursor_xid, cursor_at, cursor_id FROM ops.relay_lease WHERE lease = 'outbox'
), fresh AS (
    -- $3 holds the lease with more than half of it left: no other relay
    -- can take it before it ends, so it is neither locked nor renewed (an
    -- idle relay's polls write nothing).
    SELECT token FROM cur
    WHERE holder = $3::uuid AND lease_until > clock_timestamp() + make_interval(secs => $4::float8 / 2)
), prev AS (
    SELECT holder, lease_until FROM ops.relay_lease
    WHERE lease = 'outbox' AND NOT EXISTS (SELECT FROM fresh)
    FOR UPDATE
), lease AS (
    UPDATE ops.relay_lease AS l SET
        holder = $3::uuid,
        token = CASE WHEN p.holder IS NOT DISTINCT FROM $3::uuid THEN l.token ELSE l.token + 1 END,
        lease_until = clock_timestamp() + make_interval(secs => $4),
        taken_at = CASE WHEN p.holder IS NOT DISTINCT FROM $3::uuid THEN l.taken_at ELSE clock_timestamp() END,
        takeovers = l.takeovers + (p.holder IS NOT NULL AND p.holder <> $3::uuid)::int
    FROM prev p
    WHERE l.lease = 'outbox'
      AND (p.holder IS NULL OR p.holder = $3::uuid OR p.lease_until <= clock_timestamp())
    RETURNING l.token, p.holder IS DISTINCT FROM $3::uuid AS took, (p.holder IS NOT NULL AND p.holder <> $3::uuid) AS took_over
), reading AS (
    SELECT 1 FROM lease WHERE NOT took
    UNION ALL
    SELECT 1 FROM fresh
), retry AS (SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts, next_attempt_at, relay_xid
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND next_attempt_at <= (SELECT clock_timestamp())
          AND event_id <> ALL ((SELECT $2::uuid[])::uuid[])
        ORDER BY next_attempt_at, occurred_at, event_id
        LIMIT $1
), unsent AS (SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts, next_attempt_at, relay_xid
        FROM ops.domain_event_outbox
        WHERE (relay_xid, occurred_at, event_id) >= (
                (SELECT cursor_xid FROM ops.relay_lease WHERE lease = 'outbox'),
                (SELECT cursor_at FROM ops.relay_lease WHERE lease = 'outbox'),
                (SELECT cursor_id FROM ops.relay_lease WHERE lease = 'outbox'))
          AND published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
          AND event_id <> ALL ((SELECT $2::uuid[])::uuid[])
        ORDER BY relay_xid, occurred_at, event_id
        LIMIT $1
), picked AS (
    SELECT r.*, 0 AS arm FROM retry r WHERE EXISTS (SELECT FROM reading)
    UNION ALL
    SELECT u.*, 1 FROM unsent u WHERE EXISTS (SELECT FROM reading)
    ORDER BY arm, next_attempt_at, relay_xid, occurred_at, event_id
    LIMIT $1
), proposal AS (
    -- The furthest the cursor may go: not past the first unsent row read
    -- (it is unpublished; the rows marked here are excluded from the read),
    -- nor past a transaction that may still commit (below this
    -- snapshot's xmin every transaction has ended).
    SELECT x, t, i FROM (
        SELECT relay_xid AS x, occurred_at AS t, event_id AS i FROM unsent
        UNION ALL
        SELECT pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot()), '-infinity'::timestamptz,
            '00000000-0000-0000-0000-000000000000'::uuid
    ) c ORDER BY x, t, i LIMIT 1
), advanced AS (
    -- Only forward, only by the lease's holder in a statement that read,
    -- and only when the statement marks rows or published rows lie
    -- between the cursor and the proposal: an idle poll writes nothing.
    UPDATE ops.relay_lease AS l SET cursor_xid = p.x, cursor_at = p.t, cursor_id = p.i
    FROM proposal p
    WHERE l.lease = 'outbox' AND EXISTS (SELECT FROM fresh)
      AND (p.x, p.t, p.i) > (l.cursor_xid, l.cursor_at, l.cursor_id)
      AND (cardinality($2::uuid[]) > 0 OR EXISTS (
            SELECT FROM ops.domain_event_outbox o
            WHERE (o.relay_xid, o.occurred_at, o.event_id) >= (l.cursor_xid, l.cursor_at, l.cursor_id)
              AND (o.relay_xid, o.occurred_at, o.event_id) < (p.x, p.t, p.i)
              AND o.parked_at IS NULL AND o.next_attempt_at IS NULL AND o.published_at IS NOT NULL))
    RETURNING p.x, p.t, p.i
), logged AS (
    -- When the cursor passed what it passed (ops.relay_published): the
    -- publication time of the rows it covers. A position recorded before
    -- (a cursor moved back by hand) keeps its first time: never an error
    -- that would stop every pass.
    INSERT INTO ops.relay_published (cursor_xid, cursor_at, cursor_id, published_at)
    SELECT x, t, i, clock_timestamp() FROM advanced
    ON CONFLICT DO NOTHING
), sent AS (
    -- The previous pass's rows ($2) not yet published, as this statement's
    -- snapshot has them (a row of the due index below the cursor already
    -- is: its marks were sent before).
    SELECT event_id, relay_xid, occurred_at, next_attempt_at FROM ops.domain_event_outbox
    WHERE event_id = ANY ((SELECT $2::uuid[])::uuid[]) AND published_at IS NULL AND parked_at IS NULL
      AND (next_attempt_at IS NULL
           AND (relay_xid, occurred_at, event_id) < (SELECT cursor_xid, cursor_at, cursor_id FROM cur)) IS NOT TRUE
), covered AS (
    -- Those the cursor now lies beyond, still in the due index: published
    -- by the cursor (ops.outbox_facts), no row written. The rest (at or
    -- past the cursor's bound, backing off, or the lease not fresh: the
    -- cursor did not move) are marked one by one.
    SELECT s.event_id FROM sent s
    WHERE s.next_attempt_at IS NULL
      AND (s.relay_xid, s.occurred_at, s.event_id) < (SELECT x, t, i FROM advanced)
), uncovered AS (
    SELECT s.event_id FROM sent s
    WHERE (s.next_attempt_at IS NULL
           AND (s.relay_xid, s.occurred_at, s.event_id) < (SELECT x, t, i FROM advanced)) IS NOT TRUE
), marked AS (
    UPDATE ops.domain_event_outbox
    SET published_at = clock_timestamp(), next_attempt_at = NULL
    WHERE event_id IN (SELECT event_id FROM uncovered) AND published_at IS NULL AND parked_at IS NULL
    RETURNING 1
)
SELECT EXISTS (SELECT FROM cur), coalesce((SELECT token FROM lease), (SELECT token FROM fresh)),
    (SELECT took FROM lease), (SELECT took_over FROM lease),
    (SELECT count(*) FROM marked) + (SELECT count(*) FROM covered),
    p.event_id, p.firm_id, p.matter_id, p.event_name, p.payload, p.occurred_at, p.trace_header, p.publish_attempts
FROM (SELECT) AS head LEFT JOIN picked p ON true
ORDER BY p.arm, p.next_attempt_at, p.relay_xid, p.occurred_at, p.event_id;
END
$fn$;

DO $$
BEGIN
    -- relay: records the cursor's moves (the claim), reads publication.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_relay') THEN
        GRANT SELECT, INSERT ON ops.relay_published TO brief_relay;
        GRANT SELECT ON ops.outbox_facts TO brief_relay;
    END IF;
    -- sweeper: retention by publication time.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_sweeper') THEN
        GRANT SELECT, DELETE ON ops.relay_published TO brief_sweeper;
        GRANT SELECT ON ops.outbox_facts TO brief_sweeper;
    END IF;
    -- on-call: `why` reads publication.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_oncall') THEN
        GRANT SELECT ON ops.relay_published, ops.outbox_facts TO brief_oncall;
    END IF;
END
$$;

-- Roll back: deploy the release before this first, then mark every row the
-- cursor passed (one statement; it writes what the passes did not):
--   UPDATE ops.domain_event_outbox o SET published_at = f.published_at
--   FROM ops.outbox_facts f WHERE f.event_id = o.event_id AND o.published_at IS NULL AND f.published_at IS NOT NULL;
-- restore ops.claim_facts from migration 026 (CREATE OR REPLACE with its
-- body), DROP VIEW ops.outbox_facts; DROP TABLE ops.relay_published; and
-- set public.brief_rail_schema_version's version back by one.
