-- The rail's hot-path functions plan for their keys, not for the table's
-- size when their plan was made (issue 21).
--
-- Every statement these functions run addresses its rows by key: a
-- matter's job row, demands and runs by (firm_id, matter_id), a fact by
-- its event id, a frame by its token. PL/pgSQL keeps one generic plan per
-- statement per server session (plan_cache_mode = force_generic_plan,
-- migrations 023 to 028), made from the statistics of the moment it was
-- first called. When that moment finds a table small (a new deployment, a
-- table autovacuum has not analyzed yet, the benchmark's 2,000 matters),
-- the planner's cheapest generic plan reads the whole table: measured with
-- auto_explain, the commit and the batch claim scanned every job row
-- (`Seq Scan on matter_frame_jobs`, `Filter: run_status = 'running'`),
-- the batch read every matter, the trigger's fact check the outbox. A
-- session keeps that plan until something invalidates it, every call
-- reading every row while the table grows, and eight builders' scans
-- queue on the same pages' buffer locks.
--
-- enable_seqscan = off, set for the call only (a function's SET clause
-- changes no session state: nothing for RDS Proxy to pin on), leaves the
-- planner the indexes each statement was written for. It forbids nothing:
-- a statement with no index path still gets its scan. Measured in the
-- benchmark's end-to-end part, interleaved A/B, three pairs: server CPU
-- 0.740-0.795 ms per rebuild against 0.830-0.903 without
-- (docs/benchmarks.md, "Key-addressed plans").
--
-- TestHotPathPlansUseTheirKeys (pkg/postgres) reads every plan these
-- functions run through the rail's own trigger and builder calls, and
-- holds the same calls without this setting to the scans it removes.

ALTER FUNCTION ops.record_demand(uuid, uuid, integer, text, text[], text) SET enable_seqscan = off;
ALTER FUNCTION ops.receive_facts(text[], text[], text[], text[], text[]) SET enable_seqscan = off;
ALTER FUNCTION ops.claim_matters(text[], text[], text, double precision, integer) SET enable_seqscan = off;
ALTER FUNCTION ops.claimed_builds(uuid[], uuid[], bigint[], integer) SET enable_seqscan = off;
ALTER FUNCTION ops.commit_frames(text[], text[], bigint[], text[], text[], boolean[], text[], text[], text[], text[], text[])
    SET enable_seqscan = off;
ALTER FUNCTION ops.claimed_matter_title(uuid, uuid, bigint) SET enable_seqscan = off;
ALTER FUNCTION ops.claimed_document_manifest(uuid, uuid, bigint, uuid, integer) SET enable_seqscan = off;
ALTER FUNCTION ops.claimed_document(uuid, uuid, bigint, uuid) SET enable_seqscan = off;
ALTER FUNCTION ops.claimed_latest_frame(uuid, uuid, bigint) SET enable_seqscan = off;

-- Roll back: the same nine statements with RESET enable_seqscan in place
-- of SET enable_seqscan = off, and public.brief_rail_schema_version's
-- version set back by one. Either release runs on either schema.
