-- The group commit as a function whose plan each server session keeps
-- (issue 21).
--
-- The builder's commit (pkg/postgres Ledger.CommitGroup: the fence, the
-- frame, its body, the demands it served, the run's outcome and the
-- frame.built fact, for every member of a group, in one statement) was
-- sent from the client. With statements prepared by the client the server
-- kept a generic plan for it; in the functions' exec mode (RDS Proxy)
-- nothing is prepared, and every commit was parsed and planned again:
-- 0.93 ms of planning a call in the benchmark's end-to-end part, more than
-- the demand's had been (migration 023) for each group.
--
-- ops.commit_frames runs pkg/postgres's commitSQL word for word
-- (TestCommitFunctionRunsTheCommitStatement compares the two, so the Go
-- text cannot change without a migration that replaces this function).
-- PL/pgSQL prepares it once per server session and keeps its generic
-- plan (plan_cache_mode, set for the call only: the SET clauses of a
-- function change no session state, so nothing for the proxy to pin on).
-- SECURITY INVOKER: it runs with the builder's own column grants
-- (migration 017); EXECUTE for the builder only. Still one statement and
-- one round trip: for each member the fence and every other write land
-- together or not at all.
--
-- Parameters: parallel arrays of the members' firm, matter (uuids as
-- text), token, fingerprint, builder name, model invoked, body, trace
-- header, builder version, model id, prompt hash.

CREATE FUNCTION ops.commit_frames(text[], text[], bigint[], text[], text[], boolean[], text[], text[], text[], text[], text[])
    RETURNS TABLE (r_ord bigint, r_frame_id uuid, r_target_generation bigint, r_requested_generation bigint,
                   r_generation bigint, r_n integer, r_source text, r_age double precision)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $fn$
BEGIN
    RETURN QUERY

WITH members AS (
    SELECT * FROM ROWS FROM (
        pg_catalog.unnest($1::text[]::uuid[]), pg_catalog.unnest($2::text[]::uuid[]), pg_catalog.unnest($3::int8[]),
        pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::text[]), pg_catalog.unnest($6::bool[]),
        pg_catalog.unnest($7::text[]), pg_catalog.unnest($8::text[]), pg_catalog.unnest($9::text[]),
        pg_catalog.unnest($10::text[]), pg_catalog.unnest($11::text[]))
        WITH ORDINALITY AS u(firm_id, matter_id, tok, fp, bname, invoked, body, trace, bver, bmodel, bprompt, ord)
), fence AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status       = 'idle',
        built_generation = target_generation,
        attempts         = 0,
        not_before       = NULL,
        last_error       = '',
        demand_since     = CASE WHEN requested_generation > target_generation
                                THEN coalesce(uncovered_since, demand_since, clock_timestamp()) END,
        built_by         = (u.bname || chr(31) || u.bver || chr(31) || u.bmodel || chr(31) || u.bprompt)
    FROM members AS u
    WHERE u.firm_id = j.firm_id AND u.matter_id = j.matter_id AND (j.claimed_generation = u.tok AND j.run_status = 'running')
    RETURNING j.firm_id, j.matter_id, j.target_generation, j.requested_generation,
              u.ord, u.tok, u.fp, u.bname, u.invoked, u.body, u.trace, u.bver, u.bmodel, u.bprompt
), body AS (
    INSERT INTO ops.matter_frame_bodies AS b (firm_id, matter_id, body_sha256, body)
    SELECT fence.firm_id, fence.matter_id, pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(fence.body::jsonb::text, 'UTF8')), 'hex'), fence.body::jsonb FROM fence
    ON CONFLICT (firm_id, matter_id, body_sha256) DO UPDATE SET used_at = clock_timestamp()
    RETURNING b.firm_id, b.matter_id, b.body_sha256 -- the hash is computed once, here; the frame takes it from the body row
), frame AS (
    INSERT INTO ops.matter_frames AS f
        (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body_sha256,
         builder_version, model_id, prompt_hash)
    SELECT fence.firm_id, fence.matter_id, fence.tok, fence.target_generation, fence.fp, fence.bname, fence.invoked,
           body.body_sha256, fence.bver, fence.bmodel, fence.bprompt
    FROM fence JOIN body ON body.firm_id = fence.firm_id AND body.matter_id = fence.matter_id
    RETURNING f.firm_id, f.matter_id, f.frame_id
), served AS (
    -- The demands each frame serves: every unserved one it covers.
    UPDATE ops.matter_demands AS d SET served_token = fence.tok, served_at = clock_timestamp()
    FROM fence
    WHERE d.firm_id = fence.firm_id AND d.matter_id = fence.matter_id
      AND d.served_at IS NULL AND d.generation <= fence.target_generation -- matter_demands_unserved_idx
    RETURNING d.firm_id, d.matter_id, d.generation, d.n, d.source,
              extract(epoch FROM d.served_at - d.occurred_at)::float8 AS age
), run AS (
    UPDATE ops.matter_frame_runs AS r SET outcome = 'landed', finished_at = clock_timestamp(), error = ''
    FROM fence WHERE r.firm_id = fence.firm_id AND r.matter_id = fence.matter_id AND r.token = fence.tok
), fact AS (
    -- The rail's own fact, in the same statement: a frame landed. The
    -- trigger hears it and creates no demand.
    INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, trace_header)
    SELECT fence.firm_id, fence.matter_id, 'frame.built',
           pg_catalog.jsonb_build_object('frame_id', frame.frame_id::text, 'token', fence.tok::text,
                              'target_generation', fence.target_generation::text),
           fence.trace
    FROM fence JOIN frame ON frame.firm_id = fence.firm_id AND frame.matter_id = fence.matter_id
)
SELECT fence.ord, frame.frame_id, fence.target_generation, fence.requested_generation,
       served.generation, served.n, served.source, served.age
FROM fence JOIN frame ON frame.firm_id = fence.firm_id AND frame.matter_id = fence.matter_id
LEFT JOIN served ON served.firm_id = fence.firm_id AND served.matter_id = fence.matter_id;
END
$fn$;

REVOKE ALL ON FUNCTION ops.commit_frames(text[], text[], bigint[], text[], text[], boolean[], text[], text[], text[], text[], text[]) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_builder') THEN
        GRANT EXECUTE ON FUNCTION ops.commit_frames(text[], text[], bigint[], text[], text[], boolean[], text[], text[], text[], text[], text[])
            TO brief_builder;
    END IF;
END
$$;

-- Roll back: deploy the release before this first (its builder sends the
-- statement itself), then
--   DROP FUNCTION ops.commit_frames(text[], text[], bigint[], text[], text[], boolean[], text[], text[], text[], text[], text[]);
-- and set public.brief_rail_schema_version's version back by one.
