package postgres

import (
	"context"
	"fmt"
	"time"
)

// FrameRetention says which landed frames (and their runs and bodies) the
// sweeper keeps. A frame is pruned only when both hold: it is not among
// the newest Keep frames of its matter, and it was built more than
// Retention ago. The newest frame, the current Brief, is never pruned.
type FrameRetention struct {
	Keep      int           // newest frames kept per matter; default 10, at least 1
	Retention time.Duration // frames younger than this are kept; default 720h (30 days)
	PerPass   int           // frames deleted per pass at most; default 1000
}

// Defaults of FrameRetention.
const (
	DefaultFrameKeep      = 10
	DefaultFrameRetention = 30 * 24 * time.Hour
	DefaultFramesPerPass  = 1000
)

func (p FrameRetention) withDefaults() FrameRetention {
	if p.Keep <= 0 {
		p.Keep = DefaultFrameKeep
	}
	if p.Retention <= 0 {
		p.Retention = DefaultFrameRetention
	}
	if p.PerPass <= 0 {
		p.PerPass = DefaultFramesPerPass
	}
	return p
}

// FramesPruned is what one PruneFrames pass deleted.
type FramesPruned struct {
	Frames int64 `json:"frames"`
	Runs   int64 `json:"runs"`
	Bodies int64 `json:"bodies"`
}

// pruneFramesSQL is one pass, one statement (so it commits whole or not at
// all; no transaction spans passes): up to $3 frames, oldest first, that
// are older than $2 seconds and have at least $1 newer frames in their
// matter; with them, the runs of those matters below the oldest frame the
// matter keeps (finished and older than $2: the run table stays a gapless
// run of tokens up to claimed_generation), and the bodies no remaining
// frame references and no commit has re-used within $2 (a commit re-using
// a body updates used_at under the row lock, so this DELETE, re-checking
// the row, leaves it).
const pruneFramesSQL = `
WITH doomed AS (
    SELECT f.frame_id, f.firm_id, f.matter_id, f.token, f.body_sha256
    FROM ops.matter_frames f
    WHERE f.built_at < clock_timestamp() - make_interval(secs => $2)
      AND (SELECT count(*) FROM ops.matter_frames n
           WHERE n.firm_id = f.firm_id AND n.matter_id = f.matter_id AND n.token > f.token) >= $1
    ORDER BY f.built_at -- matter_frames_built_at_idx
    LIMIT $3
), gone AS (
    DELETE FROM ops.matter_frames f USING doomed d WHERE f.frame_id = d.frame_id
    RETURNING f.frame_id
), floor AS (
    SELECT t.firm_id, t.matter_id,
           (SELECT min(f.token) FROM ops.matter_frames f
            WHERE f.firm_id = t.firm_id AND f.matter_id = t.matter_id
              AND NOT EXISTS (SELECT 1 FROM doomed d WHERE d.frame_id = f.frame_id)) AS token
    FROM (SELECT DISTINCT firm_id, matter_id FROM doomed) t
), runs AS (
    DELETE FROM ops.matter_frame_runs r USING floor
    WHERE r.firm_id = floor.firm_id AND r.matter_id = floor.matter_id AND r.token < floor.token
      AND r.outcome <> 'claimed' AND r.claimed_at < clock_timestamp() - make_interval(secs => $2)
    RETURNING r.run_id
), bodies AS (
    DELETE FROM ops.matter_frame_bodies b
    USING (SELECT DISTINCT firm_id, matter_id, body_sha256 FROM doomed WHERE body_sha256 IS NOT NULL) d
    WHERE b.firm_id = d.firm_id AND b.matter_id = d.matter_id AND b.body_sha256 = d.body_sha256
      AND b.used_at < clock_timestamp() - make_interval(secs => $2)
      AND NOT EXISTS (SELECT 1 FROM ops.matter_frames f
                      WHERE f.firm_id = b.firm_id AND f.matter_id = b.matter_id AND f.body_sha256 = b.body_sha256
                        AND NOT EXISTS (SELECT 1 FROM doomed x WHERE x.frame_id = f.frame_id))
    RETURNING b.body_sha256
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM runs), (SELECT count(*) FROM bodies)`

// PruneFrames runs one bounded pass of frame retention (the sweeper calls
// it once per invocation): at most p.PerPass frames, with their matters'
// older runs and their unreferenced bodies, in one statement.
func PruneFrames(ctx context.Context, q Querier, p FrameRetention) (FramesPruned, error) {
	p = p.withDefaults()
	var r FramesPruned
	if err := q.QueryRow(ctx, pruneFramesSQL, p.Keep, p.Retention.Seconds(), p.PerPass).
		Scan(&r.Frames, &r.Runs, &r.Bodies); err != nil {
		return r, fmt.Errorf("prune frames: %w", err)
	}
	return r, nil
}
