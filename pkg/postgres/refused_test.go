package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// bodyBuilder returns the same body every build and counts its calls.
type bodyBuilder struct {
	name  string
	body  string
	calls atomic.Int64
}

func (b *bodyBuilder) Name() string { return b.name }
func (b *bodyBuilder) Build(context.Context, rail.Inputs) (json.RawMessage, error) {
	b.calls.Add(1)
	return json.RawMessage(b.body), nil
}

// A body that is valid JSON but that jsonb refuses (a \u0000 escape: json.Valid
// accepts it, PostgreSQL answers SQLSTATE 22P05) fails the build before the
// commit, with a clear error recorded on the row and its backoff. Before the
// fix the commit was refused and the worker, taking every commit error as
// ambiguous, recorded nothing: the row stayed running for the whole lease
// and each retry repeated the model call.
func TestBodyJSONBRefusesFailsTheBuild(t *testing.T) {
	b := setup(t, rail.Config{})
	b.addDoc(t, "complaint.pdf", "p1")
	b.demand(t)
	fb := &bodyBuilder{name: "nul/v1", body: `{"schema":"brief/v2","title":"Harlow\u0000"}`}
	out, err := b.worker(fb, "w").BuildOnce(b.ctx, b.ref)
	if err != nil {
		t.Fatalf("BuildOnce: %v; want the failure recorded, not returned", err)
	}
	if !out.Failed || out.Landed {
		t.Fatalf("outcome %+v; want a recorded failure", out)
	}
	j := b.job(t)
	if j.RunStatus != rail.StatusIdle || j.Attempts != 1 || j.NotBefore == nil ||
		!strings.Contains(j.LastError, rail.ErrBodyNotStorable.Error()) || !strings.Contains(j.LastError, `\u0000`) {
		t.Fatalf("row %+v; want idle, backing off, with the reason", j)
	}
	if len(b.frames(t)) != 0 {
		t.Fatal("a frame landed")
	}
	// Backing off: a redelivered nudge does not call the model again.
	if out := b.buildOnce(t, b.worker(fb, "w2")); out.Claimed || fb.calls.Load() != 1 {
		t.Fatalf("during the backoff: %+v, %d builds", out, fb.calls.Load())
	}
}

// A commit the database refuses for any reason (here a CHECK constraint
// the frame violates, SQLSTATE 23514) proves nothing committed: the
// ledger returns rail.ErrCommitRefused and the worker records the failure
// with its backoff. Before the fix the worker treated it as ambiguous,
// found no frame, and returned the error with the row left running.
func TestCommitRefusedIsRecordedAsAFailure(t *testing.T) {
	b := setup(t, rail.Config{})
	if _, err := b.pool.Exec(b.ctx, `ALTER TABLE ops.matter_frames
        ADD CONSTRAINT test_refuses_this_builder CHECK (builder <> 'refused/v1')`); err != nil {
		t.Fatal(err)
	}
	b.demand(t)
	c := b.mustClaim(t, "probe")
	_, err := b.ledger.Commit(b.ctx, c, rail.Frame{Body: json.RawMessage(`{}`), Builder: "refused/v1"})
	if !errors.Is(err, rail.ErrCommitRefused) || !strings.Contains(err.Error(), "23514") {
		t.Fatalf("commit the database refused: %v; want ErrCommitRefused wrapping the server's error", err)
	}
	if _, err := b.ledger.Fail(b.ctx, c, err); err != nil {
		t.Fatal(err)
	}
	b.ageDemand(t, time.Hour) // past the backoff

	fb := &bodyBuilder{name: "refused/v1", body: `{"ok":true}`}
	out, err := b.worker(fb, "w").BuildOnce(b.ctx, b.ref)
	if err != nil {
		t.Fatalf("BuildOnce: %v; want the refusal recorded as a failure", err)
	}
	if !out.Failed || out.Landed || out.Fenced {
		t.Fatalf("outcome %+v; want a recorded failure", out)
	}
	j := b.job(t)
	if j.RunStatus != rail.StatusIdle || j.Attempts != 2 || j.NotBefore == nil || !strings.Contains(j.LastError, "23514") {
		t.Fatalf("row %+v; want idle, backing off, the server's error recorded", j)
	}
}

// killingLedger commits on a connection the server terminates first: a
// lost connection, not a refusal.
type killingLedger struct {
	*postgres.Ledger
	b *bundle
	t *testing.T
}

func (k killingLedger) CommitGroup(ctx context.Context, group []rail.FrameCommit) ([]rail.CommitResult, []error, error) {
	conn, err := pgx.Connect(ctx, k.b.db.URL)
	if err != nil {
		k.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := k.b.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, conn.PgConn().PID()); err != nil {
		k.t.Fatal(err)
	}
	return k.Ledger.On(conn).CommitGroup(ctx, group)
}

// A commit whose connection was lost stays ambiguous: not ErrCommitRefused
// (a FATAL from the server, or no answer, proves nothing), so the worker
// asks FrameLanded and records no failure: the lease decides.
func TestCommitOnALostConnectionStaysAmbiguous(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	w := b.worker(&bodyBuilder{name: "ok/v1", body: `{"ok":true}`}, "w")
	w.Ledger = killingLedger{Ledger: b.ledger, b: b, t: t}
	out, err := w.BuildOnce(b.ctx, b.ref)
	t.Logf("lost connection: %v", err)
	if err == nil || errors.Is(err, rail.ErrCommitRefused) || out.Failed || out.Landed {
		t.Fatalf("commit on a killed connection: %+v %v; want an ambiguous error, nothing recorded", out, err)
	}
	if j := b.job(t); j.RunStatus != rail.StatusRunning || j.Attempts != 1 {
		t.Fatalf("row %+v; want it still running (the lease recovers it)", j)
	}
}

// The worker's negative-control seam (rail.Worker.AmbiguousRefusals)
// restores the behaviour before the fix: the body jsonb refuses reaches
// the commit, the refusal is taken as ambiguous, and the row stays
// running with nothing recorded. The simulation's negative controls use it.
func TestAmbiguousRefusalsRestoresTheDefect(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	w := b.worker(&bodyBuilder{name: "nul/v1", body: `{"title":"\u0000"}`}, "w")
	w.AmbiguousRefusals = true
	out, err := w.BuildOnce(b.ctx, b.ref)
	if err == nil || !strings.Contains(err.Error(), "22P05") || out.Failed {
		t.Fatalf("AmbiguousRefusals: %+v %v; want the refused commit returned, nothing recorded", out, err)
	}
	if j := b.job(t); j.RunStatus != rail.StatusRunning || j.LastError != "" {
		t.Fatalf("AmbiguousRefusals: row %+v; want it left running", j)
	}
}
