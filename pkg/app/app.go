// Package app is the rail's one composition root: it turns a configuration
// and a transport into the handlers the rail runs (relay, trigger, builder,
// sweeper). The Lambda functions call ForLambda (EventBridge and SQS from
// AWS); the local rail (railctl run and dev: make run and make serve) calls
// Assemble with the in-process bus and queues and runs the very same
// handlers with RunLocal. It also holds the one registry of Brief builders
// and the one way to open the database pool. See docs/ARCHITECTURE.md.
package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/pgconn"
	"github.com/pramaan/brief-rail/pkg/rail"
	railsql "github.com/pramaan/brief-rail/sql"
)

// The functions.
const (
	Relay   = lambdafn.Relay
	Trigger = lambdafn.Trigger
	Builder = lambdafn.Builder
	Sweeper = lambdafn.Sweeper
	Migrate = lambdafn.Migrate
)

// Config is the rail's configuration, read from the environment the same
// way by the functions and by railctl (lambdafn.LoadConfig).
type Config = lambdafn.Config

// Deps are what the handlers run on.
type Deps struct {
	Pool *pgxpool.Pool
	// Transport: its Publisher carries facts to the bus (the relay); its
	// Nudger carries nudges to the build queue (trigger, builder,
	// sweeper); its BackfillNudger carries the sweeper's backfill
	// admissions to the backfill queue (nil: no backfill). The handlers
	// record every nudge they send (ops.matter_nudges). Its queues are
	// not read here (RunLocal reads them).
	Transport
	Builder rail.FrameBuilder
	// LogFor returns a function's logger (nil: Log for all).
	LogFor  func(fn string) *slog.Logger
	Log     *slog.Logger
	Metrics *emf.Logger
	// AWS is the SDK configuration of the functions; zero elsewhere.
	AWS aws.Config
}

// Rail is the assembled rail: one handler per function.
type Rail struct {
	Relay   *lambdafn.RelayHandler
	Trigger *lambdafn.TriggerHandler
	Builder *lambdafn.BuilderHandler
	Sweeper *lambdafn.SweeperHandler
	Migrate *lambdafn.MigrateHandler
}

// Assemble builds the rail's handlers from cfg over d. It does no I/O.
func Assemble(cfg Config, d Deps) (*Rail, error) {
	if d.Pool == nil || d.Publisher == nil || d.Nudger == nil || d.Builder == nil {
		return nil, fmt.Errorf("app: assemble: pool, publisher, nudger and builder are required")
	}
	deps := func(fn string) lambdafn.Deps {
		log := d.Log
		if d.LogFor != nil {
			log = d.LogFor(fn)
		}
		return lambdafn.Deps{Pool: d.Pool, AWS: d.AWS, Log: log, Metrics: d.Metrics, Publisher: d.Publisher,
			Nudger: d.Nudger, BackfillNudger: d.BackfillNudger}
	}
	return &Rail{
		Relay:   lambdafn.NewRelay(cfg, deps(Relay)),
		Trigger: lambdafn.NewTrigger(cfg, deps(Trigger)),
		Builder: lambdafn.NewBuilder(cfg, deps(Builder), d.Builder),
		Sweeper: lambdafn.NewSweeper(cfg, deps(Sweeper)),
		Migrate: lambdafn.NewMigrate(cfg, deps(Migrate)),
	}, nil
}

// Function is a deployed function, as ForLambda assembles it.
type Function struct {
	*Rail
	Config Config
	deps   lambdafn.Deps
}

// Close releases the function's clients (the SIGTERM hook).
func (f *Function) Close() { f.deps.Close() }

// ForLambda reads function fn's configuration from the environment, builds
// its clients once (AWS configuration instrumented for X-Ray, the pool, the
// EventBridge publisher and the SQS nudger, the configured Brief builder)
// and assembles the rail. Any error is a cold-start failure (Fatal).
func ForLambda(ctx context.Context, fn string) (*Function, error) {
	cfg, deps, err := lambdafn.Setup(ctx, fn)
	if err != nil {
		return nil, err
	}
	builder := rail.FrameBuilder(rail.DigestBuilder{})
	if fn == lambdafn.Builder {
		if builder, err = NewFrameBuilder(ctx, cfg.BriefBuilder, BuilderOptions{BedrockModelID: cfg.BedrockModelID, BedrockMaxTokens: cfg.BedrockMaxTokens, AWS: &deps.AWS}); err != nil {
			deps.Close()
			return nil, err
		}
	}
	r, err := Assemble(cfg, Deps{Pool: deps.Pool, AWS: deps.AWS, Log: deps.Log, Metrics: deps.Metrics,
		Transport: AWSTransport(deps.AWS, cfg, ""), Builder: builder})
	if err != nil {
		deps.Close()
		return nil, err
	}
	return &Function{Rail: r, Config: cfg, deps: deps}, nil
}

// ForOperator assembles the rail for an operator's pass by hand (railctl
// sweep, railctl relay) against the deployed rail: the functions' own
// handlers from cfg (lambdafn.LoadOperatorConfig, with the operator's
// overrides) over the functions' transport (AWSTransport, with the SDK's
// default configuration, which honours AWS_ENDPOINT_URL), so a pass does
// what the deployed function's invocation does. Without a build queue
// (cfg.BuildQueueURL) a re-nudge fails with ErrNoQueue; without a
// backfill queue nothing is admitted. It does no I/O on the pool.
func ForOperator(ctx context.Context, cfg Config, pool *pgxpool.Pool, log *slog.Logger, metrics *emf.Logger) (*Rail, error) {
	acfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	return Assemble(cfg, Deps{Pool: pool, AWS: acfg, Transport: AWSTransport(acfg, cfg, ""),
		Builder: rail.DigestBuilder{}, Log: log, Metrics: metrics}) // an operator's pass builds nothing
}

// InvokeRelay invokes the relay function once, with the input its
// schedule sends.
func (r *Rail) InvokeRelay(ctx context.Context) (lambdafn.RelayResult, error) {
	return r.Relay.Handle(ctx, lambdafn.ScheduleEvent{Source: ScheduleSource, Task: Relay})
}

// InvokeSweeper invokes the sweeper function once, with the input its
// schedule sends.
func (r *Rail) InvokeSweeper(ctx context.Context) (lambdafn.SweepResult, error) {
	return r.Sweeper.Handle(ctx, lambdafn.ScheduleEvent{Source: ScheduleSource, Task: Sweeper})
}

// ScheduleSource is the Source the template's schedules put in their input.
const ScheduleSource = "brief-rail.schedule"

// Fatal logs a cold-start error and exits non-zero (Lambda reports
// Runtime.ExitError with this line beside it).
func Fatal(fn string, err error) { lambdafn.Fatal(nil, fn, err) }

// OpenPool opens the rail's pool the one way every part of the rail does
// (pkg/pgconn): DATABASE_URL, or RDS Proxy with IAM tokens (DB_HOST,
// DB_USER, DB_IAM_AUTH=true, ...), exec query mode. getenv nil means
// os.Getenv; railctl passes one that puts its --database-url first. The
// functions' pool (ForLambda) is opened by the same pgconn.Open.
func OpenPool(ctx context.Context, getenv func(string) string) (*pgxpool.Pool, error) {
	return pgconn.Open(ctx, pgconn.Options{Getenv: getenv})
}

// MigrateSchema applies the schema's pending migrations on one of pool's
// connections (progress, if set, hears each one's name before it is
// applied) and returns the version the schema is at.
func MigrateSchema(ctx context.Context, pool *pgxpool.Pool, progress func(name string)) (int32, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	if progress == nil {
		progress = func(string) {}
	}
	return railsql.Migrate(ctx, conn.Conn(), progress)
}
