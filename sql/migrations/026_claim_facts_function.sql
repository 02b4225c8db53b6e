-- The relay's claim as a function whose plan each server session keeps
-- (issue 21), as migrations 023-025 did for the demand, the group commit
-- and the batch claim.
--
-- The relay's one-statement claim (pkg/postgres Outbox.Claim: the relay
-- lease taken or renewed, the previous pass's marks written, the due rows
-- read, the cursor advanced) was parsed and planned on every pass in the
-- functions' exec mode (RDS Proxy): 0.6-0.7 ms of planning in a 2.5-2.8 ms
-- pass of 100 rows, the most of the pass's fixed cost. ops.claim_facts runs
-- pkg/postgres's relayClaimSQL word for word
-- (TestRelayClaimFunctionRunsTheClaimStatement), prepared once per server
-- session with its generic plan kept (the SET clauses hold for the call
-- only). Its snapshot is the inner statement's, taken when the statement
-- starts, as the statement's own was: what relayClaimSQL's comments say
-- about snapshots holds unchanged. SECURITY INVOKER, with the relay's own
-- grants; EXECUTE for the relay only (any other role could take the lease
-- and mark facts published that were never sent). One statement, one
-- round trip, as before.
--
-- Parameters: the most rows to read, the ids the pass marks published
-- (uuids as text), the holder (a uuid as text), the lease in seconds. The
-- rows come back in the statement's order (the caller reads them WITH
-- ORDINALITY).

CREATE FUNCTION ops.claim_facts(integer, text[], text, double precision)
    RETURNS TABLE (r_present boolean, r_token bigint, r_took boolean, r_took_over boolean, r_marked bigint,
                   r_event_id uuid, r_firm_id uuid, r_matter_id uuid, r_event_name text, r_payload jsonb,
                   r_occurred_at timestamptz, r_trace_header text, r_publish_attempts integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $fn$
BEGIN
    RETURN QUERY
WITH cur AS (
    SELECT holder, token, lease_until FROM ops.relay_lease WHERE lease = 'outbox'
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
), marked AS (
    UPDATE ops.domain_event_outbox
    SET published_at = clock_timestamp(), next_attempt_at = NULL
    WHERE event_id = ANY ((SELECT $2::uuid[])::uuid[]) AND published_at IS NULL AND parked_at IS NULL
    RETURNING 1
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
    RETURNING 1
)
SELECT EXISTS (SELECT FROM cur), coalesce((SELECT token FROM lease), (SELECT token FROM fresh)),
    (SELECT took FROM lease), (SELECT took_over FROM lease),
    (SELECT count(*) FROM marked),
    p.event_id, p.firm_id, p.matter_id, p.event_name, p.payload, p.occurred_at, p.trace_header, p.publish_attempts
FROM (SELECT) AS head LEFT JOIN picked p ON true
ORDER BY p.arm, p.next_attempt_at, p.relay_xid, p.occurred_at, p.event_id;
END
$fn$;

REVOKE ALL ON FUNCTION ops.claim_facts(integer, text[], text, double precision) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_relay') THEN
        GRANT EXECUTE ON FUNCTION ops.claim_facts(integer, text[], text, double precision) TO brief_relay;
    END IF;
END
$$;

-- Roll back: deploy the release before this first (its relay sends the
-- statement itself), then
--   DROP FUNCTION ops.claim_facts(integer, text[], text, double precision);
-- and set public.brief_rail_schema_version's version back by one.
