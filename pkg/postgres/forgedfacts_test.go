package postgres_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// forgedFixture: firm A's matter with a pending regeneration fact in the
// outbox, firm B's matter, and the trigger running as brief_trigger.
type forgedFixture struct {
	b       *bundle
	other   rail.MatterRef
	genuine rail.InboundFact
	tr      *rail.Trigger
	cs      *counts
}

func newForgedFixture(t *testing.T) *forgedFixture {
	t.Helper()
	b := setup(t, rail.Config{})
	f := &forgedFixture{b: b, other: b.newMatter(t, "Firm B's own matter")}
	f.genuine = b.fact(t, b.ref, rail.FactRegenerationRequested)
	tp := rolePool(t, b, "brief_trigger")
	f.cs = &counts{}
	f.tr = &rail.Trigger{Ledger: postgres.NewLedger(tp, rail.Config{}), Nudger: &nudgeRecorder{}, SettleDelay: time.Second, Metrics: f.cs}
	return f
}

// forged is a fact for firm B's own matter carrying firm A's event id.
func (f *forgedFixture) forged() rail.InboundFact {
	x := unrecordedFact(f.other, rail.FactRegenerationRequested)
	x.Fact.EventID = f.genuine.Fact.EventID
	return x
}

func (f *forgedFixture) requested(t *testing.T, ref rail.MatterRef) int64 {
	t.Helper()
	j, err := f.b.ledger.Job(f.b.ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return j.RequestedGeneration
}

// A forged fact silences no one: firm B's fact carrying firm A's pending
// event id is refused (not the fact the outbox holds), and A's genuine fact,
// arriving after it, is recorded as demand, not taken for a duplicate.
func TestForgedFactSilencesNoOne(t *testing.T) {
	f := newForgedFixture(t)
	b := f.b
	errs := f.tr.Handle(b.ctx, []rail.InboundFact{f.forged()})
	if !errors.Is(errs[0], rail.ErrFactRefused) {
		t.Fatalf("forged fact: %v, want ErrFactRefused", errs[0])
	}
	if f.requested(t, f.other) != 0 {
		t.Fatalf("the forged fact recorded demand on firm B's matter")
	}
	noErrors(t, f.tr.Handle(b.ctx, []rail.InboundFact{f.genuine}))
	if got := f.requested(t, b.ref); got != 1 {
		t.Fatalf("firm A's genuine fact after the forgery: requested = %d, want 1 (it was taken for a duplicate)", got)
	}
	if f.cs.get(rail.MetricFactsRefused) != 1 {
		t.Errorf("FactsRefused = %v, want 1", f.cs.get(rail.MetricFactsRefused))
	}
}

// An inbox row for the event id under another firm's matter (written before
// facts were verified) makes the genuine fact a conflict: refused and
// counted, never acknowledged as seen; railctl why, joining on all three
// ids, does not show the genuine fact as received.
func TestConflictingRepeatIsRefusedNotSeen(t *testing.T) {
	f := newForgedFixture(t)
	b := f.b
	if _, err := b.pool.Exec(b.ctx, `INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name)
        VALUES ($1, $2, $3, $4)`, f.genuine.Fact.EventID, f.other.FirmID, f.other.MatterID, rail.FactRegenerationRequested); err != nil {
		t.Fatal(err)
	}
	errs := f.tr.Handle(b.ctx, []rail.InboundFact{f.genuine})
	if !errors.Is(errs[0], rail.ErrFactRefused) || !strings.Contains(errs[0].Error(), rail.RefusedConflict) {
		t.Fatalf("genuine fact over a conflicting inbox row: %v, want ErrFactRefused (conflict)", errs[0])
	}
	if f.cs.get(rail.MetricFactsRefused) != 1 {
		t.Errorf("FactsRefused = %v, want 1", f.cs.get(rail.MetricFactsRefused))
	}
	rep, err := b.ledger.Why(b.ctx, b.ref, postgres.OnCallConfig{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Entries {
		if e.Kind == postgres.EntryReceipt {
			t.Errorf("why shows firm B's inbox row as firm A's receipt: %s", e.Text)
		}
	}
}

// A forged demand does not release a quarantined matter.
func TestForgedDemandDoesNotReleaseQuarantine(t *testing.T) {
	f := newForgedFixture(t)
	b := f.b
	b.demand(t)
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET run_status = 'quarantined', attempts = 5
        WHERE firm_id = $1 AND matter_id = $2`, b.ref.FirmID, b.ref.MatterID); err != nil {
		t.Fatal(err)
	}
	forged := unrecordedFact(b.ref, rail.FactRegenerationRequested) // a new event id no outbox row has
	if errs := f.tr.Handle(b.ctx, []rail.InboundFact{forged}); !errors.Is(errs[0], rail.ErrFactRefused) {
		t.Fatalf("forged demand: %v, want ErrFactRefused", errs[0])
	}
	if j := b.job(t); j.RunStatus != rail.StatusQuarantined {
		t.Fatalf("a forged demand released the quarantine: %+v", j)
	}
	// The genuine fact does release it (new demand frees a quarantine).
	noErrors(t, f.tr.Handle(b.ctx, []rail.InboundFact{f.genuine}))
	if j := b.job(t); j.RunStatus != rail.StatusIdle {
		t.Fatalf("genuine demand left the row %s", j.RunStatus)
	}
}

var _ = uuid.Nil

// quotingError is a builder error that quotes the document it choked on.
type quotingError struct{ quote string }

func (e quotingError) Error() string { return "model reply not JSON: " + e.quote }

// A failed build's error reaches last_error, the run's error and the log
// as ids, lengths and classes: never the document's or the model's text.
func TestFailedBuildRecordsNoDocumentText(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 3})
	const secret = "PRIVILEGED AND CONFIDENTIAL: settle at 2.1m"
	b.addDoc(t, "advice.pdf", secret)
	b.demand(t)
	logs := &logBuffer{}
	w := &rail.Worker{Ledger: b.ledger, Builder: &countingBuilder{fail: quotingError{secret}}, ID: "w", Heartbeat: -1,
		Log: slog.New(slog.NewJSONHandler(logs, nil))}
	out, err := w.BuildOnce(b.ctx, b.ref)
	if err != nil || !out.Failed {
		t.Fatalf("%+v %v", out, err)
	}
	var runErr string
	if err := b.pool.QueryRow(b.ctx, `SELECT error FROM ops.matter_frame_runs WHERE firm_id = $1 AND matter_id = $2`,
		b.ref.FirmID, b.ref.MatterID).Scan(&runErr); err != nil {
		t.Fatal(err)
	}
	j := b.job(t)
	for where, text := range map[string]string{"last_error": j.LastError, "run error": runErr, "log": logs.String()} {
		if strings.Contains(text, "PRIVILEGED") || strings.Contains(text, "2.1m") {
			t.Errorf("%s carries the document's text: %s", where, text)
		}
	}
	if !strings.Contains(j.LastError, "counting/v1") || !strings.Contains(j.LastError, "quotingError") || !strings.Contains(j.LastError, "byte") {
		t.Errorf("last_error %q: want the builder, the error's class and its length", j.LastError)
	}
}
