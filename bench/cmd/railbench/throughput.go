package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// noopFrame is what a no-op build lands: the smallest valid frame.
var noopFrame = rail.Frame{Body: []byte(`{}`), Fingerprint: "noop", Builder: "bench/noop"}

// railRun is one repetition of the rail's throughput loop.
type railRun struct {
	Elapsed    time.Duration
	Landed     int64
	Claims     int64 // claims granted
	Empty      int64 // nudges whose claim found nothing to do
	RoundTrips int64 // wire round trips on the rail pool during the timed part
	Statements int64
}

// noopBuilder is the no-op build: the smallest valid frame.
type noopBuilder struct{}

func (noopBuilder) Name() string { return noopFrame.Builder }

func (noopBuilder) Build(context.Context, rail.Inputs) (json.RawMessage, error) {
	return noopFrame.Body, nil
}

// railFeed is how railServe's demands arrive.
type railFeed int

const (
	// feedBefore: one Demand statement a matter, recorded before the clock
	// starts (the drain: only the serving is timed).
	feedBefore railFeed = iota
	// feedDemands: one Demand statement a matter by `workers` producers
	// inside the timed part, each followed by its nudge.
	feedDemands
	// feedTrigger: the trigger's path inside the timed part. One
	// document.uploaded fact a matter is in the outbox before the clock
	// starts (the upload's own transaction, not the rail's work); `workers`
	// producers hand them to rail.Trigger.Handle in batches of up to `batch`
	// (an SQS batch), which verifies and records each batch's facts and
	// demands in one call (ops.receive_facts) and nudges each matter.
	feedTrigger
	// feedTriggerMatterByMatter: feedTrigger with the trigger recording each
	// matter in its own transaction (its path before migration 028, and
	// its fallback): the same run's control.
	feedTriggerMatterByMatter
)

// inboxOnly hides the ledger's batch call (rail.BatchInbox) from the
// trigger: it records matter by matter.
type inboxOnly struct{ rail.Inbox }

// recordUploads writes one document.uploaded fact a matter to the outbox
// (one statement), as the uploads' own transactions would have.
func recordUploads(ctx context.Context, pool *pgxpool.Pool, refs []rail.MatterRef) ([]rail.InboundFact, error) {
	ids, firms, matters := make([]string, len(refs)), make([]string, len(refs)), make([]string, len(refs))
	facts := make([]rail.InboundFact, len(refs))
	for i, r := range refs {
		id := uuid.New()
		ids[i], firms[i], matters[i] = id.String(), r.FirmID.String(), r.MatterID.String()
		facts[i] = rail.InboundFact{MessageID: "m" + itoa(i), Fact: rail.FactDetail{EventID: id, EventName: rail.FactDocumentUploaded,
			FirmID: r.FirmID, MatterID: uuid.NullUUID{UUID: r.MatterID, Valid: true}}}
	}
	_, err := pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, matter_id, event_name)
        SELECT u.e, u.f, u.m, 'document.uploaded'
        FROM ROWS FROM (unnest($1::text[]::uuid[]), unnest($2::text[]::uuid[]), unnest($3::text[]::uuid[])) AS u(e, f, m)`,
		ids, firms, matters)
	return facts, err
}

// railServe serves one demand on every matter in refs with `workers`
// workers, each taking up to `batch` nudges per receive (an SQS batch),
// and serving them as the builder function serves its batch
// (rail.Worker.BuildBatch, lambdafn.BuilderHandler): one claim statement
// for the batch, then per claim the build's reads (manifest, last frame),
// a no-op build and the fenced commit, the builds concurrent. The demands
// arrive as feed says (railFeed).
func railServe(ctx context.Context, led *postgres.Ledger, w *wireCounter, refs []rail.MatterRef, workers, batch int, feed railFeed) (railRun, error) {
	nudges := make(chan rail.MatterRef, len(refs)*2)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) { cancel(err) }

	var facts []rail.InboundFact
	if feed == feedTrigger || feed == feedTriggerMatterByMatter {
		var err error
		if facts, err = recordUploads(ctx, led.Pool(), refs); err != nil {
			return railRun{}, err
		}
	}
	var inbox rail.Inbox = led
	if feed == feedTriggerMatterByMatter {
		inbox = inboxOnly{led}
	}
	trig := &rail.Trigger{Ledger: inbox, Nudger: chanNudger(nudges), Log: slog.New(slog.DiscardHandler)}
	deliverAll := func(parallel int) {
		var wg sync.WaitGroup
		for p := range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []rail.InboundFact
				for i := p; i < len(facts); i += parallel {
					mine = append(mine, facts[i])
				}
				for len(mine) > 0 {
					k := min(batch, len(mine))
					for _, err := range trig.Handle(ctx, mine[:k]) {
						if err != nil {
							fail(err)
							return
						}
					}
					mine = mine[k:]
				}
			}()
		}
		wg.Wait()
	}

	demandAll := func(parallel int) {
		var wg sync.WaitGroup
		for p := range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := p; i < len(refs); i += parallel {
					if _, err := led.Demand(ctx, refs[i], 1); err != nil {
						fail(err)
						return
					}
					nudges <- refs[i]
				}
			}()
		}
		wg.Wait()
	}
	if feed == feedBefore {
		demandAll(workers)
		if err := context.Cause(ctx); err != nil {
			return railRun{}, err
		}
	}

	var run railRun
	done := make(chan struct{})
	var doneOnce sync.Once
	target := int64(len(refs))
	rt0, st0 := w.snapshot()
	start := time.Now()
	var wg sync.WaitGroup
	for id := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := &rail.Worker{Ledger: led, Builder: noopBuilder{}, ID: "bench-" + itoa(id)}
			buf := make([]rail.MatterRef, 0, batch)
			for {
				buf = buf[:0]
				select {
				case r := <-nudges:
					buf = append(buf, r)
				case <-done:
					return
				case <-ctx.Done():
					return
				}
			fill:
				for len(buf) < batch {
					select {
					case r := <-nudges:
						buf = append(buf, r)
					default:
						break fill
					}
				}
				items := make([]rail.BatchItem, len(buf))
				for i, ref := range buf {
					items[i] = rail.BatchItem{Ref: ref}
				}
				outs, errs, err := wk.BuildBatch(ctx, items, nil)
				if err != nil {
					fail(err)
					return
				}
				for i, out := range outs {
					if errs[i] != nil {
						fail(errs[i])
						return
					}
					if !out.Claimed {
						atomic.AddInt64(&run.Empty, 1)
						continue
					}
					atomic.AddInt64(&run.Claims, 1)
					if !out.Landed {
						fail(fmt.Errorf("rail: %s claimed but not landed: %+v", buf[i], out))
						return
					}
					if out.FollowUpDue {
						nudges <- buf[i]
					}
					if atomic.AddInt64(&run.Landed, 1) == target {
						doneOnce.Do(func() { close(done) })
					}
				}
			}
		}()
	}
	switch feed {
	case feedDemands:
		demandAll(workers)
	case feedTrigger, feedTriggerMatterByMatter:
		deliverAll(workers)
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	run.Elapsed = time.Since(start)
	rt1, st1 := w.snapshot()
	run.RoundTrips, run.Statements = rt1-rt0, st1-st0
	cancel(nil)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return run, err
	}
	if run.Landed != target {
		return run, fmt.Errorf("rail: landed %d of %d", run.Landed, target)
	}
	return run, nil
}

// River side ---------------------------------------------------------------

type noopArgs struct {
	Seq int `json:"seq"`
}

func (noopArgs) Kind() string { return "bench_noop" }

// riverBench is a running River client that works no-op jobs with a fixed
// number of workers, and counts completions from its event stream (which,
// unlike the worker returning, means the completion was persisted).
type riverBench struct {
	client    *river.Client[pgx.Tx]
	completed atomic.Int64
	events    func()
	wake      chan struct{}
}

type riverTuning struct {
	Name              string        `json:"name"`
	FetchCooldown     time.Duration `json:"fetch_cooldown_ns"`
	FetchPollInterval time.Duration `json:"fetch_poll_interval_ns"`
}

func riverLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

func startRiverBench(ctx context.Context, pool *pgxpool.Pool, workers int, tune riverTuning) (*riverBench, error) {
	ws := river.NewWorkers()
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[noopArgs]) error { return nil }))
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		FetchCooldown:     tune.FetchCooldown,
		FetchPollInterval: tune.FetchPollInterval,
		Logger:            riverLogger(),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:           ws,
	})
	if err != nil {
		return nil, err
	}
	rb := &riverBench{client: client, wake: make(chan struct{}, 1)}
	ch, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: 100_000,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed},
	})
	rb.events = cancel
	go func() {
		for ev := range ch {
			if ev.Kind == river.EventKindJobCompleted {
				rb.completed.Add(1)
				select {
				case rb.wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return rb, nil
}

func (rb *riverBench) stop(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_ = rb.client.Stop(ctx)
	rb.events()
}

// waitCompleted waits until the completion count reaches n.
func (rb *riverBench) waitCompleted(ctx context.Context, n int64, timeout time.Duration) error {
	deadline := time.After(timeout)
	for rb.completed.Load() < n {
		select {
		case <-rb.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("river: %d of %d jobs completed after %s", rb.completed.Load(), n, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

type riverRun struct {
	Elapsed    time.Duration
	Insert     time.Duration // drain only: the bulk insert inside Elapsed
	Jobs       int
	RoundTrips int64
	Statements int64
}

// riverServe works n no-op jobs. With e2e, `producers` goroutines insert
// them inside the timed part: one Insert call each (insertBatch 1, the
// counterpart of one Demand statement a matter), or InsertMany calls of
// insertBatch jobs (the counterpart of the trigger's batch); without, one
// InsertManyFast (COPY) starts the timed part.
func (rb *riverBench) serve(ctx context.Context, w *wireCounter, n, producers, insertBatch int, e2e bool) (riverRun, error) {
	base := rb.completed.Load()
	rt0, st0 := w.snapshot()
	start := time.Now()
	var run riverRun
	if e2e {
		var wg sync.WaitGroup
		errs := make(chan error, producers)
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var batch []river.InsertManyParams
				for i := p; i < n; i += producers {
					if insertBatch <= 1 {
						if _, err := rb.client.Insert(ctx, noopArgs{Seq: i}, nil); err != nil {
							errs <- err
							return
						}
						continue
					}
					batch = append(batch, river.InsertManyParams{Args: noopArgs{Seq: i}})
					if len(batch) == insertBatch || i+producers >= n {
						if _, err := rb.client.InsertMany(ctx, batch); err != nil {
							errs <- err
							return
						}
						batch = batch[:0]
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return run, err
		}
	} else {
		params := make([]river.InsertManyParams, n)
		for i := range params {
			params[i].Args = noopArgs{Seq: i}
		}
		if _, err := rb.client.InsertManyFast(ctx, params); err != nil {
			return run, err
		}
		run.Insert = time.Since(start)
	}
	if err := rb.waitCompleted(ctx, base+int64(n), 2*time.Minute); err != nil {
		return run, err
	}
	run.Elapsed = time.Since(start)
	rt1, st1 := w.snapshot()
	run.RoundTrips, run.Statements = rt1-rt0, st1-st0
	run.Jobs = n
	return run, nil
}
