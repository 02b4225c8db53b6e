package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func (b *bundle) worker(builder rail.FrameBuilder, id string) *rail.Worker {
	return &rail.Worker{Ledger: b.ledger, Builder: builder, ID: id, Heartbeat: -1}
}

func (b *bundle) buildOnce(t *testing.T, w *rail.Worker) rail.Outcome {
	t.Helper()
	out, err := w.BuildOnce(b.ctx, b.ref)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Scenario 4: the same nudge delivered 2–5 times, concurrently and after
// completion, costs one build.
func TestDuplicateNudgesOneBuild(t *testing.T) {
	for dup := 2; dup <= 5; dup++ {
		t.Run(string(rune('0'+dup))+" deliveries", func(t *testing.T) {
			b := setup(t, rail.Config{})
			cb := &countingBuilder{}
			b.addDoc(t, "complaint.pdf", "p1")
			b.demand(t)
			var wg sync.WaitGroup
			var landed atomic.Int64
			for i := range dup {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := b.worker(cb, "w"+string(rune('a'+i))).BuildOnce(b.ctx, b.ref)
					if err != nil {
						t.Error(err)
					}
					if out.Landed {
						landed.Add(1)
					}
				}()
			}
			wg.Wait()
			for range dup { // redeliveries after completion
				if out := b.buildOnce(t, b.worker(cb, "late")); out.Claimed {
					t.Fatal("a redelivered nudge claimed after completion")
				}
			}
			if n := cb.calls.Load(); n != 1 || landed.Load() != 1 {
				t.Fatalf("%d model invocations, %d frames landed; want 1 and 1", n, landed.Load())
			}
		})
	}
}

// Scenario 5: every nudge for a demand is dropped; the sweeper finds it
// (after giving the nudge its grace) and the build happens.
func TestDroppedNudgesRecoveredBySweep(t *testing.T) {
	b := setup(t, rail.Config{SweepGrace: time.Minute})
	cb := &countingBuilder{}
	b.demand(t) // its nudge is lost
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Renudge) != 0 {
		t.Fatal("sweep re-nudged demand still inside its nudge's grace")
	}
	if rep.MattersBehind != 1 {
		t.Fatalf("gauges: %+v, want one matter behind", rep.Gauges)
	}
	b.ageDemand(t, 2*time.Minute)
	rep, err = b.ledger.Sweep(b.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Renudge) != 1 || rep.Renudge[0] != b.ref {
		t.Fatalf("sweep renudge %v, want the matter", rep.Renudge)
	}
	if rep.OldestUnservedDemandSeconds < 119 {
		t.Fatalf("oldest unserved demand %.0fs, want ≥ 120s", rep.OldestUnservedDemandSeconds)
	}
	if out := b.buildOnce(t, b.worker(cb, "swept")); !out.Landed {
		t.Fatalf("the swept nudge did not build: %+v", out)
	}
	rep, err = b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Renudge) != 0 || rep.MattersBehind != 0 {
		t.Fatalf("after the build the sweep still finds work: %+v %v", rep, err)
	}
}

// Scenario 6: stale and reordered nudges start no extra build.
func TestStaleAndReorderedNudgesNoExtraBuild(t *testing.T) {
	b := setup(t, rail.Config{})
	cb := &countingBuilder{}
	b.addDoc(t, "complaint.pdf", "p1")
	b.demand(t) // nudge 1 delayed
	b.addDoc(t, "answer.pdf", "p1")
	b.demand(t) // nudge 2 arrives first
	out := b.buildOnce(t, b.worker(cb, "nudge2"))
	if !out.Landed || out.Claim.Target != 2 {
		t.Fatalf("first delivered nudge: %+v", out)
	}
	if got := cb.seen[0]; len(got) != 2 {
		t.Fatalf("the build saw %v, want both documents", got)
	}
	if out := b.buildOnce(t, b.worker(cb, "nudge1-late")); out.Claimed {
		t.Fatal("a stale nudge started a build")
	}
	if n := cb.calls.Load(); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}

// Scenario 9: two Regenerate clicks in the same second: one build, or one
// plus exactly one more (a follow-up, or a fresh build when the second
// click lands after the first commit); never zero, never more.
func TestTwoClicksSameSecond(t *testing.T) {
	b := setup(t, rail.Config{})
	for round := range 15 {
		cb := &countingBuilder{}
		var wg sync.WaitGroup
		outs := make([]rail.Outcome, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := b.ledger.Demand(b.ctx, b.ref, 1); err != nil {
					t.Error(err)
					return
				}
				out, err := b.worker(cb, "click").BuildOnce(b.ctx, b.ref)
				if err != nil {
					t.Error(err)
				}
				outs[i] = out
			}()
		}
		wg.Wait()
		// The follow-up nudge is served by whichever delivery claims first:
		// possibly the second click's own nudge.
		followUps, n := 0, 0
		for _, o := range outs {
			if o.Landed {
				n++
			}
			if o.FollowUpDue {
				followUps++
			}
		}
		if followUps > 0 {
			if out := b.buildOnce(t, b.worker(cb, "follow-up")); out.Landed {
				n++
			}
		}
		// Two landings without a follow-up happen when the second click
		// arrives after the first build committed: a fresh build, not a
		// wasted one (the claim only grants unserved demand).
		if n < 1 || n > 2 || followUps > 1 {
			t.Fatalf("round %d: %d builds landed with %d follow-ups due; want 1 or 2, never 0, never more", round, n, followUps)
		}
		if j := b.job(t); !j.Current {
			t.Fatalf("round %d: demand left unserved: %+v", round, j)
		}
	}
}

// Scenario 11: a worker crashes mid-build; after the lease a reclaim with a
// larger token builds. A matter that keeps killing its worker is
// quarantined after MaxAttempts, and new demand releases it.
func TestCrashMidBuildAndPoisonQuarantine(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 3})
	cb := &countingBuilder{}
	b.demand(t)
	crashed := b.mustClaim(t, "crashes") // and never returns
	if out := b.buildOnce(t, b.worker(cb, "early")); out.Claimed {
		t.Fatal("claimed under a live lease")
	}
	b.expireLease(t)
	out := b.buildOnce(t, b.worker(cb, "rescuer"))
	if !out.Landed || out.Claim.Token != crashed.Token+1 {
		t.Fatalf("rescue: %+v, want landed with token %d", out, crashed.Token+1)
	}

	// Poison: every worker dies on this matter.
	b.demand(t)
	for i := range 3 {
		c := b.mustClaim(t, "dies")
		if c.Attempt != i+1 {
			t.Fatalf("attempt %d, want %d", c.Attempt, i+1)
		}
		b.expireLease(t)
	}
	if _, ok := b.claim(t, "again"); ok {
		t.Fatal("a claim was granted past MaxAttempts")
	}
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Quarantined) != 1 {
		t.Fatalf("sweep: %+v %v, want the matter quarantined", rep, err)
	}
	j := b.job(t)
	if j.RunStatus != rail.StatusQuarantined || j.Current || j.LastError == "" {
		t.Fatalf("quarantined row: %+v", j)
	}
	if rep, _ := b.ledger.Sweep(b.ctx, 0); len(rep.Renudge) != 0 || rep.MattersQuarantined != 1 {
		t.Fatalf("sweep nudges a quarantined matter: %+v", rep)
	}
	b.demand(t) // new demand releases it
	if out := b.buildOnce(t, b.worker(cb, "after-release")); !out.Landed {
		t.Fatalf("after release: %+v", out)
	}
}

// A failing build backs off and is quarantined after MaxAttempts.
func TestFailingBuildBacksOffThenQuarantines(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 2, BackoffBase: time.Hour})
	cb := &countingBuilder{fail: errors.New("model said no")}
	b.demand(t)
	out := b.buildOnce(t, b.worker(cb, "w"))
	if !out.Failed || out.Quarantined {
		t.Fatalf("first failure: %+v", out)
	}
	j := b.job(t)
	if j.RunStatus != rail.StatusIdle || !j.RebuildNeeded || j.NotBefore == nil || j.LastError == "" {
		t.Fatalf("after a failure: %+v", j)
	}
	if out := b.buildOnce(t, b.worker(cb, "w")); out.Claimed {
		t.Fatal("claimed during backoff")
	}
	if rep, _ := b.ledger.Sweep(b.ctx, 0); len(rep.Renudge) != 0 {
		t.Fatal("sweep re-nudged during backoff")
	}
	b.ageDemand(t, 2*time.Hour)
	out = b.buildOnce(t, b.worker(cb, "w"))
	if !out.Failed || !out.Quarantined {
		t.Fatalf("second failure: %+v, want quarantined", out)
	}
	runs, err := b.ledger.Runs(b.ctx, b.ref, 0)
	if err != nil || len(runs) != 2 || runs[0].Outcome != "quarantined" || runs[1].Outcome != "failed" {
		t.Fatalf("runs: %+v %v", runs, err)
	}
}

// A heartbeat that finds its claim superseded stops the build: no commit,
// no frame, the run marked superseded.
func TestHeartbeatStopsSupersededBuild(t *testing.T) {
	b := setup(t, rail.Config{})
	cb := &countingBuilder{hold: make(chan struct{}), started: make(chan struct{}, 1)}
	b.demand(t)
	w := &rail.Worker{Ledger: b.ledger, Builder: cb, ID: "slow", Heartbeat: 20 * time.Millisecond}
	done := make(chan rail.Outcome, 1)
	go func() {
		out, err := w.BuildOnce(b.ctx, b.ref)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-cb.started
	// Take the claim over as if the slow worker had been silent a lease
	// (the new token gets its run row, as a claim's would).
	if _, err := b.pool.Exec(b.ctx, `WITH j AS (UPDATE ops.matter_frame_jobs SET claimed_generation = claimed_generation + 1
        WHERE firm_id = $1 AND matter_id = $2 RETURNING firm_id, matter_id, claimed_generation, target_generation)
        INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
        SELECT firm_id, matter_id, claimed_generation, target_generation, 'takeover' FROM j`, b.ref.FirmID, b.ref.MatterID); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if !out.Fenced || out.Landed {
			t.Fatalf("superseded build: %+v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the heartbeat did not stop the superseded build")
	}
	if len(b.frames(t)) != 0 {
		t.Fatal("a superseded build landed a frame")
	}
	// Restore a consistent row for the invariant check: land the takeover.
	j := b.job(t)
	c := rail.Claim{MatterRef: b.ref, Token: j.ClaimedGeneration}
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("takeover")); err != nil {
		t.Fatal(err)
	}
}

// Identical inputs: the second build lands without calling the model.
func TestFingerprintSkipsTheModel(t *testing.T) {
	b := setup(t, rail.Config{})
	cb := &countingBuilder{}
	b.addDoc(t, "complaint.pdf", "p1", "p2")
	b.demand(t)
	if out := b.buildOnce(t, b.worker(cb, "w")); !out.Landed || !out.ModelInvoked {
		t.Fatalf("first build: %+v", out)
	}
	b.demand(t) // a Regenerate with nothing new
	out := b.buildOnce(t, b.worker(cb, "w"))
	if !out.Landed || out.ModelInvoked || cb.calls.Load() != 1 {
		t.Fatalf("identical inputs: %+v, model calls %d; want landed without the model", out, cb.calls.Load())
	}
	b.addDoc(t, "answer.pdf", "p1")
	b.demand(t)
	if out := b.buildOnce(t, b.worker(cb, "w")); !out.ModelInvoked || cb.calls.Load() != 2 {
		t.Fatalf("new document: %+v, want the model called", out)
	}
	fr, _, err := b.ledger.LatestFrame(b.ctx, b.ref)
	if err != nil || !fr.ModelInvoked {
		t.Fatalf("latest frame %+v %v", fr, err)
	}
}

// Scenario 13: worker-side clocks never reach the ledger. Every pool in
// these tests fails on a time.Time argument (railtest.NoClientTime); here
// sessions with wildly different time zones see identical lease decisions.
func TestSessionClockSettingsDoNotChangeLeases(t *testing.T) {
	b := setup(t, rail.Config{Lease: time.Hour})
	b.demand(t)
	for _, tz := range []string{"Pacific/Kiritimati", "Etc/GMT+12", "UTC"} {
		pool := newPool(t, b.db.URL+"&timezone="+tz)
		l := postgres.NewLedger(pool, rail.Config{Lease: time.Hour})
		c, ok, err := l.Claim(context.Background(), b.ref, tz)
		if err != nil {
			t.Fatal(err)
		}
		if tz == "Pacific/Kiritimati" {
			if !ok {
				t.Fatal("first claim refused")
			}
			continue
		}
		if ok {
			t.Fatalf("session in %s took over a live lease (token %d)", tz, c.Token)
		}
		if j, _ := l.Job(context.Background(), b.ref); j.LeaseExpired || *j.LeaseAgeSeconds > 60 {
			t.Fatalf("session in %s sees lease age %v", tz, *j.LeaseAgeSeconds)
		}
	}
	b.expireLease(t)
	if _, ok := b.claim(t, "after"); !ok {
		t.Fatal("expired lease not reclaimable")
	}
	j := b.job(t)
	if _, err := b.ledger.Commit(b.ctx, rail.Claim{MatterRef: b.ref, Token: j.ClaimedGeneration}, frameOf("x")); err != nil {
		t.Fatal(err)
	}
}
