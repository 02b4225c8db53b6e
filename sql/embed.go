// Package railsql holds the database schema as embedded, numbered migrations
// applied by tern (github.com/jackc/tern). Migrations are append-only: never
// edit one that has shipped; add the next number instead.
package railsql

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql
var files embed.FS

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
