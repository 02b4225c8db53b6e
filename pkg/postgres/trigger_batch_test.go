package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// matterByMatter is the trigger's ledger without its batch call: the
// trigger records each matter in a transaction of its own (the path before
// migration 028, and the batch path's fallback).
type matterByMatter struct{ rail.Inbox }

// The trigger records a whole SQS batch in one round trip (migration 028,
// ops.receive_facts): ten matters' facts verified, recorded and demanded.
// The control, matter by matter, takes four a matter (BEGIN, inbox,
// demand, COMMIT).
func TestTriggerBatchIsOneRoundTrip(t *testing.T) {
	b := setup(t, rail.Config{})
	var trips atomic.Int64
	led := postgres.NewLedger(countedPool(t, b.db.URL, &trips), rail.Config{})
	for _, tc := range []struct {
		name   string
		ledger rail.Inbox
		want   float64
	}{{"one call", led, 1}, {"control: matter by matter", matterByMatter{led}, 40}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &rail.Trigger{Ledger: tc.ledger, Nudger: &nudgeRecorder{}}
			round := func() int64 {
				var msgs []rail.InboundFact
				for i := range 10 {
					msgs = append(msgs, b.fact(t, b.newMatter(t, fmt.Sprint("matter ", i)), rail.FactDocumentUploaded))
				}
				t0 := trips.Load()
				noErrors(t, tr.Handle(b.ctx, msgs))
				return trips.Load() - t0
			}
			round() // warm-up
			if got := float64(round()+round()+round()) / 3; got != tc.want {
				t.Fatalf("a trigger batch of 10 matters took %.2f round trips; want %.0f", got, tc.want)
			}
		})
	}
}

// triggerOutcome is what a batch left, with every matter and message named
// by its place in the scenario (the two runs have different ids).
type triggerOutcome struct {
	Errs    []string // per message: ok, refused, failed
	Nudges  []string // matter, reason and whose trace header, in order
	Metrics map[string]float64
	Rows    []string // per matter: job row, demand records, inbox rows
}

// The one-call batch records exactly what the matter-by-matter path
// records for the same batch: a mixed batch (two matters with several
// facts each, a fact twice, a redelivered fact, a forged fact, a fact
// delivered under the wrong matter, another matter's fact forged with its
// event id in the batch that delivers it (before it and after it), a
// closed matter's upload, a fact that
// creates no demand, a malformed message) gives the same acknowledgements
// and failures, nudges with the same trace headers, metrics, job rows,
// demand records and inbox rows either way.
func TestTriggerBatchRecordsWhatMatterByMatterDoes(t *testing.T) {
	run := func(t *testing.T, batch bool) triggerOutcome {
		b := setup(t, rail.Config{})
		rec, cs := &nudgeRecorder{}, &counts{}
		var led rail.Inbox = b.ledger
		if !batch {
			led = matterByMatter{b.ledger}
		}
		var logs logBuffer
		tr := &rail.Trigger{Ledger: led, Nudger: rec, Metrics: cs, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
		mA, mB, mC := b.ref, b.newMatter(t, "B"), b.newMatter(t, "C")
		label := map[rail.MatterRef]string{mA: "A", mB: "B", mC: "C"}
		early := b.fact(t, mA, rail.FactDocumentUploaded)
		noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{early}))
		b.ref = mC
		b.setStatus(t, "closed")
		b.ref = mA
		a1, a2 := b.fact(t, mA, rail.FactDocumentUploaded), b.fact(t, mA, rail.FactDocumentRemoved)
		b1 := b.fact(t, mB, rail.FactRegenerationRequested)
		b1.TraceHeader = "" // the matter's demand takes the next fact's trace
		b2 := b.fact(t, mB, rail.FactDocumentUploaded)
		forged := unrecordedFact(mB, rail.FactDocumentUploaded)
		misdelivered := b.fact(t, mA, rail.FactDocumentUploaded)
		misdelivered.Fact.MatterID.UUID = mB.MatterID
		forgedCopy := a1 // a1's own event id, forged under B, in the batch that delivers a1
		forgedCopy.MessageID, forgedCopy.Fact.FirmID, forgedCopy.Fact.MatterID.UUID = "forged-copy", mB.FirmID, mB.MatterID
		c1 := b.fact(t, mC, rail.FactDocumentUploaded)
		noop := b.fact(t, mB, rail.FactFrameBuilt)
		malformed := rail.InboundFact{MessageID: "bad", Err: errors.New("not JSON")}
		msgs := []rail.InboundFact{forgedCopy, a1, b1, early, a2, forged, a1, b2, misdelivered, c1, noop, malformed, forgedCopy}
		errs := tr.Handle(b.ctx, msgs)

		var o triggerOutcome
		for _, err := range errs {
			switch {
			case err == nil:
				o.Errs = append(o.Errs, "ok")
			case errors.Is(err, rail.ErrFactRefused):
				o.Errs = append(o.Errs, "refused")
			default:
				o.Errs = append(o.Errs, "failed")
			}
		}
		traceOf := func(h string) string {
			for i, m := range msgs {
				if m.TraceHeader != "" && m.TraceHeader == h {
					return fmt.Sprint("message ", i)
				}
			}
			return fmt.Sprintf("%q", h)
		}
		for _, n := range rec.all() {
			o.Nudges = append(o.Nudges, fmt.Sprintf("%s %s trace of %s", label[rail.MatterRef{FirmID: n.FirmID, MatterID: n.MatterID}], n.Reason, traceOf(n.TraceHeader)))
		}
		o.Metrics = cs.m
		for _, ref := range []rail.MatterRef{mA, mB, mC} {
			var requested int64
			var status string
			if err := b.pool.QueryRow(b.ctx, `SELECT requested_generation, run_status FROM ops.matter_frame_jobs
                WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID).Scan(&requested, &status); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				t.Fatal(err)
			}
			rows, err := b.pool.Query(b.ctx, `SELECT generation, n, source, cardinality(event_ids), trace_header
                FROM ops.matter_demands WHERE firm_id = $1 AND matter_id = $2 ORDER BY generation`, ref.FirmID, ref.MatterID)
			if err != nil {
				t.Fatal(err)
			}
			var demands []string
			var gen, ids int64
			var n int
			var source, trace string
			if _, err := pgx.ForEachRow(rows, []any{&gen, &n, &source, &ids, &trace}, func() error {
				demands = append(demands, fmt.Sprintf("gen %d n %d %s %d ids trace of %s", gen, n, source, ids, traceOf(trace)))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var inbox int
			if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.trigger_inbox WHERE firm_id = $1 AND matter_id = $2`,
				ref.FirmID, ref.MatterID).Scan(&inbox); err != nil {
				t.Fatal(err)
			}
			o.Rows = append(o.Rows, fmt.Sprintf("%s: requested %d %s; demands %v; inbox %d", label[ref], requested, status, demands, inbox))
		}
		if strings.Contains(logs.String(), "matter by matter") {
			t.Errorf("the one call failed over to matter by matter: %s", logs.String())
		}
		return o
	}
	var batch, each triggerOutcome
	t.Run("both", func(t *testing.T) { // returns when both (parallel) runs are done
		t.Run("one call", func(t *testing.T) { batch = run(t, true) })
		t.Run("matter by matter", func(t *testing.T) { each = run(t, false) })
	})
	if t.Failed() {
		return
	}
	want := []string{"refused", "ok", "ok", "ok", "ok", "refused", "ok", "ok", "refused", "ok", "ok", "failed", "refused"}
	if !slices.Equal(each.Errs, want) {
		t.Fatalf("matter by matter: errors %v, want %v", each.Errs, want)
	}
	for name, pair := range map[string][2][]string{"errors": {batch.Errs, each.Errs}, "nudges": {batch.Nudges, each.Nudges},
		"rows": {batch.Rows, each.Rows}} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("%s differ:\n one call:         %q\n matter by matter: %q", name, pair[0], pair[1])
		}
	}
	if fmt.Sprint(batch.Metrics) != fmt.Sprint(each.Metrics) {
		t.Errorf("metrics differ: one call %v, matter by matter %v", batch.Metrics, each.Metrics)
	}
	t.Logf("nudges %q\nrows %q\nmetrics %v", each.Nudges, each.Rows, each.Metrics)
}

// A database error in the one call writes nothing and the trigger records
// the batch matter by matter, so the error fails its own matter's facts
// only: here one matter's job row is held locked by another transaction
// past the trigger's lock timeout. The nine other matters are recorded and
// nudged; the locked matter's fact fails (it is retried), and on
// redelivery after the lock is gone it is recorded once.
func TestTriggerBatchErrorFailsThatMatterOnly(t *testing.T) {
	b := setup(t, rail.Config{})
	cfg := b.db.URL
	if strings.Contains(cfg, "?") {
		cfg += "&"
	} else {
		cfg += "?"
	}
	pool := railtest.Pool(t, cfg+"options=-c%20lock_timeout%3D300ms", 4)
	rec := &nudgeRecorder{}
	var logs logBuffer
	tr := &rail.Trigger{Ledger: postgres.NewLedger(pool, rail.Config{}), Nudger: rec, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	var msgs []rail.InboundFact
	var refs []rail.MatterRef
	for i := range 10 {
		ref := b.newMatter(t, fmt.Sprint("matter ", i))
		demandOn(t, b, ref) // the job row exists, to be locked
		refs = append(refs, ref)
		msgs = append(msgs, b.fact(t, ref, rail.FactDocumentUploaded))
	}
	locked := refs[4]
	tx, err := b.pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(b.ctx, `SELECT 1 FROM ops.matter_frame_jobs WHERE firm_id = $1 AND matter_id = $2 FOR UPDATE`,
		locked.FirmID, locked.MatterID); err != nil {
		t.Fatal(err)
	}
	errs := tr.Handle(b.ctx, msgs)
	_ = tx.Rollback(context.Background())
	for i, err := range errs {
		if (i == 4) != (err != nil) {
			t.Fatalf("errors %v: want only message 4 (its matter locked) to fail", errs)
		}
	}
	if !strings.Contains(logs.String(), "matter by matter") {
		t.Fatalf("the one call did not fail over to matter by matter: %s", logs.String())
	}
	if n := len(rec.all()); n != 9 {
		t.Fatalf("%d nudges, want 9 (every matter but the locked one)", n)
	}
	for i, ref := range refs {
		if got, want := requestedOf(t, b, ref), int64(map[bool]int{true: 1, false: 2}[i == 4]); got != want {
			t.Fatalf("matter %d: requested generation %d, want %d", i, got, want)
		}
	}
	noErrors(t, tr.Handle(b.ctx, msgs)) // the redelivery: the nine are duplicates, the locked one is recorded now
	for i, ref := range refs {
		if got := requestedOf(t, b, ref); got != 2 {
			t.Fatalf("after the redelivery, matter %d: requested generation %d, want 2 (each fact's demand once)", i, got)
		}
	}
}

// Batches over the same matters, given in opposite orders and run at once,
// queue behind each other instead of deadlocking: the function locks inbox
// and job rows in (firm, matter) order. Twenty rounds, each two batches
// over ten matters; none falls back to matter by matter.
func TestTriggerBatchesOverlappingQueueRatherThanDeadlock(t *testing.T) {
	b := setup(t, rail.Config{})
	var logs logBuffer
	tr := &rail.Trigger{Ledger: b.ledger, Nudger: &nudgeRecorder{}, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	var refs []rail.MatterRef
	for i := range 10 {
		refs = append(refs, b.newMatter(t, fmt.Sprint("matter ", i)))
	}
	for round := range 20 {
		var fwd, back []rail.InboundFact
		for _, ref := range refs {
			fwd = append(fwd, b.fact(t, ref, rail.FactDocumentUploaded))
			back = append([]rail.InboundFact{b.fact(t, ref, rail.FactDocumentUploaded)}, back...)
		}
		done := make(chan []error, 2)
		for _, msgs := range [][]rail.InboundFact{fwd, back} {
			go func() { done <- tr.Handle(b.ctx, msgs) }()
		}
		for range 2 {
			noErrors(t, <-done)
		}
		for _, ref := range refs {
			if got := requestedOf(t, b, ref); got != int64(2*(round+1)) {
				t.Fatalf("round %d: requested generation %d, want %d", round, got, 2*(round+1))
			}
		}
	}
	if strings.Contains(logs.String(), "matter by matter") {
		t.Fatalf("a batch fell back to matter by matter: %s", logs.String())
	}
}

func requestedOf(t *testing.T, b *bundle, ref rail.MatterRef) int64 {
	t.Helper()
	var n int64
	if err := b.pool.QueryRow(b.ctx, `SELECT requested_generation FROM ops.matter_frame_jobs WHERE firm_id = $1 AND matter_id = $2`,
		ref.FirmID, ref.MatterID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The trigger's own role (brief_trigger, its grants of migration 017 and
// later) runs the batch call: a batch is recorded in one call, with no
// fall-back to matter by matter. (A missing grant would not lose demand,
// the fall-back records it, but every batch would cost four round trips a
// matter again.)
func TestTriggerRoleRunsTheBatchCall(t *testing.T) {
	b := setup(t, rail.Config{})
	var logs logBuffer
	tr := &rail.Trigger{Ledger: postgres.NewLedger(rolePool(t, b, "brief_trigger"), rail.Config{}), Nudger: &nudgeRecorder{},
		Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	other := b.newMatter(t, "another matter")
	noErrors(t, tr.Handle(b.ctx, []rail.InboundFact{b.fact(t, b.ref, rail.FactDocumentUploaded), b.fact(t, other, rail.FactDocumentUploaded)}))
	if strings.Contains(logs.String(), "matter by matter") || requestedOf(t, b, b.ref) != 1 || requestedOf(t, b, other) != 1 {
		t.Fatalf("as brief_trigger: requested %d and %d; log: %s", requestedOf(t, b, b.ref), requestedOf(t, b, other), logs.String())
	}
}
