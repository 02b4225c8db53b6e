package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The sweeper (rail.Sweeper over the ledger and the housekeeping, as the
// sweeper function runs it) against a real database.

func (b *bundle) sweeper(live, backfill rail.Nudger) *rail.Sweeper {
	s := &rail.Sweeper{Ledger: b.ledger, Housekeeping: &postgres.Housekeeping{Q: b.pool,
		OutboxRetention: 168 * time.Hour, InboxRetention: 360 * time.Hour}, Nudger: live}
	if backfill != nil { // a rail.Nudger holding a nil pointer is not a nil Nudger
		s.BackfillNudger = backfill
	}
	return s
}

var errLost = errors.New("nudge lost")

func refsOf(ns []rail.Nudge, reason string) (refs []rail.MatterRef) {
	for _, n := range ns {
		if n.Reason == reason {
			refs = append(refs, n.Ref())
		}
	}
	return refs
}

// Issue 18, defect 4: the sweeper re-nudged every claimable matter onto the
// live build queue, the backfill's included, so every unclaimed backfill
// matter moved ahead of live demand. Backfill-only demand goes back to the
// backfill queue; a matter with live demand too goes to the live queue.
// The control (Reverts.BackfillOnLiveQueue) shows the defect.
func TestSweeperRenudgesBackfillOnlyDemandOnTheBackfillQueue(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "fixed"
		if control {
			name = "control: backfill re-nudged on the live queue"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			// Two outdated matters admitted by the backfill (their nudges lost).
			var admitted []rail.MatterRef
			for range 2 {
				ref := b.newMatter(t, "outdated")
				b.landWith(t, ref, frameOf("old"))
				admitted = append(admitted, ref)
			}
			bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: 30, Nudger: &nudgeRecorder{fail: errLost}}
			b.refillBucket(t, time.Minute)
			if pass, err := bf.Admit(b.ctx); err != nil || len(pass.Admitted) != 2 {
				t.Fatalf("admit: %+v %v", pass, err)
			}
			// Live demand whose nudge was lost, on the bundle's matter and on
			// one of the admitted ones.
			b.oneDemand(t, b.ref)
			b.oneDemand(t, admitted[1])
			for _, ref := range append([]rail.MatterRef{b.ref}, admitted...) {
				b.timeTravel(t, ref, 10*time.Minute)
			}

			live, backfill := &nudgeRecorder{}, &nudgeRecorder{}
			s := b.sweeper(live, backfill)
			s.Reverts.BackfillOnLiveQueue = control
			pass, err := s.Pass(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			onLive, onBackfill := refsOf(live.all(), rail.ReasonSweep), refsOf(backfill.all(), rail.ReasonBackfill)
			if control {
				if !slices.Contains(onLive, admitted[0]) || len(onBackfill) != 0 {
					t.Fatalf("control: want the old behaviour (backfill on the live queue): live %v backfill %v", onLive, onBackfill)
				}
				return
			}
			if len(onLive) != 2 || !slices.Contains(onLive, b.ref) || !slices.Contains(onLive, admitted[1]) {
				t.Fatalf("live queue got %v: want the live matter and the matter with live demand too", onLive)
			}
			if !slices.Equal(onBackfill, []rail.MatterRef{admitted[0]}) || !slices.Equal(pass.RenudgedBackfill, onBackfill) {
				t.Fatalf("backfill queue got %v (pass %v): want the backfill-only matter %v", onBackfill, pass.RenudgedBackfill, admitted[0])
			}
			// The ledger's listing puts live demand first, so a pass's limit
			// never starves live demand for the backfill's.
			found, err := b.ledger.Unserved(b.ctx, 2)
			if err != nil || len(found) != 2 || found[0].BackfillOnly || found[1].BackfillOnly {
				t.Fatalf("limit 2: %+v %v: want the two live matters", found, err)
			}
		})
	}
}

// Issue 18, defect 4: admission was bounded by the rate alone, so with the
// default 30 a minute and two backfill builders the backfill queue (and,
// through the sweeper, the live queue) filled with admissions no builder
// could take. The backfill admitted and unserved is bounded by what its
// builders served in the last window plus their concurrency
// (rail.BackfillRoom; issue 21 replaced the bound of the concurrency
// alone, which held a deploy to two a minute). The control
// (Reverts.UnboundedBackfill) admits at the rate.
func TestBackfillAdmissionIsBoundedByItsBuilders(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "fixed"
		if control {
			name = "control: admission bounded by the rate alone"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			for range 6 {
				b.landWith(t, b.newMatter(t, "outdated"), frameOf("old"))
			}
			bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: 30, Nudger: &nudgeRecorder{}, Concurrency: 2,
				Reverts: rail.Reverts{UnboundedBackfill: control}}
			b.refillBucket(t, time.Minute)
			first, err := bf.Admit(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			b.refillBucket(t, time.Minute)
			second, err := bf.Admit(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if control {
				if len(first.Admitted) != 6 {
					t.Fatalf("control: want the old behaviour (all 6 admitted at 30/min): %+v", first)
				}
				return
			}
			if len(first.Admitted) != 2 || len(second.Admitted) != 0 || second.InFlight != 2 {
				t.Fatalf("passes %+v then %+v: want 2 admitted, then none while 2 are unbuilt", first, second)
			}
			// One backfilled build lands: in flight 1, served 1 in the
			// window, so two more are admitted (2 + 1 - 1).
			w := &rail.Worker{Ledger: b.ledger, Builder: &identBuilder{id: deployedID}, ID: "backfill", Heartbeat: -1}
			if out, err := w.BuildOnce(b.ctx, first.Admitted[0]); err != nil || !out.Landed {
				t.Fatalf("backfilled build: %+v %v", out, err)
			}
			b.refillBucket(t, time.Minute)
			third, err := bf.Admit(b.ctx)
			if err != nil || len(third.Admitted) != 2 || third.InFlight != 1 || third.Served != 1 {
				t.Fatalf("after one landed: %+v %v: want two more admitted", third, err)
			}
			// `backfill status` counts the same load.
			st, err := bf.Status(b.ctx)
			if err != nil || st.InFlight != 3 || st.Served != 1 || st.Room != 0 {
				t.Fatalf("status: %+v %v", st, err)
			}
		})
	}
}

// Issue 18, defect 9: the bucket held one minute's worth, so a rate below
// one a minute never reached a whole admission while `backfill status`
// printed an ETA. It holds one admission's worth at such a rate. The
// control (Reverts.MinuteCappedCredit) admits nothing.
func TestBackfillBelowOneAMinuteAdmits(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "fixed"
		if control {
			name = "control: a minute's worth at most"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			for range 3 {
				b.landWith(t, b.newMatter(t, "outdated"), frameOf("old"))
			}
			bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: 0.5, Nudger: &nudgeRecorder{}, Concurrency: 10,
				Reverts: rail.Reverts{MinuteCappedCredit: control}}
			st, err := bf.Status(b.ctx)
			if err != nil || st.ETASeconds != 300 {
				t.Fatalf("status %+v %v: want 3 matters admitted at 0, 2 and 4 minutes at 0.5/min, the last served by 5", st, err)
			}
			b.refillBucket(t, 10*time.Minute)
			pass, err := bf.Admit(b.ctx)
			if control {
				if err != nil || len(pass.Admitted) != 0 {
					t.Fatalf("control: want the old behaviour (nothing admitted): %+v %v", pass, err)
				}
				return
			}
			if err != nil || len(pass.Admitted) != 1 {
				t.Fatalf("after a long quiet spell at 0.5/min: %+v %v: want one admitted", pass, err)
			}
			b.refillBucket(t, time.Minute)
			if pass, err := bf.Admit(b.ctx); err != nil || len(pass.Admitted) != 0 {
				t.Fatalf("one minute later: %+v %v: want none (half an admission)", pass, err)
			}
			b.refillBucket(t, time.Minute)
			if pass, err := bf.Admit(b.ctx); err != nil || len(pass.Admitted) != 1 {
				t.Fatalf("two minutes later: %+v %v: want one", pass, err)
			}
		})
	}
}

// A settle delay above the sweep grace: the sweeper re-nudged demand whose
// own nudge was still waiting out its settle delay (a build before the
// burst settled). The grace outlasts the settle delay (RenudgeGrace).
func TestSweeperGraceOutlastsTheSettleDelay(t *testing.T) {
	cfg := rail.Config{SweepGrace: 2 * time.Minute, SettleDelay: 5 * time.Minute}
	if g := cfg.RenudgeGrace(); g != 7*time.Minute {
		t.Fatalf("RenudgeGrace %s, want the settle delay plus the grace", g)
	}
	if g := (rail.Config{SettleDelay: 10 * time.Second}).RenudgeGrace(); g != rail.DefaultSweepGrace {
		t.Fatalf("RenudgeGrace with a short settle delay %s, want the grace", g)
	}
	b := setup(t, cfg)
	b.oneDemand(t, b.ref)
	b.timeTravel(t, b.ref, 3*time.Minute) // past the grace, inside the settle delay
	if found, err := b.ledger.Unserved(b.ctx, 0); err != nil || len(found) != 0 {
		t.Fatalf("3 min into a 5 min settle delay: %+v %v: the trigger's nudge is not lost yet", found, err)
	}
	b.timeTravel(t, b.ref, 5*time.Minute)
	if found, err := b.ledger.Unserved(b.ctx, 0); err != nil || len(found) != 1 {
		t.Fatalf("8 min after the demand: %+v %v: want it re-nudged", found, err)
	}
}

// Sweep stopped at its first statement's error and skipped the pass's
// re-nudges and gauges (and a pass that hit its deadline lost all of its
// metrics). Each step is bounded by its own timeout and every step runs:
// with the run table locked (the quarantine, the expiry and the frame
// pruning block on it) the pass still re-nudges, reads the gauges and
// prunes the rest, and reports the three steps that failed. The control (Reverts.StopAtFirstError) loses
// them.
func TestSweeperRunsEveryStepWhenOneFails(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "fixed"
		if control {
			name = "control: stop at the first error"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			b.oneDemand(t, b.ref)
			b.timeTravel(t, b.ref, 10*time.Minute) // its nudge was lost

			tx, err := b.pool.Begin(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(context.Background()) }()
			if _, err := tx.Exec(b.ctx, `LOCK TABLE ops.matter_frame_runs IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			live := &nudgeRecorder{}
			s := b.sweeper(live, nil)
			s.StepTimeout = 500 * time.Millisecond
			s.Reverts.StopAtFirstError = control
			pass, err := s.Pass(b.ctx)
			if err == nil || !strings.Contains(err.Error(), "quarantine") {
				t.Fatalf("pass error %v: want the quarantine's timeout", err)
			}
			if control {
				if pass.Gauges != nil || len(live.all()) != 0 {
					t.Fatalf("control: want the old behaviour (no gauges, no re-nudge): %+v", pass)
				}
				return
			}
			if !slices.Equal(pass.Failed, []string{rail.StepQuarantine, rail.StepExpiredLeases, rail.StepPruneFrames}) {
				t.Fatalf("failed steps %v: want the three that need the run table", pass.Failed)
			}
			if !slices.Equal(refsOf(live.all(), rail.ReasonSweep), []rail.MatterRef{b.ref}) {
				t.Fatalf("re-nudges %v: want the lost demand re-nudged", live.all())
			}
			if pass.Gauges == nil || pass.Gauges.MattersBehind != 1 || pass.Outbox == nil {
				t.Fatalf("gauges %+v outbox %+v: want both read", pass.Gauges, pass.Outbox)
			}
		})
	}
}

// rail.Config.Backoff (the delay of the builder's retry nudge) is the
// backoff Fail's statement writes, attempt by attempt, up to the cap.
func TestBackoffIsFailsOwn(t *testing.T) {
	b := setup(t, rail.Config{BackoffBase: 5 * time.Second, BackoffMax: 30 * time.Second, MaxAttempts: 10})
	b.demand(t)
	for attempt := 1; attempt <= 5; attempt++ {
		c := b.mustClaim(t, "w")
		if _, err := b.ledger.Fail(b.ctx, c, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		var left float64
		if err := b.pool.QueryRow(b.ctx, `SELECT extract(epoch FROM not_before - clock_timestamp())::float8
            FROM ops.matter_frame_jobs WHERE firm_id = $1 AND matter_id = $2`, b.ref.FirmID, b.ref.MatterID).Scan(&left); err != nil {
			t.Fatal(err)
		}
		want := b.ledger.Config().Backoff(attempt)
		if d := want.Seconds() - left; d < 0 || d > 2 {
			t.Fatalf("attempt %d: Fail backs off %.2fs, Config.Backoff says %s", attempt, left, want)
		}
		b.ageDemand(t, want)
	}
}

// Whether a matter is outdated is read off its ledger row (built_by, which
// the commit records), so the backfill's scan costs one pass over the
// ledger, not a frame lookup per matter; a row whose frame landed before
// the row recorded it falls back to the frame, and the sweeper's "record
// builders" step fills it in.
func TestOutdatedIsReadOffTheRow(t *testing.T) {
	b := setup(t, rail.Config{})
	old := b.newMatter(t, "built by another identity")
	b.landWith(t, old, frameOf("old"))
	current := b.newMatter(t, "built by the deployed identity")
	b.landWith(t, current, deployedFrame("new"))
	count := func() int {
		t.Helper()
		n, _, err := b.ledger.CountOutdated(b.ctx, deployedID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var recorded int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_frame_jobs WHERE built_by IS NOT NULL`).Scan(&recorded); err != nil || recorded != 2 {
		t.Fatalf("%d rows record their builder (err %v): want both commits to have recorded it", recorded, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d outdated, want 1", n)
	}
	// As if both frames had landed before the rows recorded their builder.
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET built_by = NULL`); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("from the frames: %d outdated, want 1", n)
	}
	n, err := (&postgres.Housekeeping{Q: b.pool}).RecordBuilders(b.ctx)
	if err != nil || n != 2 {
		t.Fatalf("record builders: %d %v: want the two rows with a frame (not the bundle's, never built)", n, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after recording: %d outdated, want 1", n)
	}
	// The deployed builder rebuilds the outdated matter: it is current.
	w := &rail.Worker{Ledger: b.ledger, Builder: &identBuilder{id: deployedID}, ID: "w", Heartbeat: -1}
	b.oneDemand(t, old)
	if out, err := w.BuildOnce(b.ctx, old); err != nil || !out.Landed {
		t.Fatalf("rebuild: %+v %v", out, err)
	}
	if n := count(); n != 0 {
		t.Fatalf("after the rebuild: %d outdated, want 0", n)
	}
}

// A failed build's own nudge is the retry nudge at the end of its backoff,
// so the sweeper's grace runs from not_before, not from the claim: a build
// that failed after a long run (its claim older than the grace) is not
// re-nudged beside its retry nudge; once the backoff and the grace are
// over (the retry nudge lost), it is.
func TestSweeperGraceRunsFromTheEndOfTheBackoff(t *testing.T) {
	b := setup(t, rail.Config{BackoffBase: time.Minute, BackoffMax: time.Minute})
	b.demand(t)
	b.ageDemand(t, 10*time.Minute)
	c := b.mustClaim(t, "w")
	b.ageDemand(t, 10*time.Minute) // a long build: its claim is older than the grace
	if _, err := b.ledger.Fail(b.ctx, c, errors.New("model timed out")); err != nil {
		t.Fatal(err)
	}
	b.ageDemand(t, time.Minute+time.Second) // the backoff just ended: the retry nudge is due now
	if found, err := b.ledger.Unserved(b.ctx, 0); err != nil || len(found) != 0 {
		t.Fatalf("at the end of the backoff: %+v %v: the retry nudge is in flight", found, err)
	}
	b.ageDemand(t, rail.DefaultSweepGrace)
	if found, err := b.ledger.Unserved(b.ctx, 0); err != nil || len(found) != 1 {
		t.Fatalf("backoff and grace over: %+v %v: want it re-nudged", found, err)
	}
}
