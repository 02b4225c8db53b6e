-- The lease and the attempt limit a claim was granted with are stored on
-- the ledger row at claim time. Whether a running row's lease has expired,
-- and whether an expired row is out of attempts, is then read off the row,
-- never off the caller's configuration: a sweeper or an operator command
-- run with other settings (a shorter lease, fewer attempts) can neither
-- quarantine nor take over a live build, and one run with more attempts
-- cannot leave an exhausted row running for ever.
--
-- Both columns are NULL until a row's next claim; a NULL falls back to the
-- caller's setting (the behaviour before this migration). Adding nullable
-- columns without a default changes only the catalog; the CHECKs scan the
-- table once under its lock (one row per matter, all NULL: milliseconds).
-- The columns are in no index, so ledger updates stay heap-only (004).

ALTER TABLE ops.matter_frame_jobs
    ADD COLUMN lease_seconds double precision
        CONSTRAINT matter_frame_jobs_lease_positive CHECK (lease_seconds > 0),
    ADD COLUMN max_attempts integer
        CONSTRAINT matter_frame_jobs_max_attempts_positive CHECK (max_attempts > 0);

-- Roll back (after deploying code that no longer reads the columns):
--   ALTER TABLE ops.matter_frame_jobs DROP COLUMN lease_seconds, DROP COLUMN max_attempts;
-- (dropping a column drops its CHECK with it).
