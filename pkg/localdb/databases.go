//go:build unix

package localdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// templateBusyRetry bounds how long CreateDatabase keeps retrying while the
// template has other sessions. PostgreSQL itself already waits up to five
// seconds for them before each failure, so this allows about two attempts.
const templateBusyRetry = 10 * time.Second

// CreateDatabase runs CREATE DATABASE name [TEMPLATE template] (template ""
// means the default, template1).
//
// PostgreSQL refuses to copy a template that has any other session
// connected, so the caller must close every connection to the template
// first (pgxpool.Pool.Close on the pool used to migrate it, for example).
// Sessions that are merely slow to go away are tolerated: on "source
// database is being accessed by other users" CreateDatabase retries for a
// few seconds before it returns the error. Several CreateDatabase calls may
// copy the same template concurrently.
func (s *Server) CreateDatabase(ctx context.Context, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	deadline := time.Now().Add(templateBusyRetry)
	for {
		err := s.admin(ctx, sql)
		if err == nil || !isTemplateBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// EnsureDatabase creates database name (from template1) unless it exists,
// and says whether it created it.
func (s *Server) EnsureDatabase(ctx context.Context, name string) (created bool, err error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return false, fmt.Errorf("localdb: connect: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return false, fmt.Errorf("localdb: database %s: %w", name, err)
	}
	if exists {
		return false, nil
	}
	return true, s.CreateDatabase(ctx, name, "")
}

// DropDatabase runs DROP DATABASE IF EXISTS name WITH (FORCE): sessions still
// connected to it are terminated first.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	return s.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// admin runs one statement on a fresh connection to the postgres database
// (CREATE and DROP DATABASE cannot run inside a transaction block).
func (s *Server) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return fmt.Errorf("localdb: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("localdb: %s: %w", sql, err)
	}
	return nil
}

// isTemplateBusy matches object_in_use (55006), which CREATE DATABASE
// raises as "source database ... is being accessed by other users".
func isTemplateBusy(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55006"
}
