---- tern: disable-tx ----
-- The relay's published mark becomes a heap-only (HOT) update (issue 21).
--
-- Until this migration every index that finds due rows named published_at
-- in its predicate (unsent, retry) and retention's index had it as its key,
-- so each mark was a non-HOT update: a new row version on another page
-- plus an entry in the primary key, the matter index and the published
-- index. Measured (docs/benchmarks.md, "Relay: heap-only marks"): the mark
-- was about 85% of the relay's claim statement.
--
-- Now no index names published_at:
--   domain_event_outbox_due_idx (relay_xid, occurred_at, event_id)
--       WHERE parked_at IS NULL AND next_attempt_at IS NULL
--     rows never attempted, by the transaction that wrote them. A published
--     row stays in it; the relay starts its scan at a cursor kept on its
--     lease row (ops.relay_lease cursor_*), below which every row of the
--     index is published. The cursor never passes a transaction that may
--     still commit: it is at most pg_snapshot_xmin of the relay's own
--     snapshot (a row committed out of order is still read), and at most
--     the first unpublished row the relay saw.
--   domain_event_outbox_backoff_idx (next_attempt_at, occurred_at, event_id)
--       WHERE parked_at IS NULL AND next_attempt_at IS NOT NULL
--     rows that failed, by when they are due (the mark clears
--     next_attempt_at, so a published row leaves it).
--   domain_event_outbox_occurred_idx (occurred_at): retention (a row is
--     published after it occurred, so the prune's range scan by occurred_at
--     finds every row old enough by published_at).
-- The table's fillfactor drops to 50 so a row's one mark finds room on its
-- own page (a HOT update needs it): new pages only, no rewrite; the heap
-- of new facts is about twice as large until it is pruned.
--
-- relay_xid is the writing transaction's id (pg_current_xact_id(), the
-- column's default). It is added without a default first (a volatile
-- default would rewrite the table under an exclusive lock), then given
-- one: that ALTER waits (lock_timeout 5 s; rerun on a timeout) for every
-- transaction that inserted a fact before it, so once it has run every row
-- with a null relay_xid has committed or rolled back. The unpublished ones
-- among them are then stamped with this migration's own transaction id
-- (one statement: the backlog, not the history); published rows keep null
-- (the relay never reads them again).
-- A trigger re-stamps a row that comes back to the unsent arm by an update
-- (unparked, its backoff cleared by hand, its mark undone): it is then read
-- like a row written by that update's transaction, never skipped below the
-- cursor.
--
-- Each statement is idempotent; a failed run is simply run again (a
-- CONCURRENTLY build that failed leaves an INVALID index: each is dropped
-- first).

SET lock_timeout = '5s';
ALTER TABLE ops.domain_event_outbox ADD COLUMN IF NOT EXISTS relay_xid xid8;
ALTER TABLE ops.domain_event_outbox ALTER COLUMN relay_xid SET DEFAULT pg_catalog.pg_current_xact_id();
ALTER TABLE ops.domain_event_outbox SET (fillfactor = 50);
ALTER TABLE ops.relay_lease
    ADD COLUMN IF NOT EXISTS cursor_xid xid8 NOT NULL DEFAULT '0',
    ADD COLUMN IF NOT EXISTS cursor_at timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN IF NOT EXISTS cursor_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
RESET lock_timeout;

UPDATE ops.domain_event_outbox SET relay_xid = pg_catalog.pg_current_xact_id()
WHERE relay_xid IS NULL AND published_at IS NULL;

CREATE OR REPLACE FUNCTION ops.restamp_outbox_row() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.relay_xid := pg_catalog.pg_current_xact_id();
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION ops.restamp_outbox_row() FROM PUBLIC;
DROP TRIGGER IF EXISTS domain_event_outbox_restamp ON ops.domain_event_outbox;
CREATE TRIGGER domain_event_outbox_restamp
    BEFORE UPDATE ON ops.domain_event_outbox FOR EACH ROW
    WHEN (NEW.published_at IS NULL AND NEW.parked_at IS NULL AND NEW.next_attempt_at IS NULL
          AND (OLD.published_at IS NOT NULL OR OLD.parked_at IS NOT NULL OR OLD.next_attempt_at IS NOT NULL))
    EXECUTE FUNCTION ops.restamp_outbox_row();

DO $$
BEGIN
    -- relay: advances its cursor on the lease row.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_relay') THEN
        GRANT UPDATE (cursor_xid, cursor_at, cursor_id) ON ops.relay_lease TO brief_relay;
    END IF;
    -- sweeper: its outbox gauges count the unsent arm from the cursor.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_sweeper') THEN
        GRANT SELECT (lease, cursor_xid, cursor_at, cursor_id) ON ops.relay_lease TO brief_sweeper;
    END IF;
END
$$;

DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_due_idx;
CREATE INDEX CONCURRENTLY domain_event_outbox_due_idx ON ops.domain_event_outbox (relay_xid, occurred_at, event_id)
    WHERE parked_at IS NULL AND next_attempt_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_backoff_idx;
CREATE INDEX CONCURRENTLY domain_event_outbox_backoff_idx ON ops.domain_event_outbox (next_attempt_at, occurred_at, event_id)
    WHERE parked_at IS NULL AND next_attempt_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_occurred_idx;
CREATE INDEX CONCURRENTLY domain_event_outbox_occurred_idx ON ops.domain_event_outbox (occurred_at);
DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_unsent_idx;
DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_retry_idx;
DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_published_idx;

-- Roll back (outside a transaction; deploy the relay of the release before
-- this one first — it reads the old indexes and ignores the cursor):
--   CREATE INDEX CONCURRENTLY domain_event_outbox_unsent_idx ON ops.domain_event_outbox (occurred_at, event_id)
--       WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL;
--   CREATE INDEX CONCURRENTLY domain_event_outbox_retry_idx ON ops.domain_event_outbox (next_attempt_at, occurred_at, event_id)
--       WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NOT NULL;
--   CREATE INDEX CONCURRENTLY domain_event_outbox_published_idx ON ops.domain_event_outbox (published_at)
--       WHERE published_at IS NOT NULL;
--   DROP INDEX CONCURRENTLY ops.domain_event_outbox_due_idx;
--   DROP INDEX CONCURRENTLY ops.domain_event_outbox_backoff_idx;
--   DROP INDEX CONCURRENTLY ops.domain_event_outbox_occurred_idx;
--   DROP TRIGGER domain_event_outbox_restamp ON ops.domain_event_outbox; DROP FUNCTION ops.restamp_outbox_row();
--   ALTER TABLE ops.domain_event_outbox RESET (fillfactor);
--   (relay_xid and the lease's cursor columns may stay; the old code ignores them)
-- and set public.brief_rail_schema_version's version back by one.
