---- tern: disable-tx ----
-- Repairs the outbox's matter index (railctl why's, migration 011) where
-- it may be INVALID. 011 ran CREATE INDEX CONCURRENTLY IF NOT EXISTS with
-- no DROP before it: a concurrent build that failed (a deadlock, a
-- cancelled statement, a lost connection) leaves an INVALID index behind
-- under that name, and a rerun of 011 then skips it and records success;
-- the planner never uses an invalid index, yet every insert still pays
-- for it. TestMigrationsADBAWouldAccept now refuses that pattern.
--
-- An index's validity cannot be tested before a CONCURRENTLY statement in
-- plain SQL (no DO block or function may run one), so the index is rebuilt
-- whatever its state, under a new name and before the old one is dropped:
-- railctl why keeps a usable index throughout if it had one. Both steps
-- are CONCURRENTLY (no lock that blocks the relay or the writers); each
-- DROP ... IF EXISTS makes a rerun after a failure rebuild rather than
-- skip. Cost: one concurrent build over the outbox (a week of facts by
-- default).

DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_by_matter_idx;

CREATE INDEX CONCURRENTLY domain_event_outbox_by_matter_idx
    ON ops.domain_event_outbox (matter_id, occurred_at) WHERE matter_id IS NOT NULL;

DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_matter_idx;

-- Roll back: nothing to undo for the code (no statement names the index);
-- to restore the old name, outside a transaction:
--   CREATE INDEX CONCURRENTLY domain_event_outbox_matter_idx
--       ON ops.domain_event_outbox (matter_id, occurred_at) WHERE matter_id IS NOT NULL;
--   DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_by_matter_idx;
-- and set public.brief_rail_schema_version's version back by one.
