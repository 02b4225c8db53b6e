package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// FuzzEventName: the Go grammar and the database's CHECK agree on every
// name, and neither panics. The Go check runs first for a clear error; the
// database is the authority, so disagreement is a bug either way.
func FuzzEventName(f *testing.F) {
	for _, s := range []string{"matter.created", "document.uploaded", "brief.regeneration_requested",
		"frame.built", "document.removed", "Matter.Created", "matter", "brief.rebuild", "rebuild.brief.now",
		"document.upload", "", ".", "a.b", "x.y.z", "document.uploaded\x00", "document.réed", "matter.seeded",
		"matter.bed", "doc_1.re_opened", "matter.set", "matter.undone", strings.Repeat("a", 300) + ".created"} {
		f.Add(s)
	}
	db := railtest.NewDB(f)
	f.Fuzz(func(t *testing.T, name string) {
		goErr := rail.ValidEventName(name)
		if goErr != nil && !errors.Is(goErr, rail.ErrBadEventName) {
			t.Fatalf("ValidEventName(%q) returned an untyped error: %v", name, goErr)
		}
		if strings.ContainsRune(name, 0) || !validUTF8(name) {
			if goErr == nil {
				t.Fatalf("ValidEventName accepted a name Postgres cannot store: %q", name)
			}
			return
		}
		// Ask the CHECK directly, bypassing the Go check, in a rolled-back transaction.
		ctx := context.Background()
		dbErr := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name) VALUES ($1, $2)`,
				uuid.New(), name)
			if err != nil {
				return err
			}
			return errRollback
		})
		dbAccepts := errors.Is(dbErr, errRollback)
		var pgErr *pgconn.PgError
		if !dbAccepts && !(errors.As(dbErr, &pgErr) && pgErr.ConstraintName == "outbox_event_name_is_past_tense_fact") {
			t.Fatalf("insert %q: unexpected error %v", name, dbErr)
		}
		if dbAccepts != (goErr == nil) {
			t.Fatalf("grammar disagreement on %q: Go accepts=%v, database accepts=%v", name, goErr == nil, dbAccepts)
		}
	})
}

var errRollback = errors.New("rollback")

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
