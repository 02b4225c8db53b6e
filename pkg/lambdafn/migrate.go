package lambdafn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/emf"
	railsql "github.com/pramaan/brief-rail/sql"
)

// SchemaResourceID is the custom resource's physical id. It never changes,
// so an Update never makes CloudFormation "replace" (and then Delete) the
// schema.
const SchemaResourceID = "brief-rail-schema"

// EnvResponseURLPrefixes widens the reply URLs the migrate function accepts
// beyond CloudFormation's S3 response endpoints: comma-separated URL
// prefixes (tests point it at a local endpoint; the template never sets it).
const EnvResponseURLPrefixes = "RAIL_RESPONSE_URL_PREFIXES"

// The custom resource's properties the migrate function reads
// (template.yaml, SchemaMigration).
const (
	// PropCodeVersion is the migrate function's published version (its ARN,
	// ending in the version number). A rollback Update carries an older one
	// than OldResourceProperties.
	PropCodeVersion = "CodeVersion"
)

// MigrateHandler is the migrate function: it applies the embedded tern
// migrations as the schema owner. It serves a CloudFormation custom
// resource (the stack's SchemaMigration, on every deploy that changes the
// function's code or the database it points at) and plain invocations by
// hand ({"action":"migrate"}).
//
// As a custom resource it is a small state machine with a deadline: every
// request gets exactly one reply, sent before the invocation's deadline
// (customresource.go has the paths and the budget).
type MigrateHandler struct {
	Pool    *pgxpool.Pool
	Metrics *emf.Logger
	Log     *slog.Logger

	// ResponseURLPrefixes are reply URLs accepted besides CloudFormation's
	// S3 response endpoints (EnvResponseURLPrefixes).
	ResponseURLPrefixes []string
	// LockWait bounds the wait for the migration lock another migration
	// holds (0: DefaultLockWait). The invocation's budget bounds it too.
	LockWait time.Duration
	// Replier sends the reply (nil: a bounded client of its own).
	Replier *Replier
}

// DefaultLockWait is how long a migration waits for another one to
// release the migration lock before it gives up and says so.
const DefaultLockWait = 60 * time.Second

// NewMigrate wires the migrate function from d.
func NewMigrate(_ Config, d Deps) *MigrateHandler {
	return &MigrateHandler{Pool: d.Pool, Metrics: d.metrics(), Log: d.log(),
		ResponseURLPrefixes: splitPrefixes(os.Getenv(EnvResponseURLPrefixes))}
}

func splitPrefixes(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// MigrateResult is what a plain invocation returns.
type MigrateResult struct {
	From    int32    `json:"from_version"`
	To      int32    `json:"to_version"`
	Applied []string `json:"applied"`
}

// MigrateEvent is a plain invocation's input. Action "" and "migrate" both
// migrate; "status" only reports the version.
type MigrateEvent struct {
	Action string `json:"action"`
}

// Handle serves both kinds of invocation. For a custom resource event the
// outcome goes to CloudFormation's ResponseURL (a failed migration fails the
// deploy with the migration's error as the reason) and the invocation
// itself succeeds once the reply is delivered; it fails when no reply could
// be delivered (or the reply URL is not CloudFormation's).
func (h *MigrateHandler) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var probe struct {
		RequestType string `json:"RequestType"`
		ResponseURL string `json:"ResponseURL"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("lambdafn: migrate input is not a JSON object: %w", err)
	}
	if probe.RequestType != "" && probe.ResponseURL != "" {
		var ev cfn.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("lambdafn: custom resource event: %w", err)
		}
		return h.ServeCustomResource(ctx, ev)
	}
	var ev MigrateEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("lambdafn: migrate input: %w", err)
	}
	switch ev.Action {
	case "", "migrate":
		return h.Migrate(ctx)
	case "status":
		v, err := SchemaVersion(ctx, h.Pool)
		return MigrateResult{From: v, To: v}, err
	default:
		return nil, fmt.Errorf("lambdafn: migrate: unknown action %q (want migrate or status)", ev.Action)
	}
}

// ErrMigrationLockHeld: another migration held the migration lock for the
// whole wait.
var ErrMigrationLockHeld = errors.New("another migration holds the migration lock")

// Migrate applies every pending migration and reports the versions. It
// waits at most LockWait (and ctx) for another migration's lock.
func (h *MigrateHandler) Migrate(ctx context.Context) (MigrateResult, error) {
	defer flush(ctx, h.Metrics, h.Log)
	conn, err := h.Pool.Acquire(ctx)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("migrate: connect: %w", err)
	}
	var res MigrateResult
	if res.From, err = SchemaVersion(ctx, conn); err != nil {
		conn.Release()
		return res, fmt.Errorf("migrate: %w", err)
	}
	lockWait := h.LockWait
	if lockWait <= 0 {
		lockWait = DefaultLockWait
	}
	// tern takes its session advisory lock with a blocking
	// pg_advisory_lock. Taking the same lock first, with a bounded wait,
	// turns "blocked until the deadline" into a clear error; the lock is
	// re-entrant within the session, so tern's own call then returns at once.
	if err := tryMigrationLock(ctx, conn, lockWait); err != nil {
		conn.Release()
		return res, fmt.Errorf("migrate: %w", err)
	}
	defer releaseMigrationLock(ctx, conn, h.Log)
	res.To, err = railsql.Migrate(ctx, conn.Conn(), func(name string) {
		res.Applied = append(res.Applied, name)
		h.Log.InfoContext(ctx, "applying migration", "migration", name)
		// tern runs RESET ALL after each migration: bound each one's lock
		// waits by what is left of the budget (a migration waiting on a
		// table lock fails with a lock timeout instead of outliving it).
		if d, ok := ctx.Deadline(); ok {
			if ms := time.Until(d).Milliseconds(); ms > 0 {
				_, _ = conn.Exec(ctx, "SELECT set_config('lock_timeout', $1, false)", strconv.FormatInt(ms, 10)+"ms")
			}
		}
	})
	if err != nil {
		// The version the database is left at: every migration before the
		// failed one committed; the failed one rolled back whole.
		vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		at, verr := SchemaVersion(vctx, conn)
		cancel()
		h.Log.ErrorContext(ctx, "migration failed", "from_version", res.From, "left_at_version", at, "err", err.Error())
		if verr == nil {
			return res, fmt.Errorf("%w (schema left at version %d)", err, at)
		}
		return res, err
	}
	h.Metrics.Gauge("SchemaVersion", float64(res.To), emf.Count)
	h.Log.InfoContext(ctx, "schema migrated", "from_version", res.From, "to_version", res.To,
		"applied", strings.Join(res.Applied, ","))
	return res, nil
}

// codeVersion is the version number at the end of a CodeVersion property
// (a version ARN, arn:...:function:name:7, or a bare number); ok is false
// when there is none.
func codeVersion(props map[string]any) (int, bool) {
	s, _ := props[PropCodeVersion].(string)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}
