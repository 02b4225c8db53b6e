-- The demand as a function whose plan each server session keeps (issue 21).
--
-- Until this migration every demand (pkg/postgres Ledger.DemandFrom: the
-- trigger's per fact, the sweeper's backfill, railctl regenerate) sent its
-- statement from the client, and the server planned it on every call: with
-- statements prepared by the client (pgx's default cache) the planner kept
-- choosing a custom plan, because its generic plan prices the event-id
-- array at ten elements; in the functions' exec mode (RDS Proxy) nothing is
-- prepared and every call is parsed and planned. Planning was 0.23-0.6 ms
-- of the 0.45-1.0 ms a demand cost the server, one demand per upload: the
-- largest single cost in the rail's end-to-end figure (docs/benchmarks.md).
--
-- ops.record_demand runs the same statement, word for word, inside a
-- PL/pgSQL function: PL/pgSQL prepares it once per server session and,
-- with plan_cache_mode forced to generic for the call, reuses that plan on
-- every later call whatever the client's exec mode (a plan made on an
-- empty outbox stays cheap as it grows: per-id primary-key probes,
-- TestDemandCostDoesNotGrowWithTheOutbox). It is SECURITY INVOKER: it runs
-- with the caller's own column grants (migration 017), so it lets no role
-- do anything its grants did not already let it do; EXECUTE goes to the
-- roles that record demand (the trigger, the sweeper; railctl through its
-- membership of brief_trigger). One statement, one round trip, as before.
--
-- Parameters: firm, matter, n (demands), source, event ids (uuids as
-- text: every pgx exec mode encodes text[]), trace header.

CREATE FUNCTION ops.record_demand(uuid, uuid, integer, text, text[], text)
    RETURNS TABLE (r_firm_id uuid, r_status text, r_requested_generation bigint, r_run_status text)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $fn$
BEGIN
    RETURN QUERY
        WITH m AS (
            SELECT firm_id, matter_id, status FROM app.matters WHERE matter_id = $2
        ), up AS (
            INSERT INTO ops.matter_frame_jobs AS j
                (firm_id, matter_id, requested_generation, demand_since, uncovered_since, last_demanded_at)
            SELECT m.firm_id, m.matter_id, $3, clock_timestamp(), clock_timestamp(), clock_timestamp()
            FROM m WHERE m.firm_id = $1 -- open or closed: a closed matter's demand is recorded and held
            ON CONFLICT (firm_id, matter_id) DO UPDATE SET
                requested_generation = j.requested_generation + EXCLUDED.requested_generation,
                demand_since         = coalesce(j.demand_since, EXCLUDED.demand_since),
                uncovered_since      = coalesce(j.uncovered_since, EXCLUDED.uncovered_since),
                last_demanded_at     = EXCLUDED.last_demanded_at,
                run_status = CASE WHEN j.run_status = 'quarantined' THEN 'idle' ELSE j.run_status END,
                attempts   = CASE WHEN j.run_status = 'quarantined' THEN 0 ELSE j.attempts END,
                not_before = CASE WHEN j.run_status = 'quarantined' THEN NULL ELSE j.not_before END
            RETURNING j.firm_id, j.matter_id, j.requested_generation, j.run_status
        ), log AS (
            -- On-call's record of the demand (ops.matter_demands): the generation it
            -- produced and when its oldest fact occurred (the outbox row's own
            -- clock; the demand's when there is no fact). One primary-key probe per
            -- event id, never min() over the outbox filtered by id: as a generic
            -- plan made on a young outbox that walked the occurred_at index from
            -- the oldest row, so each demand read the whole outbox
            -- (TestDemandCostDoesNotGrowWithTheOutbox).
            INSERT INTO ops.matter_demands
                (firm_id, matter_id, generation, n, source, event_ids, occurred_at, trace_header)
            SELECT up.firm_id, up.matter_id, up.requested_generation, $3, $4, $5::text[]::uuid[],
                   coalesce((SELECT min((SELECT o.occurred_at FROM ops.domain_event_outbox o
                                         WHERE o.event_id = e.event_id))
                             FROM pg_catalog.unnest($5::text[]::uuid[]) AS e(event_id)), clock_timestamp()),
                   left($6, 500)
            FROM up
            ON CONFLICT (firm_id, matter_id, generation) DO NOTHING
        )
        SELECT (SELECT firm_id FROM m), (SELECT status FROM m), up.requested_generation, up.run_status
        FROM (SELECT 1) AS one LEFT JOIN up ON true;
END
$fn$;

REVOKE ALL ON FUNCTION ops.record_demand(uuid, uuid, integer, text, text[], text) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_trigger') THEN
        GRANT EXECUTE ON FUNCTION ops.record_demand(uuid, uuid, integer, text, text[], text) TO brief_trigger;
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_sweeper') THEN
        GRANT EXECUTE ON FUNCTION ops.record_demand(uuid, uuid, integer, text, text[], text) TO brief_sweeper;
    END IF;
END
$$;

-- Roll back: deploy the release before this first (it sends the statement
-- itself), then
--   DROP FUNCTION ops.record_demand(uuid, uuid, integer, text, text[], text);
-- and set public.brief_rail_schema_version's version back by one.
