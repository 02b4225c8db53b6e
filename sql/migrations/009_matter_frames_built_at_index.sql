---- tern: disable-tx ----
-- Frame retention (pkg/rail/prune.go, PruneFrames): the sweeper deletes
-- frames older than RAIL_FRAME_RETENTION that are not among the newest
-- RAIL_FRAME_KEEP of their matter, oldest first, a bounded number per pass.
-- This index lets that scan start at the oldest frame instead of reading
-- the whole table each pass. matter_frames takes an insert per landed
-- frame, so the index is built CONCURRENTLY (no lock that blocks commits),
-- outside a transaction. A CONCURRENTLY build that failed leaves an
-- INVALID index behind: it is dropped first, so the migration can simply
-- be run again.

DROP INDEX CONCURRENTLY IF EXISTS ops.matter_frames_built_at_idx;
CREATE INDEX CONCURRENTLY matter_frames_built_at_idx ON ops.matter_frames (built_at);

-- Roll back: DROP INDEX CONCURRENTLY IF EXISTS ops.matter_frames_built_at_idx;
