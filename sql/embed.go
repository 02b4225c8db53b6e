// Package railsql holds the database schema as embedded, numbered migrations
// applied by tern (github.com/jackc/tern). Migrations are append-only: never
// edit one that has shipped; add the next number instead.
package railsql

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql
var files embed.FS

//go:embed bootstrap.sql
var bootstrapSQL string

// BootstrapSQL is sql/bootstrap.sql: the one-time, administrator-run
// creation of the rail's roles and their settings, with the schema
// owner's name as psql's :"owner" variable.
func BootstrapSQL() string { return bootstrapSQL }

// Bootstrap runs sql/bootstrap.sql on conn (an administrator's session on
// the rail's database) for the schema owner named owner, as psql -v
// owner=... would; owner "" leaves the owner's settings alone. It is not
// part of Migrate.
func Bootstrap(ctx context.Context, conn *pgx.Conn, owner string) error {
	sql := strings.ReplaceAll(bootstrapSQL, `:"owner"`, pgx.Identifier{owner}.Sanitize())
	if owner == "" { // the caller's own session is the owner and keeps its settings (tests)
		sql = strings.ReplaceAll(bootstrapSQL, `ALTER ROLE :"owner" SET search_path = pg_catalog, pg_temp;`, "")
		sql = strings.ReplaceAll(sql, `GRANT CREATE ON SCHEMA public TO :"owner";`, "")
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return nil
}

// Migrations returns the migration files, named NNN_name.sql.
func Migrations() fs.FS {
	sub, err := fs.Sub(files, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory exists
	}
	return sub
}

// VersionTable is where tern records the applied version.
const VersionTable = "public.brief_rail_schema_version"

// Migrate brings the database to the newest schema. tern holds an advisory
// lock while it works, so concurrent callers serialise. progress, if not
// nil, is called once per migration applied.
func Migrate(ctx context.Context, conn *pgx.Conn, progress func(name string)) (int32, error) {
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return 0, fmt.Errorf("new migrator: %w", err)
	}
	if err := m.LoadMigrations(Migrations()); err != nil {
		return 0, fmt.Errorf("load migrations: %w", err)
	}
	if progress != nil {
		m.OnStart = func(_ int32, name, _, _ string) { progress(name) }
	}
	if err := m.Migrate(ctx); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	v, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// Latest is the number of migrations shipped with this build.
func Latest() (int, error) {
	entries, err := fs.ReadDir(Migrations(), ".")
	if err != nil {
		return 0, err
	}
	return len(entries), nil
}
