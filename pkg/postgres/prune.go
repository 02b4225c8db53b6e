package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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

// WithDefaults returns p with its zero fields set to the defaults.
func (p FrameRetention) WithDefaults() FrameRetention { return p.withDefaults() }

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

// Frame retention keeps its cost to what it prunes. A matter's prunable
// frames are a prefix of its frames in token order (a frame with Keep
// newer frames: older ones have more), so the sweeper keeps one row per
// matter that has frames outside its keep window,
// ops.frame_prune_candidates (oldest_out_at: the built_at of the oldest
// such frame). A pass is two statements: a mark (markFramesSQL: the
// matters that landed a frame since the last pass; or, while the marks are
// not complete for the keep setting, rebuildMarksSQL: the next chunk of
// matters), and pruneFramesSQL, which prunes candidates past the retention
// and re-marks the ones it touched.
// Neither reads a frame the keep window holds except a matter's newest
// Keep (the floor): 300,000 old frames within their keep windows cost
// nothing a pass. Each frame is re-checked against its matter's current
// newest frames when it is deleted, so a stale mark can only delay a
// prune, never prune a frame the keep window holds.

// markOverlap: a pass re-reads the frames built this long before the last
// pass's mark, so a commit that became visible after that mark (a
// builder's commit is one statement under a 30 s statement_timeout) is
// still seen.
const markOverlap = 10 * time.Minute

// markFreshSQL is how a mark computes, for the matters in the CTE marks
// (firm_id, matter_id), the built_at of each one's oldest frame outside
// its newest $1 (NULL: none), through matter_frames_one_per_token (a probe
// for the $1-th newest token, one for the oldest below it).
const markFreshSQL = `fresh AS (
    SELECT c.firm_id, c.matter_id,
           (SELECT o.built_at FROM ops.matter_frames o
            WHERE o.firm_id = c.firm_id AND o.matter_id = c.matter_id
              AND o.token < (SELECT n.token FROM ops.matter_frames n
                             WHERE n.firm_id = c.firm_id AND n.matter_id = c.matter_id
                             ORDER BY n.token DESC OFFSET $1 - 1 LIMIT 1)
            ORDER BY o.token LIMIT 1) AS oldest_out_at
    FROM marks c
), marked AS (
    INSERT INTO ops.frame_prune_candidates (firm_id, matter_id, oldest_out_at)
    SELECT firm_id, matter_id, oldest_out_at FROM fresh WHERE oldest_out_at IS NOT NULL
    ON CONFLICT (firm_id, matter_id) DO UPDATE SET oldest_out_at = EXCLUDED.oldest_out_at
    RETURNING 1
)`

// markFramesSQL is the incremental mark: the matters that landed a frame
// since $3 (the last mark, epoch seconds, less the overlap $2), through
// matter_frames_built_at_idx, so its cost follows the frames landed since.
// The mark's time comes in as a number the same pass read from
// ops.frame_prune_state (never a client clock), so the planner sees it: a
// pass with nothing landed is planned as the handful of rows it reads.
const markFramesSQL = `
WITH started AS (
    SELECT clock_timestamp() AS at
), marks AS (
    SELECT DISTINCT f.firm_id, f.matter_id
    FROM ops.matter_frames f
    WHERE f.built_at >= to_timestamp($3::float8) - make_interval(secs => $2)
), ` + markFreshSQL + `, state AS (
    UPDATE ops.frame_prune_state SET marked_through = (SELECT at FROM started)
    WHERE keep = $1
    RETURNING 1
)
SELECT (SELECT count(*) FROM marks), (SELECT count(*) FROM marked), (SELECT count(*) FROM state)`

// rebuildMarksSQL is one chunk of a rebuild (the first pass, or a new keep
// setting $1): the next $4 matters after ($2, $3) (NULL: from the first)
// in key order, through the job rows' primary key; their marks replace
// whatever was there. The chunk that comes back short ends the rebuild:
// the marks are complete for $1, and the incremental marks resume from
// when the rebuild started (frames landed meanwhile are read then).
const rebuildMarksSQL = `
WITH started AS (
    SELECT clock_timestamp() AS at
), marks AS (
    SELECT j.firm_id, j.matter_id FROM ops.matter_frame_jobs j
    WHERE $2::uuid IS NULL OR (j.firm_id, j.matter_id) > ($2::uuid, $3::uuid)
    ORDER BY j.firm_id, j.matter_id
    LIMIT $4
), last AS (
    SELECT firm_id, matter_id FROM marks ORDER BY firm_id DESC, matter_id DESC LIMIT 1
), ends AS (
    SELECT (SELECT count(*) FROM marks) < $4 AS done
), ` + markFreshSQL + `, cleared AS (
    DELETE FROM ops.frame_prune_candidates p
    WHERE ($2::uuid IS NULL OR (p.firm_id, p.matter_id) > ($2::uuid, $3::uuid))
      AND ((SELECT done FROM ends) OR (p.firm_id, p.matter_id) <= (SELECT firm_id, matter_id FROM last))
      AND NOT EXISTS (SELECT 1 FROM fresh x
                      WHERE x.firm_id = p.firm_id AND x.matter_id = p.matter_id AND x.oldest_out_at IS NOT NULL)
    RETURNING 1
), state AS (
    INSERT INTO ops.frame_prune_state AS s (singleton, rebuild_keep, rebuild_firm_id, rebuild_matter_id, rebuild_started_at)
    SELECT true, $1, l.firm_id, l.matter_id, st.at
    FROM started st LEFT JOIN last l ON true
    ON CONFLICT (singleton) DO UPDATE SET
        keep               = CASE WHEN (SELECT done FROM ends) THEN $1 ELSE s.keep END,
        marked_through     = CASE WHEN (SELECT done FROM ends)
                                  THEN coalesce(CASE WHEN $2::uuid IS NULL THEN NULL ELSE s.rebuild_started_at END, EXCLUDED.rebuild_started_at)
                                  ELSE s.marked_through END,
        rebuild_keep       = CASE WHEN (SELECT done FROM ends) THEN NULL ELSE $1 END,
        rebuild_firm_id    = CASE WHEN (SELECT done FROM ends) THEN NULL ELSE EXCLUDED.rebuild_firm_id END,
        rebuild_matter_id  = CASE WHEN (SELECT done FROM ends) THEN NULL ELSE EXCLUDED.rebuild_matter_id END,
        rebuild_started_at = CASE WHEN (SELECT done FROM ends) THEN NULL
                                  WHEN $2::uuid IS NULL THEN EXCLUDED.rebuild_started_at
                                  ELSE s.rebuild_started_at END
    RETURNING 1
)
SELECT (SELECT count(*) FROM marks), (SELECT count(*) FROM marked), (SELECT done FROM ends),
       (SELECT count(*) FROM state), (SELECT count(*) FROM cleared)`

// markStateSQL reads the last pass's mark: the keep its marks are complete
// for, its time as epoch seconds, and a rebuild in progress (its keep and
// the last matter it marked).
const markStateSQL = `SELECT keep, coalesce(extract(epoch FROM marked_through)::float8, '-Infinity'::float8),
        rebuild_keep, rebuild_firm_id, rebuild_matter_id
    FROM ops.frame_prune_state`

// DefaultMarkChunk is how many matters one pass of a rebuild marks.
const DefaultMarkChunk = 5000

// MarkFrames is PruneFrames' first statement: it marks the matters that
// landed frames since the last pass or, while the marks are not complete
// for keep (the first pass, a new keep setting), the next chunk of
// matters (at most chunk; zero: DefaultMarkChunk). It reports how many
// matters it read and marked, and whether it was a rebuild chunk.
func MarkFrames(ctx context.Context, q Querier, keep, chunk int) (read, marked int64, rebuild bool, err error) {
	if chunk <= 0 {
		chunk = DefaultMarkChunk
	}
	var (
		was, rebuildKeep   *int
		since              float64
		afterFirm, afterMt uuid.NullUUID
	)
	switch err := q.QueryRow(ctx, markStateSQL).Scan(&was, &since, &rebuildKeep, &afterFirm, &afterMt); {
	case errors.Is(err, pgx.ErrNoRows):
		rebuild = true
	case err != nil:
		return 0, 0, false, fmt.Errorf("prune frames: mark state: %w", err)
	case rebuildKeep != nil && *rebuildKeep == keep:
		rebuild = true // continue it
	case rebuildKeep != nil || was == nil || *was != keep:
		rebuild, afterFirm, afterMt = true, uuid.NullUUID{}, uuid.NullUUID{} // (re)start it
	}
	if rebuild {
		var done bool
		var state, cleared int64
		if err := q.QueryRow(ctx, rebuildMarksSQL, keep, afterFirm, afterMt, chunk).
			Scan(&read, &marked, &done, &state, &cleared); err != nil {
			return 0, 0, true, fmt.Errorf("prune frames: rebuild marks: %w", err)
		}
		return read, marked, true, nil
	}
	var state int64
	if err := q.QueryRow(ctx, markFramesSQL, keep, markOverlap.Seconds(), since).Scan(&read, &marked, &state); err != nil {
		return 0, 0, false, fmt.Errorf("prune frames: mark: %w", err)
	}
	return read, marked, false, nil
}

// pruneFramesSQL is one pass, one statement (so it commits whole or not at
// all; no transaction spans passes): up to $3 frames of the candidates
// whose oldest frame outside the keep window is older than $2 seconds,
// each re-checked (older than $2 and below the matter's $1-th newest
// frame); with them, the runs of those matters below the oldest frame the
// matter keeps (finished and older than $2: the run table stays a gapless
// run of tokens up to claimed_generation), and the bodies no remaining
// frame references and no commit has re-used within $2 (a commit re-using
// a body updates used_at under the row lock, so this DELETE, re-checking
// the row, leaves it). The candidates it looked at are re-marked with
// their next frame outside the keep window, or dropped when none is left.
const pruneFramesSQL = `
WITH cand AS (
    SELECT c.firm_id, c.matter_id FROM ops.frame_prune_candidates c
    WHERE c.oldest_out_at < clock_timestamp() - make_interval(secs => $2)
    ORDER BY c.oldest_out_at -- frame_prune_candidates_due_idx
    LIMIT $3
), keep_floor AS (
    SELECT c.firm_id, c.matter_id,
           (SELECT n.token FROM ops.matter_frames n
            WHERE n.firm_id = c.firm_id AND n.matter_id = c.matter_id
            ORDER BY n.token DESC OFFSET $1 - 1 LIMIT 1) AS token
    FROM cand c
), doomed AS (
    SELECT f.frame_id, f.firm_id, f.matter_id, f.token, f.body_sha256
    FROM keep_floor k
    CROSS JOIN LATERAL (
        SELECT f.frame_id, f.firm_id, f.matter_id, f.token, f.body_sha256, f.built_at
        FROM ops.matter_frames f
        WHERE f.firm_id = k.firm_id AND f.matter_id = k.matter_id AND f.token < k.token
          AND f.built_at < clock_timestamp() - make_interval(secs => $2)
        ORDER BY f.token
        LIMIT $3) f
    ORDER BY f.built_at
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
), remarked AS (
    SELECT k.firm_id, k.matter_id,
           (SELECT f.built_at FROM ops.matter_frames f
            WHERE f.firm_id = k.firm_id AND f.matter_id = k.matter_id AND f.token < k.token
              AND NOT EXISTS (SELECT 1 FROM doomed d WHERE d.frame_id = f.frame_id)
            ORDER BY f.token LIMIT 1) AS next_out
    FROM keep_floor k
), kept AS (
    UPDATE ops.frame_prune_candidates c SET oldest_out_at = r.next_out
    FROM remarked r
    WHERE c.firm_id = r.firm_id AND c.matter_id = r.matter_id AND r.next_out IS NOT NULL
    RETURNING 1
), dropped AS (
    DELETE FROM ops.frame_prune_candidates c USING remarked r
    WHERE c.firm_id = r.firm_id AND c.matter_id = r.matter_id AND r.next_out IS NULL
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM runs), (SELECT count(*) FROM bodies),
       (SELECT count(*) FROM kept) + (SELECT count(*) FROM dropped)`

// PruneFrames runs one bounded pass of frame retention (the sweeper calls
// it once per invocation): it marks the matters that landed frames since
// the last pass (MarkFrames), then deletes at most p.PerPass frames,
// with their matters' older runs and their unreferenced bodies, in one
// statement (pruneFramesSQL). Each statement commits by itself on a pool;
// a pass that fails between them only re-marks at the next.
func PruneFrames(ctx context.Context, q Querier, p FrameRetention) (FramesPruned, error) {
	p = p.withDefaults()
	var r FramesPruned
	if _, _, _, err := MarkFrames(ctx, q, p.Keep, 0); err != nil {
		return r, err
	}
	var remarked int64
	if err := q.QueryRow(ctx, pruneFramesSQL, p.Keep, p.Retention.Seconds(), p.PerPass).
		Scan(&r.Frames, &r.Runs, &r.Bodies, &remarked); err != nil {
		return r, fmt.Errorf("prune frames: %w", err)
	}
	return r, nil
}
