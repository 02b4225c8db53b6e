package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
	railsql "github.com/pramaan/brief-rail/sql"
)

// FairnessResults: small firms' upload -> current latency with and without
// one firm's bulk import, through the local rail (the relay, the trigger and
// the builder handlers, the template's queues in process: pkg/localbus),
// builders capped as the event source's MaximumConcurrency, each build a
// fixed time. Fair: the build queue delivers by firm (MessageGroupId, as SQS
// fair queues do; localbus's approximation); unfair: the same queue in send
// order, the control.
type FairnessResults struct {
	SmallFirms     int    `json:"small_firms"`
	SmallInterval  string `json:"small_upload_interval"`
	ImportMatters  int    `json:"import_matters"`
	Builders       int    `json:"builders"`
	BuildTime      string `json:"build_time"`
	MinRunDuration string `json:"min_run_duration"`
	Reps           int    `json:"reps"`

	// Small firms' upload -> current, ms: per condition, each repetition's
	// p50 and p99 (medians over the repetitions).
	FairWithoutP50   Series  `json:"fair_small_p50_ms_without_import"`
	FairWithoutP99   Series  `json:"fair_small_p99_ms_without_import"`
	FairWithP50      Series  `json:"fair_small_p50_ms_with_import"`
	FairWithP99      Series  `json:"fair_small_p99_ms_with_import"`
	UnfairWithoutP50 Series  `json:"unfair_small_p50_ms_without_import"`
	UnfairWithoutP99 Series  `json:"unfair_small_p99_ms_without_import"`
	UnfairWithP50    Series  `json:"unfair_small_p50_ms_with_import"`
	UnfairWithP99    Series  `json:"unfair_small_p99_ms_with_import"`
	FairRatio        float64 `json:"fair_small_firm_p99_ratio"`
	UnfairRatio      float64 `json:"unfair_small_firm_p99_ratio"`

	// The import: first upload -> last of its matters current, and the
	// capacity bound over the same window (the builder-time every build
	// that ran in it took, divided by the builders: no schedule finishes
	// sooner); idle builder-time while a build-queue message was visible.
	FairImportS       Series `json:"fair_import_s"`
	FairImportBoundS  Series `json:"fair_import_capacity_bound_s"`
	FairIdleQueuedMs  Series `json:"fair_idle_builder_ms_while_queued"`
	FairBusyMs        Series `json:"fair_busy_builder_ms"`
	UnfairImportS     Series `json:"unfair_import_s"`
	UnfairImportBound Series `json:"unfair_import_capacity_bound_s"`
	UnfairIdleQueued  Series `json:"unfair_idle_builder_ms_while_queued"`
	FairSmallServed   Series `json:"fair_small_uploads_served_with_import"`
	// Of the small firms' latency with the import, upload -> demand
	// recorded (the relay, the trigger queue, the trigger): p99, ms.
	FairWithDemandP99   Series `json:"fair_small_upload_to_demand_p99_ms_with_import"`
	UnfairWithDemandP99 Series `json:"unfair_small_upload_to_demand_p99_ms_with_import"`
	// Of the small firms' latency, demand recorded -> the claim of the run
	// that served it (the build queue's wait for a free builder), fair
	// queue, without and with the import: p50 and p99, ms.
	FairWithoutClaimP50 Series `json:"fair_small_demand_to_claim_p50_ms_without_import"`
	FairWithoutClaimP99 Series `json:"fair_small_demand_to_claim_p99_ms_without_import"`
	FairWithClaimP50    Series `json:"fair_small_demand_to_claim_p50_ms_with_import"`
	FairWithClaimP99    Series `json:"fair_small_demand_to_claim_p99_ms_with_import"`

	Notes []string `json:"notes"`
}

const fairTemplate = "../template.yaml" // railbench runs from bench/

func runFairness(ctx context.Context, e *env, o options) (*FairnessResults, error) {
	const (
		smallFirms    = 50
		smallInterval = 80 * time.Millisecond  // 12.5 uploads a second across the small firms: one per firm every 4 s
		builders      = 10                     // the build queue's MaximumConcurrency
		triggers      = 5                      // the trigger queue's MaximumConcurrency (template.yaml)
		buildTime     = 200 * time.Millisecond // a model call, scaled down (minutes when deployed)
		minRun        = 8 * time.Second        // small firms upload at least this long; with the import, until it is current
		importAfter   = time.Second            // the import starts after the small firms' steady state
		importBatch   = 20                     // the import's documents per host transaction: 200 a second, 3x what the builders serve
		importEvery   = 100 * time.Millisecond // one such transaction every this long
	)
	r := &FairnessResults{SmallFirms: smallFirms, SmallInterval: smallInterval.String(), ImportMatters: o.FairImport,
		Builders: builders, BuildTime: buildTime.String(), MinRunDuration: minRun.String(), Reps: o.Reps, Notes: []string{
			"the local rail end to end: an upload is a host transaction (record.AddDocument: the document and its document.uploaded fact); the relay (polling every 20 ms) puts the fact on the in-process bus, the trigger rule delivers it to the trigger queue, the trigger handler records demand and nudges the build queue (settle delay 10 ms), the builder handler (one nudge an invocation, ten invocations at once: ten builds in flight, the section's capacity; the deployed builder takes batches of 10) claims, builds for build_time, commits",
			"small firms: one matter each, uploads round-robin every small_upload_interval for at least min_run_duration (with the import: until the import is current, then 500 ms more; without it: at least as many uploads as the same repetition's run with the import served, so both p99s come from samples of one size); the import: one firm's import_matters matters, one document each, 20 per host transaction every 100 ms from 1 s on (200 a second, three times what the builders serve, so the backlog is on the build queue)",
			"upload -> current: each demand's served_at - occurred_at (the fact's time, the host transaction's clock; the commit's clock), database clock",
			"fair: the build queue (pkg/localbus) delivers by firm: fewest in flight first (the approximation of SQS fair queues documented in pkg/localbus); unfair: Queue.SetFair(false), send order, the same run's control",
			"capacity bound: the builder-time (handler invocations, claim + build + commit) of every invocation that ran while the import was incomplete, divided by builders; idle_builder_ms_while_queued: builder slots idle while a build-queue message was visible, sampled every 2 ms",
			"each repetition runs the four conditions in turn (fair with the import, fair without, unfair with, unfair without) on fresh firms, in one database of their own",
		}}
	pool, cleanup, err := fairDatabase(ctx, e)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	type acc struct{ p50, p99, demandP99, claimP50, claimP99, imp, bound, idle, busy, served []float64 }
	res := map[string]*acc{}
	for _, k := range []string{"fair/without", "fair/with", "unfair/without", "unfair/with"} {
		res[k] = &acc{}
	}
	for rep := 0; rep < o.Reps; rep++ {
		for _, fair := range []bool{true, false} {
			served := 0 // the small uploads the condition with the import served
			for _, withImport := range []bool{true, false} {
				c := fairCondition{fair: fair, withImport: withImport, smallFirms: smallFirms, smallInterval: smallInterval,
					importMatters: o.FairImport, builders: builders, triggers: triggers, buildTime: buildTime, minRun: minRun,
					importAfter: importAfter, importBatch: importBatch, importEvery: importEvery, minUploads: served}
				out, err := c.run(ctx, pool)
				if err != nil {
					return nil, fmt.Errorf("fair=%v import=%v: %w", fair, withImport, err)
				}
				k := map[bool]string{true: "fair", false: "unfair"}[fair] + "/" + map[bool]string{true: "with", false: "without"}[withImport]
				a := res[k]
				p50, p99 := quantile(out.small, 0.5), quantile(out.small, 0.99)
				a.p50, a.p99 = append(a.p50, p50), append(a.p99, p99)
				a.idle, a.busy = append(a.idle, out.idleQueuedMs), append(a.busy, out.busyMs)
				a.demandP99 = append(a.demandP99, quantile(out.toDemand, 0.99))
				a.claimP50, a.claimP99 = append(a.claimP50, quantile(out.toClaim, 0.5)), append(a.claimP99, quantile(out.toClaim, 0.99))
				if withImport {
					served = len(out.small)
					a.imp, a.bound, a.served = append(a.imp, out.importS), append(a.bound, out.boundS), append(a.served, float64(len(out.small)))
				}
				logf("fairness: rep %d %s: small p50 %.0f ms p99 %.0f ms (upload -> demand p99 %.0f ms; demand -> claim p50 %.0f p99 %.0f ms; %d uploads); import %.2f s (bound %.2f s); idle builder-time while queued %.0f ms of %.0f ms busy",
					rep+1, k, p50, p99, quantile(out.toDemand, 0.99), quantile(out.toClaim, 0.5), quantile(out.toClaim, 0.99), len(out.small), out.importS, out.boundS, out.idleQueuedMs, out.busyMs)
			}
		}
	}
	fw, fi, uw, ui := res["fair/without"], res["fair/with"], res["unfair/without"], res["unfair/with"]
	r.FairWithoutP50, r.FairWithoutP99 = series("ms", fw.p50), series("ms", fw.p99)
	r.FairWithP50, r.FairWithP99 = series("ms", fi.p50), series("ms", fi.p99)
	r.UnfairWithoutP50, r.UnfairWithoutP99 = series("ms", uw.p50), series("ms", uw.p99)
	r.UnfairWithP50, r.UnfairWithP99 = series("ms", ui.p50), series("ms", ui.p99)
	r.FairRatio = round(r.FairWithP99.Median/r.FairWithoutP99.Median, 3)
	r.UnfairRatio = round(r.UnfairWithP99.Median/r.UnfairWithoutP99.Median, 3)
	r.FairImportS, r.FairImportBoundS = series("s", fi.imp), series("s", fi.bound)
	r.FairIdleQueuedMs, r.FairBusyMs = series("ms", fi.idle), series("ms", fi.busy)
	r.UnfairImportS, r.UnfairImportBound, r.UnfairIdleQueued = series("s", ui.imp), series("s", ui.bound), series("ms", ui.idle)
	r.FairSmallServed = series("uploads", fi.served)
	r.FairWithDemandP99, r.UnfairWithDemandP99 = series("ms", fi.demandP99), series("ms", ui.demandP99)
	r.FairWithoutClaimP50, r.FairWithoutClaimP99 = series("ms", fw.claimP50), series("ms", fw.claimP99)
	r.FairWithClaimP50, r.FairWithClaimP99 = series("ms", fi.claimP50), series("ms", fi.claimP99)
	return r, nil
}

// fairDatabase creates and migrates a database of the section's own, so no
// other section's outbox or demand reaches its builders.
func fairDatabase(ctx context.Context, e *env) (*pgxpool.Pool, func(), error) {
	db := e.benchDB + "_fair"
	if err := e.adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return nil, nil, fmt.Errorf("create database %s: %w", db, err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.adminExec(dctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	}
	conn, err := pgx.Connect(ctx, e.url(db))
	if err != nil {
		drop()
		return nil, nil, err
	}
	_, err = railsql.Migrate(ctx, conn, nil)
	conn.Close(ctx)
	if err != nil {
		drop()
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(e.url(db))
	if err != nil {
		drop()
		return nil, nil, err
	}
	cfg.MaxConns = 32
	cfg.ConnConfig.DefaultQueryExecMode = e.execMode
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); drop() }, nil
}

type fairCondition struct {
	fair, withImport          bool
	smallFirms, importMatters int
	builders, triggers        int
	importBatch               int
	importEvery               time.Duration
	smallInterval, buildTime  time.Duration
	minRun, importAfter       time.Duration
	// minUploads: without the import, the small firms upload at least this
	// many times (the count the condition with the import served), so both
	// p99s come from samples of the same size.
	minUploads int
}

type fairOutcome struct {
	small        []float64 // small firms' upload -> current, ms
	toDemand     []float64 // of which upload -> demand recorded (the relay and the trigger), ms
	toClaim      []float64 // of which demand recorded -> the serving run's claim (the build queue's wait), ms
	importS      float64   // the import's first upload -> last matter current
	boundS       float64   // builder-time in that window / builders
	idleQueuedMs float64   // builder slots idle while a message was visible
	busyMs       float64   // builder-time, the whole run
}

// invocation is one builder invocation's span.
type invocation struct{ start, end time.Time }

func (c fairCondition) run(ctx context.Context, pool *pgxpool.Pool) (fairOutcome, error) {
	var out fairOutcome
	small := make([]rail.MatterRef, c.smallFirms)
	for i := range small {
		refs, err := createMatters(ctx, pool, 1, "small ")
		if err != nil {
			return out, err
		}
		small[i] = refs[0]
	}
	var imported []rail.MatterRef
	if c.withImport {
		var err error
		if imported, err = createMatters(ctx, pool, c.importMatters, "import "); err != nil {
			return out, err
		}
	}

	// The local rail, as railctl run assembles it, with the bench builder.
	base, err := lambdafn.LoadOperatorConfig(func(string) string { return "" })
	if err != nil {
		return out, err
	}
	cfg := app.LocalConfig(base, app.LocalTimings{Lease: 30 * time.Second, SettleDelay: 10 * time.Millisecond,
		SweepGrace: time.Minute}, app.BuilderExtractive)
	w, err := app.LocalWiring(fairTemplate, cfg, 0.01, 0)
	if err != nil {
		return out, err
	}
	buildQ := w.Queue(app.BuildQueueID)
	buildQ.SetFair(c.fair)
	tr := app.LocalTransport(w, nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	rl, err := app.Assemble(cfg, app.Deps{Pool: pool, Transport: tr, Log: quiet, Metrics: emf.New(io.Discard),
		Builder: benchBuilder{id: rail.BuilderIdentity{Name: "bench/fair", Version: "1"}, delay: c.buildTime}})
	if err != nil {
		return out, err
	}
	rl.Relay.Poll = 20 * time.Millisecond

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		spans    []invocation
		active   atomic.Int64
		handlerE error
	)
	build := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		active.Add(1)
		start := time.Now()
		resp, err := rl.Builder.Handle(ctx, ev)
		end := time.Now()
		active.Add(-1)
		mu.Lock()
		spans = append(spans, invocation{start, end})
		if err != nil && handlerE == nil && ctx.Err() == nil {
			handlerE = err
		}
		mu.Unlock()
		return resp, err
	}
	onErr := func(err error) {
		mu.Lock()
		if handlerE == nil && rctx.Err() == nil {
			handlerE = err
		}
		mu.Unlock()
	}
	pollers := []*localbus.Poller{
		{Name: app.Trigger, Source: tr.TriggerQueue, Handler: rl.Trigger.Handle, Batch: 10, Wait: 200 * time.Millisecond,
			Concurrency: c.triggers, OnError: onErr},
		{Name: app.Builder, Source: tr.BuildQueue, Handler: build, Batch: 1, Wait: 200 * time.Millisecond,
			Concurrency: c.builders, Timeout: time.Minute, OnError: onErr},
	}
	relay := &localbus.Schedule{Name: app.Relay, Every: cfg.RelayWindow, Timeout: time.Minute,
		Invoke: func(ctx context.Context) error { _, err := rl.InvokeRelay(ctx); return err }, OnError: onErr}
	var wg sync.WaitGroup
	for _, p := range pollers {
		wg.Go(func() { _ = p.Run(rctx) })
	}
	wg.Go(func() { _ = relay.Run(rctx) })

	// The sampler: builder slots idle while a build-queue message is visible.
	var idleQueued time.Duration
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-rctx.Done():
				return
			case now := <-t.C:
				if buildQ.Stats().Visible > 0 {
					if idle := int64(c.builders) - active.Load(); idle > 0 {
						idleQueued += time.Duration(idle) * now.Sub(last)
					}
				}
				last = now
			}
		}
	}()

	upload := func(ctx context.Context, q record.Beginner, ref rail.MatterRef, i int) error {
		_, err := record.StoreDocument(ctx, q, ref, rail.NewDocument{Name: fmt.Sprintf("upload-%d.pdf", i),
			Pages: []string{fmt.Sprintf("Exhibit %d: delivery of consignment %d.", i, i)}})
		return err
	}
	began := time.Now()
	importDone := make(chan error, 1)
	if c.withImport {
		go func() {
			select {
			case <-time.After(c.importAfter):
			case <-rctx.Done():
				importDone <- rctx.Err()
				return
			}
			t := time.NewTicker(c.importEvery)
			defer t.Stop()
			for start := 0; start < len(imported); start += c.importBatch {
				if err := pgx.BeginFunc(rctx, pool, func(tx pgx.Tx) error {
					for i, ref := range imported[start:min(start+c.importBatch, len(imported))] {
						if _, err := record.AddDocument(rctx, tx, ref, rail.NewDocument{Name: fmt.Sprintf("import-%d.pdf", start+i),
							Pages: []string{fmt.Sprintf("Imported exhibit %d.", start+i)}}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					importDone <- err
					return
				}
				<-t.C
			}
			importDone <- nil
		}()
	}
	importFirm := uuid.Nil
	if c.withImport {
		importFirm = imported[0].FirmID
	}
	var importedAt time.Time
	tick := time.NewTicker(c.smallInterval)
	defer tick.Stop()
	for i := 0; ; i++ {
		if err := upload(rctx, pool, small[i%len(small)], i); err != nil {
			return out, err
		}
		<-tick.C
		if time.Since(began) < c.minRun || i+1 < c.minUploads {
			continue
		}
		if !c.withImport {
			break
		}
		if importedAt.IsZero() {
			select {
			case err := <-importDone:
				if err != nil {
					return out, fmt.Errorf("import: %w", err)
				}
				importedAt = time.Now()
			default:
				continue
			}
		}
		var behind int
		if err := pool.QueryRow(rctx, `SELECT count(*) FROM ops.matter_demands WHERE firm_id = $1 AND served_at IS NULL`,
			importFirm).Scan(&behind); err != nil {
			return out, err
		}
		var facts int
		if err := pool.QueryRow(rctx, `SELECT count(*) FROM ops.matter_demands WHERE firm_id = $1`, importFirm).Scan(&facts); err != nil {
			return out, err
		}
		if behind == 0 && facts == len(imported) {
			time.Sleep(500 * time.Millisecond)
			break
		}
		if time.Since(began) > 5*time.Minute {
			return out, fmt.Errorf("the import is not current after 5 minutes (%d of %d matters behind)", behind, len(imported))
		}
	}
	// Every small upload current, then stop.
	firms := make([]uuid.UUID, 0, len(small)+1)
	for _, s := range small {
		firms = append(firms, s.FirmID)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var behind, outbox int
		if err := pool.QueryRow(rctx, `SELECT (SELECT count(*) FROM ops.matter_demands WHERE served_at IS NULL),
                (SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL AND parked_at IS NULL)`).Scan(&behind, &outbox); err != nil {
			return out, err
		}
		if behind == 0 && outbox == 0 {
			break
		}
		if time.Now().After(deadline) {
			return out, fmt.Errorf("%d demands unserved, %d facts unpublished after 2 minutes", behind, outbox)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	<-sampled
	mu.Lock()
	defer mu.Unlock()
	if handlerE != nil {
		return out, handlerE
	}

	rows, err := pool.Query(ctx, `SELECT extract(epoch FROM d.served_at - d.occurred_at) * 1000,
            extract(epoch FROM d.recorded_at - d.occurred_at) * 1000,
            extract(epoch FROM greatest(r.claimed_at - d.recorded_at, interval '0')) * 1000
        FROM ops.matter_demands d
        LEFT JOIN ops.matter_frame_runs r ON (r.firm_id, r.matter_id, r.token) = (d.firm_id, d.matter_id, d.served_token)
        WHERE d.firm_id = ANY($1) AND d.source = 'fact'`, firms)
	if err != nil {
		return out, err
	}
	for rows.Next() {
		var total, toDemand float64
		var toClaim *float64 // nil if the serving run's row is gone: the latency sample stays, the split does not
		if err := rows.Scan(&total, &toDemand, &toClaim); err != nil {
			return out, err
		}
		out.small, out.toDemand = append(out.small, total), append(out.toDemand, toDemand)
		if toClaim != nil {
			out.toClaim = append(out.toClaim, *toClaim)
		}
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	if len(out.small) == 0 {
		return out, fmt.Errorf("no small firm's upload was served")
	}
	out.idleQueuedMs = ms(idleQueued)
	for _, s := range spans {
		out.busyMs += ms(s.end.Sub(s.start))
	}
	if c.withImport {
		// The window, on the database clock, and the builder-time spent in
		// it (local clock; invocations overlapping an edge count in part).
		var from, to time.Time
		var took float64
		if err := pool.QueryRow(ctx, `SELECT min(occurred_at), max(served_at), extract(epoch FROM max(served_at) - min(occurred_at))
            FROM ops.matter_demands WHERE firm_id = $1`, importFirm).Scan(&from, &to, &took); err != nil {
			return out, err
		}
		out.importS = took
		var skew time.Duration
		if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&to); err == nil {
			skew = time.Since(to) // local - database, about (one machine: ~0)
		}
		lo, hi := from.Add(skew), from.Add(skew).Add(time.Duration(took*float64(time.Second)))
		var busy time.Duration
		for _, s := range spans {
			a, b := maxTime(s.start, lo), minTime(s.end, hi)
			if b.After(a) {
				busy += b.Sub(a)
			}
		}
		out.boundS = busy.Seconds() / float64(c.builders)
	}
	return out, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// summarizeFairness adds the fairness section's `name: value` lines.
func summarizeFairness(f *FairnessResults, add func(name, format string, args ...any)) {
	if f == nil {
		return
	}
	add("fair_small_firm_p99_ratio", "%.3f (small firms' upload -> current p99 %.0f ms with a %d-matter import / %.0f ms without; p50 %.0f / %.0f ms; %d small firms, %d builders, %s builds; fair build queue; median of %d)",
		f.FairRatio, f.FairWithP99.Median, f.ImportMatters, f.FairWithoutP99.Median, f.FairWithP50.Median, f.FairWithoutP50.Median,
		f.SmallFirms, f.Builders, f.BuildTime, f.Reps)
	add("unfair_small_firm_p99_ratio", "%.2f (the control: the same queue in send order; p99 %.0f / %.0f ms, p50 %.0f / %.0f ms; median of %d)",
		f.UnfairRatio, f.UnfairWithP99.Median, f.UnfairWithoutP99.Median, f.UnfairWithP50.Median, f.UnfairWithoutP50.Median, f.Reps)
	add("fair_import_completion_vs_capacity", "%s (import current in %.2f s / capacity bound %.2f s: the builder-time spent in that window over %d builders; unfair %.2f / %.2f s; median of %d)",
		ratio(f.FairImportS.Median, f.FairImportBoundS.Median), f.FairImportS.Median, f.FairImportBoundS.Median, f.Builders,
		f.UnfairImportS.Median, f.UnfairImportBound.Median, f.Reps)
	add("fair_small_demand_to_claim_p99_ms", "%.0f with the import / %.0f without (p50 %.0f / %.0f: of the small firms' upload -> current, the wait from demand recorded to the serving run's claim, settle delay included; a build is not preempted, so the import adds at most one build's remainder; median of %d)",
		f.FairWithClaimP99.Median, f.FairWithoutClaimP99.Median, f.FairWithClaimP50.Median, f.FairWithoutClaimP50.Median, f.Reps)
	add("fair_idle_builder_ms_while_queued", "%.0f (builder slots idle while a build-queue message was visible, with the import, of %.0f ms builder-time; unfair %.0f; median of %d)",
		f.FairIdleQueuedMs.Median, f.FairBusyMs.Median, f.UnfairIdleQueued.Median, f.Reps)
}
