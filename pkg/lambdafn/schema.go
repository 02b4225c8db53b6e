package lambdafn

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/postgres"
	railsql "github.com/pramaan/brief-rail/sql"
)

// MetricSchemaBehind is 1 when a function's cold start found the database
// schema older than the migrations the function was built with (it then
// refuses to start); template.yaml alarms on it.
const MetricSchemaBehind = "SchemaBehind"

// ErrSchemaBehind: the database has not been migrated to the schema this
// build needs (the stack's SchemaMigration custom resource, the migrate
// function or `railctl migrate` brings it there).
var ErrSchemaBehind = errors.New("database schema is behind this build")

// SchemaVersion is the database's applied migration number (0 when it has
// never been migrated).
func SchemaVersion(ctx context.Context, q postgres.Querier) (int32, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, railsql.VersionTable).Scan(&exists); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int32
	err := q.QueryRow(ctx, `SELECT version FROM `+railsql.VersionTable).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// CheckSchema compares the database's schema version with the newest
// migration embedded in this build. An older schema is ErrSchemaBehind,
// logged once and counted (MetricSchemaBehind 1); a newer one is fine
// (migrations are additive, and the stack migrates before it updates the
// functions). Any other error (the database is unreachable, say) is
// returned as it is.
func CheckSchema(ctx context.Context, fn string, q postgres.Querier, m *emf.Logger) error {
	want, err := railsql.Latest()
	if err != nil {
		return fmt.Errorf("list embedded migrations: %w", err)
	}
	have, err := SchemaVersion(ctx, q)
	if err != nil {
		return err
	}
	if m != nil {
		behind := 0.0
		if int(have) < want {
			behind = 1
		}
		m.SetProperty("schema_version", have)
		m.Gauge(MetricSchemaBehind, behind, emf.Count)
		_ = m.Flush()
	}
	if int(have) < want {
		return fmt.Errorf("%w: the %s function needs migration %d, the database is at %d; run the migrate function (or railctl migrate) and redeploy",
			ErrSchemaBehind, fn, want, have)
	}
	return nil
}
