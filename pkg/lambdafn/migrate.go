package lambdafn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/emf"
	railsql "github.com/pramaan/brief-rail/sql"
)

// SchemaResourceID is the custom resource's physical id. It never changes,
// so an Update never makes CloudFormation "replace" (and then Delete) the
// schema.
const SchemaResourceID = "brief-rail-schema"

// maxReason keeps a failure's reason within CloudFormation's limit on the
// response (4 KB for the whole body).
const maxReason = 3000

// MigrateHandler is the migrate function: it applies the embedded tern
// migrations as the schema owner. It serves a CloudFormation custom
// resource (the stack's SchemaMigration, on every deploy that changes the
// function's code) and plain invocations by hand ({"action":"migrate"}).
// tern runs each migration in its own transaction (except those marked
// disable-tx) and holds an advisory lock, so concurrent runs serialise and a
// failed migration leaves the schema at the last one that committed.
type MigrateHandler struct {
	Pool    *pgxpool.Pool
	Metrics *emf.Logger
	Log     *slog.Logger
}

// NewMigrate wires the migrate function from d.
func NewMigrate(_ Config, d Deps) *MigrateHandler {
	return &MigrateHandler{Pool: d.Pool, Metrics: d.metrics(), Log: d.log()}
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
// itself succeeds once the reply is delivered.
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
		reason, err := cfn.LambdaWrap(h.customResource)(ctx, ev)
		if err != nil {
			return nil, fmt.Errorf("lambdafn: reply to CloudFormation: %w", err)
		}
		if reason != "" { // the reply could not be sent
			return nil, fmt.Errorf("lambdafn: reply to CloudFormation: %s", reason)
		}
		return map[string]string{"replied": "ok"}, nil
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

func (h *MigrateHandler) customResource(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
	log := h.Log.With("request_type", ev.RequestType, "logical_resource_id", ev.LogicalResourceID)
	switch ev.RequestType {
	case cfn.RequestDelete:
		// Deleting the stack (or the resource) never drops the schema.
		log.InfoContext(ctx, "schema custom resource deleted; the database is left as it is")
		return SchemaResourceID, nil, nil
	case cfn.RequestCreate, cfn.RequestUpdate:
		res, err := h.Migrate(ctx)
		if err != nil {
			msg := err.Error()
			if len(msg) > maxReason {
				msg = msg[:maxReason] + "…"
			}
			return SchemaResourceID, nil, fmt.Errorf("%s", msg)
		}
		return SchemaResourceID, map[string]any{"Version": res.To}, nil
	default:
		return SchemaResourceID, nil, fmt.Errorf("unknown custom resource request type %q", ev.RequestType)
	}
}

// Migrate applies every pending migration and reports the versions.
func (h *MigrateHandler) Migrate(ctx context.Context) (MigrateResult, error) {
	defer flush(ctx, h.Metrics, h.Log)
	conn, err := h.Pool.Acquire(ctx)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Release()
	var res MigrateResult
	if res.From, err = SchemaVersion(ctx, conn); err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	res.To, err = railsql.Migrate(ctx, conn.Conn(), func(name string) {
		res.Applied = append(res.Applied, name)
		h.Log.InfoContext(ctx, "applying migration", "migration", name)
	})
	if err != nil {
		// The version the database is left at: every migration before the
		// failed one committed; the failed one rolled back whole.
		at, verr := SchemaVersion(context.WithoutCancel(ctx), conn)
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
