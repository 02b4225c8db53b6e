-- Frame retention's cost follows what it prunes (issue 18). Before, each
-- pass walked every frame older than RAIL_FRAME_RETENTION in built_at
-- order and counted each one's newer frames: 300,000 old frames, none
-- prunable (every matter within RAIL_FRAME_KEEP), cost 8.9 s a pass, every
-- minute, and the sweeper's 50 s statement timeout is reached near 1.5M.
--
-- A matter's prunable frames are a prefix of its frames in token order
-- (a frame with RAIL_FRAME_KEEP newer ones; older frames have more), so
-- the sweeper keeps one row per matter that has frames outside its keep
-- window: frame_prune_candidates.oldest_out_at is the built_at of the
-- oldest of them. A pass (pkg/postgres/prune.go) marks the matters that
-- landed a frame since the last pass (frame_prune_state.marked_through,
-- read back with an overlap, through matter_frames_built_at_idx), then
-- prunes only candidates whose oldest_out_at is past the retention,
-- re-checking each frame against the matter's current newest frames, and
-- re-marks the candidates it touched. When the keep setting changes (or on
-- the first pass) the marks are rebuilt from all matters once, a bounded
-- chunk of matters a pass.
--
-- New, empty tables: their indexes lock nobody. Only the sweeper writes
-- them.

CREATE TABLE ops.frame_prune_candidates (
    firm_id       uuid NOT NULL,
    matter_id     uuid NOT NULL,
    oldest_out_at timestamptz NOT NULL,
    PRIMARY KEY (firm_id, matter_id)
);
CREATE INDEX frame_prune_candidates_due_idx ON ops.frame_prune_candidates (oldest_out_at);

-- keep: the keep setting the marks are complete for (NULL until the first
-- rebuild ends); marked_through: frames built from then on (less an
-- overlap) are read by the next incremental mark. A rebuild (first pass,
-- or a new keep setting) walks the matters in key order, a bounded chunk a
-- pass: rebuild_keep, the last matter done, and when it started (the
-- incremental marks resume from there when it ends).
CREATE TABLE ops.frame_prune_state (
    singleton          boolean PRIMARY KEY DEFAULT true CONSTRAINT frame_prune_state_one_row CHECK (singleton),
    keep               integer,
    marked_through     timestamptz,
    rebuild_keep       integer,
    rebuild_firm_id    uuid,
    rebuild_matter_id  uuid,
    rebuild_started_at timestamptz
);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_sweeper') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON ops.frame_prune_candidates, ops.frame_prune_state TO brief_sweeper;
    END IF;
END
$$;

-- Roll back: deploy the sweeper of the release before this first (it
-- ignores both tables), then DROP TABLE ops.frame_prune_candidates,
-- ops.frame_prune_state; and set public.brief_rail_schema_version's
-- version back by one.
