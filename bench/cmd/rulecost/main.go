// Command rulecost is the experiment behind docs/ARCHITECTURE.md, "Each rule
// once": it measures what defining the ledger's rules (claim predicate,
// fence, lease expiry, unserved demand) as SQL functions (inlined by the
// planner) costs against composing each statement from one Go definition
// per rule (the "go" variants: the statement text the ledger sends), and
// what a batch of one (ClaimMany/CommitMany's statement shape) costs
// against the single-row claim and commit. Same server, same run, variants
// interleaved round by round; medians. The statements are copied here as
// they were when the decision was taken (they are the experiment, not the
// product).
//
//	cd bench && go run ./cmd/rulecost [-reps 7] [-cycles 200]
//
// Without DATABASE_URL it starts a throwaway PostgreSQL (internal/testenv/localpg).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/localpg"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	railsql "github.com/pramaan/brief-rail/sql"
)

// The candidate functions (what migration 012 would create).
const functionsSQL = `
ALTER TABLE ops.matter_frame_jobs ADD COLUMN IF NOT EXISTS lease_seconds double precision,
    ADD COLUMN IF NOT EXISTS max_attempts integer;
CREATE FUNCTION ops.job_demand_unserved(j ops.matter_frame_jobs) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN j.requested_generation > j.built_generation;
CREATE FUNCTION ops.job_lease_expired(j ops.matter_frame_jobs, lease_seconds double precision) RETURNS boolean
  LANGUAGE sql VOLATILE PARALLEL SAFE
  RETURN j.run_status = 'running'
     AND j.claimed_at < clock_timestamp() - make_interval(secs => coalesce(j.lease_seconds, lease_seconds));
CREATE FUNCTION ops.job_claimable(j ops.matter_frame_jobs, lease_seconds double precision, max_attempts integer) RETURNS boolean
  LANGUAGE sql VOLATILE PARALLEL SAFE
  RETURN ops.job_demand_unserved(j)
     AND ((j.run_status = 'idle' AND (j.not_before IS NULL OR j.not_before <= clock_timestamp()))
          OR (ops.job_lease_expired(j, lease_seconds) AND j.attempts < coalesce(j.max_attempts, max_attempts)));
CREATE FUNCTION ops.job_holds_token(j ops.matter_frame_jobs, token bigint) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN j.claimed_generation = token AND j.run_status = 'running';`

const (
	claimableText = `j.requested_generation > j.built_generation
      AND (   (j.run_status = 'idle' AND (j.not_before IS NULL OR j.not_before <= clock_timestamp()))
           OR (j.run_status = 'running' AND j.attempts < coalesce(j.max_attempts, $5)
               AND j.claimed_at < clock_timestamp() - make_interval(secs => coalesce(j.lease_seconds, $4))))`
	claimableFn = `ops.job_claimable(j, $4, $5)`
)

const claimSet = `SET
        run_status         = 'running',
        claimed_generation = j.claimed_generation + 1,
        target_generation  = j.requested_generation,
        claimed_at         = clock_timestamp(),
        claimed_by         = $3,
        attempts           = j.attempts + 1,
        not_before         = NULL`

func claimSQL(pred string) string {
	return `
WITH c AS (
    UPDATE ops.matter_frame_jobs AS j ` + claimSet + `
    WHERE j.firm_id = $1 AND j.matter_id = $2
      AND ` + pred + `
      AND EXISTS (SELECT 1 FROM app.matters m
                  WHERE m.firm_id = j.firm_id AND m.matter_id = j.matter_id AND m.status = 'open')
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation,
              j.built_generation, j.attempts, j.claimed_at
), expired AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = 'lease_expired', finished_at = clock_timestamp()
    FROM c
    WHERE r.firm_id = c.firm_id AND r.matter_id = c.matter_id
      AND r.token < c.claimed_generation AND r.outcome = 'claimed'
    RETURNING r.token
), run AS (
    INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
    SELECT firm_id, matter_id, claimed_generation, target_generation, $3 FROM c
)
SELECT c.claimed_generation, c.target_generation, c.built_generation, c.attempts, c.claimed_at,
       EXISTS (SELECT 1 FROM expired)
FROM c`
}

func claimManySQL(pred string) string {
	return `
WITH want AS (
    SELECT DISTINCT u.firm_id, u.matter_id
    FROM unnest($1::uuid[], $2::uuid[]) AS u(firm_id, matter_id)
), locked AS (
    SELECT j.firm_id, j.matter_id
    FROM ops.matter_frame_jobs AS j JOIN want USING (firm_id, matter_id)
    WHERE ` + pred + `
      AND EXISTS (SELECT 1 FROM app.matters m
                  WHERE m.firm_id = j.firm_id AND m.matter_id = j.matter_id AND m.status = 'open')
    ORDER BY j.firm_id, j.matter_id
    FOR NO KEY UPDATE OF j
), c AS (
    UPDATE ops.matter_frame_jobs AS j ` + claimSet + `
    FROM locked
    WHERE j.firm_id = locked.firm_id AND j.matter_id = locked.matter_id
      AND ` + pred + `
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation,
              j.built_generation, j.attempts, j.claimed_at
), expired AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = 'lease_expired', finished_at = clock_timestamp()
    FROM c
    WHERE r.firm_id = c.firm_id AND r.matter_id = c.matter_id
      AND r.token < c.claimed_generation AND r.outcome = 'claimed'
    RETURNING r.firm_id, r.matter_id
), run AS (
    INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
    SELECT firm_id, matter_id, claimed_generation, target_generation, $3 FROM c
)
SELECT c.claimed_generation, c.target_generation, c.built_generation,
       c.attempts, c.claimed_at,
       EXISTS (SELECT 1 FROM expired e WHERE e.firm_id = c.firm_id AND e.matter_id = c.matter_id)
FROM c
ORDER BY c.firm_id, c.matter_id`
}

const commitSet = `SET
        run_status       = 'idle',
        built_generation = j.target_generation,
        attempts         = 0,
        not_before       = NULL,
        last_error       = '',
        demand_since     = CASE WHEN j.requested_generation > j.target_generation THEN j.claimed_at END`

func commitSQL(fence string) string {
	return `
WITH fence AS (
    UPDATE ops.matter_frame_jobs AS j ` + commitSet + `
    WHERE j.firm_id = $1 AND j.matter_id = $2 AND ` + fence + `
    RETURNING j.firm_id, j.matter_id, j.target_generation, j.requested_generation
), frame AS (
    INSERT INTO ops.matter_frames
        (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body)
    SELECT firm_id, matter_id, $3, target_generation, $4, $5, $6, $7::jsonb FROM fence
    RETURNING frame_id
), run AS (
    UPDATE ops.matter_frame_runs AS r SET outcome = 'landed', finished_at = clock_timestamp(), error = ''
    FROM fence WHERE r.firm_id = fence.firm_id AND r.matter_id = fence.matter_id AND r.token = $3
), fact AS (
    INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, trace_header)
    SELECT fence.firm_id, fence.matter_id, 'frame.built',
           jsonb_build_object('frame_id', frame.frame_id::text, 'token', $3::text,
                              'target_generation', fence.target_generation::text),
           $8
    FROM fence, frame
)
SELECT frame.frame_id, fence.target_generation, fence.requested_generation FROM fence, frame`
}

func commitManySQL(lockFence, updFence string) string {
	return `
WITH items AS (
    SELECT DISTINCT ON (u.firm_id, u.matter_id, u.token) u.*
    FROM unnest($1::uuid[], $2::uuid[], $3::int8[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[])
         WITH ORDINALITY AS u(firm_id, matter_id, token, fingerprint, builder, model_invoked, body, trace_header, ord)
    ORDER BY u.firm_id, u.matter_id, u.token, u.ord
), locked AS (
    SELECT i.ord, i.token, j.firm_id, j.matter_id
    FROM ops.matter_frame_jobs AS j JOIN items AS i USING (firm_id, matter_id)
    WHERE ` + lockFence + `
    ORDER BY j.firm_id, j.matter_id
    FOR NO KEY UPDATE OF j
), fence AS (
    UPDATE ops.matter_frame_jobs AS j ` + commitSet + `
    FROM locked
    WHERE j.firm_id = locked.firm_id AND j.matter_id = locked.matter_id
      AND ` + updFence + `
    RETURNING locked.ord, locked.token, j.firm_id, j.matter_id, j.target_generation, j.requested_generation
), frame AS (
    INSERT INTO ops.matter_frames
        (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body)
    SELECT fence.firm_id, fence.matter_id, fence.token, fence.target_generation,
           i.fingerprint, i.builder, i.model_invoked, i.body::jsonb
    FROM fence JOIN items AS i ON i.ord = fence.ord
    RETURNING frame_id, firm_id, matter_id
), run AS (
    UPDATE ops.matter_frame_runs AS r SET outcome = 'landed', finished_at = clock_timestamp(), error = ''
    FROM fence WHERE r.firm_id = fence.firm_id AND r.matter_id = fence.matter_id AND r.token = fence.token
), fact AS (
    INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, trace_header)
    SELECT fence.firm_id, fence.matter_id, 'frame.built',
           jsonb_build_object('frame_id', frame.frame_id::text, 'token', fence.token::text,
                              'target_generation', fence.target_generation::text),
           i.trace_header
    FROM fence JOIN frame USING (firm_id, matter_id) JOIN items AS i ON i.ord = fence.ord
)
SELECT fence.ord, frame.frame_id, fence.target_generation, fence.requested_generation
FROM fence JOIN frame USING (firm_id, matter_id)`
}

type variant struct {
	name            string
	batch           bool
	claim, commit   string
	claimN, commit1 time.Duration
}

func main() {
	reps := flag.Int("reps", 7, "repetitions (variants interleaved in each)")
	cycles := flag.Int("cycles", 200, "demand/claim/commit cycles per variant per repetition")
	flag.Parse()
	ctx := context.Background()
	if err := run(ctx, *reps, *cycles); err != nil {
		fmt.Fprintln(os.Stderr, "rulecost:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, reps, cycles int) error {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		s, err := localpg.Start(ctx, localpg.Options{})
		if err != nil {
			return err
		}
		defer s.Stop()
		url = s.URL("postgres")
	}
	db := fmt.Sprintf("rulecost_%d", time.Now().UnixNano()%1_000_000)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		return err
	}
	defer func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)")
		admin.Close(context.Background())
	}()
	cfg, _ := pgx.ParseConfig(url)
	cfg.Database = db
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	if _, err := railsql.Migrate(ctx, conn, nil); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, functionsSQL); err != nil {
		return err
	}
	var version string
	_ = conn.QueryRow(ctx, "SHOW server_version").Scan(&version)
	// Plans: the functions must be inlined (no ops.job_ call left in the plan).
	for _, q := range []struct {
		name, sql string
		args      []any
	}{
		{"claim(fn)", claimSQL(claimableFn), []any{uuid.New(), uuid.New(), "w", 900.0, 5}},
		{"commit(fn)", commitSQL("ops.job_holds_token(j, $3)"), []any{uuid.New(), uuid.New(), int64(1), "fp", "b", false, "{}", ""}},
	} {
		var plan []string
		rows, err := conn.Query(ctx, "EXPLAIN (VERBOSE, COSTS OFF) "+q.sql, q.args...)
		if err != nil {
			return fmt.Errorf("explain %s: %w", q.name, err)
		}
		for rows.Next() {
			var l string
			_ = rows.Scan(&l)
			plan = append(plan, l)
		}
		rows.Close()
		fmt.Printf("plan %s: function calls left in plan: %v\n", q.name, strings.Contains(strings.Join(plan, "\n"), "job_"))
	}
	conn.Close(ctx)

	vs := []*variant{
		{name: "single/go", claim: claimSQL(claimableText), commit: commitSQL("j.claimed_generation = $3 AND j.run_status = 'running'")},
		{name: "single/sqlfn", claim: claimSQL(claimableFn), commit: commitSQL("ops.job_holds_token(j, $3)")},
		{name: "batch1/go", batch: true, claim: claimManySQL(claimableText),
			commit: commitManySQL("j.claimed_generation = i.token AND j.run_status = 'running'", "j.claimed_generation = locked.token AND j.run_status = 'running'")},
		{name: "batch1/sqlfn", batch: true, claim: claimManySQL(claimableFn),
			commit: commitManySQL("ops.job_holds_token(j, i.token)", "ops.job_holds_token(j, locked.token)")},
	}
	for _, v := range vs {
		fmt.Printf("statement text %-12s claim %5d bytes, commit %5d bytes\n", v.name, len(v.claim), len(v.commit))
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		w := &counter{}
		pool, err := openPool(ctx, cfg, mode, w)
		if err != nil {
			return err
		}
		// Interleaved: every round runs one cycle of each variant, in a
		// rotating order, so load on the shared machine hits all alike.
		claims := map[string][]float64{}
		commits := map[string][]float64{}
		rt := map[string][2]float64{}
		for round := 0; round < reps*cycles; round++ {
			order := slices.Clone(vs)
			for i := 0; i < round%len(order); i++ {
				order = append(order[1:], order[0])
			}
			for _, v := range order {
				cl, co, rc, rk, err := cyclesFor(ctx, pool, w, v, 1)
				if err != nil {
					return fmt.Errorf("%s: %w", v.name, err)
				}
				claims[v.name] = append(claims[v.name], cl...)
				commits[v.name] = append(commits[v.name], co...)
				r := rt[v.name]
				rt[v.name] = [2]float64{r[0] + rc, r[1] + rk}
			}
		}
		modeName := map[pgx.QueryExecMode]string{pgx.QueryExecModeExec: "exec", pgx.QueryExecModeSimpleProtocol: "simple_protocol"}[mode]
		n := float64(reps * cycles)
		fmt.Printf("\nPostgreSQL %s, mode %s, %d interleaved rounds; client-side latency, median and p90 (µs); paired ratio = median over rounds of variant/baseline\n", version, modeName, reps*cycles)
		base := vs[0].name
		for _, v := range vs {
			fmt.Printf("  %-12s claim %7.0f (p90 %7.0f, x%.3f)  commit %7.0f (p90 %7.0f, x%.3f)  round trips: claim %.2f commit %.2f\n",
				v.name, median(claims[v.name]), pct(claims[v.name], 0.9), pairedRatio(claims[v.name], claims[base]),
				median(commits[v.name]), pct(commits[v.name], 0.9), pairedRatio(commits[v.name], commits[base]),
				rt[v.name][0]/n, rt[v.name][1]/n)
		}
		// Server side: planning and execution time of each statement from
		// EXPLAIN ANALYZE in a rolled-back transaction (no client noise).
		plan := map[string][2][]float64{}
		for round := 0; round < reps*cycles/4; round++ {
			for _, v := range vs {
				p, e, err := serverTimes(ctx, pool, v)
				if err != nil {
					return fmt.Errorf("%s: %w", v.name, err)
				}
				x := plan[v.name]
				x[0], x[1] = append(x[0], p...), append(x[1], e...)
				plan[v.name] = x
			}
		}
		fmt.Printf("  server side (EXPLAIN ANALYZE, %d rounds), median µs: planning claim / commit, execution claim / commit\n", reps*cycles/4)
		for _, v := range vs {
			x := plan[v.name]
			fmt.Printf("  %-12s planning %6.0f / %6.0f   execution %6.0f / %6.0f\n", v.name,
				median(every(x[0], 0)), median(every(x[0], 1)), median(every(x[1], 0)), median(every(x[1], 1)))
		}
		pool.Close()
	}
	return nil
}

func every(xs []float64, off int) []float64 {
	var out []float64
	for i := off; i < len(xs); i += 2 {
		out = append(out, xs[i])
	}
	return out
}

// serverTimes claims and commits one fresh matter under EXPLAIN ANALYZE in
// a transaction it rolls back; it returns planning and execution times
// (claim, commit) in µs.
func serverTimes(ctx context.Context, pool *pgxpool.Pool, v *variant) (planning, execution []float64, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.Background())
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := tx.Exec(ctx, `WITH f AS (INSERT INTO app.firms (firm_id) VALUES ($1)) INSERT INTO app.matters (firm_id, matter_id) VALUES ($1, $2)`, ref.FirmID, ref.MatterID); err != nil {
		return nil, nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ops.matter_frame_jobs (firm_id, matter_id, requested_generation, demand_since) VALUES ($1, $2, 1, clock_timestamp())`, ref.FirmID, ref.MatterID); err != nil {
		return nil, nil, err
	}
	var claimArgs, commitArgs []any
	if v.batch {
		claimArgs = []any{[]string{ref.FirmID.String()}, []string{ref.MatterID.String()}, "w", 900.0, 5}
		commitArgs = []any{[]string{ref.FirmID.String()}, []string{ref.MatterID.String()}, []int64{1},
			[]string{"fp"}, []string{"b"}, []bool{false}, []string{"{}"}, []string{""}}
	} else {
		claimArgs = []any{ref.FirmID, ref.MatterID, "w", 900.0, 5}
		commitArgs = []any{ref.FirmID, ref.MatterID, int64(1), "fp", "b", false, "{}", ""}
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{{v.claim, claimArgs}, {v.commit, commitArgs}} {
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q.sql, q.args...)
		if err != nil {
			return nil, nil, err
		}
		var out []map[string]any
		for rows.Next() {
			if err := rows.Scan(&out); err != nil {
				return nil, nil, err
			}
		}
		rows.Close()
		if len(out) != 1 {
			return nil, nil, fmt.Errorf("explain: %d results", len(out))
		}
		pt, _ := out[0]["Planning Time"].(float64)
		et, _ := out[0]["Execution Time"].(float64)
		planning, execution = append(planning, pt*1000), append(execution, et*1000)
	}
	return planning, execution, nil
}

func pct(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[int(p*float64(len(s)-1))]
}

func pairedRatio(xs, base []float64) float64 {
	r := make([]float64, len(xs))
	for i := range xs {
		r[i] = xs[i] / base[i]
	}
	return median(r)
}

func cyclesFor(ctx context.Context, pool *pgxpool.Pool, w *counter, v *variant, n int) (claims, commits []float64, rtClaim, rtCommit float64, err error) {
	led := postgres.NewLedger(pool, rail.Config{})
	firm := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO app.firms (firm_id) VALUES ($1)`, firm); err != nil {
		return nil, nil, 0, 0, err
	}
	var rc, rk int64
	for i := 0; i < n; i++ {
		ref := rail.MatterRef{FirmID: firm, MatterID: uuid.New()}
		if _, err := pool.Exec(ctx, `INSERT INTO app.matters (firm_id, matter_id) VALUES ($1, $2)`, ref.FirmID, ref.MatterID); err != nil {
			return nil, nil, 0, 0, err
		}
		if _, err := led.Demand(ctx, ref, 1); err != nil {
			return nil, nil, 0, 0, err
		}
		r0 := w.rt.Load()
		t0 := time.Now()
		var token int64
		if v.batch {
			rows, err := pool.Query(ctx, v.claim, []string{ref.FirmID.String()}, []string{ref.MatterID.String()}, "w", 900.0, 5)
			if err != nil {
				return nil, nil, 0, 0, err
			}
			for rows.Next() {
				var a, b int64
				var c int
				var d time.Time
				var e bool
				if err := rows.Scan(&token, &a, &b, &c, &d, &e); err != nil {
					return nil, nil, 0, 0, err
				}
			}
			rows.Close()
			if rows.Err() != nil {
				return nil, nil, 0, 0, rows.Err()
			}
		} else {
			var a, b int64
			var c int
			var d time.Time
			var e bool
			if err := pool.QueryRow(ctx, v.claim, ref.FirmID, ref.MatterID, "w", 900.0, 5).Scan(&token, &a, &b, &c, &d, &e); err != nil {
				return nil, nil, 0, 0, err
			}
		}
		claims = append(claims, float64(time.Since(t0).Microseconds()))
		r1 := w.rt.Load()
		t1 := time.Now()
		landed := 0
		if v.batch {
			rows, err := pool.Query(ctx, v.commit, []string{ref.FirmID.String()}, []string{ref.MatterID.String()}, []int64{token},
				[]string{"fp"}, []string{"b"}, []bool{false}, []string{"{}"}, []string{""})
			if err != nil {
				return nil, nil, 0, 0, err
			}
			for rows.Next() {
				landed++
			}
			rows.Close()
			if rows.Err() != nil {
				return nil, nil, 0, 0, rows.Err()
			}
		} else {
			var id uuid.UUID
			var a, b int64
			if err := pool.QueryRow(ctx, v.commit, ref.FirmID, ref.MatterID, token, "fp", "b", false, "{}", "").Scan(&id, &a, &b); err != nil {
				return nil, nil, 0, 0, err
			}
			landed = 1
		}
		commits = append(commits, float64(time.Since(t1).Microseconds()))
		r2 := w.rt.Load()
		if token != 1 || landed != 1 {
			return nil, nil, 0, 0, fmt.Errorf("cycle %d: token %d, landed %d", i, token, landed)
		}
		rc += r1 - r0
		rk += r2 - r1
	}
	return claims, commits, float64(rc) / float64(n), float64(rk) / float64(n), nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func openPool(ctx context.Context, cc *pgx.ConnConfig, mode pgx.QueryExecMode, w *counter) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(cc.ConnString())
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Database = cc.Database
	cfg.MaxConns = 1
	cfg.ConnConfig.DefaultQueryExecMode = mode
	d := &net.Dialer{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, w: w}, nil
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

// counter counts wire round trips: a client write that follows a server
// read starts one (the same rule as railbench's).
type counter struct{ rt atomic.Int64 }

type countingConn struct {
	net.Conn
	w        *counter
	readSome atomic.Bool
	started  atomic.Bool
}

func (c *countingConn) Write(b []byte) (int, error) {
	if !c.started.Swap(true) || c.readSome.Swap(false) {
		c.w.rt.Add(1)
	}
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.readSome.Store(true)
	}
	return n, err
}
