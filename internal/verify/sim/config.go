package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/verify/ledgercheck"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// CommitFunc lands a frame for a claim on q. The default is the ledger's
// fenced Commit (on the transaction, through Ledger.On); a negative control swaps in a broken one.
type CommitFunc func(ctx context.Context, l *postgres.Ledger, q postgres.Querier, c rail.Claim, f rail.Frame) (rail.CommitResult, error)

// ClaimFunc claims a matter on q. The default is the ledger's Claim, through Ledger.On(q).
type ClaimFunc func(ctx context.Context, l *postgres.Ledger, q postgres.Querier, ref rail.MatterRef, worker string) (rail.Claim, bool, error)

// InputsFunc reads a build's inputs after its claim. The default is
// postgres.LoadInputs.
type InputsFunc func(ctx context.Context, q postgres.Querier, ref rail.MatterRef) (rail.Inputs, error)

// GaugesFunc reads the on-call gauges. The default is the ledger's Gauges.
type GaugesFunc func(ctx context.Context, l *postgres.Ledger) (postgres.Gauges, error)

// Drainer is one relay: DrainOnce makes one pass.
type Drainer interface {
	DrainOnce(ctx context.Context) (rail.RelayStats, error)
}

// RelayOpts are what a step asks of the relay it builds.
type RelayOpts struct {
	// AfterPublish, when non-nil, must run between PutEvents and marking.
	AfterPublish func()
	// Lease, when non-zero, is how long a pass's claim keeps its rows
	// from the other relay (rail.Relay.Lease); zero: the relay's default.
	// The hook for negative controls of the relay's lease.
	Lease time.Duration
	// Permanent, when non-nil, is rail.Relay.Permanent: which publish
	// errors count toward parking. The hook for negative controls of the
	// relay's refusal classification (func(error) bool { return true }
	// counts every refusal, as before issue 18; the default relay's
	// MaxAttempts of 1000 then needs lowering for parking to be reached).
	Permanent func(error) bool
}

// RelayFunc builds relay i over pool and pub. The default is rail.Relay.
type RelayFunc func(i int, pool *pgxpool.Pool, pub rail.Publisher, o RelayOpts) Drainer

// DefaultRelay is the RelayFunc a Config without one uses: the real
// rail.Relay with the simulation's batch size, backoff and entry limit.
func DefaultRelay(_ int, pool *pgxpool.Pool, pub rail.Publisher, o RelayOpts) Drainer {
	return &rail.Relay{Outbox: postgres.NewOutbox(pool), Publisher: pub, BatchSize: 4, MaxAttempts: 1000,
		Backoff: time.Minute, BackoffMax: 5 * time.Minute, AfterPublish: o.AfterPublish,
		Lease: o.Lease, Permanent: o.Permanent, MaxEntryBytes: SimMaxEntryBytes}
}

// Config is one simulation run. Seed alone determines every step and fault.
type Config struct {
	Seed       uint64
	Steps      int // steps of the fault phase; default 100
	Workers    int // default 3
	MaxMatters int // the seed picks 2..MaxMatters matters; default 3
	Demands    int // demands recorded in the fault phase, at most; default 10
	Ledger     rail.Config

	// Test hooks (negative controls). Nil: the real ledger statements.
	Commit CommitFunc
	Claim  ClaimFunc
	Inputs InputsFunc
	Relay  RelayFunc
	Gauges GaugesFunc
	// NoSweepNudges makes the sweeper drop the nudges it should send (a
	// liveness negative control).
	NoSweepNudges bool
	// OutcomeOnBuildContext makes a worker whose build ended at its
	// deadline record the outcome (commit, FrameLanded, Fail) on the
	// build's own, cancelled context instead of rail.OutcomeContext: the
	// behaviour before the fix (a stuck-row negative control).
	OutcomeOnBuildContext bool
}

// Default ledger settings for the simulation: the production lease, a
// one-minute backoff base, fewer attempts so quarantine is reachable in a
// short run.
const (
	DefaultSteps   = 100
	DefaultWorkers = 3
	DefaultMatters = 3
	DefaultDemands = 10
	SimMaxAttempts = 4
	tickStep       = 4 * time.Minute // one "time passes" step; never a multiple of the lease
	// SimMaxEntryBytes is the simulated bus's PutEvents size limit, per
	// entry and per call (EventBridge's is 256 KB): low enough that a
	// payload the outbox's 4 KB CHECK accepts can be too large for it.
	SimMaxEntryBytes = 3500
	// RelayLeaseElapsed is how far the "relay froze past its lease" fault
	// moves the frozen relay's leases back: past the default lease
	// (rail.DefaultRelayPublishTimeout + rail.DefaultRelayLeaseMargin).
	RelayLeaseElapsed = rail.DefaultRelayPublishTimeout + rail.DefaultRelayLeaseMargin + time.Second
)

func (c Config) withDefaults() Config {
	if c.Steps <= 0 {
		c.Steps = DefaultSteps
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxMatters < 2 {
		c.MaxMatters = DefaultMatters
	}
	if c.Demands <= 0 {
		c.Demands = DefaultDemands
	}
	if c.Ledger.MaxAttempts == 0 {
		c.Ledger.MaxAttempts = SimMaxAttempts
	}
	if c.Ledger.Lease == 0 {
		c.Ledger.Lease = rail.DefaultLease
	}
	if c.Ledger.BackoffBase == 0 {
		// Longer than the production default (5s) so that no backoff can
		// pass in real time during a seed, however loaded the machine:
		// only time travel moves it, and a seed stays deterministic.
		c.Ledger.BackoffBase = time.Minute
	}
	if c.Ledger.BackoffMax == 0 {
		c.Ledger.BackoffMax = rail.DefaultBackoffMax
	}
	if c.Ledger.SweepGrace == 0 {
		c.Ledger.SweepGrace = rail.DefaultSweepGrace
	}
	if c.Commit == nil {
		c.Commit = func(ctx context.Context, l *postgres.Ledger, q postgres.Querier, cl rail.Claim, f rail.Frame) (rail.CommitResult, error) {
			return l.On(q).Commit(ctx, cl, f)
		}
	}
	if c.Relay == nil {
		c.Relay = DefaultRelay
	}
	if c.Gauges == nil {
		c.Gauges = func(ctx context.Context, l *postgres.Ledger) (postgres.Gauges, error) { return l.Gauges(ctx) }
	}
	if c.Inputs == nil {
		c.Inputs = postgres.LoadInputs
	}
	if c.Claim == nil {
		c.Claim = func(ctx context.Context, l *postgres.Ledger, q postgres.Querier, ref rail.MatterRef, worker string) (rail.Claim, bool, error) {
			return l.On(q).Claim(ctx, ref, worker)
		}
	}
	return c
}

// Env is the database side of a lane of runs: one migrated database and
// one pool per actor, each pool tagged with the actor's application_name
// (AppName) so the scheduler can see in pg_stat_activity when an actor's
// statement is waiting on a row lock. Runs on one Env are sequential; each
// run truncates the tables first.
type Env struct {
	Admin    *pgxpool.Pool   // the harness: setup, time travel, kills, checks
	Workers  []*pgxpool.Pool // one per worker, AppName("w<i>")
	Sweeper  *pgxpool.Pool   // AppName("sweeper")
	Demander *pgxpool.Pool   // AppName("demand")
	Relays   []*pgxpool.Pool // two, AppName("relay<i>")
}

// AppName is the application_name of an actor's pool.
func AppName(actor string) string { return "sim-" + actor }

// WorkerActor names worker i.
func WorkerActor(i int) string { return fmt.Sprintf("w%d", i) }

// Actors lists the actor names an Env for cfg needs pools for.
func Actors(workers int) []string {
	out := []string{"admin", "sweeper", "demand", "relay0", "relay1"}
	for i := range workers {
		out = append(out, WorkerActor(i))
	}
	return out
}

// NewEnv builds an Env from a pool constructor (the test's, which sets the
// project's pool settings and application_name). It installs the checker's
// invariant query as a function in schema sim (a plpgsql function keeps
// its plan, so checking after every step stays cheap).
func NewEnv(ctx context.Context, workers int, newPool func(app string) *pgxpool.Pool) (*Env, error) {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	e := &Env{Admin: newPool(AppName("admin")), Sweeper: newPool(AppName("sweeper")), Demander: newPool(AppName("demand")),
		Relays: []*pgxpool.Pool{newPool(AppName("relay0")), newPool(AppName("relay1"))}}
	for i := range workers {
		e.Workers = append(e.Workers, newPool(AppName(WorkerActor(i))))
	}
	for _, q := range []string{`CREATE SCHEMA IF NOT EXISTS sim`,
		`CREATE OR REPLACE FUNCTION sim.invariant_violations() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $f$
BEGIN
RETURN QUERY ` + ledgercheck.ViolationsSQL + `;
END $f$`} {
		if _, err := e.Admin.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("sim env: %w", err)
		}
	}
	return e, nil
}
