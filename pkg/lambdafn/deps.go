package lambdafn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/aws/eventbridge"
	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/pgconn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// Deps are the clients a function builds once, at cold start.
type Deps struct {
	Pool    *pgxpool.Pool
	AWS     aws.Config   // instrumented for X-Ray when tracing is on
	Log     *slog.Logger // JSON in Lambda; request id added by the …Context methods
	Metrics *emf.Logger  // EMF lines, flushed once per invocation
	// The transport facts and nudges travel on. Nil: EventBridge and SQS
	// from AWS (the functions); the local rail passes its in-process bus
	// and build queue (pkg/app assembles both the same way).
	// The nudgers are wrapped so every nudge is recorded (ops.matter_nudges).
	Publisher      rail.Publisher
	Nudger         rail.Nudger // the build queue
	BackfillNudger rail.Nudger // the backfill queue (nil: RAIL_BACKFILL_QUEUE_URL, or none)
	// Reverts switch fixes off for the simulation's negative controls;
	// zero (every fix on) everywhere else.
	Reverts rail.Reverts
}

// NewLogger is the functions' logger: aws-lambda-go's slog handler, which
// writes JSON when the function's log format is JSON (template.yaml sets
// it) and adds the request id to every record logged with a context.
func NewLogger(fn string) *slog.Logger {
	return lambdacontext.NewLogger().With("function", fn)
}

// Setup reads fn's configuration and builds its clients. Any error is a
// cold-start failure: the main logs it and exits.
func Setup(ctx context.Context, fn string) (Config, Deps, error) {
	log := NewLogger(fn)
	cfg, err := LoadConfig(fn, os.Getenv)
	if err != nil {
		return Config{}, Deps{}, err
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return Config{}, Deps{}, fmt.Errorf("lambdafn: load AWS configuration: %w", err)
	}
	tracing.InstrumentAWS(&awsCfg)
	pool, err := pgconn.Open(ctx, pgconn.Options{AWS: &awsCfg})
	if err != nil {
		return Config{}, Deps{}, err
	}
	d := Deps{Pool: pool, AWS: awsCfg, Log: log, Metrics: emf.New(os.Stdout)}
	if fn != Migrate {
		// Refuse to run against an older schema: one clear error at cold
		// start instead of "relation does not exist" at the first event.
		cctx, cancel := context.WithTimeout(ctx, schemaCheckTimeout)
		err := CheckSchema(cctx, fn, pool, d.Metrics)
		cancel()
		if err != nil {
			pool.Close()
			return Config{}, Deps{Log: log}, err
		}
	}
	return cfg, d, nil
}

// schemaCheckTimeout bounds the cold-start schema check (RDS Proxy may
// need a few seconds to open its first connection).
const schemaCheckTimeout = 15 * time.Second

// Fatal logs a cold-start error and exits non-zero, which Lambda reports as
// Runtime.ExitError with this log line beside it.
func Fatal(log *slog.Logger, fn string, err error) {
	if log == nil {
		log = NewLogger(fn)
	}
	log.Error("cold start failed", "err", err.Error())
	fmt.Fprintf(os.Stderr, "%s: cold start failed: %v\n", fn, err)
	os.Exit(1)
}

// Close releases the clients (SIGTERM hook).
func (d Deps) Close() {
	if d.Pool != nil {
		d.Pool.Close()
	}
	if d.Metrics != nil {
		_ = d.Metrics.Flush()
	}
}

// nudger is the build queue's nudger; every nudge is recorded in
// ops.matter_nudges for `railctl why`.
func (d Deps) nudger(cfg Config) rail.Nudger {
	next := d.Nudger
	if next == nil {
		next = sqsq.NewNudger(sqs.NewFromConfig(d.AWS), cfg.BuildQueueURL)
	}
	return &postgres.RecordingNudger{Next: next, DB: d.Pool, Queue: postgres.QueueBuild, Log: d.log()}
}

// backfillNudger is the backfill queue's nudger, recorded like the build
// queue's (nil when no backfill queue is configured).
func (d Deps) backfillNudger(cfg Config) rail.Nudger {
	next := d.BackfillNudger
	if next == nil {
		if cfg.BackfillQueueURL == "" {
			return nil
		}
		next = sqsq.NewNudger(sqs.NewFromConfig(d.AWS), cfg.BackfillQueueURL)
	}
	return &postgres.RecordingNudger{Next: next, DB: d.Pool, Queue: postgres.QueueBackfill, Log: d.log()}
}

func (d Deps) publisher(cfg Config) rail.Publisher {
	if d.Publisher != nil {
		return d.Publisher
	}
	return eventbridge.New(d.AWS, cfg.EventBus, cfg.EventSource)
}

func discard() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

func (d Deps) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return discard()
}

func (d Deps) metrics() *emf.Logger {
	if d.Metrics != nil {
		return d.Metrics
	}
	return emf.New(io.Discard)
}

// requestID returns the invocation's request id ("" outside Lambda).
func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}
