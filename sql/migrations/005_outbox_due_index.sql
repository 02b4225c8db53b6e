---- tern: disable-tx ----
-- The relay's drain reads only rows that are due (issue 10).
--
-- The old pending index (occurred_at, event_id) WHERE unpublished and
-- unparked held the rows that are backing off too: during a bus outage
-- every row of the backlog is backing off, and each poll walked the whole
-- index and fetched every row only to filter it out by next_attempt_at.
-- The drain is now two selects (pkg/rail/relay.go, relayUnsentSQL and
-- relayRetrySQL), each with its own partial index:
--   unsent: rows never attempted (next_attempt_at IS NULL), in commit order;
--   retry:  rows that failed, by when they are due; the scan stops at the
--           first row still backing off.
-- A parked row has a reason (parked_reason), shown by `railctl outbox parked`.
--
-- No transaction (disable-tx): CREATE/DROP INDEX CONCURRENTLY cannot run in
-- one, and they take no lock that blocks writers. Every statement is
-- idempotent, so a migration that failed half-way is simply run again. A
-- CONCURRENTLY build that failed leaves an INVALID index behind: it is
-- dropped first.
-- The column is added under a short lock_timeout (a constant default is a
-- catalog change only, no table rewrite) so it never queues writers
-- behind a long transaction; if it times out, run the migration again.

SET lock_timeout = '5s';

ALTER TABLE ops.domain_event_outbox ADD COLUMN IF NOT EXISTS parked_reason text NOT NULL DEFAULT '';

RESET lock_timeout;

UPDATE ops.domain_event_outbox
SET parked_reason = 'the bus refused it ' || publish_attempts || ' times; last: ' || last_error
WHERE parked_at IS NOT NULL AND parked_reason = '';

DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_unsent_idx;

CREATE INDEX CONCURRENTLY domain_event_outbox_unsent_idx ON ops.domain_event_outbox (occurred_at, event_id)
    WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_retry_idx;

CREATE INDEX CONCURRENTLY domain_event_outbox_retry_idx ON ops.domain_event_outbox (next_attempt_at, occurred_at, event_id)
    WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NOT NULL;

DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_pending_idx;

-- Rollback (by hand, outside a transaction; the code of the release before
-- this one reads only the old index and ignores parked_reason):
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS domain_event_outbox_pending_idx
--       ON ops.domain_event_outbox (occurred_at, event_id)
--       WHERE published_at IS NULL AND parked_at IS NULL;
--   DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_retry_idx;
--   DROP INDEX CONCURRENTLY IF EXISTS ops.domain_event_outbox_unsent_idx;
--   ALTER TABLE ops.domain_event_outbox DROP COLUMN IF EXISTS parked_reason;
--   UPDATE public.brief_rail_schema_version SET version = 4;
