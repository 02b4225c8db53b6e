-- A batch's reads in one token-checking call (issue 21).
--
-- Until this migration the builder's batch read (pkg/postgres LoadBuilds)
-- called three of the claimed_* functions of migration 017 per claim:
-- the title, the first manifest page and the newest frame, each checking
-- the token again (three plpgsql calls and three fence probes a claim,
-- 0.07 ms of server time a claim without contention). ops.claimed_builds
-- answers for every claim of a batch in one call: it checks every token
-- first, with the fence of migration 017 word for word (pkg/postgres
-- rules.go's SQLHoldsToken), and raises SQLSTATE BR001 (rail.ErrFenced)
-- naming the first claim that is not the current running one, so it
-- answers all or nothing; then it returns, per claim in the order given,
-- what the three returned: the matter's title, its first p_limit documents'
-- metadata (no text), and its newest frame.
--
-- The bound is the same as the three functions': the builder still has no
-- SELECT on app.documents, matter titles or frame bodies, and reads them
-- only for matters whose running claim it holds. The check and the answer
-- run in one snapshot (a STABLE function in the caller's statement), as
-- the three did. The three stay: the single-claim reads, further manifest
-- pages and the document reads use them.

CREATE FUNCTION ops.claimed_builds(p_firms uuid[], p_matters uuid[], p_tokens bigint[], p_limit integer)
    RETURNS TABLE (ord bigint, title text, ids text[], names text[], shas text[], pages integer[], uploaded timestamptz[],
                   frame_id uuid, token bigint, target_generation bigint, fingerprint text, builder text,
                   model_invoked boolean, built_at timestamptz, body text, builder_version text, model_id text,
                   prompt_hash text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    stale record;
BEGIN
    -- Arrays of unequal length pad with nulls, which hold no token.
    SELECT u.p_firm, u.p_matter, u.p_token INTO stale
    FROM ROWS FROM (unnest(p_firms), unnest(p_matters), unnest(p_tokens)) AS u(p_firm, p_matter, p_token)
    WHERE NOT EXISTS (
        SELECT FROM ops.matter_frame_jobs j
        WHERE j.firm_id = u.p_firm AND j.matter_id = u.p_matter
          AND (j.claimed_generation = p_token AND j.run_status = 'running'))
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'token % is not the current claim on %/%', stale.p_token, stale.p_firm, stale.p_matter
            USING ERRCODE = 'BR001';
    END IF;
    RETURN QUERY
        SELECT u.n, m.title, dm.ids, dm.names, dm.shas, dm.pages, dm.uploaded,
               lf.frame_id, lf.token, lf.target_generation, lf.fingerprint, lf.builder, lf.model_invoked,
               lf.built_at, coalesce(lf.body, b.body)::text, lf.builder_version, lf.model_id, lf.prompt_hash
        FROM ROWS FROM (unnest(p_firms), unnest(p_matters)) WITH ORDINALITY AS u(firm_id, matter_id, n)
        JOIN app.matters m ON m.firm_id = u.firm_id AND m.matter_id = u.matter_id
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(d.document_id::text ORDER BY d.document_id), '{}'),
                   coalesce(array_agg(d.name ORDER BY d.document_id), '{}'),
                   coalesce(array_agg(d.content_sha256 ORDER BY d.document_id), '{}'),
                   coalesce(array_agg(d.page_count ORDER BY d.document_id), '{}'),
                   coalesce(array_agg(d.uploaded_at ORDER BY d.document_id), '{}')
            FROM (SELECT d.document_id, d.name, d.content_sha256, d.page_count, d.uploaded_at
                  FROM app.documents d
                  WHERE d.firm_id = u.firm_id AND d.matter_id = u.matter_id
                  ORDER BY d.document_id LIMIT p_limit) AS d
        ) AS dm(ids, names, shas, pages, uploaded)
        LEFT JOIN LATERAL (
            SELECT f.frame_id, f.token, f.target_generation, f.fingerprint, f.builder, f.model_invoked, f.built_at,
                   f.body, f.body_sha256, f.builder_version, f.model_id, f.prompt_hash
            FROM ops.matter_frames f
            WHERE f.firm_id = u.firm_id AND f.matter_id = u.matter_id
            ORDER BY f.token DESC LIMIT 1
        ) AS lf ON true
        LEFT JOIN ops.matter_frame_bodies b
          ON b.firm_id = u.firm_id AND b.matter_id = u.matter_id AND b.body_sha256 = lf.body_sha256
        ORDER BY u.n;
END
$$;

REVOKE ALL ON FUNCTION ops.claimed_builds(uuid[], uuid[], bigint[], integer) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_builder') THEN
        GRANT EXECUTE ON FUNCTION ops.claimed_builds(uuid[], uuid[], bigint[], integer) TO brief_builder;
    END IF;
END
$$;

-- Roll back: deploy the builder of the release before this first (it calls
-- the three functions), then
--   DROP FUNCTION ops.claimed_builds(uuid[], uuid[], bigint[], integer);
-- and set public.brief_rail_schema_version's version back by one.
