-- The trigger's dedupe inbox: one row per application event_id the trigger has
-- turned into demand. It is written in the same transaction as the demand, so a
-- fact redelivered by SQS (at-least-once) or re-published by the relay (a new
-- EventBridge envelope id, same event_id) adds no demand. Rows older than the
-- retention (default 14 days, longer than any queue or DLQ can hold a message)
-- are pruned by the sweeper. event_id is a uuid chosen by the producer: no
-- sequence is touched (nextval may pin an RDS Proxy session).

CREATE TABLE ops.trigger_inbox (
    event_id    uuid PRIMARY KEY,
    firm_id     uuid NOT NULL,
    matter_id   uuid NOT NULL,
    event_name  text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX trigger_inbox_received_idx ON ops.trigger_inbox (received_at);

-- Roll back (stop the trigger first; without the inbox a redelivered fact
-- adds demand again, which costs at most one extra build per fact):
--   DROP TABLE ops.trigger_inbox;
