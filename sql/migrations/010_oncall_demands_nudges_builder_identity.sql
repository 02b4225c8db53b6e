-- On-call's record (docs/operations.md, "How stale, and why"): one row per
-- recorded demand, one row per nudge sent, the builder's identity on every
-- frame, and the backfill's control row. Every timestamp is the database
-- clock.

-- One row per Demand statement (the trigger's coalesced facts, an
-- operator's demand, a backfill admission). generation is the
-- requested_generation the demand produced; the demand is served by the
-- first frame whose target_generation reaches it, and that commit stamps
-- served_token and served_at in the same statement. occurred_at is the
-- oldest of its facts' occurred_at (read from the outbox in SQL; the
-- demand's own time when there is no fact), so served_at - occurred_at is
-- the upload -> current latency of the demand (DemandToCurrentSeconds).
CREATE TABLE ops.matter_demands (
    firm_id      uuid NOT NULL,
    matter_id    uuid NOT NULL,
    generation   bigint NOT NULL,
    n            integer NOT NULL CONSTRAINT matter_demands_n_positive CHECK (n >= 1),
    source       text NOT NULL CONSTRAINT matter_demands_source_valid CHECK (source IN ('fact', 'operator', 'backfill')),
    event_ids    uuid[] NOT NULL DEFAULT '{}',
    occurred_at  timestamptz NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    trace_header text NOT NULL DEFAULT '' CONSTRAINT matter_demands_trace_header_short CHECK (length(trace_header) <= 500),
    served_token bigint,
    served_at    timestamptz,
    PRIMARY KEY (firm_id, matter_id, generation),
    CONSTRAINT matter_demands_served_together CHECK ((served_token IS NULL) = (served_at IS NULL))
);
-- The commit's lookup: a matter's unserved demands (few at any time).
CREATE INDEX matter_demands_unserved_idx ON ops.matter_demands (firm_id, matter_id) WHERE served_at IS NULL;
-- Retention: served rows by age (the sweeper prunes with RAIL_INBOX_RETENTION).
CREATE INDEX matter_demands_served_idx ON ops.matter_demands (served_at) WHERE served_at IS NOT NULL;

-- One row per nudge handed to a build queue (or refused by it): the
-- trigger's, the builder's follow-ups, the sweeper's re-nudges, the
-- backfill's admissions. uuid keys: no sequence (nextval may pin an RDS
-- Proxy session).
CREATE TABLE ops.matter_nudges (
    nudge_id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    firm_id       uuid NOT NULL,
    matter_id     uuid NOT NULL,
    reason        text NOT NULL,
    queue         text NOT NULL DEFAULT 'build' CONSTRAINT matter_nudges_queue_valid CHECK (queue IN ('build', 'backfill')),
    delay_seconds float8 NOT NULL DEFAULT 0,
    trace_header  text NOT NULL DEFAULT '' CONSTRAINT matter_nudges_trace_header_short CHECK (length(trace_header) <= 500),
    error         text NOT NULL DEFAULT '',
    sent_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX matter_nudges_matter_idx ON ops.matter_nudges (firm_id, matter_id, sent_at);
CREATE INDEX matter_nudges_sent_idx ON ops.matter_nudges (sent_at);

-- The builder's identity on every frame (builder keeps the name). Frames
-- landed before this migration read as version '', model '', prompt '': a
-- deployed builder with any version differs from them, so they count as
-- outdated (nothing recorded which builder version made them).
ALTER TABLE ops.matter_frames
    ADD COLUMN builder_version text NOT NULL DEFAULT '',
    ADD COLUMN model_id        text NOT NULL DEFAULT '',
    ADD COLUMN prompt_hash     text NOT NULL DEFAULT '';

-- The backfill's control (one row): paused or not, and the token bucket of
-- its rate. allowance_at is the time through which the configured rate has
-- been spent: a sweep may admit rate x (now - allowance_at) builds, at most
-- one minute's worth, and moves allowance_at on by what it admitted.
CREATE TABLE ops.backfill_control (
    singleton    boolean PRIMARY KEY DEFAULT true CONSTRAINT backfill_control_one_row CHECK (singleton),
    paused       boolean NOT NULL DEFAULT false,
    changed_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    changed_by   text NOT NULL DEFAULT '',
    allowance_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    admitted     bigint NOT NULL DEFAULT 0 -- backfill builds admitted since the row was created
);
INSERT INTO ops.backfill_control DEFAULT VALUES;

-- Roll back: DROP TABLE ops.backfill_control, ops.matter_nudges,
-- ops.matter_demands; ALTER TABLE ops.matter_frames DROP COLUMN prompt_hash,
-- DROP COLUMN model_id, DROP COLUMN builder_version.
