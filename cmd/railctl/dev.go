package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/localpg"
	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/pgconn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// envTriggerQueueURL: the trigger queue the local rail polls over AWS
// (--transport aws); in AWS the trigger's event source mapping reads it.
const envTriggerQueueURL = "RAIL_TRIGGER_QUEUE_URL"

// railOptions configure the local rail (railctl dev and railctl run).
type railOptions struct {
	getenv     func(string) string // the environment; nil: os.Getenv
	modelDelay time.Duration
	settle     time.Duration
	lease      time.Duration
	sweepEvery time.Duration
	sweepGrace time.Duration
	scale      float64
	builder    string
	duplicate  float64
	transport  string
	template   string
	quiet      bool
}

func addRailFlags(fs *flag.FlagSet, o *railOptions, modelDelay, settle time.Duration) {
	fs.DurationVar(&o.modelDelay, "model-delay", modelDelay, "pause every model call this long (honours cancellation), to watch builds overlap demand")
	fs.DurationVar(&o.settle, "settle", settle, "settle window: DelaySeconds on the trigger's nudges (a burst of facts -> one build)")
	fs.DurationVar(&o.lease, "lease", 10*time.Second, "build lease (heartbeat every third of it)")
	fs.DurationVar(&o.sweepEvery, "sweep-every", 2*time.Second, "sweeper period (one minute when deployed)")
	fs.DurationVar(&o.sweepGrace, "sweep-grace", 3*time.Second, "demand younger than this is left to its own nudge")
	fs.Float64Var(&o.scale, "time-scale", 0.01, "multiply the template's queue timings by this (visibility 3600s -> 36s)")
	fs.StringVar(&o.builder, "builder", app.BuilderExtractive, "Brief builder: "+strings.Join(app.BuilderNames(), ", "))
	fs.Float64Var(&o.duplicate, "duplicate", 0, "fault knob: probability that a queue delivers a message twice")
	fs.StringVar(&o.transport, "transport", "auto", "local (in-process bus and queues), aws (EventBridge/SQS at AWS_ENDPOINT_URL or AWS), or auto")
	fs.StringVar(&o.template, "template", "", "SAM template the local wiring is read from (default: template.yaml at the project root)")
}

// projectRoot is the directory holding go.mod, searched upwards from the
// working directory; the working directory when there is none.
func projectRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return wd
		}
	}
}

// localDatabase returns a database URL: --database-url / DATABASE_URL when
// set; otherwise the clone's own PostgreSQL, started here (stop is then
// non-nil) with a database brief_rail, its data in the clone's state
// directory (localStateDir: outside the clone, reachable by the server
// wherever the clone sits).
func localDatabase(ctx context.Context, g *globals, p *progressHandler) (url string, stop func(), err error) {
	if g.databaseURL != "" {
		return g.databaseURL, nil, nil
	}
	root := g.root
	if root == "" {
		root = projectRoot()
	}
	state, err := localStateDir(root, g.env, os.Geteuid())
	if err != nil {
		return "", nil, err
	}
	if err := prepareStateDir(state, root); err != nil {
		return "", nil, err
	}
	dir := filepath.Join(state, "pg")
	if _, err := os.Stat(filepath.Join(root, ".local", "pg", "PG_VERSION")); err == nil {
		p.linef("postgres", "note: %s holds a cluster of an older layout, no longer used; remove it with rm -rf %s",
			filepath.Join(root, ".local", "pg"), filepath.Join(root, ".local"))
	}
	p.linef("postgres", "starting PostgreSQL with data in %s (kept between runs; remove with rm -rf %s)", dir, state)
	srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
	if err != nil {
		return "", nil, fmt.Errorf("start PostgreSQL in %s (is `railctl dev` already running on it? then set DATABASE_URL to its URL): %w", dir, err)
	}
	stop = func() { _ = srv.Stop() }
	if _, err := srv.EnsureDatabase(ctx, "brief_rail"); err != nil {
		stop()
		return "", nil, err
	}
	url = srv.URL("brief_rail")
	_ = os.WriteFile(filepath.Join(state, "database_url"), []byte(url+"\n"), 0o644)
	p.linef("postgres", "ready: %s", url)
	return url, stop, nil
}

func migrateURL(ctx context.Context, url string, p *progressHandler) error {
	pool, err := app.OpenPool(ctx, railctlEnv(os.Getenv, url, 1))
	if err != nil {
		return err
	}
	defer pool.Close()
	v, err := app.MigrateSchema(ctx, pool, func(name string) { p.linef("migrate", "applying %s", name) })
	if err != nil {
		return err
	}
	p.linef("migrate", "schema at version %d", v)
	return nil
}

// localRail is the rail running in one process: the handlers pkg/app
// assembles for the Lambda functions, driven by pkg/app's local runtime.
type localRail struct {
	pool   *pgxpool.Pool
	ledger *postgres.Ledger // for the commands' own reads (status, runs, the Brief)
	wiring *localbus.Wiring // nil over AWS
	p      *progressHandler
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// slowBuilder wraps a FrameBuilder with a pause that honours ctx, standing in
// for a slow model.
type slowBuilder struct {
	rail.FrameBuilder
	delay time.Duration
	p     *progressHandler
}

// Identity is the wrapped builder's: the pause changes no output.
func (s slowBuilder) Identity() rail.BuilderIdentity { return rail.IdentityOf(s.FrameBuilder) }

func (s slowBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	s.p.linef("model", "building matter %s from %d document(s); model delay %s", in.Ref.MatterID.String()[:8], len(in.Manifest), s.delay)
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		s.p.linef("model", "build cancelled: %v", context.Cause(ctx))
		return nil, context.Cause(ctx)
	}
	return s.FrameBuilder.Build(ctx, in)
}

// localConfig is the rail's configuration for the local rail: the
// environment read as the functions read it, with the local timings of the
// flags (a lease of seconds, not minutes) on top.
func localConfig(o railOptions) (app.Config, error) {
	cfg, err := lambdafn.LoadOperatorConfig(o.env) // the variables, defaults and ranges the functions use
	if err != nil {
		return app.Config{}, usageError("%v", err)
	}
	return app.LocalConfig(cfg, app.LocalTimings{Lease: o.lease, SettleDelay: o.settle, SweepGrace: o.sweepGrace}, o.builder), nil
}

// startRail connects and starts the rail: the handlers assembled by
// app.Assemble, as the functions assemble them, over the local transport
// (or SQS/EventBridge), run by app.RunLocal. Close stops them.
func startRail(ctx context.Context, url string, o railOptions, p *progressHandler) (*localRail, error) {
	cfg, err := localConfig(o)
	if err != nil {
		return nil, err
	}
	pool, err := app.OpenPool(ctx, railctlEnv(o.env, url, 16))
	if err != nil {
		return nil, usageError("%v", err)
	}
	fb, err := app.NewFrameBuilder(ctx, o.builder, app.BuilderOptions{BedrockModelID: cfg.BedrockModelID, BedrockMaxTokens: cfg.BedrockMaxTokens})
	if err != nil {
		pool.Close()
		return nil, usageError("%v", err)
	}
	if o.modelDelay > 0 {
		fb = slowBuilder{FrameBuilder: fb, delay: o.modelDelay, p: p}
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &localRail{pool: pool, p: p, cancel: cancel, ledger: postgres.NewLedger(pool, cfg.RailConfig())}

	var t app.Transport
	transport := o.transport
	if transport == "auto" {
		transport = "local"
		if o.env("AWS_ENDPOINT_URL") != "" && o.env(envTriggerQueueURL) != "" && cfg.BuildQueueURL != "" {
			transport = "aws"
		}
	}
	switch transport {
	case "local":
		tplPath := o.template
		if tplPath == "" {
			tplPath = filepath.Join(projectRoot(), "template.yaml")
		}
		w, err := app.LocalWiring(tplPath, cfg, o.scale, o.duplicate)
		if err != nil {
			cancel()
			pool.Close()
			return nil, err
		}
		r.wiring = w
		w.Bus.OnDeliver = func(d localbus.Delivery) {
			if len(d.Rules) == 0 {
				p.linef("bus", "%s published; no rule matches it (not routed)", d.DetailType)
				return
			}
			p.linef("bus", "%s published -> %s -> trigger queue%s", d.DetailType, strings.Join(d.Rules, ","), traceNote(d.TraceHeader))
		}
		t = app.LocalTransport(w, func(queue string, n rail.Nudge, d time.Duration) {
			if queue == postgres.QueueBackfill {
				p.linef("nudge", "-> backfill queue: matter %s reason=%s", n.MatterID.String()[:8], n.Reason)
				return
			}
			p.linef("nudge", "-> build queue: matter %s reason=%s delay=%s%s", n.MatterID.String()[:8], n.Reason, d, traceNote(n.TraceHeader))
		})
		bq := w.Queue(app.BuildQueueID).Config()
		p.linef("wiring", "in-process bus and queues from %s (timings x%g; build queue visibility %s, redrive after %d receives)",
			filepath.Base(tplPath), o.scale, bq.Visibility, bq.MaxReceiveCount)
	case "aws":
		if o.env(envTriggerQueueURL) == "" || cfg.BuildQueueURL == "" {
			cancel()
			pool.Close()
			return nil, usageError("--transport aws needs %s and %s", envTriggerQueueURL, lambdafn.EnvBuildQueueURL)
		}
		acfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			cancel()
			pool.Close()
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		t = app.AWSTransport(acfg, cfg, o.env(envTriggerQueueURL))
		p.linef("wiring", "AWS: bus %s, trigger queue %s, build queue %s", cfg.EventBus, o.env(envTriggerQueueURL), cfg.BuildQueueURL)
	default:
		cancel()
		pool.Close()
		return nil, usageError("--transport %q: want local, aws or auto", o.transport)
	}

	// The functions' own handlers, assembled by the function the Lambdas'
	// mains call: the local rail runs the code that is deployed (every
	// nudge recorded for `railctl why`, the backfill admitted by the
	// sweeper onto its own queue).
	rl, err := app.Assemble(cfg, app.Deps{Pool: pool, Transport: t, Builder: fb,
		LogFor: func(fn string) *slog.Logger {
			if fn == app.Relay || fn == app.Sweeper { // their results are printed below
				return p.loggerAt(fn, slog.LevelWarn)
			}
			return p.logger(fn)
		},
		Metrics: emf.New(io.Discard)})
	if err != nil {
		cancel()
		pool.Close()
		return nil, err
	}
	wait := app.RunLocal(rctx, rl, app.LocalOptions{
		TriggerQueue: t.TriggerQueue, BuildQueue: t.BuildQueue, BackfillQueue: t.BackfillQueue, SweepEvery: o.sweepEvery,
		OnError: func(fn string, err error) { p.linef(fn, "ERROR %v", err) },
		OnRelay: func(res lambdafn.RelayResult) {
			if res.Published > 0 || res.Failed > 0 {
				p.linef("relay", "outbox -> bus: %d published, %d failed, backlog %d", res.Published, res.Failed, res.Backlog)
			}
		},
		OnSweep: func(res lambdafn.SweepResult) {
			if res.Quarantined > 0 {
				p.linef("sweeper", "QUARANTINED %d matter(s): lease expired on the last attempt", res.Quarantined)
			}
			if res.LeaseExpiries > 0 {
				p.linef("sweeper", "%d lease(s) expired", res.LeaseExpiries)
			}
			if res.Renudged > 0 {
				p.linef("sweeper", "unserved demand with no live claim: re-nudged %d matter(s)", res.Renudged)
			}
			if res.OutboxPruned > 0 || res.InboxPruned > 0 {
				p.linef("sweeper", "pruned %d outbox and %d inbox row(s)", res.OutboxPruned, res.InboxPruned)
			}
			if res.Backfilled > 0 {
				p.linef("backfill", "admitted %d outdated matter(s) at %g/min (deployed %s); %d outdated",
					res.Backfilled, cfg.BackfillRate, cfg.BriefBuilder, res.Outdated)
			}
		},
	})
	r.wg.Go(wait)
	r.wg.Go(func() { r.watchLedger(rctx) })
	if r.wiring != nil {
		r.wg.Go(func() { r.watchDLQs(rctx) })
	}
	p.linef("rail", "running: relay, trigger, builder (%s, model delay %s), sweeper every %s; lease %s, settle %s",
		fb.Name(), o.modelDelay, o.sweepEvery, o.lease, o.settle)
	return r, nil
}

// traceNote is the trace id a progress line shows, when there is one.
func traceNote(traceHeader string) string {
	if id := tracing.TraceID(traceHeader); id != "" {
		return " trace=" + id
	}
	return ""
}

// railctlEnv is the environment railctl opens its pool with: getenv's,
// with the --database-url (or DATABASE_URL) given and, unless DB_MAX_CONNS
// says otherwise, maxConns connections.
func railctlEnv(getenv func(string) string, databaseURL string, maxConns int) func(string) string {
	return func(k string) string {
		switch k {
		case pgconn.EnvDatabaseURL:
			return databaseURL
		case pgconn.EnvMaxConns:
			if v := getenv(k); v != "" {
				return v
			}
			return strconv.Itoa(maxConns)
		}
		return getenv(k)
	}
}

// env reads the rail's environment (os.Getenv unless a test set its own).
func (o railOptions) env(key string) string {
	if o.getenv != nil {
		return o.getenv(key)
	}
	return os.Getenv(key)
}

// Stop stops the rail's parts and waits for them; the pool stays open.
func (r *localRail) Stop() {
	r.cancel()
	r.wg.Wait()
}

// Close stops the rail and closes its pool.
func (r *localRail) Close() {
	r.Stop()
	r.pool.Close()
}

// watchLedger prints heartbeats: a running row whose claimed_at moved on
// under the same token.
func (r *localRail) watchLedger(ctx context.Context) {
	last := map[rail.MatterRef]postgres.Lease{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
		leases, err := r.ledger.Leases(ctx)
		if err != nil {
			continue
		}
		now := map[rail.MatterRef]postgres.Lease{}
		for _, l := range leases {
			now[l.MatterRef] = l
			if prev, ok := last[l.MatterRef]; ok && prev.Token == l.Token && l.ClaimedAt.After(prev.ClaimedAt) {
				r.p.linef("builder", "heartbeat token=%d matter=%s: lease refreshed", l.Token, l.MatterID.String()[:8])
			}
		}
		last = now
	}
}

func (r *localRail) watchDLQs(ctx context.Context) {
	counts := map[string]int{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		for _, id := range []string{app.TriggerQueueID, app.BuildQueueID} {
			q := r.wiring.Queue(id)
			if n := q.Stats().Redriven; n > counts[id] {
				r.p.linef("dlq", "%d message(s) from %s moved to %s after %d receives", n-counts[id], id, q.Config().DLQ.Name(), q.Config().MaxReceiveCount)
				counts[id] = n
			}
		}
	}
}

// bootRail is the start of `railctl dev` and `railctl run`: the local (or
// DATABASE_URL) database, migrated, with the rail running on it. stop
// releases the database server, if one was started; it is never nil.
func bootRail(ctx context.Context, g *globals, o railOptions, p *progressHandler) (*localRail, string, func(), error) {
	url, stopDB, err := localDatabase(ctx, g, p)
	if err != nil {
		return nil, "", nil, err
	}
	stop := func() {
		if stopDB != nil {
			stopDB()
		}
	}
	if err := migrateURL(ctx, url, p); err != nil {
		stop()
		return nil, "", nil, err
	}
	o.getenv = g.env
	r, err := startRail(ctx, url, o, p)
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	return r, url, stop, nil
}

// cmdDev runs the rail until interrupted.
func cmdDev(ctx context.Context, g *globals, args []string) error {
	c := g.flags("dev", "[flags]", 0)
	var o railOptions
	addRailFlags(c.FlagSet, &o, 5*time.Second, 2*time.Second)
	if err := c.parse(args); err != nil {
		return err
	}
	p := newProgress(g.stdout, slog.LevelInfo)
	r, url, stop, err := bootRail(ctx, g, o, p)
	if err != nil {
		return err
	}
	defer stop()
	p.linef("rail", "in another terminal:  export DATABASE_URL='%s'", url)
	p.linef("rail", "then e.g.  railctl regenerate --firm %s --matter %s   (Ctrl-C here stops the rail)", sampleFirm, sampleMatter)
	<-ctx.Done()
	p.linef("rail", "stopping")
	r.Close()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}
