package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
)

// The per-served-upload section: what the database (and, for the rail, the
// functions and the model) pays for each upload that reaches a Brief, for a
// realistic burst: on each of many matters three uploads and then a
// Regenerate, back to back. The rail runs as deployed (pkg/app's handlers
// over the template's local bus and queues: relay, trigger in batches of 10,
// builder in batches of 1); River does the same job with one job per upload
// (and per Regenerate), its worker reading the same inputs, running the same
// Brief builder and writing the Brief, with and without uniqueness.

// PerUploadResults: medians over repetitions, each a fresh set of matters.
type PerUploadResults struct {
	Matters   int                    `json:"matters"`
	Uploads   int                    `json:"uploads_per_matter"`
	Reps      int                    `json:"reps"`
	Builders  int                    `json:"builder_concurrency"`
	BuildTime string                 `json:"model_time"`
	Systems   map[string]PerUploadOf `json:"systems"`
	Notes     []string               `json:"notes"`
}

// PerUploadOf is one system's figures per served upload.
type PerUploadOf struct {
	Xacts       Series `json:"xacts_per_served_upload"`
	RoundTrips  Series `json:"round_trips_per_served_upload"`
	Rows        Series `json:"rows_written_per_served_upload"`
	WALBytes    Series `json:"wal_bytes_per_served_upload"`
	Invocations Series `json:"lambda_invocations_per_served_upload,omitempty"` // trigger + builder (event-driven)
	RelayInv    Series `json:"relay_invocations_per_served_upload,omitempty"`  // scheduled: time-driven
	ModelCalls  Series `json:"model_calls_per_served_upload"`
	// The builder's invocations and their summed duration per build (a
	// model call): what Lambda bills as GB-seconds, times the memory size.
	BuilderInvPerBuild  Series `json:"builder_invocations_per_build,omitempty"`
	BuilderSecsPerBuild Series `json:"builder_invocation_seconds_per_build,omitempty"`
	Seconds             Series `json:"burst_seconds"`
	Lost                Series `json:"uploads_not_in_final_brief,omitempty"`
}

// countingBuilder counts model calls (Build) around a builder that takes
// modelTime, as a model does.
type countingBuilder struct {
	rail.FrameBuilder
	calls     *atomic.Int64
	modelTime time.Duration
}

func (b countingBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	b.calls.Add(1)
	select {
	case <-time.After(b.modelTime):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.FrameBuilder.Build(ctx, in)
}

type dbCounters struct{ xacts, rows, wal int64 }

// since is what the counters grew by from before to c.
func (c dbCounters) since(before dbCounters) dbCounters {
	return dbCounters{c.xacts - before.xacts, c.rows - before.rows, c.wal - before.wal}
}

// readCounters reads the server's counters once all other backends on the
// bench database have gone (a backend flushes its statistics at exit, so
// every pool is closed before this runs), in one statement.
func readCounters(ctx context.Context, e *env) (dbCounters, error) {
	conn, err := pgx.Connect(ctx, e.url(e.benchDB))
	if err != nil {
		return dbCounters{}, err
	}
	defer conn.Close(ctx)
	for i := 0; ; i++ {
		var others int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_stat_activity
            WHERE datname = pg_catalog.current_database() AND pid <> pg_catalog.pg_backend_pid() AND backend_type = 'client backend'`).Scan(&others); err != nil {
			return dbCounters{}, err
		}
		if others == 0 {
			break
		}
		if i > 200 {
			return dbCounters{}, fmt.Errorf("per upload: %d backends still connected", others)
		}
		time.Sleep(25 * time.Millisecond)
	}
	var c dbCounters
	err = conn.QueryRow(ctx, `SELECT pg_catalog.pg_stat_clear_snapshot() IS NULL,
            (SELECT xact_commit FROM pg_catalog.pg_stat_database WHERE datname = pg_catalog.current_database()),
            (SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint FROM pg_catalog.pg_stat_user_tables),
            (SELECT wal_bytes::bigint FROM pg_catalog.pg_stat_wal)`).Scan(new(bool), &c.xacts, &c.rows, &c.wal)
	return c, err
}

type perUploadRep struct {
	c                              dbCounters
	roundTrips, inv, relay, models int64
	builderInv                     int64
	builderTime                    time.Duration
	lost                           int64
	elapsed                        time.Duration
}

func runPerUpload(ctx context.Context, e *env, o options) (*PerUploadResults, error) {
	const (
		uploads   = 3
		builders  = 4 // the build queue's MaximumConcurrency here, and River's workers
		modelTime = 5 * time.Millisecond
	)
	matters := o.PerUploadMatters
	r := &PerUploadResults{Matters: matters, Uploads: uploads, Reps: o.Reps, Builders: builders, BuildTime: modelTime.String(),
		Systems: map[string]PerUploadOf{}, Notes: []string{
			"burst: on each matter three uploads (a document and its fact, one transaction each) then a Regenerate, back to back; 4 producers over the matters; served upload = an upload whose demand a landed Brief served (rail) or whose document the matter's last Brief read (River)",
			"rail: pkg/app's handlers over the template's local bus and queues (relay invoked back to back, trigger batches of 10 with concurrency 2, builder batches of per_upload_builder_batch (template.yaml: 10) with concurrency builder_concurrency); the sweeper is not run (periodic, not per upload)",
			"river: one job per upload inserted in the upload's transaction and one per Regenerate; the worker loads the matter's inputs as the rail does (postgres.LoadInputs), runs the same builder and upserts the Brief (bench.river_briefs); unique: UniqueOpts{ByArgs} by matter with River's required states (available, pending, running, scheduled): an upload whose job conflicts with a running one is dropped, so its document may miss the last Brief (uploads_not_in_final_brief)",
			"counters: pg_stat_database.xact_commit, sum of pg_stat_user_tables n_tup_ins+n_tup_upd+n_tup_del, pg_stat_wal.wal_bytes, deltas over the burst with every pool closed (backends flush their statistics at exit); the WAL counter is the server's (nothing else runs meanwhile); round trips counted on the pools' sockets",
			"model: the extractive builder behind a fixed model_time, the same for both; model calls = Build calls",
		}}
	type acc struct{ x, rt, rows, wal, inv, relay, model, secs, lost, binv, bsecs []float64 }
	accs := map[string]*acc{"rail": {}, "river": {}, "river_unique": {}}
	for rep := 0; rep < o.Reps; rep++ {
		for _, sys := range []string{"rail", "river", "river_unique"} {
			var res perUploadRep
			var err error
			if sys == "rail" {
				res, err = perUploadRail(ctx, e, matters, uploads, builders, max(o.PerUploadBatch, 1), modelTime)
			} else {
				res, err = perUploadRiver(ctx, e, matters, uploads, builders, modelTime, sys == "river_unique")
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sys, err)
			}
			served := float64(matters*uploads) - float64(res.lost)
			a := accs[sys]
			a.x = append(a.x, float64(res.c.xacts)/served)
			a.rt = append(a.rt, float64(res.roundTrips)/served)
			a.rows = append(a.rows, float64(res.c.rows)/served)
			a.wal = append(a.wal, float64(res.c.wal)/served)
			a.inv = append(a.inv, float64(res.inv)/served)
			a.relay = append(a.relay, float64(res.relay)/served)
			a.model = append(a.model, float64(res.models)/served)
			a.secs = append(a.secs, res.elapsed.Seconds())
			a.lost = append(a.lost, float64(res.lost))
			if sys == "rail" && res.models > 0 {
				a.binv = append(a.binv, float64(res.builderInv)/float64(res.models))
				a.bsecs = append(a.bsecs, res.builderTime.Seconds()/float64(res.models))
			}
			logf("per upload: rep %d %s: %.2f xacts, %.2f round trips, %.2f rows, %.0f WAL bytes, %.2f invocations, %.2f model calls per served upload (%.1fs, %d lost)",
				rep+1, sys, a.x[rep], a.rt[rep], a.rows[rep], a.wal[rep], a.inv[rep], a.model[rep], res.elapsed.Seconds(), res.lost)
		}
	}
	for sys, a := range accs {
		p := PerUploadOf{Xacts: series("xacts", a.x), RoundTrips: series("round trips", a.rt), Rows: series("rows", a.rows),
			WALBytes: series("bytes", a.wal), ModelCalls: series("calls", a.model), Seconds: series("s", a.secs), Lost: series("uploads", a.lost)}
		if sys == "rail" {
			p.Invocations, p.RelayInv = series("invocations", a.inv), series("invocations", a.relay)
			p.BuilderInvPerBuild, p.BuilderSecsPerBuild = series("invocations", a.binv), series("s", a.bsecs)
		}
		r.Systems[sys] = p
	}
	return r, nil
}

// burst plays the uploads and Regenerates over refs with 4 producers.
func burst(ctx context.Context, refs []rail.MatterRef, uploads int, upload func(rail.MatterRef, int) error, regenerate func(rail.MatterRef) error) error {
	const producers = 4
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for p := range producers {
		wg.Go(func() {
			for i := p; i < len(refs); i += producers {
				for u := range uploads {
					if err := upload(refs[i], u); err != nil {
						errs <- err
						return
					}
				}
				if err := regenerate(refs[i]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func benchDocument(u int) rail.NewDocument {
	return rail.NewDocument{Name: fmt.Sprintf("filing-%d.pdf", u), Pages: []string{
		fmt.Sprintf("ORDER %d. The motion to compel is granted in part. Discovery closes on the thirtieth day.", u),
		"The parties shall meet and confer and file a joint status report within fourteen days."}}
}

// exec runs one statement on the bench database on a connection of its own.
func (e *env) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, e.url(e.benchDB))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func newMatters(ctx context.Context, e *env, n int) ([]rail.MatterRef, error) {
	pool, err := e.pool(ctx, 2, nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return createMatters(ctx, pool, n, "per upload ")
}

func perUploadRail(ctx context.Context, e *env, matters, uploads, builders, batch int, modelTime time.Duration) (perUploadRep, error) {
	var res perUploadRep
	refs, err := newMatters(ctx, e, matters)
	if err != nil {
		return res, err
	}
	base, err := lambdafn.LoadOperatorConfig(func(string) string { return "" })
	if err != nil {
		return res, err
	}
	cfg := app.LocalConfig(base, app.LocalTimings{Lease: 30 * time.Second, SettleDelay: 10 * time.Millisecond,
		SweepGrace: time.Minute}, app.BuilderExtractive)
	cfg.RelayWindow = 200 * time.Millisecond
	wiring, err := app.LocalWiring("../template.yaml", cfg, 0.01, 0)
	if err != nil {
		return res, err
	}
	tr := app.LocalTransport(wiring, nil)
	fb, err := app.NewFrameBuilder(ctx, app.BuilderExtractive, app.BuilderOptions{})
	if err != nil {
		return res, err
	}
	var models atomic.Int64
	// Earlier sections leave facts unpublished (their commits' frame.built):
	// set them aside, or this relay and trigger would carry them in the burst.
	if err := e.exec(ctx, `UPDATE ops.domain_event_outbox SET published_at = clock_timestamp()
        WHERE event_id IN (SELECT event_id FROM ops.outbox_facts WHERE published_at IS NULL AND parked_at IS NULL)`); err != nil {
		return res, err
	}
	w := &wireCounter{}
	before, err := readCounters(ctx, e)
	if err != nil {
		return res, err
	}
	pool, err := e.pool(ctx, int32(builders+4), w)
	if err != nil {
		return res, err
	}
	rl, err := app.Assemble(cfg, app.Deps{Pool: pool, Transport: tr, Builder: countingBuilder{FrameBuilder: fb, calls: &models, modelTime: modelTime}})
	if err != nil {
		pool.Close()
		return res, err
	}
	rctx, cancel := context.WithCancelCause(ctx)
	var inv, relays, builderInv, builderNanos atomic.Int64
	counted := func(h localbus.Handler) localbus.Handler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			inv.Add(1)
			return h(ctx, ev)
		}
	}
	onErr := func(fn string) func(error) {
		return func(err error) {
			if !errors.Is(err, context.Canceled) {
				cancel(fmt.Errorf("%s: %w", fn, err))
			}
		}
	}
	pollers := []*localbus.Poller{
		{Name: app.Trigger, Source: tr.TriggerQueue, Handler: counted(rl.Trigger.Handle), Batch: 10, Wait: 50 * time.Millisecond, Concurrency: 2, OnError: onErr(app.Trigger)},
		{Name: app.Builder, Source: tr.BuildQueue, Handler: counted(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			t0 := time.Now()
			defer func() { builderInv.Add(1); builderNanos.Add(int64(time.Since(t0))) }()
			return rl.Builder.Handle(ctx, ev)
		}), Batch: batch, Wait: 50 * time.Millisecond, Concurrency: builders, OnError: onErr(app.Builder)},
	}
	var wg sync.WaitGroup
	for _, p := range pollers {
		wg.Go(func() { _ = p.Run(rctx) })
	}
	wg.Go(func() {
		for rctx.Err() == nil {
			relays.Add(1)
			if _, err := rl.InvokeRelay(rctx); err != nil && rctx.Err() == nil {
				cancel(fmt.Errorf("relay: %w", err))
			}
		}
	})
	start := time.Now()
	err = burst(rctx, refs, uploads,
		func(ref rail.MatterRef, u int) error {
			_, err := record.StoreDocument(rctx, pool, ref, benchDocument(u))
			return err
		},
		func(ref rail.MatterRef) error { _, err := record.Regenerate(rctx, pool, ref); return err })
	if err == nil {
		err = railQuiet(rctx, pool, refs[0].FirmID, matters*(uploads+1))
	}
	res.elapsed = time.Since(start)
	cancel(nil)
	wg.Wait()
	if c := context.Cause(rctx); err == nil && c != nil && !errors.Is(c, context.Canceled) {
		err = c
	}
	if err == nil {
		// Every upload's event id is among the served demands' event ids.
		err = pool.QueryRow(ctx, `SELECT count(*) FROM app.documents d WHERE d.firm_id = $1 AND NOT EXISTS (
                SELECT 1 FROM ops.domain_event_outbox o JOIN ops.matter_demands m
                  ON m.firm_id = o.firm_id AND m.matter_id = o.matter_id AND o.event_id = ANY (m.event_ids) AND m.served_at IS NOT NULL
                WHERE o.firm_id = d.firm_id AND o.matter_id = d.matter_id AND o.payload->>'document_id' = d.document_id::text)`,
			refs[0].FirmID).Scan(&res.lost)
	}
	res.roundTrips, _ = w.snapshot()
	pool.Close()
	if err != nil {
		return res, err
	}
	after, err := readCounters(ctx, e)
	res.c = after.since(before)
	res.inv, res.relay, res.models = inv.Load(), relays.Load(), models.Load()
	res.builderInv, res.builderTime = builderInv.Load(), time.Duration(builderNanos.Load())
	return res, err
}

// railQuiet waits until the trigger has taken every fact (facts in its
// inbox), every demand is served and every fact is published, twice in a row
// 100 ms apart.
func railQuiet(ctx context.Context, pool *pgxpool.Pool, firm uuid.UUID, facts int) error {
	deadline := time.Now().Add(5 * time.Minute)
	calm := 0
	for calm < 2 {
		var inbox, unserved, unpublished int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM ops.trigger_inbox WHERE firm_id = $1),
                (SELECT count(*) FROM ops.matter_demands WHERE firm_id = $1 AND served_at IS NULL),
                (SELECT count(*) FROM ops.outbox_facts WHERE firm_id = $1 AND published_at IS NULL)`, firm).
			Scan(&inbox, &unserved, &unpublished); err != nil {
			return err
		}
		if inbox >= facts && unserved == 0 && unpublished == 0 {
			calm++
		} else {
			calm = 0
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not quiet after 5m: %d of %d facts taken, %d demands unserved, %d facts unpublished", inbox, facts, unserved, unpublished)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

type briefArgs struct {
	FirmID   uuid.UUID `json:"firm_id"`
	MatterID uuid.UUID `json:"matter_id"`
}

func (briefArgs) Kind() string { return "bench_brief" }

func perUploadRiver(ctx context.Context, e *env, matters, uploads, workers int, modelTime time.Duration, unique bool) (perUploadRep, error) {
	var res perUploadRep
	refs, err := newMatters(ctx, e, matters)
	if err != nil {
		return res, err
	}
	fb, err := app.NewFrameBuilder(ctx, app.BuilderExtractive, app.BuilderOptions{})
	if err != nil {
		return res, err
	}
	var models atomic.Int64
	b := countingBuilder{FrameBuilder: fb, calls: &models, modelTime: modelTime}
	w := &wireCounter{}
	before, err := readCounters(ctx, e)
	if err != nil {
		return res, err
	}
	pool, err := e.pool(ctx, int32(workers+4), w)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	ws := river.NewWorkers()
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, j *river.Job[briefArgs]) error {
		ref := rail.MatterRef{FirmID: j.Args.FirmID, MatterID: j.Args.MatterID}
		in, err := postgres.LoadInputs(ctx, pool, ref)
		if err != nil {
			return err
		}
		body, err := b.Build(ctx, in)
		if err != nil {
			return err
		}
		ids := make([]uuid.UUID, len(in.Manifest))
		for i, m := range in.Manifest {
			ids[i] = m.ID
		}
		_, err = pool.Exec(ctx, `INSERT INTO bench.river_briefs (firm_id, matter_id, body, documents) VALUES ($1, $2, $3, $4)
            ON CONFLICT (firm_id, matter_id) DO UPDATE SET body = excluded.body, documents = excluded.documents, built_at = clock_timestamp()`,
			ref.FirmID, ref.MatterID, body, ids)
		return err
	}))
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: riverLogger(), Workers: ws,
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}}})
	if err != nil {
		return res, err
	}
	var opts *river.InsertOpts
	if unique {
		opts = &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
	}
	if err := client.Start(ctx); err != nil {
		return res, err
	}
	start := time.Now()
	err = burst(ctx, refs, uploads,
		func(ref rail.MatterRef, u int) error {
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := postgres.AddDocument(ctx, tx, ref, benchDocument(u)); err != nil {
					return err
				}
				_, err := client.InsertTx(ctx, tx, briefArgs{FirmID: ref.FirmID, MatterID: ref.MatterID}, opts)
				return err
			})
		},
		func(ref rail.MatterRef) error {
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if err := postgres.CheckMatter(ctx, tx, ref); err != nil {
					return err
				}
				_, err := client.InsertTx(ctx, tx, briefArgs{FirmID: ref.FirmID, MatterID: ref.MatterID}, opts)
				return err
			})
		})
	if err == nil {
		err = riverQuiet(ctx, pool)
	}
	res.elapsed = time.Since(start)
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	_ = client.Stop(sctx)
	scancel()
	if err == nil {
		err = pool.QueryRow(ctx, `SELECT count(*) FROM app.documents d WHERE d.firm_id = $1 AND NOT EXISTS (
                SELECT 1 FROM bench.river_briefs b WHERE b.firm_id = d.firm_id AND b.matter_id = d.matter_id AND d.document_id = ANY (b.documents))`,
			refs[0].FirmID).Scan(&res.lost)
	}
	res.roundTrips, _ = w.snapshot()
	pool.Close()
	if err != nil {
		return res, err
	}
	after, err := readCounters(ctx, e)
	res.c = after.since(before)
	res.models = models.Load()
	return res, err
}

// riverQuiet waits until no bench_brief job is left to work.
func riverQuiet(ctx context.Context, pool *pgxpool.Pool) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var left int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'bench_brief'
                AND state IN ('available', 'pending', 'running', 'scheduled', 'retryable')`).Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("river: %d jobs left after 5m", left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
