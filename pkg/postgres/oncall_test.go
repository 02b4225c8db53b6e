package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// recordedFact records a demand fact in the outbox (as an upload would)
// and returns the InboundFact the trigger would receive for it.
func recordedFact(t *testing.T, b *bundle, ref rail.MatterRef, name string) rail.InboundFact {
	t.Helper()
	in := unrecordedFact(ref, name)
	id, err := postgres.RecordFact(b.ctx, b.pool, rail.Fact{EventID: in.Fact.EventID, FirmID: ref.FirmID,
		MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}, Name: name, TraceHeader: in.TraceHeader})
	if err != nil {
		t.Fatal(err)
	}
	in.Fact.EventID = id
	return in
}

// timeTravel moves a table's timestamps back by d for the bundle's matter,
// as if that much time had passed (the ledger only ever writes the
// database clock; tests age rows instead of sleeping).
func (b *bundle) timeTravel(t *testing.T, ref rail.MatterRef, d time.Duration) {
	t.Helper()
	for _, q := range []string{
		`UPDATE ops.matter_frame_jobs SET last_demanded_at = last_demanded_at - make_interval(secs => $3),
            demand_since = demand_since - make_interval(secs => $3), claimed_at = claimed_at - make_interval(secs => $3),
            not_before = not_before - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.matter_demands SET occurred_at = occurred_at - make_interval(secs => $3),
            recorded_at = recorded_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.domain_event_outbox SET occurred_at = occurred_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
	} {
		if _, err := b.pool.Exec(b.ctx, q, ref.FirmID, ref.MatterID, d.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCommitReportsTheDemandsItServedWithTheirLatency(t *testing.T) {
	b := setup(t, rail.Config{})
	trig, _, _, _ := newTrigger(b)
	f1, f2 := recordedFact(t, b, b.ref, rail.FactDocumentUploaded), recordedFact(t, b, b.ref, rail.FactDocumentUploaded)
	noErrors(t, trig.Handle(b.ctx, []rail.InboundFact{f1, f2})) // one demand, two facts coalesced
	b.timeTravel(t, b.ref, 90*time.Second)                      // the upload happened 90 s ago
	c := b.mustClaim(t, "w1")
	// Demand during the build: not covered by this claim's target.
	f3 := recordedFact(t, b, b.ref, rail.FactDocumentUploaded)
	noErrors(t, trig.Handle(b.ctx, []rail.InboundFact{f3}))

	res, err := b.ledger.Commit(b.ctx, c, frameOf("first"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Served) != 1 || res.Served[0].Generation != 2 || res.Served[0].N != 2 || res.Served[0].Source != rail.DemandFromFact {
		t.Fatalf("served %+v, want generation 2 (2 facts, source fact)", res.Served)
	}
	if age := res.Served[0].AgeSeconds; age < 90 || age > 3600 {
		t.Fatalf("served demand age %.1fs: want the upload's age (>= 90 s, from the outbox's occurred_at)", age)
	}
	if !res.FollowUpDue {
		t.Fatal("follow-up not due")
	}
	// The follow-up serves the third fact's demand, once.
	c2 := b.mustClaim(t, "w2")
	res2, err := b.ledger.Commit(b.ctx, c2, frameOf("second"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Served) != 1 || res2.Served[0].Generation != 3 || res2.Served[0].AgeSeconds > 90 {
		t.Fatalf("follow-up served %+v, want generation 3 only, younger than the first", res2.Served)
	}
	// A fenced commit serves nothing and stamps nothing.
	b.demand(t)
	c3 := b.mustClaim(t, "w3")
	b.expireLease(t)
	c4 := b.mustClaim(t, "w4")
	if _, err := b.ledger.Commit(b.ctx, c3, frameOf("stale")); !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("stale commit: %v", err)
	}
	var unserved int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_demands WHERE served_at IS NULL`).Scan(&unserved); err != nil {
		t.Fatal(err)
	}
	if unserved != 1 {
		t.Fatalf("%d unserved demand records after a fenced commit, want 1", unserved)
	}
	res4, err := b.ledger.Commit(b.ctx, c4, frameOf("fourth"))
	if err != nil || len(res4.Served) != 1 || res4.Served[0].Source != rail.DemandFromOperator || res4.Served[0].Generation != 4 {
		t.Fatalf("commit after takeover: %+v %v", res4.Served, err)
	}
}

func TestWorkerRecordsBuilderIdentityAndFingerprintsIt(t *testing.T) {
	b := setup(t, rail.Config{})
	b.addDoc(t, "complaint.pdf", "page one")
	cb := &identBuilder{id: rail.BuilderIdentity{Name: "ident/v1", Version: "1", ModelID: "m-1", PromptHash: strings.Repeat("a", 64)}}
	w := &rail.Worker{Ledger: b.ledger, Builder: cb, ID: "w", Heartbeat: -1}
	build := func() rail.Outcome {
		t.Helper()
		b.demand(t)
		out, err := w.BuildOnce(b.ctx, b.ref)
		if err != nil || !out.Landed {
			t.Fatalf("build: %+v %v", out, err)
		}
		return out
	}
	if out := build(); !out.ModelInvoked {
		t.Fatal("first build skipped the model")
	}
	f, _, err := b.ledger.LatestFrame(b.ctx, b.ref)
	if err != nil || f.Identity != cb.id {
		t.Fatalf("frame identity %+v (err %v), want %+v", f.Identity, err, cb.id)
	}
	if out := build(); out.ModelInvoked {
		t.Fatal("same inputs, same identity: the model must be skipped")
	}
	for _, change := range []func(*rail.BuilderIdentity){
		func(id *rail.BuilderIdentity) { id.Version = "2" },
		func(id *rail.BuilderIdentity) { id.ModelID = "m-2" },
		func(id *rail.BuilderIdentity) { id.PromptHash = strings.Repeat("b", 64) },
	} {
		change(&cb.id)
		if out := build(); !out.ModelInvoked {
			t.Fatalf("identity changed to %s with the same inputs: the model must be called", cb.id)
		}
		if out := build(); out.ModelInvoked {
			t.Fatalf("identity %s unchanged: the model must be skipped", cb.id)
		}
	}
}

type identBuilder struct {
	id    rail.BuilderIdentity
	calls int
}

func (i *identBuilder) Name() string                   { return i.id.Name }
func (i *identBuilder) Identity() rail.BuilderIdentity { return i.id }
func (i *identBuilder) Build(_ context.Context, in rail.Inputs) (json.RawMessage, error) {
	i.calls++
	return json.Marshal(map[string]any{"by": i.id.String(), "title": in.Title})
}
