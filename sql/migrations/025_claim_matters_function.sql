-- The batch claim as a function whose plan each server session keeps
-- (issue 21), as migration 024 did for the group commit.
--
-- The builder's batch claim (pkg/postgres Ledger.ClaimBatch: one
-- statement claiming the matters of an SQS batch, each conditioned as a
-- single claim is, each with its own token, lease and run) was planned on
-- every call in the functions' exec mode: 0.81 ms a call in the
-- benchmark's end-to-end part. ops.claim_matters runs pkg/postgres's
-- claimBatchSQL word for word (TestClaimFunctionRunsTheClaimStatement),
-- prepared once per server session with its generic plan kept (the SET
-- clauses hold for the call only). SECURITY INVOKER, with the builder's
-- own grants; EXECUTE for the builder only. One statement, one round
-- trip: every claim of the batch or none.
--
-- Parameters: the batch's firms and matters (parallel arrays of uuids as
-- text), the worker id, the lease in seconds, the attempts allowed.

CREATE FUNCTION ops.claim_matters(text[], text[], text, double precision, integer)
    RETURNS TABLE (r_firm_id uuid, r_matter_id uuid, r_claimed_generation bigint, r_target_generation bigint,
                   r_built_generation bigint, r_attempts integer, r_claimed_at timestamptz, r_took_over boolean)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $fn$
BEGIN
    RETURN QUERY

WITH want AS (
    SELECT DISTINCT u.firm_id, u.matter_id
    FROM ROWS FROM (pg_catalog.unnest($1::text[]::uuid[]), pg_catalog.unnest($2::text[]::uuid[])) AS u(firm_id, matter_id)
), locked AS (
    SELECT j.firm_id, j.matter_id
    FROM ops.matter_frame_jobs AS j JOIN want USING (firm_id, matter_id)
    WHERE ((j.requested_generation > j.built_generation) AND ((j.run_status = 'idle' AND (j.not_before IS NULL OR j.not_before <= clock_timestamp())) OR ((j.run_status = 'running' AND j.claimed_at < clock_timestamp() - make_interval(secs => coalesce(j.lease_seconds, $4))) AND (j.attempts < coalesce(j.max_attempts, $5)))))
      AND (SELECT m.status FROM app.matters m
                  WHERE m.firm_id = j.firm_id AND m.matter_id = j.matter_id) = 'open'
    ORDER BY j.firm_id, j.matter_id
    FOR NO KEY UPDATE OF j
), c AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status         = 'running',
        claimed_generation = j.claimed_generation + 1,
        target_generation  = j.requested_generation,
        claimed_at         = clock_timestamp(),
        claimed_by         = $3,
        attempts           = j.attempts + 1,
        not_before         = NULL,
        uncovered_since    = NULL,
        lease_seconds      = $4,
        max_attempts       = $5
    FROM locked
    WHERE j.firm_id = locked.firm_id AND j.matter_id = locked.matter_id
      AND ((j.requested_generation > j.built_generation) AND ((j.run_status = 'idle' AND (j.not_before IS NULL OR j.not_before <= clock_timestamp())) OR ((j.run_status = 'running' AND j.claimed_at < clock_timestamp() - make_interval(secs => coalesce(j.lease_seconds, $4))) AND (j.attempts < coalesce(j.max_attempts, $5)))))
      AND (SELECT m.status FROM app.matters m
                  WHERE m.firm_id = j.firm_id AND m.matter_id = j.matter_id) = 'open'
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation,
              j.built_generation, j.attempts, j.claimed_at
), expired AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = 'lease_expired', finished_at = clock_timestamp()
    FROM c
    WHERE r.firm_id = c.firm_id AND r.matter_id = c.matter_id
      AND r.token < c.claimed_generation AND r.outcome = 'claimed' -- matter_frame_runs_open_idx
    RETURNING r.firm_id, r.matter_id
), run AS (
    INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
    SELECT firm_id, matter_id, claimed_generation, target_generation, $3 FROM c
)
SELECT c.firm_id, c.matter_id, c.claimed_generation, c.target_generation, c.built_generation,
       c.attempts, c.claimed_at,
       EXISTS (SELECT 1 FROM expired e WHERE e.firm_id = c.firm_id AND e.matter_id = c.matter_id)
FROM c
ORDER BY c.firm_id, c.matter_id;
END
$fn$;

REVOKE ALL ON FUNCTION ops.claim_matters(text[], text[], text, double precision, integer) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_builder') THEN
        GRANT EXECUTE ON FUNCTION ops.claim_matters(text[], text[], text, double precision, integer) TO brief_builder;
    END IF;
END
$$;

-- Roll back: deploy the release before this first (its builder sends the
-- statement itself), then
--   DROP FUNCTION ops.claim_matters(text[], text[], text, double precision, integer);
-- and set public.brief_rail_schema_version's version back by one.
