-- The relay holds no transaction across PutEvents (issue 18). A pass
-- leases its rows in one short transaction (next_attempt_at = the lease's
-- end, relay_claim = the pass's claim id), publishes with no transaction
-- open, and settles in a second short one; the settlement's failure
-- records and releases apply only to rows whose relay_claim is still the
-- pass's. Before this, a pass held its row locks across the bus calls,
-- and a slow bus (about 1 s a call) outlived the relay role's
-- idle_in_transaction_session_timeout (10 s): every pass was killed
-- before its marks and re-sent the same facts for ever.
--
-- publish_refusals counts only the bus's permanent refusals of a row
-- (MalformedDetail, InvalidArgument, ...): it, not publish_attempts
-- (every failure, the backoff's exponent), decides parking, so throttling
-- and internal failures back a row off without ever parking it. Rows
-- parked before this keep their reason; their refusals start at 0.
--
-- Both columns are catalog changes only (a null or constant default, no
-- table rewrite), taken under a short lock_timeout so the ALTER never
-- queues writers behind a long transaction; if it times out, run the
-- migration again (IF NOT EXISTS). No index: a lease is found through the
-- existing retry index (next_attempt_at), and a claim's rows by their
-- primary key.

SET lock_timeout = '5s';

ALTER TABLE ops.domain_event_outbox ADD COLUMN IF NOT EXISTS relay_claim uuid;
ALTER TABLE ops.domain_event_outbox ADD COLUMN IF NOT EXISTS publish_refusals integer NOT NULL DEFAULT 0;

RESET lock_timeout;

-- Roll back: deploy the relay of the release before this first (it
-- ignores both columns; a row leased at that moment is due when its lease
-- ends), then ALTER TABLE ops.domain_event_outbox DROP COLUMN IF EXISTS
-- relay_claim, DROP COLUMN IF EXISTS publish_refusals; and set
-- public.brief_rail_schema_version's version back by one.
