-- Each function role bounded by the database to what its statements do
-- (docs/operations.md, "Database roles", has the resulting table and why).
-- Until this migration the roles of migration 008 held table-wide UPDATE
-- and SELECT, so one bug or one compromised function reached every firm.
--
--   * Column-level grants: the relay writes only its publish and park
--     columns; the trigger writes only the demand columns of the job row;
--     the sweeper writes only what a quarantine and a backfill demand
--     write, and no outbox column at all; the builder writes no demand.
--   * The fencing token never goes backwards, for any role, the owner's
--     DML included: a row trigger refuses an update that lowers
--     claimed_generation, requested_generation or built_generation.
--   * The builder records no fact but frame.built.
--   * The token is the builder's read capability: it has no SELECT on
--     app.documents, app.matters' title or any frame body; it reads a
--     matter's manifest, documents and newest frame through four SECURITY
--     DEFINER functions that answer only while the caller's token is the
--     row's current running claim.
--   * Composite foreign keys from the outbox (when it names a matter), the
--     trigger's inbox, the demand and nudge records to app.matters. They
--     are added NOT VALID here (a brief lock, no scan) and validated by the
--     next migration, outside this transaction's locks.
--   * CREATE on schema public is revoked from PUBLIC where the migrating
--     role owns that decision (it owns the schema: PostgreSQL 15 and later,
--     where public belongs to the database owner). On PostgreSQL 13 and 14
--     public belongs to the bootstrap superuser: the host's decision, made
--     by sql/bootstrap.sql (docs/operations.md, "Bootstrap"). A warning
--     says so when it is still open.
--
-- Roles that do not exist (a migrating role without CREATEROLE, no
-- bootstrap run) are skipped, as in 008 and 012.

SET LOCAL lock_timeout = '5s';

-- The fence and the counters move one way. The WHEN clause is evaluated
-- without calling the function, so an ordinary claim, demand or commit
-- pays a comparison, not a call; the row stays HOT-updatable (no index
-- column changes).
CREATE FUNCTION ops.refuse_generation_backwards() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'ledger row %/% may not go backwards (claimed % -> %, requested % -> %, built % -> %)',
        OLD.firm_id, OLD.matter_id, OLD.claimed_generation, NEW.claimed_generation,
        OLD.requested_generation, NEW.requested_generation, OLD.built_generation, NEW.built_generation
        USING ERRCODE = 'check_violation';
END
$$;
CREATE TRIGGER matter_frame_jobs_generations_forward
    BEFORE UPDATE ON ops.matter_frame_jobs FOR EACH ROW
    WHEN (NEW.claimed_generation < OLD.claimed_generation
          OR NEW.requested_generation < OLD.requested_generation
          OR NEW.built_generation < OLD.built_generation)
    EXECUTE FUNCTION ops.refuse_generation_backwards();

-- A role's writes the grants cannot bound by column: the builder's facts
-- (only frame.built), and the sweeper's outbox UPDATE privilege, which
-- exists only because SELECT ... FOR UPDATE SKIP LOCKED (its prune)
-- requires UPDATE on one column; it may update nothing.
CREATE FUNCTION ops.refuse_role_write() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'role % may not % this row of %.% (%)', current_user, lower(TG_OP),
        TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[0]
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER domain_event_outbox_builder_facts
    BEFORE INSERT ON ops.domain_event_outbox FOR EACH ROW
    WHEN (current_user = 'brief_builder' AND NEW.event_name <> 'frame.built')
    EXECUTE FUNCTION ops.refuse_role_write('the builder records frame.built only');
CREATE TRIGGER domain_event_outbox_sweeper_no_update
    BEFORE UPDATE ON ops.domain_event_outbox FOR EACH ROW
    WHEN (current_user = 'brief_sweeper')
    EXECUTE FUNCTION ops.refuse_role_write('the sweeper prunes the outbox; it marks nothing');

-- The builder's reads, through its token. Each raises SQLSTATE BR001 when
-- the token is not the row's current running claim (pkg/postgres maps it
-- to rail.ErrFenced). The fence below is pkg/postgres rules.go's
-- SQLHoldsToken("j", "p_token"), word for word (a test compares them).
CREATE FUNCTION ops.claimed_matter_title(p_firm uuid, p_matter uuid, p_token bigint) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t text;
BEGIN
    SELECT m.title INTO t
    FROM ops.matter_frame_jobs j JOIN app.matters m ON m.firm_id = j.firm_id AND m.matter_id = j.matter_id
    WHERE j.firm_id = p_firm AND j.matter_id = p_matter
      AND (j.claimed_generation = p_token AND j.run_status = 'running');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'token % is not the current claim on %/%', p_token, p_firm, p_matter USING ERRCODE = 'BR001';
    END IF;
    RETURN t;
END
$$;

CREATE FUNCTION ops.claimed_document_manifest(p_firm uuid, p_matter uuid, p_token bigint, p_after uuid, p_limit integer)
    RETURNS TABLE (document_id uuid, name text, content_sha256 text, page_count integer, uploaded_at timestamptz)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM FROM ops.matter_frame_jobs j
    WHERE j.firm_id = p_firm AND j.matter_id = p_matter
      AND (j.claimed_generation = p_token AND j.run_status = 'running');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'token % is not the current claim on %/%', p_token, p_firm, p_matter USING ERRCODE = 'BR001';
    END IF;
    RETURN QUERY
        SELECT d.document_id, d.name, d.content_sha256, d.page_count, d.uploaded_at
        FROM app.documents d
        WHERE d.firm_id = p_firm AND d.matter_id = p_matter AND d.document_id > p_after
        ORDER BY d.document_id LIMIT p_limit;
END
$$;

CREATE FUNCTION ops.claimed_document(p_firm uuid, p_matter uuid, p_token bigint, p_document uuid)
    RETURNS TABLE (name text, pages text[], content_sha256 text, note text, uploaded_at timestamptz)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM FROM ops.matter_frame_jobs j
    WHERE j.firm_id = p_firm AND j.matter_id = p_matter
      AND (j.claimed_generation = p_token AND j.run_status = 'running');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'token % is not the current claim on %/%', p_token, p_firm, p_matter USING ERRCODE = 'BR001';
    END IF;
    RETURN QUERY
        SELECT d.name, d.pages, d.content_sha256, d.note, d.uploaded_at
        FROM app.documents d
        WHERE d.document_id = p_document AND d.firm_id = p_firm AND d.matter_id = p_matter;
END
$$;

-- The matter's newest frame (the Brief, which quotes its documents), for
-- the builder's unchanged-inputs check.
CREATE FUNCTION ops.claimed_latest_frame(p_firm uuid, p_matter uuid, p_token bigint)
    RETURNS TABLE (frame_id uuid, token bigint, target_generation bigint, fingerprint text, builder text,
                   model_invoked boolean, built_at timestamptz, body text, builder_version text, model_id text,
                   prompt_hash text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM FROM ops.matter_frame_jobs j
    WHERE j.firm_id = p_firm AND j.matter_id = p_matter
      AND (j.claimed_generation = p_token AND j.run_status = 'running');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'token % is not the current claim on %/%', p_token, p_firm, p_matter USING ERRCODE = 'BR001';
    END IF;
    RETURN QUERY
        SELECT f.frame_id, f.token, f.target_generation, f.fingerprint, f.builder, f.model_invoked, f.built_at,
               coalesce(f.body, b.body)::text, f.builder_version, f.model_id, f.prompt_hash
        FROM ops.matter_frames f LEFT JOIN ops.matter_frame_bodies b
          ON b.firm_id = f.firm_id AND b.matter_id = f.matter_id AND b.body_sha256 = f.body_sha256
        WHERE f.firm_id = p_firm AND f.matter_id = p_matter
        ORDER BY f.token DESC LIMIT 1;
END
$$;

REVOKE ALL ON FUNCTION ops.claimed_latest_frame(uuid, uuid, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION ops.claimed_matter_title(uuid, uuid, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION ops.claimed_document_manifest(uuid, uuid, bigint, uuid, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION ops.claimed_document(uuid, uuid, bigint, uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION ops.refuse_generation_backwards() FROM PUBLIC;
REVOKE ALL ON FUNCTION ops.refuse_role_write() FROM PUBLIC;

-- Facts and records name a matter that exists, under its own firm.
ALTER TABLE ops.domain_event_outbox ADD CONSTRAINT domain_event_outbox_matter_fk
    FOREIGN KEY (firm_id, matter_id) REFERENCES app.matters (firm_id, matter_id) NOT VALID;
ALTER TABLE ops.trigger_inbox ADD CONSTRAINT trigger_inbox_matter_fk
    FOREIGN KEY (firm_id, matter_id) REFERENCES app.matters (firm_id, matter_id) NOT VALID;
ALTER TABLE ops.matter_demands ADD CONSTRAINT matter_demands_matter_fk
    FOREIGN KEY (firm_id, matter_id) REFERENCES app.matters (firm_id, matter_id) NOT VALID;
ALTER TABLE ops.matter_nudges ADD CONSTRAINT matter_nudges_matter_fk
    FOREIGN KEY (firm_id, matter_id) REFERENCES app.matters (firm_id, matter_id) NOT VALID;

DO $$
DECLARE
    public_owner boolean;
BEGIN
    -- No role but the owner creates objects in the rail's schemas.
    REVOKE CREATE ON SCHEMA app, ops FROM PUBLIC;
    SELECT pg_catalog.pg_has_role(current_user, n.nspowner, 'USAGE') INTO public_owner
    FROM pg_catalog.pg_namespace n WHERE n.nspname = 'public';
    IF public_owner THEN
        REVOKE CREATE ON SCHEMA public FROM PUBLIC;
    ELSIF pg_catalog.has_schema_privilege('public', 'public', 'CREATE') THEN
        RAISE WARNING 'schema public is open to CREATE by every role and % does not own it: run sql/bootstrap.sql as its owner (docs/operations.md, "Bootstrap")', current_user;
    END IF;

    -- relay: takes due rows FOR UPDATE SKIP LOCKED (UPDATE on some column
    -- is required for that), marks them published or records a failed
    -- attempt and parks, under its lease (relay_claim; the refusals that
    -- count toward parking in publish_refusals). It reads every column; it
    -- writes these eight.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_relay') THEN
        REVOKE UPDATE ON ops.domain_event_outbox FROM brief_relay;
        GRANT UPDATE (published_at, next_attempt_at, publish_attempts, last_error, parked_at, parked_reason,
                      relay_claim, publish_refusals)
            ON ops.domain_event_outbox TO brief_relay;
    END IF;

    -- trigger: Demand's upsert (insert a new row with its demand; on an
    -- existing row, add demand and release a quarantine), and the fact
    -- check against the outbox row the fact claims to be (firm, matter,
    -- name) before recording demand.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_trigger') THEN
        REVOKE INSERT, UPDATE ON ops.matter_frame_jobs FROM brief_trigger;
        GRANT INSERT (firm_id, matter_id, requested_generation, demand_since, uncovered_since, last_demanded_at)
            ON ops.matter_frame_jobs TO brief_trigger;
        GRANT UPDATE (requested_generation, demand_since, uncovered_since, last_demanded_at, run_status, attempts, not_before)
            ON ops.matter_frame_jobs TO brief_trigger;
        GRANT SELECT (firm_id, matter_id, event_name) ON ops.domain_event_outbox TO brief_trigger;
        -- the inbox's duplicate test is a no-op DO UPDATE of received_at
        GRANT UPDATE (received_at) ON ops.trigger_inbox TO brief_trigger;
    END IF;

    -- builder: claim, heartbeat, fenced commit and failure write every
    -- ledger column but the demand's; the matter's id and status for the
    -- claim; its title and documents only through the claimed_* functions.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_builder') THEN
        REVOKE UPDATE ON ops.matter_frame_jobs FROM brief_builder;
        GRANT UPDATE (run_status, claimed_generation, target_generation, built_generation, claimed_at, claimed_by,
                      attempts, not_before, last_error, demand_since, uncovered_since, lease_seconds, max_attempts,
                      built_by)
            ON ops.matter_frame_jobs TO brief_builder;
        REVOKE SELECT ON app.documents, app.matters FROM brief_builder;
        GRANT SELECT (firm_id, matter_id, status) ON app.matters TO brief_builder;
        GRANT EXECUTE ON FUNCTION ops.claimed_matter_title(uuid, uuid, bigint),
            ops.claimed_document_manifest(uuid, uuid, bigint, uuid, integer),
            ops.claimed_document(uuid, uuid, bigint, uuid),
            ops.claimed_latest_frame(uuid, uuid, bigint) TO brief_builder;
        -- no frame body of any matter but through claimed_latest_frame: the
        -- commit's keys and ids, and FrameLanded's lookup, only
        REVOKE SELECT ON ops.matter_frames, ops.matter_frame_bodies FROM brief_builder;
        GRANT SELECT (frame_id, firm_id, matter_id, token) ON ops.matter_frames TO brief_builder;
        GRANT SELECT (firm_id, matter_id, body_sha256) ON ops.matter_frame_bodies TO brief_builder;
        -- the commit stamps served demand: two columns
        REVOKE UPDATE ON ops.matter_demands FROM brief_builder;
        GRANT UPDATE (served_token, served_at) ON ops.matter_demands TO brief_builder;
        -- runs: outcome and finish only
        REVOKE UPDATE ON ops.matter_frame_runs FROM brief_builder;
        GRANT UPDATE (outcome, finished_at, error) ON ops.matter_frame_runs TO brief_builder;
    END IF;

    -- sweeper: a quarantine (status, target handed back, its clock, the
    -- reason) and the backfill's demand (Demand's upsert: the demand
    -- columns), and the newest frame's builder identity (built_by) on rows
    -- from before the commit recorded it; never the token or
    -- built_generation. Its outbox UPDATE
    -- exists for FOR UPDATE only (the trigger above refuses any update).
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_sweeper') THEN
        REVOKE INSERT, UPDATE ON ops.matter_frame_jobs FROM brief_sweeper;
        GRANT INSERT (firm_id, matter_id, requested_generation, demand_since, uncovered_since, last_demanded_at)
            ON ops.matter_frame_jobs TO brief_sweeper;
        GRANT UPDATE (run_status, target_generation, uncovered_since, last_error,
                      requested_generation, demand_since, last_demanded_at, attempts, not_before,
                      built_by)
            ON ops.matter_frame_jobs TO brief_sweeper;
        REVOKE UPDATE ON ops.domain_event_outbox FROM brief_sweeper;
        GRANT UPDATE (parked_reason) ON ops.domain_event_outbox TO brief_sweeper;
        REVOKE UPDATE ON ops.matter_frame_runs FROM brief_sweeper;
        GRANT UPDATE (outcome, finished_at, error) ON ops.matter_frame_runs TO brief_sweeper;
    END IF;

    -- on-call (railctl; created by sql/bootstrap.sql, which also makes it
    -- a member of brief_relay, brief_trigger and brief_sweeper so that
    -- `railctl relay`, `regenerate` and `sweep` run those functions'
    -- handlers with their grants): the read models, `release`, `emit`.
    -- No DDL (it owns nothing and has CREATE on no schema), no
    -- app.documents.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_oncall') THEN
        GRANT USAGE ON SCHEMA app, ops TO brief_oncall;
        GRANT SELECT ON public.brief_rail_schema_version TO brief_oncall;
        GRANT SELECT ON app.firms, app.matters, ops.matter_frame_jobs, ops.matter_frame_runs, ops.matter_frames,
            ops.matter_frame_bodies, ops.domain_event_outbox, ops.trigger_inbox, ops.matter_demands,
            ops.matter_nudges, ops.backfill_control TO brief_oncall;
        GRANT UPDATE (run_status, attempts, not_before) ON ops.matter_frame_jobs TO brief_oncall;
        GRANT INSERT ON ops.domain_event_outbox TO brief_oncall;
    END IF;
END
$$;

-- Roll back (the roles regain 008's and 012's table-wide grants; do it
-- only with the code of the release before this one deployed, which reads
-- app.documents directly):
--   DROP TRIGGER matter_frame_jobs_generations_forward ON ops.matter_frame_jobs;
--   DROP TRIGGER domain_event_outbox_builder_facts ON ops.domain_event_outbox;
--   DROP TRIGGER domain_event_outbox_sweeper_no_update ON ops.domain_event_outbox;
--   DROP FUNCTION ops.refuse_generation_backwards(), ops.refuse_role_write(),
--       ops.claimed_matter_title(uuid, uuid, bigint),
--       ops.claimed_document_manifest(uuid, uuid, bigint, uuid, integer),
--       ops.claimed_document(uuid, uuid, bigint, uuid),
--       ops.claimed_latest_frame(uuid, uuid, bigint);
--   ALTER TABLE ops.domain_event_outbox DROP CONSTRAINT domain_event_outbox_matter_fk;
--   ALTER TABLE ops.trigger_inbox DROP CONSTRAINT trigger_inbox_matter_fk;
--   ALTER TABLE ops.matter_demands DROP CONSTRAINT matter_demands_matter_fk;
--   ALTER TABLE ops.matter_nudges DROP CONSTRAINT matter_nudges_matter_fk;
--   then re-run the GRANTs of migrations 008 and 012 (they are idempotent)
--   and REVOKE the column grants above. CREATE on schema public stays
--   revoked (granting it back to PUBLIC reopens the escalation).
