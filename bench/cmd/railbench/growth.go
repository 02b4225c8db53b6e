package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// GrowthResults: ledger latency as history (landed frames and finished
// runs) accumulates on the measured matters.
type GrowthResults struct {
	Matters int           `json:"matters"`
	Cycles  int           `json:"cycles_per_rep"`
	Stages  []GrowthStage `json:"stages"`
	// The largest stage re-measured with a partial index on open runs.
	IndexExperiment *GrowthStage `json:"index_experiment,omitempty"`
	Notes           []string     `json:"notes"`
}

type GrowthStage struct {
	Variant       string  `json:"variant,omitempty"`
	HistoryRows   int     `json:"history_rows"` // in each of ops.matter_frames and ops.matter_frame_runs
	PerMatter     int     `json:"history_rows_per_matter"`
	GenerateSecs  float64 `json:"generate_seconds"`
	DemandP50     Series  `json:"demand_p50_ms"`
	ClaimP50      Series  `json:"claim_p50_ms"`
	ClaimP99      Series  `json:"claim_p99_ms"`
	CommitP50     Series  `json:"commit_p50_ms"`
	CommitP99     Series  `json:"commit_p99_ms"`
	Drain         Series  `json:"drain_ms"`
	ExplainClaim  string  `json:"explain_claim"`
	ExplainCommit string  `json:"explain_commit"`
	TableSizes    string  `json:"table_sizes"`
}

func runGrowth(ctx context.Context, e *env, o options) (*GrowthResults, error) {
	sizes := slices.Clone(o.Growth)
	slices.Sort(sizes)
	gr := &GrowthResults{Matters: o.GrowthMatters, Cycles: o.GrowthCycles, Notes: []string{
		"history is generated on the measured matters themselves (rows per matter = rows / matters), tokens continuing each matter's own sequence, runs marked 'landed'; then VACUUM ANALYZE (the steady state autovacuum reaches)",
		"latencies: one worker, sequential demand -> claim -> commit cycles over the matters; p50/p99 per repetition, median over repetitions",
		"drain: one demand on every measured matter recorded, then W workers serve them all (claim + commit); wall time",
		"explain: EXPLAIN (ANALYZE, BUFFERS) of the ledger's own claim and commit statements (captured through a querier), in a transaction rolled back",
	}}
	pool, err := e.pool(ctx, int32(o.Workers+4), nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	led := postgres.NewLedger(pool, rail.Config{})
	refs, err := createMatters(ctx, pool, o.GrowthMatters, "growth ")
	if err != nil {
		return nil, err
	}
	// One landed build each, so every ledger row exists.
	if _, err := railServe(ctx, led, &wireCounter{}, refs, o.Workers, o.Batch, feedDemands); err != nil {
		return nil, err
	}
	have := 0
	for _, size := range sizes {
		st := GrowthStage{HistoryRows: size, PerMatter: size / len(refs)}
		add := st.PerMatter - have/len(refs)
		if add > 0 {
			logf("growth: generating history to %s rows each in frames and runs (%d per matter)", sizeName(size), st.PerMatter)
			t0 := time.Now()
			if err := generateHistory(ctx, pool, refs, add); err != nil {
				return nil, err
			}
			st.GenerateSecs = round(time.Since(t0).Seconds(), 1)
			have = size
		}
		if err := measureGrowthStage(ctx, led, pool, refs, o, &st); err != nil {
			return nil, err
		}
		gr.Stages = append(gr.Stages, st)
	}
	if o.GrowthIndexExperiment && len(gr.Stages) > 0 && have > 0 {
		// The claim's "expired" step scans every earlier run of the matter
		// through the unique (firm, matter, token) index and filters on
		// outcome. A partial index on the open outcomes, with the claim's
		// own predicate, lets it touch only open runs. Measured here on the
		// largest history, then dropped (pkg/rail's schema is not changed).
		logf("growth: experiment: partial index on open runs at %s rows", sizeName(have))
		if _, err := pool.Exec(ctx, `CREATE INDEX bench_runs_open_token_idx ON ops.matter_frame_runs (firm_id, matter_id, token)
            WHERE outcome IN ('claimed', 'lease_expired')`); err != nil {
			return nil, err
		}
		if _, err := pool.Exec(ctx, `ANALYZE ops.matter_frame_runs`); err != nil {
			return nil, err
		}
		st := GrowthStage{HistoryRows: have, PerMatter: have / len(refs), Variant: "with partial index on open runs (experiment)"}
		if err := measureGrowthStage(ctx, led, pool, refs, o, &st); err != nil {
			return nil, err
		}
		gr.IndexExperiment = &st
		if _, err := pool.Exec(ctx, `DROP INDEX ops.bench_runs_open_token_idx`); err != nil {
			return nil, err
		}
	}
	return gr, nil
}

func measureGrowthStage(ctx context.Context, led *postgres.Ledger, pool *pgxpool.Pool, refs []rail.MatterRef, o options, st *GrowthStage) error {
	var err error
	var dP50, cP50, cP99, kP50, kP99, drain []float64
	for rep := 1; rep <= o.Reps; rep++ {
		var dl, cl, kl []time.Duration
		for i := range o.GrowthCycles {
			ref := refs[i%len(refs)]
			t0 := time.Now()
			if _, err := led.Demand(ctx, ref, 1); err != nil {
				return err
			}
			t1 := time.Now()
			c, ok, err := led.Claim(ctx, ref, "growth")
			if err != nil || !ok {
				return fmt.Errorf("growth claim: ok=%v err=%v", ok, err)
			}
			t2 := time.Now()
			if _, err := led.Commit(ctx, c, noopFrame); err != nil {
				return err
			}
			t3 := time.Now()
			dl, cl, kl = append(dl, t1.Sub(t0)), append(cl, t2.Sub(t1)), append(kl, t3.Sub(t2))
		}
		dP50 = append(dP50, quantile(durationsMS(dl), 0.5))
		cP50, cP99 = append(cP50, quantile(durationsMS(cl), 0.5)), append(cP99, quantile(durationsMS(cl), 0.99))
		kP50, kP99 = append(kP50, quantile(durationsMS(kl), 0.5)), append(kP99, quantile(durationsMS(kl), 0.99))
		r, err := railServe(ctx, led, &wireCounter{}, refs, o.Workers, o.Batch, feedBefore)
		if err != nil {
			return err
		}
		drain = append(drain, ms(r.Elapsed))
	}
	st.DemandP50 = series("ms", dP50)
	st.ClaimP50, st.ClaimP99 = series("ms", cP50), series("ms", cP99)
	st.CommitP50, st.CommitP99 = series("ms", kP50), series("ms", kP99)
	st.Drain = series("ms", drain)
	st.ExplainClaim, st.ExplainCommit, err = explainLedger(ctx, led, pool, refs[0])
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	_ = pool.QueryRow(ctx, `SELECT 'frames ' || pg_size_pretty(pg_total_relation_size('ops.matter_frames'))
            || ', runs ' || pg_size_pretty(pg_total_relation_size('ops.matter_frame_runs'))`).Scan(&st.TableSizes)
	logf("growth %s: claim p50 %.2fms p99 %.2fms, commit p50 %.2fms p99 %.2fms, drain %.0fms (%d matters)",
		sizeName(st.HistoryRows), st.ClaimP50.Median, st.ClaimP99.Median, st.CommitP50.Median, st.CommitP99.Median, st.Drain.Median, len(refs))
	return nil
}

// generateHistory appends `perMatter` landed frames and runs to every
// matter, continuing its token sequence, and moves its ledger row on.
func generateHistory(ctx context.Context, pool *pgxpool.Pool, refs []rail.MatterRef, perMatter int) error {
	ids := uuidsOf(refs)
	stmts := []string{
		`INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body, built_at)
         SELECT j.firm_id, j.matter_id, j.claimed_generation + g, j.built_generation + g, 'history', 'bench/history', false, '{}'::jsonb, clock_timestamp()
         FROM ops.matter_frame_jobs j, generate_series(1, $2::int) g
         WHERE j.matter_id = ANY($1::uuid[])`,
		`INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id, outcome, claimed_at, finished_at)
         SELECT j.firm_id, j.matter_id, j.claimed_generation + g, j.built_generation + g, 'history', 'landed', clock_timestamp(), clock_timestamp()
         FROM ops.matter_frame_jobs j, generate_series(1, $2::int) g
         WHERE j.matter_id = ANY($1::uuid[])`,
		`UPDATE ops.matter_frame_jobs SET
             requested_generation = requested_generation + $2, target_generation = target_generation + $2,
             built_generation = built_generation + $2, claimed_generation = claimed_generation + $2
         WHERE matter_id = ANY($1::uuid[])`,
	}
	// Frames and runs are generated in parallel, each in its own
	// transaction with the foreign-key triggers skipped where allowed
	// (session_replication_role needs a superuser; the rows are consistent
	// by construction), then the ledger rows move on.
	insert := func(sql string) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SAVEPOINT r"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT r"); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, sql, ids, perMatter); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	errs := make(chan error, 2)
	for _, sql := range stmts[:2] {
		go func() { errs <- insert(sql) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			return err
		}
	}
	if _, err := pool.Exec(ctx, stmts[2], ids, perMatter); err != nil {
		return err
	}
	for _, t := range []string{"ops.matter_frames", "ops.matter_frame_runs", "ops.matter_frame_jobs"} {
		if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+t); err != nil {
			return err
		}
	}
	return nil
}

var errExplained = errors.New("explained")

// explainQuerier runs every statement it is given as EXPLAIN (ANALYZE,
// BUFFERS) on tx and keeps the plan; callers see errExplained.
type explainQuerier struct {
	tx   pgx.Tx
	plan string
}

func (q *explainQuerier) explain(ctx context.Context, sql string, args ...any) error {
	rows, err := q.tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
	if err != nil {
		return err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	q.plan = strings.Join(lines, "\n")
	return errExplained
}

func (q *explainQuerier) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, q.explain(ctx, sql, args...)
}

func (q *explainQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return nil, q.explain(ctx, sql, args...)
}

func (q *explainQuerier) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return errRow{q.explain(ctx, sql, args...)}
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// explainLedger explains the claim and the commit on ref in a transaction
// that is rolled back.
func explainLedger(ctx context.Context, led *postgres.Ledger, pool *pgxpool.Pool, ref rail.MatterRef) (claim, commit string, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return "", "", err
	}
	defer tx.Rollback(ctx)
	if _, err := led.On(tx).Demand(ctx, ref, 1); err != nil {
		return "", "", err
	}
	q := &explainQuerier{tx: tx}
	if _, _, err := led.On(q).Claim(ctx, ref, "explain"); !errors.Is(err, errExplained) {
		return "", "", fmt.Errorf("explain claim: %v", err)
	}
	claim = q.plan
	if err := tx.Rollback(ctx); err != nil { // the explained claim ran; start over
		return "", "", err
	}
	tx2, err := pool.Begin(ctx)
	if err != nil {
		return "", "", err
	}
	defer tx2.Rollback(ctx)
	if _, err := led.On(tx2).Demand(ctx, ref, 1); err != nil {
		return "", "", err
	}
	c, ok, err := led.On(tx2).Claim(ctx, ref, "explain")
	if err != nil || !ok {
		return "", "", fmt.Errorf("claim for explain: ok=%v err=%v", ok, err)
	}
	q2 := &explainQuerier{tx: tx2}
	if _, err := led.On(q2).Commit(ctx, c, noopFrame); !errors.Is(err, errExplained) {
		return "", "", fmt.Errorf("explain commit: %v", err)
	}
	return claim, q2.plan, nil
}
