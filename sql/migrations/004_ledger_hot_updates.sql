-- Let the ledger row's updates be heap-only (HOT). Every claim, commit,
-- demand and heartbeat rewrites the row's claimed_at, run_status,
-- requested_generation or built_generation; all four were the key or the
-- predicate of matter_frame_jobs_sweep_idx, so no update could be HOT and
-- each one wrote a new entry into both of the table's indexes
-- (docs/benchmarks.md: 0% HOT updates). The sweeper and the gauges read the
-- table once a minute; a sequential scan of one row per matter serves them
-- (measured: docs/benchmarks.md, "Where the rail is behind"). With only the
-- primary key left, whose columns never change, every update is eligible
-- for HOT, and a fillfactor leaves room on each page for the new version.
--
-- fillfactor applies to pages written from now on; existing pages fill up
-- to 100% until the table is rewritten (VACUUM FULL or pg_repack, at the
-- operator's choice: not done here, it takes an exclusive lock).

DROP INDEX IF EXISTS ops.matter_frame_jobs_sweep_idx;

ALTER TABLE ops.matter_frame_jobs SET (fillfactor = 80);

-- Lock note: the DROP INDEX above takes an ACCESS EXCLUSIVE lock on the
-- ledger table for an instant, but waits for (and queues everything behind)
-- any long transaction on it. Run by hand on a busy database, prefer
-- DROP INDEX CONCURRENTLY (outside a transaction). New index changes on the
-- hot tables use tern's `---- tern: disable-tx ----` and CONCURRENTLY.
--
-- Roll back (no code depends on either change; outside a transaction):
--   CREATE INDEX CONCURRENTLY matter_frame_jobs_sweep_idx ON ops.matter_frame_jobs (claimed_at)
--       WHERE run_status = 'running' OR requested_generation > built_generation;
--   ALTER TABLE ops.matter_frame_jobs RESET (fillfactor);
