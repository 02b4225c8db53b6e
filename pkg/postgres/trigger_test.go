package postgres_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// nudgeRecorder is an in-process Nudger that keeps what it was given.
type nudgeRecorder struct {
	mu     sync.Mutex
	calls  [][]rail.Nudge
	delays []time.Duration
	fail   error
}

func (r *nudgeRecorder) Nudge(_ context.Context, ns []rail.Nudge, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.calls = append(r.calls, append([]rail.Nudge(nil), ns...))
	r.delays = append(r.delays, d)
	return nil
}

func (r *nudgeRecorder) all() []rail.Nudge {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []rail.Nudge
	for _, c := range r.calls {
		out = append(out, c...)
	}
	return out
}

// logBuffer captures log lines for assertions on logged reasons.
type logBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.String()
}

type counts struct {
	mu sync.Mutex
	m  map[string]float64
}

func (c *counts) Count(name string, n float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]float64{}
	}
	c.m[name] += n
}

func (c *counts) get(name string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name]
}

func newTrigger(b *bundle) (*rail.Trigger, *nudgeRecorder, *logBuffer, *counts) {
	rec, logs, cs := &nudgeRecorder{}, &logBuffer{}, &counts{}
	return &rail.Trigger{Ledger: b.ledger, Nudger: rec, SettleDelay: 7 * time.Second,
		Log: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: cs}, rec, logs, cs
}

// fact is a fact as the rail records it: its outbox row is written first
// (the trigger confirms a demand fact against it), unless no outbox row can
// exist (an unknown or misfiled matter, a name the grammar refuses): those
// are unrecorded, i.e. forged.
func (b *bundle) fact(t *testing.T, ref rail.MatterRef, name string) rail.InboundFact {
	t.Helper()
	f := unrecordedFact(ref, name)
	_, _ = postgres.RecordFact(b.ctx, b.pool, rail.Fact{EventID: f.Fact.EventID, FirmID: ref.FirmID,
		MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}, Name: name, TraceHeader: f.TraceHeader})
	return f
}

// unrecordedFact is a fact no outbox row backs.
func unrecordedFact(ref rail.MatterRef, name string) rail.InboundFact {
	id := uuid.New()
	return rail.InboundFact{MessageID: "m-" + id.String()[:8], TraceHeader: "Root=1-00000000-" + strings.ReplaceAll(id.String(), "-", "")[:24] + ";Sampled=1",
		Fact: rail.FactDetail{EventID: id, EventName: name, FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}}}
}

func inboxCount(t *testing.T, b *bundle) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.trigger_inbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("message %d: %v", i, err)
		}
	}
}

func TestTriggerCoalescesOneMatterIntoOneDemandAndOneNudge(t *testing.T) {
	b := setup(t, rail.Config{})
	other := b.newMatter(t, "Other v. Matter")
	tr, rec, _, cs := newTrigger(b)
	msgs := []rail.InboundFact{
		b.fact(t, b.ref, rail.FactDocumentUploaded), b.fact(t, other, rail.FactDocumentRemoved),
		b.fact(t, b.ref, rail.FactDocumentUploaded), b.fact(t, b.ref, rail.FactRegenerationRequested),
	}
	noErrors(t, tr.Handle(b.ctx, msgs))
	if j := b.job(t); j.RequestedGeneration != 3 {
		t.Fatalf("requested = %d, want 3 (one demand of n=3)", j.RequestedGeneration)
	}
	if len(rec.calls) != 1 || len(rec.calls[0]) != 2 || rec.delays[0] != 7*time.Second {
		t.Fatalf("want one Nudge call with two nudges and the settle delay; got %v delays %v", rec.calls, rec.delays)
	}
	n := rec.calls[0][0]
	if n.Ref() != b.ref || n.Reason != rail.ReasonDemand || n.V != 1 || n.TraceHeader != msgs[0].TraceHeader {
		t.Fatalf("nudge %+v: want matter %s, reason demand, v1, first fact's trace header", n, b.ref)
	}
	if cs.get(rail.MetricDemandsRecorded) != 2 || cs.get(rail.MetricFactsCoalesced) != 2 {
		t.Fatalf("metrics %v: want 2 demands, 2 coalesced", cs.m)
	}
	if got := inboxCount(t, b); got != 4 {
		t.Fatalf("inbox rows = %d, want 4", got)
	}
}

func TestTriggerDedupesOnEventID(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, _, _ := newTrigger(b)
	f1, f2 := b.fact(t, b.ref, rail.FactDocumentUploaded), b.fact(t, b.ref, rail.FactDocumentUploaded)
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{f1, f1, f2})) // a duplicate inside one batch
	if j := b.job(t); j.RequestedGeneration != 2 {
		t.Fatalf("requested = %d, want 2", j.RequestedGeneration)
	}
	// Redelivered later, alone and with a new one; the envelope id would differ, event_id does not.
	f1.MessageID = "redelivered"
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{f1}))
	f3 := b.fact(t, b.ref, rail.FactDocumentRemoved)
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{f2, f3}))
	if j := b.job(t); j.RequestedGeneration != 3 {
		t.Fatalf("requested = %d after redeliveries, want 3", j.RequestedGeneration)
	}
	if got := len(rec.all()); got != 2 {
		t.Fatalf("nudges = %d, want 2 (none for a pure duplicate)", got)
	}
}

func TestTriggerConcurrentDuplicatesDemandOnce(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, _, _, _ := newTrigger(b)
	f := b.fact(t, b.ref, rail.FactDocumentUploaded)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{f})) })
	}
	wg.Wait()
	if j := b.job(t); j.RequestedGeneration != 1 {
		t.Fatalf("requested = %d, want 1", j.RequestedGeneration)
	}
}

func TestTriggerIgnoresFactsThatCreateNoDemand(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, logs, _ := newTrigger(b)
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{
		b.fact(t, b.ref, rail.FactFrameBuilt), b.fact(t, b.ref, "matter.renamed"), b.fact(t, b.ref, ""),
	}))
	if j := b.job(t); j.RequestedGeneration != 0 {
		t.Fatalf("requested = %d, want 0", j.RequestedGeneration)
	}
	if inboxCount(t, b) != 0 || len(rec.all()) != 0 {
		t.Fatal("a fact that creates no demand wrote the inbox or nudged")
	}
	if !strings.Contains(logs.String(), "creates no demand") {
		t.Fatalf("no logged reason: %s", logs)
	}
}

// A fact naming an unknown matter, or another firm's matter, cannot be a
// fact the rail recorded (the outbox's key to app.matters refuses one): it
// is refused, counted and fails its message (retried, then dead-lettered),
// every time it comes back. A closed matter's fact is not one of them: its
// demand is recorded and held (TestTriggerHoldsAClosedMattersDemand).
func TestTriggerUnknownAndMisfiledFactsAreRefusedClosedIsHeld(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, logs, cs := newTrigger(b)
	closed := b.newMatter(t, "Closed v. Matter")
	closedFact := b.fact(t, closed, rail.FactDocumentUploaded)
	if err := postgres.SetMatterStatus(b.ctx, b.pool, closed, "closed"); err != nil {
		t.Fatal(err)
	}
	unknown := rail.MatterRef{FirmID: b.ref.FirmID, MatterID: uuid.New()}
	misfiled := rail.MatterRef{FirmID: uuid.New(), MatterID: b.ref.MatterID} // another firm names our matter
	good := b.fact(t, b.ref, rail.FactDocumentUploaded)
	errs := tr.Handle(b.ctx, []rail.InboundFact{
		b.fact(t, unknown, rail.FactDocumentUploaded), closedFact,
		b.fact(t, misfiled, rail.FactRegenerationRequested), good,
	})
	for i, want := range []bool{true, false, true, false} {
		if got := errs[i] != nil; got != want {
			t.Errorf("message %d: err %v, want refused=%v", i, errs[i], want)
		} else if want && (!errors.Is(errs[i], rail.ErrFactRefused) || !strings.Contains(errs[i].Error(), rail.RefusedUnconfirmed)) {
			t.Errorf("message %d: %v, want ErrFactRefused (unconfirmed)", i, errs[i])
		}
	}
	if cs.get(rail.MetricFactsRefused) != 2 {
		t.Errorf("FactsRefused = %v, want 2", cs.get(rail.MetricFactsRefused))
	}
	if j := b.job(t); j.RequestedGeneration != 1 {
		t.Fatalf("requested = %d, want 1 (only the good fact)", j.RequestedGeneration)
	}
	var jobs int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_frame_jobs`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 2 || inboxCount(t, b) != 2 {
		t.Fatalf("jobs = %d, inbox = %d: want the good fact and the closed matter's (held) written, nothing else",
			jobs, inboxCount(t, b))
	}
	if n := rec.all(); len(n) != 1 || n[0].Ref() != b.ref {
		t.Fatalf("nudges %v: want one, for the good matter (a closed matter is not nudged)", n)
	}
	if cs.get(rail.MetricDemandsRecorded) != 2 || cs.get(rail.MetricDemandsHeld) != 1 {
		t.Fatalf("DemandsRecorded %v, DemandsHeld %v: want 2 and 1", cs.get(rail.MetricDemandsRecorded), cs.get(rail.MetricDemandsHeld))
	}
	if !strings.Contains(logs.String(), "held") || !strings.Contains(logs.String(), "fact refused") {
		t.Errorf("log lacks the closed matter's hold or the refusals: %s", logs)
	}
	// Redelivered, a refused fact is refused again: never taken as seen.
	if errs := tr.Handle(b.ctx, []rail.InboundFact{unrecordedFact(unknown, rail.FactDocumentUploaded)}); errs[0] == nil {
		t.Fatal("a redelivered unconfirmed fact was acknowledged")
	}
}

// An upload in flight when its matter closes: the document and its fact
// committed while the matter was open, the matter closed before the fact
// reached the trigger. The trigger records the demand and holds it (inbox
// row and demand committed, no nudge, the gauges and the row say held);
// after re-opening the sweeper re-nudges it and the build covers the
// document. Before the fix the trigger acknowledged the fact and rolled
// it back: requested = built, every gauge clean, the document never built.
func TestTriggerHoldsAClosedMattersDemand(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, _, _ := newTrigger(b)
	b.demand(t)
	c := b.mustClaim(t, "w")
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("before the upload")); err != nil {
		t.Fatal(err)
	}
	up := b.fact(t, b.ref, rail.FactDocumentUploaded) // committed while open...
	b.setStatus(t, "closed")                          // ...and the matter closes before the trigger hears it
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{up}))

	j := b.job(t)
	if j.RequestedGeneration != 2 || j.BuiltGeneration != 1 || j.HeldDemands != 1 || inboxCount(t, b) != 1 {
		t.Fatalf("closed, fact heard: row %+v, inbox %d; want one demand held and the fact in the inbox", j, inboxCount(t, b))
	}
	if g := b.gauges(t); g.MattersClosedWithDemand != 1 || g.MattersBehind != 0 || g.OldestUnservedDemandSeconds != 0 {
		t.Fatalf("closed, fact heard: gauges %+v; want it held (MattersClosedWithDemand), not late", g)
	}
	if n := rec.all(); len(n) != 0 {
		t.Fatalf("nudged a closed matter: %v", n)
	}
	// A redelivery is a duplicate, not a second demand.
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{up}))
	if j := b.job(t); j.RequestedGeneration != 2 {
		t.Fatalf("redelivered: requested %d, want 2", j.RequestedGeneration)
	}

	b.setStatus(t, "open")
	b.ageDemand(t, rail.DefaultSweepGrace+time.Second)
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Renudge) != 1 || rep.Renudge[0] != b.ref {
		t.Fatalf("sweep after re-opening: %+v %v; want the held demand re-nudged", rep, err)
	}
	c = b.mustClaim(t, "w")
	if c.Target != 2 {
		t.Fatalf("claim after re-opening: target %d, want 2 (the held demand)", c.Target)
	}
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("after re-open")); err != nil {
		t.Fatal(err)
	}
	if j := b.job(t); !j.Current {
		t.Fatalf("re-opened and built: %+v", j)
	}
}

func TestTriggerMalformedFailsAlone(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, logs, _ := newTrigger(b)
	bad := rail.InboundFact{MessageID: "bad-1", Err: errors.New("body is not JSON")}
	errs := tr.Handle(b.ctx, []rail.InboundFact{b.fact(t, b.ref, rail.FactDocumentUploaded), bad, b.fact(t, b.ref, rail.FactDocumentUploaded)})
	if errs[0] != nil || errs[2] != nil || errs[1] == nil {
		t.Fatalf("errs = %v: want only the malformed message to fail", errs)
	}
	if !strings.Contains(errs[1].Error(), "bad-1") || !strings.Contains(logs.String(), "body is not JSON") {
		t.Fatalf("error %q / logs lack the message id and reason", errs[1])
	}
	if j := b.job(t); j.RequestedGeneration != 2 || len(rec.all()) != 1 {
		t.Fatalf("requested %d nudges %d: want 2 and 1", j.RequestedGeneration, len(rec.all()))
	}
}

func TestTriggerNudgeFailureStillAcknowledges(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, logs, _ := newTrigger(b)
	rec.fail = errors.New("queue unreachable")
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{b.fact(t, b.ref, rail.FactDocumentUploaded)}))
	if j := b.job(t); j.RequestedGeneration != 1 {
		t.Fatalf("requested = %d, want 1: demand must survive a lost nudge", j.RequestedGeneration)
	}
	if !strings.Contains(logs.String(), "sweeper will re-nudge") {
		t.Fatalf("lost nudge not logged: %s", logs)
	}
	// The sweeper finds it once the grace has passed.
	b.ageDemand(t, rail.DefaultSweepGrace+time.Second)
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Renudge) != 1 || rep.Renudge[0] != b.ref {
		t.Fatalf("sweep renudge = %v, want the matter", rep.Renudge)
	}
}

func TestTriggerDatabaseErrorFailsThatMatterOnly(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, _, _, _ := newTrigger(b)
	ctx, cancel := context.WithCancel(b.ctx)
	cancel()
	errs := tr.Handle(ctx, []rail.InboundFact{b.fact(t, b.ref, rail.FactDocumentUploaded), b.fact(t, b.ref, rail.FactFrameBuilt)})
	if errs[0] == nil || errs[1] != nil {
		t.Fatalf("errs = %v: want the demand fact to fail (retry) and the no-op to be acknowledged", errs)
	}
}

func TestPruneInbox(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, _, _, _ := newTrigger(b)
	old, fresh := b.fact(t, b.ref, rail.FactDocumentUploaded), b.fact(t, b.ref, rail.FactDocumentUploaded)
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{old, fresh}))
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.trigger_inbox SET received_at = received_at - interval '16 days'
        WHERE event_id = $1`, old.Fact.EventID); err != nil {
		t.Fatal(err)
	}
	n, err := postgres.PruneInbox(b.ctx, b.pool, rail.DefaultInboxRetention, 0)
	if err != nil || n != 1 || inboxCount(t, b) != 1 {
		t.Fatalf("pruned %d (%v), left %d: want 1 and 1", n, err, inboxCount(t, b))
	}
	if _, err := postgres.PruneInbox(b.ctx, b.pool, 0, 0); err == nil {
		t.Fatal("zero retention accepted")
	}
}

func TestTriggerDemandFactWithoutMatterIsANoOp(t *testing.T) {
	b := setup(t, rail.Config{})
	tr, rec, logs, _ := newTrigger(b)
	f := b.fact(t, b.ref, rail.FactRegenerationRequested)
	f.Fact.MatterID = uuid.NullUUID{}
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{f}))
	if inboxCount(t, b) != 0 || len(rec.all()) != 0 || !strings.Contains(logs.String(), "names no matter") {
		t.Fatalf("a demand fact without a matter wrote, nudged or went unexplained: %s", logs)
	}
}
