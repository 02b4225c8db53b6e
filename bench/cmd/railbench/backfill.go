package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// BackfillResults: live upload -> current latency with and without a
// backfill of many outdated matters running beside it, on one server in
// one run. Live demand goes through the build queue and its builders;
// backfill admissions (rail.Backfill, the sweeper's code) go through their
// own queue and builders, at the configured rate. The live latency is each
// served demand's age at its commit (rail.ServedDemand.AgeSeconds, the
// database clock: demand recorded -> frame landed).
type BackfillResults struct {
	Matters       int      `json:"outdated_matters"`
	LiveMatters   int      `json:"live_matters"`
	LiveDemands   int      `json:"live_demands_per_rep"`
	LiveInterval  string   `json:"live_interval"`
	LiveWorkers   int      `json:"live_workers"`
	BackfillRate  float64  `json:"backfill_rate_per_minute"`
	BackfillWork  int      `json:"backfill_workers"`
	BuildTime     string   `json:"build_time"`
	Reps          int      `json:"reps"`
	WithoutP50    Series   `json:"live_p50_ms_without_backfill"`
	WithoutP99    Series   `json:"live_p99_ms_without_backfill"`
	WithP50       Series   `json:"live_p50_ms_with_backfill"`
	WithP99       Series   `json:"live_p99_ms_with_backfill"`
	P99Ratio      float64  `json:"live_p99_ratio_with_over_without"`
	BackfillBuilt Series   `json:"backfill_builds_landed_per_rep"`
	Notes         []string `json:"notes"`
}

// benchBuilder stands in for a model: a fixed build time, honouring ctx.
type benchBuilder struct {
	id    rail.BuilderIdentity
	delay time.Duration
}

func (b benchBuilder) Name() string                   { return b.id.Name }
func (b benchBuilder) Identity() rail.BuilderIdentity { return b.id }
func (b benchBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.Marshal(map[string]string{"title": in.Title, "by": b.id.String()})
}

// chanNudger is an in-process queue: a buffered channel.
type chanNudger chan rail.MatterRef

func (c chanNudger) Nudge(ctx context.Context, ns []rail.Nudge, _ time.Duration) error {
	for _, n := range ns {
		select {
		case c <- n.Ref():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func runBackfill(ctx context.Context, e *env, o options) (*BackfillResults, error) {
	const (
		liveMatters  = 40
		liveDemands  = 300
		liveInterval = 15 * time.Millisecond
		liveWorkers  = 4
		bfWorkers    = 2
		buildTime    = 20 * time.Millisecond
		rate         = 6000.0 // per minute: 100 a second, far above a real deployment's, to press the live path
	)
	r := &BackfillResults{Matters: o.BackfillMatters, LiveMatters: liveMatters, LiveDemands: liveDemands,
		LiveInterval: liveInterval.String(), LiveWorkers: liveWorkers, BackfillRate: rate, BackfillWork: bfWorkers,
		BuildTime: buildTime.String(), Reps: o.Reps, Notes: []string{
			"live: an upload every live_interval on one of live_matters matters (a new document, Ledger.Demand, then a nudge on the live queue; the inputs change, so no build is skipped by fingerprint), built by live_workers workers (claim, build_time of 'model', fenced commit); latency = the served demand's age at its commit, database clock",
			"with backfill: outdated_matters matters whose frames an older builder identity built; the sweeper's rail.Backfill.Admit runs every second at backfill_rate_per_minute (bucket capped at one minute), its nudges go to a separate queue served by backfill_workers workers of their own",
			"each repetition runs without, then with the backfill, on fresh live matters; the backfill pool of outdated matters is shared by the repetitions (it is never drained: 10,000 at 100/s outlasts them)",
			"the same PostgreSQL and the same 2 shared cores serve both paths: the ratio shows what the backfill costs live demand on one server",
		}}
	pool, err := e.pool(ctx, 32, nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	old := rail.BuilderIdentity{Name: "bench/v1", Version: "1", ModelID: "model-a"}
	deployed := rail.BuilderIdentity{Name: "bench/v1", Version: "2", ModelID: "model-b"}
	logf("backfill: seeding %d outdated matters", o.BackfillMatters)
	if err := seedOutdated(ctx, pool, o.BackfillMatters, old); err != nil {
		return nil, fmt.Errorf("seed outdated matters: %w", err)
	}
	ledger := postgres.NewLedger(pool, rail.Config{})
	var without50, without99, with50, with99, built []float64
	for rep := 0; rep < o.Reps; rep++ {
		for _, withBackfill := range []bool{false, true} {
			lat, n, err := backfillRep(ctx, pool, ledger, deployed, withBackfill, liveMatters, liveDemands, liveInterval,
				liveWorkers, bfWorkers, buildTime, rate)
			if err != nil {
				return nil, err
			}
			p50, p99 := quantile(lat, 0.5), quantile(lat, 0.99)
			logf("backfill: rep %d backfill=%v live p50 %.1f ms p99 %.1f ms (%d demands served), backfill builds landed %d",
				rep+1, withBackfill, p50, p99, len(lat), n)
			if withBackfill {
				with50, with99, built = append(with50, p50), append(with99, p99), append(built, float64(n))
			} else {
				without50, without99 = append(without50, p50), append(without99, p99)
			}
		}
	}
	r.WithoutP50, r.WithoutP99 = series("ms", without50), series("ms", without99)
	r.WithP50, r.WithP99 = series("ms", with50), series("ms", with99)
	r.BackfillBuilt = series("builds", built)
	r.P99Ratio = round(r.WithP99.Median/r.WithoutP99.Median, 3)
	return r, nil
}

// seedOutdated creates n open matters, each with one landed frame built by
// old (one statement per table).
func seedOutdated(ctx context.Context, pool *pgxpool.Pool, n int, old rail.BuilderIdentity) error {
	refs, err := createMatters(ctx, pool, n, "outdated ")
	if err != nil {
		return err
	}
	firm := refs[0].FirmID
	if _, err := pool.Exec(ctx, `INSERT INTO ops.matter_frame_jobs
            (firm_id, matter_id, requested_generation, claimed_generation, target_generation, built_generation)
        SELECT firm_id, matter_id, 1, 1, 1, 1 FROM app.matters WHERE firm_id = $1`, firm); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint,
            builder, model_invoked, body, builder_version, model_id, prompt_hash)
        SELECT firm_id, matter_id, 1, 1, 'seed', $2, true, '{}'::jsonb, $3, $4, '' FROM app.matters WHERE firm_id = $1`,
		firm, old.Name, old.Version, old.ModelID); err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `ANALYZE ops.matter_frame_jobs; ANALYZE ops.matter_frames`)
	return err
}

func backfillRep(ctx context.Context, pool *pgxpool.Pool, ledger *postgres.Ledger, deployed rail.BuilderIdentity,
	withBackfill bool, liveMatters, liveDemands int, interval time.Duration, liveWorkers, bfWorkers int,
	buildTime time.Duration, rate float64) (lat []float64, backfilled int, err error) {
	refs, err := createMatters(ctx, pool, liveMatters, "live ")
	if err != nil {
		return nil, 0, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	live, bfq := make(chanNudger, 100000), make(chanNudger, 100000)
	b := benchBuilder{id: deployed, delay: buildTime}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		bfBuilt  int
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil && rctx.Err() == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	worker := func(q chanNudger, id string, isLive bool) {
		defer wg.Done()
		w := &rail.Worker{Ledger: ledger, Builder: b, ID: id, Heartbeat: -1}
		for {
			select {
			case <-rctx.Done():
				return
			case ref := <-q:
				out, err := w.BuildOnce(rctx, ref)
				if err != nil {
					if rctx.Err() == nil {
						fail(err)
					}
					return
				}
				mu.Lock()
				for _, s := range out.Served {
					if s.Source == rail.DemandFromOperator { // live demand (the backfill's is source 'backfill')
						lat = append(lat, s.AgeSeconds*1000)
					}
				}
				if out.Landed && !isLive {
					bfBuilt++
				}
				mu.Unlock()
				if out.FollowUpDue {
					live <- ref // demand arrived during the build: the follow-up goes to the live queue
				}
			}
		}
	}
	for i := range liveWorkers {
		wg.Add(1)
		go worker(live, fmt.Sprintf("live-%d", i), true)
	}
	if withBackfill {
		if _, err := pool.Exec(ctx, `UPDATE ops.backfill_control SET paused = false, allowance_at = clock_timestamp()`); err != nil {
			return nil, 0, err
		}
		for i := range bfWorkers {
			wg.Add(1)
			go worker(bfq, fmt.Sprintf("backfill-%d", i), false)
		}
		// The deployed admission rule (rail.BackfillRoom) with the backfill
		// workers as its concurrency: at this rate, far above a
		// deployment's, admission runs at the workers' pace.
		bf := &rail.Backfill{Ledger: ledger, Deployed: deployed, Rate: rate, Nudger: bfq, Concurrency: bfWorkers}
		wg.Add(1)
		go func() { // the sweeper: one admission pass a second
			defer wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				if _, err := bf.Admit(rctx); err != nil && rctx.Err() == nil {
					fail(fmt.Errorf("backfill admit: %w", err))
					return
				}
				select {
				case <-rctx.Done():
					return
				case <-t.C:
				}
			}
		}()
		time.Sleep(1500 * time.Millisecond) // let the backfill reach its rate before live demand starts
	}
	for i := range liveDemands {
		ref := refs[i%len(refs)]
		// An upload: a new document, then its demand (the inputs change, so
		// the build calls the 'model' and is not skipped by fingerprint).
		if _, err := postgres.AddDocument(rctx, pool, ref, rail.NewDocument{Name: fmt.Sprintf("upload-%d.pdf", i),
			Pages: []string{fmt.Sprintf("Exhibit %d: delivery of consignment %d.", i, i)}}); err != nil {
			fail(err)
			break
		}
		if _, err := ledger.Demand(rctx, ref, 1); err != nil {
			fail(err)
			break
		}
		live <- ref
		time.Sleep(interval)
	}
	// Wait for every live demand to be served.
	deadline := time.Now().Add(2 * time.Minute)
	for rctx.Err() == nil {
		var behind int
		if err := pool.QueryRow(rctx, `SELECT count(*) FROM ops.matter_demands d JOIN app.matters m USING (firm_id, matter_id)
            WHERE d.served_at IS NULL AND d.source = 'operator' AND m.title LIKE 'live %'`).Scan(&behind); err != nil {
			fail(err)
			break
		}
		if behind == 0 {
			break
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("%d live demands unserved after 2 minutes", behind))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if firstErr != nil {
		return nil, 0, firstErr
	}
	if math.IsNaN(quantile(lat, 0.5)) {
		return nil, 0, fmt.Errorf("no live demand served")
	}
	return lat, bfBuilt, nil
}
