package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func whyText(rep postgres.WhyReport) string {
	var sb strings.Builder
	for _, e := range rep.Entries {
		sb.WriteString(e.Kind + " " + e.Text + " trace=" + e.TraceID + "\n")
	}
	sb.WriteString("VERDICT " + rep.Verdict + "\n")
	return sb.String()
}

// The causal chain of a matter that went through a takeover and a fence:
// facts, their receipt and coalescing, the demand's generation, the nudges,
// both claims (the second took over an expired lease), the fenced run, the
// landed frame, trace ids, and the verdict.
func TestWhyTellsTheCausalChainOldestFirst(t *testing.T) {
	b := setup(t, rail.Config{})
	trig, rec, _, _ := newTrigger(b)
	trig.Nudger = &postgres.RecordingNudger{Next: rec, DB: b.pool}
	f1, f2 := recordedFact(t, b, b.ref, rail.FactDocumentUploaded), recordedFact(t, b, b.ref, rail.FactRegenerationRequested)
	noErrors(t, trig.Handle(b.ctx, []rail.InboundFact{f1, f2}))
	c1 := b.mustClaim(t, "builder:req-1")
	b.expireLease(t)
	c2 := b.mustClaim(t, "builder:req-2")
	if _, err := b.ledger.Commit(b.ctx, c1, frameOf("zombie")); !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("zombie commit: %v", err)
	}
	if err := b.ledger.MarkRun(b.ctx, c1, "fenced", "token stale at commit"); err != nil {
		t.Fatal(err)
	}
	f := deployedFrame("landed")
	f.ModelInvoked = true
	f.TraceHeader = f1.TraceHeader
	if _, err := b.ledger.Commit(b.ctx, c2, f); err != nil {
		t.Fatal(err)
	}

	rep, err := b.ledger.Why(b.ctx, b.ref, oc(), 0)
	if err != nil {
		t.Fatal(err)
	}
	text := whyText(rep)
	t.Log("\n" + text)
	want := []string{
		"fact document.uploaded " + f1.Fact.EventID.String()[:8] + " occurred; pending: not yet on the bus trace=1-00000000-",
		"receipt trigger received document.uploaded " + f1.Fact.EventID.String()[:8],
		"demand demand -> generation 2 from 2 facts coalesced",
		"served by token 2",
		"nudge nudge (demand) -> build queue, delay 7s trace=1-",
		"claim claim token 1 by builder:req-1, target generation 2 trace=",
		"run token 1's lease expired and its commit was FENCED",
		"claim claim token 2 by builder:req-2, target generation 2, took over an expired lease",
		"frame frame landed: token 2, generation 2, built by test@2 model=model-b prompt=cccccccccccc, model invoked trace=1-",
		"run token 2 landed",
		"VERDICT current at generation 2",
	}
	pos := 0
	for _, w := range want {
		i := strings.Index(text[pos:], w)
		if i < 0 {
			t.Fatalf("timeline lacks, in order, %q", w)
		}
		pos += i
	}
	if rep.Omitted != 0 {
		t.Fatalf("omitted %d", rep.Omitted)
	}
	// The limit keeps the newest entries.
	full := rep.Entries
	rep, err = b.ledger.Why(b.ctx, b.ref, oc(), 3)
	if err != nil || len(rep.Entries) != 3 || rep.Omitted == 0 || rep.Entries[2] != full[len(full)-1] {
		t.Fatalf("limit 3: %d entries, %d omitted, err %v", len(rep.Entries), rep.Omitted, err)
	}
}

// Why's verdict for a matter behind: the diagnosis's reason, and a failed
// run's error in the chain.
func TestWhyVerdictWhenBehind(t *testing.T) {
	b := setup(t, rail.Config{BackoffBase: time.Hour, BackoffMax: time.Hour})
	b.demand(t)
	c := b.mustClaim(t, "w")
	if _, err := b.ledger.Fail(b.ctx, c, errors.New("model timed out")); err != nil {
		t.Fatal(err)
	}
	rep, err := b.ledger.Why(b.ctx, b.ref, oc(), 0)
	if err != nil {
		t.Fatal(err)
	}
	text := whyText(rep)
	for _, w := range []string{"demand -> generation 1 from an operator (railctl demand); unserved", "token 1 FAILED: model timed out",
		"VERDICT behind by 1 since", "because backing off until"} {
		if !strings.Contains(text, w) {
			t.Fatalf("missing %q in\n%s", w, text)
		}
	}
}
