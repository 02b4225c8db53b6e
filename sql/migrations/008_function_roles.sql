-- One database role per Lambda function, each granted only what that
-- function's statements touch (docs/operations.md, "Database roles", has the
-- table and how each grant was derived). The migrate function (the schema
-- owner) applies this; the other functions connect as their own role.
--
-- No password is ever set here. A role authenticates either through RDS
-- Proxy with a Secrets Manager secret (the operator sets the password with
-- ALTER ROLE ... PASSWORD, outside this file, and stores it in the secret),
-- or with IAM end to end (GRANT rds_iam TO the role). See the README,
-- "Deploying".
--
-- Safe to run where the roles already exist: an existing role is never
-- recreated, and its LOGIN/NOLOGIN and password are left as the operator set
-- them. A migrating role without CREATEROLE (a CREATEDB-only test role, say)
-- creates no roles and only grants to the ones that exist.

DO $$
DECLARE
    can_create boolean;
    r text;
    roles text[] := ARRAY['brief_relay', 'brief_trigger', 'brief_builder', 'brief_sweeper'];
BEGIN
    SELECT rolsuper OR rolcreaterole INTO can_create FROM pg_roles WHERE rolname = current_user;
    FOREACH r IN ARRAY roles LOOP
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
            IF can_create THEN
                BEGIN
                    EXECUTE format('CREATE ROLE %I LOGIN', r);
                EXCEPTION WHEN duplicate_object THEN
                    NULL; -- created concurrently by another database's migration
                END;
            ELSE
                RAISE NOTICE 'role % does not exist and % cannot create roles: not created, not granted', r, current_user;
                CONTINUE;
            END IF;
        END IF;
        EXECUTE format('GRANT USAGE ON SCHEMA app, ops TO %I', r);
        -- The cold-start schema check reads the applied version.
        EXECUTE format('GRANT SELECT ON public.brief_rail_schema_version TO %I', r);
        -- Per-role session limits (RDS Proxy rejects startup options, so
        -- they live on the role, in this database only).
        IF can_create THEN
            EXECUTE format('ALTER ROLE %I IN DATABASE %I SET statement_timeout = %L', r, current_database(),
                CASE r WHEN 'brief_sweeper' THEN '50s' ELSE '30s' END);
            EXECUTE format('ALTER ROLE %I IN DATABASE %I SET idle_in_transaction_session_timeout = %L', r, current_database(), '10s');
            EXECUTE format('ALTER ROLE %I IN DATABASE %I SET lock_timeout = %L', r, current_database(), '10s');
        END IF;
    END LOOP;

    -- relay: claims due outbox rows (SELECT ... FOR UPDATE SKIP LOCKED),
    -- marks them published or parked, reads the backlog gauges.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_relay') THEN
        GRANT SELECT, UPDATE ON ops.domain_event_outbox TO brief_relay;
    END IF;

    -- trigger: dedupes facts in the inbox (INSERT ... ON CONFLICT DO NOTHING
    -- RETURNING), reads the matter, records demand on the job row (INSERT ...
    -- ON CONFLICT DO UPDATE RETURNING).
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_trigger') THEN
        GRANT SELECT, INSERT ON ops.trigger_inbox TO brief_trigger;
        GRANT SELECT ON app.matters TO brief_trigger;
        GRANT SELECT, INSERT, UPDATE ON ops.matter_frame_jobs TO brief_trigger;
    END IF;

    -- builder: claims (UPDATE the job row, INSERT the run), heartbeats,
    -- reads the matter and its documents, commits fenced (UPDATE job, INSERT
    -- frame, UPDATE run, INSERT the frame.built fact), records failures.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_builder') THEN
        GRANT SELECT ON app.matters, app.documents TO brief_builder;
        GRANT SELECT, UPDATE ON ops.matter_frame_jobs TO brief_builder;
        GRANT SELECT, INSERT, UPDATE ON ops.matter_frame_runs TO brief_builder;
        GRANT SELECT, INSERT ON ops.matter_frames TO brief_builder;
        -- the frame's body, deduplicated (INSERT ... ON CONFLICT DO UPDATE SET used_at)
        GRANT SELECT, INSERT, UPDATE ON ops.matter_frame_bodies TO brief_builder;
        GRANT INSERT ON ops.domain_event_outbox TO brief_builder;
    END IF;

    -- sweeper: quarantines and expires leases (UPDATE job rows and runs),
    -- finds unserved demand (joins the matter), prunes the outbox (SELECT
    -- ... FOR UPDATE SKIP LOCKED, DELETE) and the inbox (DELETE), reads the
    -- gauges.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_sweeper') THEN
        GRANT SELECT ON app.matters TO brief_sweeper;
        GRANT SELECT, UPDATE ON ops.matter_frame_jobs TO brief_sweeper;
        GRANT SELECT, UPDATE, DELETE ON ops.matter_frame_runs TO brief_sweeper;
        -- frame retention: old frames, their matters' older runs, unreferenced bodies
        GRANT SELECT, DELETE ON ops.matter_frames, ops.matter_frame_bodies TO brief_sweeper;
        GRANT SELECT, DELETE ON ops.trigger_inbox TO brief_sweeper;
        -- FOR UPDATE needs UPDATE on at least one column: published_at only.
        GRANT SELECT, DELETE ON ops.domain_event_outbox TO brief_sweeper;
        GRANT UPDATE (published_at) ON ops.domain_event_outbox TO brief_sweeper;
    END IF;
END
$$;

-- Roll back: REVOKE ALL ON ALL TABLES IN SCHEMA app, ops FROM brief_relay,
-- brief_trigger, brief_builder, brief_sweeper; REVOKE USAGE ON SCHEMA app, ops
-- FROM the same; then DROP ROLE each (after REASSIGN/DROP OWNED in every
-- database that granted to it), and DELETE FROM public.brief_rail_schema_version
-- is not needed: set its version to 7.
