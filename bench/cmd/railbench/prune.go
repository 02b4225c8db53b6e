package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/postgres"
)

// PruneResults: one frame-retention pass (postgres.PruneFrames, what the
// sweeper runs every minute) against old frames that are all inside their
// matters' keep windows (none prunable), at two or more history sizes, beside
// the selection as it was before the candidates (the same run, the same
// data). A flat pass time across sizes is the claim; the baseline grows with
// the old frames.
type PruneResults struct {
	Keep   int                    `json:"keep"`
	Reps   int                    `json:"reps"`
	Sizes  []int                  `json:"sizes"`
	Stages map[string]*PruneStage `json:"stages"` // by old frames kept
	Notes  []string               `json:"notes"`
}

// PruneStage is one history size.
type PruneStage struct {
	OldFrames   int    `json:"old_frames_kept"`
	Matters     int    `json:"matters"`
	FirstMark   Series `json:"rebuild_passes_ms"`      // the passes that rebuild the marks, once (a chunk of matters each)
	Steady      Series `json:"steady_pass_ms"`         // a pass with nothing landed and nothing prunable
	Pruning     Series `json:"pass_pruning_100_ms"`    // a pass that prunes 100 frames of 20 matters that landed since
	Baseline    Series `json:"before_candidates_ms"`   // the old statement, rolled back
	PrunedCheck int64  `json:"frames_pruned_per_pass"` // what the pruning pass deleted (want 100)
}

// oldPruneFramesSQL is the retention statement before the candidates
// (every old frame walked in built_at order, each one's newer frames
// counted), the baseline only.
const oldPruneFramesSQL = `
WITH doomed AS (
    SELECT f.frame_id, f.firm_id, f.matter_id, f.token, f.body_sha256
    FROM ops.matter_frames f
    WHERE f.built_at < clock_timestamp() - make_interval(secs => $2)
      AND (SELECT count(*) FROM ops.matter_frames n
           WHERE n.firm_id = f.firm_id AND n.matter_id = f.matter_id AND n.token > f.token) >= $1
    ORDER BY f.built_at
    LIMIT $3
), gone AS (
    DELETE FROM ops.matter_frames f USING doomed d WHERE f.frame_id = d.frame_id
    RETURNING f.frame_id
)
SELECT (SELECT count(*) FROM gone)`

func runPrune(ctx context.Context, e *env, o options) (*PruneResults, error) {
	pool, err := e.pool(ctx, 4, nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	policy := postgres.FrameRetention{}.WithDefaults()
	r := &PruneResults{Keep: policy.Keep, Reps: o.Reps, Stages: map[string]*PruneStage{}, Sizes: o.PruneSizes, Notes: []string{
		"old frames: built 40 days ago (past the 30-day retention), Keep frames per matter, so none is prunable",
		"steady_pass_ms: postgres.PruneFrames (mark + prune statements) with nothing landed since the last pass and nothing prunable: the issue's case, every minute",
		"pass_pruning_100_ms: 20 fresh matters land 15 frames each (marked by the incremental mark as they land), then age past the retention; one pass prunes their 100 frames outside the keep window",
		"before_candidates_ms: the retention statement before the candidates, on the same data, in a rolled-back transaction",
		"rebuild_passes_ms: after the schema change (or a change of RAIL_FRAME_KEEP) the marks are rebuilt once, postgres.DefaultMarkChunk matters a pass; each value is one such pass",
	}}
	for _, n := range o.PruneSizes {
		st, err := pruneStage(ctx, pool, policy, n, o.Reps)
		if err != nil {
			return nil, err
		}
		r.Stages[fmt.Sprint(n)] = st
		logf("prune: %d old frames kept: steady pass %.1f ms, pruning pass %.1f ms (%d pruned), before the candidates %.1f ms (medians of %d)",
			n, st.Steady.Median, st.Pruning.Median, st.PrunedCheck, st.Baseline.Median, o.Reps)
	}
	return r, nil
}

func pruneStage(ctx context.Context, pool *pgxpool.Pool, policy postgres.FrameRetention, oldFrames, reps int) (*PruneStage, error) {
	firm := uuid.New()
	defer cleanupFirm(context.WithoutCancel(ctx), pool, firm)
	matters := max(oldFrames/policy.Keep, 1)
	if err := seedFramesFor(ctx, pool, firm, matters, policy.Keep, 40*24*time.Hour); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM ops.frame_prune_state; ANALYZE ops.matter_frames`); err != nil {
		return nil, err
	}
	st := &PruneStage{OldFrames: matters * policy.Keep, Matters: matters}
	timed := func(f func() error) (float64, error) {
		began := time.Now()
		err := f()
		return ms(time.Since(began)), err
	}
	// The marks are rebuilt first (as after the schema change or a new keep
	// setting): a chunk of matters a pass.
	var rebuild []float64
	for {
		var again bool
		d, err := timed(func() error {
			var err error
			_, _, again, err = postgres.MarkFrames(ctx, pool, policy.Keep, 0)
			return err
		})
		if err != nil {
			return nil, err
		}
		if !again {
			break
		}
		rebuild = append(rebuild, d)
	}
	st.FirstMark = series("ms", rebuild)
	var steady, pruning, baseline []float64
	for rep := 0; rep < reps; rep++ {
		d, err := timed(func() error {
			r, err := postgres.PruneFrames(ctx, pool, policy)
			if err == nil && r.Frames != 0 {
				err = fmt.Errorf("a steady pass pruned %d frames", r.Frames)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		steady = append(steady, d)

		d, err = timed(func() error {
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				var n int64
				if err := tx.QueryRow(ctx, oldPruneFramesSQL, policy.Keep, policy.Retention.Seconds(), policy.PerPass).Scan(&n); err != nil {
					return err
				}
				return errRollback
			})
		})
		if err != nil && err != errRollback {
			return nil, err
		}
		baseline = append(baseline, d)

		// 20 matters land 15 frames each now, a pass marks them, they age.
		fresh := uuid.New()
		if err := seedFramesFor(ctx, pool, fresh, 20, 15, 0); err != nil {
			return nil, err
		}
		if _, err := postgres.PruneFrames(ctx, pool, policy); err != nil {
			return nil, err
		}
		for _, q := range []string{
			`UPDATE ops.matter_frames SET built_at = built_at - interval '40 days' WHERE firm_id = $1`,
			`UPDATE ops.frame_prune_candidates SET oldest_out_at = oldest_out_at - interval '40 days' WHERE firm_id = $1`,
		} {
			if _, err := pool.Exec(ctx, q, fresh); err != nil {
				return nil, err
			}
		}
		var pruned int64
		d, err = timed(func() error {
			r, err := postgres.PruneFrames(ctx, pool, policy)
			pruned = r.Frames
			return err
		})
		if err != nil {
			return nil, err
		}
		pruning, st.PrunedCheck = append(pruning, d), pruned
		cleanupFirm(ctx, pool, fresh)
	}
	st.Steady, st.Pruning, st.Baseline = series("ms", steady), series("ms", pruning), series("ms", baseline)
	return st, nil
}

var errRollback = fmt.Errorf("rolled back on purpose")

// seedFramesFor lands, by SQL, frames frames (tokens 1..frames) on each of
// matters new matters of firm, built about age ago.
func seedFramesFor(ctx context.Context, pool *pgxpool.Pool, firm uuid.UUID, matters, frames int, age time.Duration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, st := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO app.firms (firm_id) VALUES ($1)`, []any{firm}},
			{`INSERT INTO app.matters (firm_id, matter_id) SELECT $1, gen_random_uuid() FROM generate_series(1, $2::int)`, []any{firm, matters}},
			{`INSERT INTO ops.matter_frame_jobs (firm_id, matter_id, requested_generation, claimed_generation, target_generation, built_generation)
                SELECT firm_id, matter_id, $2::int, $2::int, $2::int, $2::int FROM app.matters WHERE firm_id = $1`, []any{firm, frames}},
			{`INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body, built_at)
                SELECT m.firm_id, m.matter_id, g, g, 'f' || g, 'bench', false, '{}'::jsonb,
                       clock_timestamp() - make_interval(secs => $3::float8) + make_interval(secs => g)
                FROM app.matters m, generate_series(1, $2::int) g WHERE m.firm_id = $1`, []any{firm, frames, age.Seconds()}},
		} {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return fmt.Errorf("%s: %w", st.sql, err)
			}
		}
		return nil
	})
}

// cleanupFirm removes what seedFramesFor wrote (and the marks of it).
func cleanupFirm(ctx context.Context, pool *pgxpool.Pool, firm uuid.UUID) {
	for _, q := range []string{
		`DELETE FROM ops.frame_prune_candidates WHERE firm_id = $1`,
		`DELETE FROM ops.matter_frame_runs WHERE firm_id = $1`,
		`DELETE FROM ops.matter_frames WHERE firm_id = $1`,
		`DELETE FROM ops.matter_frame_jobs WHERE firm_id = $1`,
		`DELETE FROM app.matters WHERE firm_id = $1`,
		`DELETE FROM app.firms WHERE firm_id = $1`,
	} {
		if _, err := pool.Exec(ctx, q, firm); err != nil {
			logf("prune: cleanup: %v", err)
		}
	}
}
