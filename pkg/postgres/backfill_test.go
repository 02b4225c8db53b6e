package postgres_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// refillBucket moves the backfill's allowance back by d (time travel on
// the control row: as if d had passed since the last admission).
func (b *bundle) refillBucket(t *testing.T, d time.Duration) {
	t.Helper()
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.backfill_control
        SET allowance_at = least(allowance_at, clock_timestamp()) - make_interval(secs => $1)`, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

func TestBackfillAdmitsOutdatedMattersAtTheRateOnTheirOwnQueue(t *testing.T) {
	b := setup(t, rail.Config{})
	var outdated []rail.MatterRef
	for range 4 {
		ref := b.newMatter(t, "outdated")
		b.landWith(t, ref, frameOf("old")) // built by {test, "", "", ""}
		outdated = append(outdated, ref)
	}
	upToDate := b.newMatter(t, "up to date")
	b.landWith(t, upToDate, deployedFrame("new"))
	live := b.newMatter(t, "outdated, with live demand")
	b.landWith(t, live, frameOf("old"))
	b.oneDemand(t, live) // being rebuilt anyway: never admitted
	closed := b.newMatter(t, "outdated, closed")
	b.landWith(t, closed, frameOf("old"))
	if err := postgres.SetMatterStatus(b.ctx, b.pool, closed, "closed"); err != nil {
		t.Fatal(err)
	}

	rec := &nudgeRecorder{}
	bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: 2,
		Nudger:      &postgres.RecordingNudger{Next: rec, DB: b.pool, Queue: postgres.QueueBackfill},
		Concurrency: 10} // the rate, not the capacity, is what this test exercises
	st, err := bf.Status(b.ctx)
	if err != nil || st.Outdated != 5 || st.Admissible != 4 || st.ETASeconds != 180 {
		t.Fatalf("status (dry run) %+v err %v: want 5 outdated open matters, 4 admissible, 3 passes a minute apart at 2/min", st, err)
	}

	b.refillBucket(t, 10*time.Minute) // a long quiet spell: the bucket holds one minute's worth
	pass, err := bf.Admit(b.ctx)
	if err != nil || len(pass.Admitted) != 2 || pass.Allowed != 2 {
		t.Fatalf("first pass %+v err %v: want 2 admitted (one minute at 2/min)", pass, err)
	}
	pass, err = bf.Admit(b.ctx)
	if err != nil || len(pass.Admitted) != 0 {
		t.Fatalf("an immediate second pass admitted %d: the rate is spent", len(pass.Admitted))
	}
	for _, n := range rec.all() {
		if n.Reason != rail.ReasonBackfill {
			t.Fatalf("backfill nudge with reason %q", n.Reason)
		}
	}
	if len(rec.all()) != 2 {
		t.Fatalf("%d backfill nudges, want 2", len(rec.all()))
	}
	var queued int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_nudges WHERE queue = 'backfill' AND reason = 'backfill'`).Scan(&queued); err != nil || queued != 2 {
		t.Fatalf("%d backfill nudges recorded (err %v)", queued, err)
	}
	var admitted []rail.MatterRef
	for _, ref := range outdated {
		d := b.diagnose(t, ref)
		if d.Behind == 1 {
			if !d.BackfillOnly || !d.Outdated {
				t.Fatalf("admitted matter: %+v", d)
			}
			admitted = append(admitted, ref)
		}
	}
	if len(admitted) != 2 {
		t.Fatalf("%d outdated matters behind after admission, want 2", len(admitted))
	}

	// Paused: nothing is admitted however full the bucket.
	if changed, err := postgres.SetBackfillPaused(b.ctx, b.pool, true, "test"); err != nil || !changed {
		t.Fatalf("pause: %v %v", changed, err)
	}
	b.refillBucket(t, time.Minute)
	if pass, err := bf.Admit(b.ctx); err != nil || !pass.Paused || len(pass.Admitted) != 0 {
		t.Fatalf("paused pass %+v %v", pass, err)
	}
	if changed, err := postgres.SetBackfillPaused(b.ctx, b.pool, false, "test"); err != nil || !changed {
		t.Fatalf("resume: %v %v", changed, err)
	}
	if pass, err := bf.Admit(b.ctx); err != nil || len(pass.Admitted) != 0 {
		t.Fatalf("resuming must not release the paused time as a burst: %+v %v", pass, err)
	}
	b.refillBucket(t, 30*time.Second)
	if pass, err := bf.Admit(b.ctx); err != nil || len(pass.Admitted) != 1 {
		t.Fatalf("30 s at 2/min admits 1: %+v %v", pass, err)
	}

	// A backfilled build by the deployed builder calls the model and
	// brings the matter up to date; the same build again skips it.
	ib := &identBuilder{id: deployedID}
	w := &rail.Worker{Ledger: b.ledger, Builder: ib, ID: "backfill-worker", Heartbeat: -1}
	out, err := w.BuildOnce(b.ctx, admitted[0])
	if err != nil || !out.Landed || !out.ModelInvoked || len(out.Served) != 1 || out.Served[0].Source != rail.DemandFromBackfill {
		t.Fatalf("backfilled build %+v %v", out, err)
	}
	if d := b.diagnose(t, admitted[0]); d.State != postgres.StateCurrent || d.Outdated {
		t.Fatalf("after the backfilled build: %s (%s)", d.State, d.Reason)
	}
	b.oneDemand(t, admitted[0])
	if out, err := w.BuildOnce(b.ctx, admitted[0]); err != nil || !out.Landed || out.ModelInvoked {
		t.Fatalf("same inputs, deployed builder: model must be skipped: %+v %v", out, err)
	}

	// A backfilled build racing live demand is fenced like any other: the
	// backfill's claim stalls past its lease, a live nudge takes over and
	// lands, the backfill's commit is refused.
	c1 := b.claimOn(t, admitted[1], "backfill-worker")
	b.oneDemand(t, admitted[1]) // live demand arrives during the backfilled build
	b.timeTravel(t, admitted[1], b.ledger.Config().Lease+time.Second)
	c2 := b.claimOn(t, admitted[1], "live-worker")
	if c2.Target != 3 || !c2.TookOverExpiry {
		t.Fatalf("live claim %+v: want target 3 (backfill and live demand), a takeover", c2)
	}
	if _, err := b.ledger.Commit(b.ctx, c1, deployedFrame("backfill")); !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("stale backfilled commit: %v", err)
	}
	res, err := b.ledger.Commit(b.ctx, c2, deployedFrame("live"))
	if err != nil || len(res.Served) != 2 {
		t.Fatalf("live commit: %+v %v: want both demands served", res, err)
	}

	st, err = bf.Status(b.ctx)
	if err != nil || st.Outdated != 3 || st.Admitted != 3 {
		t.Fatalf("status after: %+v %v: want 3 outdated (2 never admitted, the live one), 3 admitted", st, err)
	}
}

func TestBackfillRefusesARateThatIsNotPositive(t *testing.T) {
	b := setup(t, rail.Config{})
	for _, r := range []float64{0, -5, math.NaN(), math.Inf(1)} {
		bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: r}
		if _, err := bf.Admit(b.ctx); !errors.Is(err, rail.ErrBadBackfillRate) {
			t.Errorf("rate %v: Admit err %v", r, err)
		}
		if _, err := bf.Status(b.ctx); !errors.Is(err, rail.ErrBadBackfillRate) {
			t.Errorf("rate %v: Status err %v", r, err)
		}
	}
}

// Issue 21: `backfill status` printed outdated / rate whatever the
// builders did. Its ETA is the admission rule's projection from the load
// the pass reads: builders that left admitted backfill waiting longer
// than a window set the pace (what they served in it), and builders that
// served nothing while admissions wait leave no pace to project.
func TestBackfillStatusETAFollowsItsBuilders(t *testing.T) {
	b := setup(t, rail.Config{})
	for range 10 {
		b.landWith(t, b.newMatter(t, "outdated"), frameOf("old"))
	}
	bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: 30, Nudger: &nudgeRecorder{}, Concurrency: 2}
	b.refillBucket(t, time.Minute)
	pass, err := bf.Admit(b.ctx)
	if err != nil || len(pass.Admitted) != 2 {
		t.Fatalf("first pass %+v %v: want the builders' 2", pass, err)
	}
	w := &rail.Worker{Ledger: b.ledger, Builder: &identBuilder{id: deployedID}, ID: "backfill", Heartbeat: -1}
	if out, err := w.BuildOnce(b.ctx, pass.Admitted[0]); err != nil || !out.Landed {
		t.Fatalf("backfilled build: %+v %v", out, err)
	}
	// The other admission has waited five minutes: the builders are behind,
	// at one served a window.
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_demands SET recorded_at = recorded_at - interval '5 minutes'
        WHERE source = 'backfill' AND served_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	st, err := bf.Status(b.ctx)
	if err != nil || st.Outdated != 9 || st.InFlight != 1 || st.Served != 1 || !st.BuildersBehind || st.PacePerMinute != 1 {
		t.Fatalf("status %+v %v: want 9 outdated, 1 in flight, 1 served, builders behind at 1/min", st, err)
	}
	if st.ETASeconds != 9*60 {
		t.Fatalf("ETA %v s: want 9 minutes (9 matters at the builders' 1 a minute), not the rate's %v s", st.ETASeconds, 9*60/30)
	}
	// Nothing served in the last window while an admission waits.
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_demands SET served_at = served_at - interval '2 minutes'
        WHERE source = 'backfill' AND served_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if st, err = bf.Status(b.ctx); err != nil || st.ETASeconds != -1 || st.Served != 0 {
		t.Fatalf("status %+v %v: want no ETA (-1): the builders served nothing in the window", st, err)
	}
	// The pass reads the same load: 2 + 0 served - 1 in flight.
	b.refillBucket(t, time.Minute)
	if pass, err = bf.Admit(b.ctx); err != nil || len(pass.Admitted) != 1 {
		t.Fatalf("pass %+v %v: want one admitted (concurrency 2, one in flight, none served)", pass, err)
	}
}
