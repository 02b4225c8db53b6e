-- The rail's one-time bootstrap (docs/operations.md, "Bootstrap"): run once
-- per database server by an administrator (a role with CREATEROLE, on RDS
-- the master user), connected to the rail's database, before the first
-- migration. Migrations never create roles when this has run (migration
-- 008 creates only missing ones, and only when the migrating role may),
-- so the schema owner needs no CREATEROLE and no superuser:
--
--   psql "$ADMIN_URL" -v owner=brief_rail -f sql/bootstrap.sql
--
-- Safe to run again: existing roles are left as they are (LOGIN, password)
-- but get the settings below. No password is set here: see the README,
-- "Deploying" (a Secrets Manager secret through RDS Proxy, or rds_iam).

-- One login role per function, and on-call's for railctl: none may create
-- roles, databases or (through the migrations' grants) objects.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['brief_relay', 'brief_trigger', 'brief_builder', 'brief_sweeper', 'brief_oncall'] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION', r);
        ELSE
            EXECUTE pg_catalog.format('ALTER ROLE %I NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION', r);
        END IF;
        -- No statement of a rail role resolves a name through a schema
        -- another role can create objects in.
        EXECUTE pg_catalog.format('ALTER ROLE %I SET search_path = pg_catalog, pg_temp', r);
        -- Session limits in the rail's database (RDS Proxy rejects startup
        -- options, so they live on the role; migration 008 sets the same
        -- only when the migrating role may alter roles).
        EXECUTE pg_catalog.format('ALTER ROLE %I IN DATABASE %I SET statement_timeout = %L', r, pg_catalog.current_database(),
            CASE r WHEN 'brief_sweeper' THEN '50s' ELSE '30s' END);
        EXECUTE pg_catalog.format('ALTER ROLE %I IN DATABASE %I SET idle_in_transaction_session_timeout = %L', r, pg_catalog.current_database(), '10s');
        EXECUTE pg_catalog.format('ALTER ROLE %I IN DATABASE %I SET lock_timeout = %L', r, pg_catalog.current_database(), '10s');
    END LOOP;
END
$$;

-- railctl's on-call role runs the relay, trigger and sweeper handlers by
-- hand (`railctl relay`, `regenerate`, `sweep`) with those roles' grants;
-- its own (read models, release) are granted by the migrations.
GRANT brief_relay, brief_trigger, brief_sweeper TO brief_oncall;

-- The schema owner (the migrate function's user, DbUser) resolves names the
-- same way, and alone may create in schema public (where the migrations
-- keep their version table, public.brief_rail_schema_version).
ALTER ROLE :"owner" SET search_path = pg_catalog, pg_temp;
GRANT CREATE ON SCHEMA public TO :"owner";

-- PostgreSQL 13 and 14 let every role create objects in schema public
-- (which belongs to the bootstrap superuser there, so the migrations
-- cannot revoke it): no rail role may.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- Roll back: ALTER ROLE <each> RESET search_path; DROP ROLE the five roles
-- (after REASSIGN OWNED / DROP OWNED in every database that granted to
-- them). GRANT CREATE ON SCHEMA public TO PUBLIC only if something else
-- needs it (it reopens the escalation docs/operations.md describes).
