package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
)

// LocalOptions say how the local rail drives the assembled handlers.
type LocalOptions struct {
	// The queues the trigger and the builder read (the in-process ones,
	// or SQS through sqsq.Source).
	TriggerQueue, BuildQueue localbus.Source
	// BackfillQueue: the backfill's own build queue, read by builders of
	// its own so live nudges never wait behind it (nil: none).
	BackfillQueue localbus.Source
	// RelayEvery: the relay is invoked once per period, each invocation
	// draining for its window (Config.RelayWindow); zero: the window.
	RelayEvery time.Duration
	// SweepEvery: the sweeper's period (one minute when deployed).
	SweepEvery time.Duration
	// TriggerConcurrency and BuilderConcurrency: invocations at once
	// (the event sources' MaximumConcurrency); zero: 2 and 4.
	TriggerConcurrency, BuilderConcurrency int
	// BackfillConcurrency: builder invocations at once on the backfill
	// queue; zero: the sweeper's backfill concurrency
	// (RAIL_BACKFILL_CONCURRENCY), as the template's mapping has.
	BackfillConcurrency int
	// OnError receives invocation errors, by function.
	OnError func(fn string, err error)
	// OnRelay and OnSweep, if set, receive each invocation's result.
	OnRelay func(lambdafn.RelayResult)
	OnSweep func(lambdafn.SweepResult)
}

// RunLocal runs the rail's four handlers the way AWS invokes the
// functions: the trigger and the builder by pollers on their queues (the
// builder on the backfill queue too, with its own concurrency)
// (Lambda's SQS event source mapping: batches of 10, as template.yaml's,
// partial batch failures), the relay and the sweeper on schedules (EventBridge
// Scheduler's input, one invocation at a time). It returns at once; wait
// blocks until ctx is done and every part has stopped.
func RunLocal(ctx context.Context, r *Rail, o LocalOptions) (wait func()) {
	report := func(fn string) func(error) {
		return func(err error) {
			if o.OnError != nil && !errors.Is(err, context.Canceled) {
				o.OnError(fn, err)
			}
		}
	}
	relayEvery := o.RelayEvery
	if relayEvery <= 0 {
		relayEvery = r.Relay.Window
	}
	pollers := []*localbus.Poller{
		{Name: Trigger, Source: o.TriggerQueue, Handler: r.Trigger.Handle, Batch: 10, Wait: 200 * time.Millisecond,
			Concurrency: max(o.TriggerConcurrency, 2), OnError: report(Trigger)},
		{Name: Builder, Source: o.BuildQueue, Handler: r.Builder.Handle, Batch: 10, Wait: 200 * time.Millisecond,
			Concurrency: max(o.BuilderConcurrency, 4), OnError: report(Builder)},
	}
	if o.BackfillQueue != nil {
		pollers = append(pollers, &localbus.Poller{Name: Builder, Source: o.BackfillQueue, Handler: r.Builder.Handle,
			Batch: 10, Wait: 200 * time.Millisecond, Concurrency: max(o.BackfillConcurrency, backfillConcurrency(r)), OnError: report(Builder)})
	}
	schedules := []*localbus.Schedule{
		{Name: Relay, Every: relayEvery,
			// The relay's window ends its publish timeout and mark time
			// before the deadline: leave room for a whole window.
			Timeout: r.Relay.Window + r.Relay.Margin + time.Minute,
			Invoke: func(ctx context.Context) error {
				res, err := r.InvokeRelay(ctx)
				if o.OnRelay != nil {
					o.OnRelay(res)
				}
				return err
			}, OnError: report(Relay)},
		{Name: Sweeper, Every: o.SweepEvery, Timeout: time.Minute,
			Invoke: func(ctx context.Context) error {
				res, err := r.InvokeSweeper(ctx)
				if o.OnSweep != nil {
					o.OnSweep(res)
				}
				return err
			}, OnError: report(Sweeper)},
	}
	var wg sync.WaitGroup
	for _, p := range pollers {
		wg.Go(func() { _ = p.Run(ctx) })
	}
	for _, s := range schedules {
		wg.Go(func() { _ = s.Run(ctx) })
	}
	return wg.Wait
}

// backfillConcurrency is the backfill builders' concurrency the sweeper
// was configured with (at least 1).
func backfillConcurrency(r *Rail) int {
	if r.Sweeper != nil && r.Sweeper.Sweeper.Backfill != nil {
		return max(r.Sweeper.Sweeper.Backfill.Concurrency, 1)
	}
	return 1
}

// LocalTimings are the local rail's scaled-down timings (railctl run and
// dev take them as flags).
type LocalTimings struct {
	Lease, SettleDelay, SweepGrace time.Duration
}

// LocalConfig is the configuration the local rail runs with: cfg, read as
// the functions read theirs, with the local timings on top (a lease of
// seconds, not minutes) and builder as the Brief builder.
func LocalConfig(cfg Config, t LocalTimings, builder string) Config {
	cfg.Lease, cfg.SettleDelay, cfg.SweepGrace = t.Lease, t.SettleDelay, t.SweepGrace
	cfg.BackoffBase, cfg.BackoffMax = time.Second, 10*time.Second
	cfg.RelayWindow = time.Second
	cfg.BuildReserve = time.Second // the local lease is seconds long; the commit takes milliseconds
	cfg.BriefBuilder = builder
	return cfg
}
