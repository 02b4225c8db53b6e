-- Grants for on-call's record (migration 010) to the per-function roles of
-- migration 008, each only what its statements touch. Roles that do not
-- exist (a migrating role without CREATEROLE) are skipped, as in 008.

DO $$
BEGIN
    -- trigger: Demand records its demand (INSERT ... ON CONFLICT DO
    -- NOTHING) with its facts' occurred_at read from the outbox; the
    -- trigger's nudges are recorded.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_trigger') THEN
        GRANT SELECT, INSERT ON ops.matter_demands TO brief_trigger;
        GRANT SELECT (event_id, occurred_at) ON ops.domain_event_outbox TO brief_trigger;
        GRANT INSERT ON ops.matter_nudges TO brief_trigger;
    END IF;

    -- builder: the commit stamps the demands its frame served (UPDATE ...
    -- RETURNING) and writes the builder's identity on the frame (covered by
    -- 008's INSERT on ops.matter_frames); follow-up nudges are recorded.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_builder') THEN
        GRANT SELECT, UPDATE ON ops.matter_demands TO brief_builder;
        GRANT INSERT ON ops.matter_nudges TO brief_builder;
    END IF;

    -- sweeper: the backfill locks and spends its control row, records
    -- backfill demand (Demand: the job row's upsert and the demand record,
    -- the facts' occurred_at), records re-nudges and backfill nudges, counts
    -- outdated matters (frames, already granted), prunes served demand and
    -- nudge records.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_sweeper') THEN
        GRANT SELECT, UPDATE ON ops.backfill_control TO brief_sweeper;
        GRANT INSERT ON ops.matter_frame_jobs TO brief_sweeper;
        GRANT SELECT, INSERT, DELETE ON ops.matter_demands TO brief_sweeper;
        GRANT SELECT, INSERT, DELETE ON ops.matter_nudges TO brief_sweeper;
    END IF;
END
$$;

-- Roll back: REVOKE the grants above (REVOKE ALL ON ops.matter_demands,
-- ops.matter_nudges, ops.backfill_control FROM brief_trigger, brief_builder,
-- brief_sweeper; REVOKE INSERT ON ops.matter_frame_jobs FROM brief_sweeper;
-- REVOKE SELECT (event_id, occurred_at) ON ops.domain_event_outbox FROM
-- brief_trigger).
