---- tern: disable-tx ----
-- `railctl why` reads one matter's facts from the outbox (published,
-- pending and parked alike). Without an index that is a scan of the whole
-- outbox (a week of facts by default). The index costs every fact insert
-- one more btree entry; it is built without blocking writers.

CREATE INDEX CONCURRENTLY IF NOT EXISTS domain_event_outbox_matter_idx
    ON ops.domain_event_outbox (matter_id, occurred_at) WHERE matter_id IS NOT NULL;

-- Roll back: DROP INDEX CONCURRENTLY ops.domain_event_outbox_matter_idx;
