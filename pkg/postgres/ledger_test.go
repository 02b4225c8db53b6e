package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func TestDemandThenClaimThenCommit(t *testing.T) {
	b := setup(t, rail.Config{})
	if _, ok := b.claim(t, "w"); ok {
		t.Fatal("claim granted with no recorded demand")
	}
	b.demand(t)
	c := b.mustClaim(t, "w")
	if c.Token != 1 || c.Target != 1 {
		t.Fatalf("first claim: token %d target %d, want 1 1", c.Token, c.Target)
	}
	if j := b.job(t); j.RunStatus != rail.StatusRunning || j.ClaimedAt == nil || j.RebuildNeeded {
		t.Fatalf("after claim: %+v", j)
	}
	res, err := b.ledger.Commit(b.ctx, c, frameOf("A"))
	if err != nil {
		t.Fatal(err)
	}
	if res.FollowUpDue {
		t.Fatal("follow-up due with no demand during the build")
	}
	j := b.job(t)
	if j.BuiltGeneration != 1 || j.RunStatus != rail.StatusIdle || !j.Current || j.Attempts != 0 || j.DemandSince != nil {
		t.Fatalf("after commit: %+v", j)
	}
	if _, ok := b.claim(t, "w"); ok {
		t.Fatal("claim granted after the demand was served")
	}
}

// Scenario 1: the zombie, four ways.
func TestZombieCommitAfterReplacementCommitted(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	a := b.mustClaim(t, "A")
	b.expireLease(t)
	bb := b.mustClaim(t, "B")
	if bb.Token != a.Token+1 || !bb.TookOverExpiry {
		t.Fatalf("reclaim token %d (took over %v), want %d", bb.Token, bb.TookOverExpiry, a.Token+1)
	}
	if _, err := b.ledger.Commit(b.ctx, bb, frameOf("B")); err != nil {
		t.Fatal(err)
	}
	_, err := b.ledger.Commit(b.ctx, a, frameOf("A"))
	if !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("zombie commit after B landed: err %v, want ErrFenced", err)
	}
	fr := b.frames(t)
	if len(fr) != 1 || fr[0].fingerprint != "B" {
		t.Fatalf("frames %+v, want only B's", fr)
	}
	var facts int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.domain_event_outbox
        WHERE event_name = 'frame.built' AND matter_id = $1 AND payload->>'token' = '2'`, b.ref.MatterID).Scan(&facts); err != nil {
		t.Fatal(err)
	}
	var all int
	_ = b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.domain_event_outbox WHERE event_name = 'frame.built'`).Scan(&all)
	if facts != 1 || all != 1 {
		t.Fatalf("frame.built facts: %d for B's token, %d in all; want exactly B's", facts, all)
	}
}

func TestZombieCommitWhileReplacementBuilding(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	a := b.mustClaim(t, "A")
	b.expireLease(t)
	bb := b.mustClaim(t, "B")
	if _, err := b.ledger.Commit(b.ctx, a, frameOf("A")); !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("zombie commit during B's build: err %v, want ErrFenced", err)
	}
	if err := b.ledger.Heartbeat(b.ctx, a); !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("zombie heartbeat: err %v, want ErrFenced", err)
	}
	if len(b.frames(t)) != 0 {
		t.Fatal("a frame landed from the zombie")
	}
	if _, err := b.ledger.Commit(b.ctx, bb, frameOf("B")); err != nil {
		t.Fatalf("B's commit: %v", err)
	}
}

func TestLateCommitWithNoReclaimLands(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	a := b.mustClaim(t, "A")
	b.expireLease(t)
	if rep, err := b.ledger.Sweep(b.ctx, 0); err != nil || rep.LeaseExpiries != 1 {
		t.Fatalf("sweep: %+v %v, want one lease expiry noted", rep, err)
	}
	if _, err := b.ledger.Commit(b.ctx, a, frameOf("A")); err != nil {
		t.Fatalf("late commit with no reclaim in between must land: %v", err)
	}
	if j := b.job(t); !j.Current {
		t.Fatalf("row not current after the late commit: %+v", j)
	}
	runs, err := b.ledger.Runs(b.ctx, b.ref, 0)
	if err != nil || len(runs) != 1 || runs[0].Outcome != "landed" {
		t.Fatalf("runs %+v %v, want one landed", runs, err)
	}
}

func TestZombieCommitBlockedBehindReplacementClaim(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	a := b.mustClaim(t, "A")
	b.expireLease(t)

	// B's claim holds the row lock (its transaction is still open) when the
	// zombie A commits. A's commit must wait for it, then see B's token.
	tx, err := b.pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.ctx)
	bb, ok, err := b.ledger.On(tx).Claim(b.ctx, b.ref, "B")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	done := make(chan error, 1)
	go func() { _, err := b.ledger.Commit(b.ctx, a, frameOf("A")); done <- err }()
	waitBlocked(t, b, "ops.commit_frames(")
	select {
	case err := <-done:
		t.Fatalf("A's commit did not wait for B's lock: %v", err)
	default:
	}
	if err := tx.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("A's commit after waiting: %v, want ErrFenced", err)
	}
	if _, err := b.ledger.Commit(b.ctx, bb, frameOf("B")); err != nil {
		t.Fatal(err)
	}
	if fr := b.frames(t); len(fr) != 1 || fr[0].fingerprint != "B" {
		t.Fatalf("frames %+v", fr)
	}
}

// waitBlocked waits until some session is waiting on a lock while running
// a statement containing sql.
func waitBlocked(t *testing.T, b *bundle, sql string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND position($1 in query) > 0`, sql).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no session blocked on the row lock")
}

// Scenario 2: a worker stalls inside its commit transaction, holding the
// row lock. Others wait; idle_in_transaction_session_timeout ends the stall;
// nothing of the stalled worker's lands; a reclaim follows after the lease.
func TestStallInsideCommitTransaction(t *testing.T) {
	b := setup(t, rail.Config{})
	if _, err := b.pool.Exec(b.ctx, `ALTER DATABASE `+b.db.Name+` SET idle_in_transaction_session_timeout = '500ms'`); err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, b.db.URL) // new sessions pick up the setting
	ledger := postgres.NewLedger(pool, rail.Config{})
	b.demand(t)
	a, ok, err := ledger.Claim(b.ctx, b.ref, "A")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	tx, err := pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.ctx)
	if _, err := ledger.On(tx).Commit(b.ctx, a, frameOf("A")); err != nil {
		t.Fatal(err)
	}
	// A stalls here. A heartbeat from elsewhere blocks on the row meanwhile.
	blocked := make(chan error, 1)
	go func() { blocked <- ledger.Heartbeat(b.ctx, a) }()
	// The heartbeat unblocks when the server ends the stalled transaction
	// (idle_in_transaction_session_timeout); wait for that, not for a time.
	select {
	case err := <-blocked:
		if err != nil {
			t.Fatalf("heartbeat after the stall ended: %v (the claim is still A's)", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stalled transaction was never ended by the server")
	}
	if err := tx.Commit(b.ctx); err == nil {
		t.Fatal("stalled commit transaction committed; the server should have ended it")
	}
	if len(b.frames(t)) != 0 {
		t.Fatal("a frame from the killed transaction landed")
	}
	b.expireLease(t)
	c := b.mustClaim(t, "B")
	if c.Token != a.Token+1 {
		t.Fatalf("reclaim token %d, want %d", c.Token, a.Token+1)
	}
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("B")); err != nil {
		t.Fatal(err)
	}
}

// Scenario 3: the worker's connection is killed before the fence, after the
// fence (before COMMIT), and after COMMIT was sent.
func TestConnectionKilledAroundTheFence(t *testing.T) {
	for _, when := range []string{"before fence", "after fence", "after commit"} {
		t.Run(when, func(t *testing.T) {
			b := setup(t, rail.Config{})
			b.demand(t)
			a := b.mustClaim(t, "A")
			conn, err := pgx.Connect(b.ctx, b.db.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			pid := conn.PgConn().PID()
			kill := func() {
				if _, err := b.pool.Exec(b.ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := conn.Begin(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			switch when {
			case "before fence":
				kill()
				if _, err := b.ledger.On(tx).Commit(b.ctx, a, frameOf("A")); err == nil {
					t.Fatal("commit on a killed connection succeeded")
				}
			case "after fence":
				if _, err := b.ledger.On(tx).Commit(b.ctx, a, frameOf("A")); err != nil {
					t.Fatal(err)
				}
				kill()
				if err := tx.Commit(b.ctx); err == nil {
					t.Fatal("COMMIT on a killed connection succeeded")
				}
			case "after commit":
				if _, err := b.ledger.On(tx).Commit(b.ctx, a, frameOf("A")); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(b.ctx); err != nil {
					t.Fatal(err)
				}
				kill() // the worker never heard back; it asks the ledger
			}
			landed, err := b.ledger.FrameLanded(b.ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if want := when == "after commit"; landed != want {
				t.Fatalf("frame landed = %v, want %v", landed, want)
			}
			// A retry of the same commit can never land a second frame.
			if _, err := b.ledger.Commit(b.ctx, a, frameOf("A")); landed && !errors.Is(err, rail.ErrFenced) {
				t.Fatalf("retried commit after landing: %v, want ErrFenced", err)
			} else if !landed && err != nil {
				t.Fatalf("retry of a commit that never landed: %v", err)
			}
			if n := len(b.frames(t)); n != 1 {
				t.Fatalf("%d frames, want exactly 1", n)
			}
			if !b.job(t).Current {
				t.Fatal("demand lost")
			}
		})
	}
}

// Scenario 3, the claim side: a claim whose reply was lost is recovered by
// the lease, never by claiming blindly.
func TestAmbiguousClaimRecoveredByLease(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	lost := b.mustClaim(t, "A") // A never learns it won
	if _, ok := b.claim(t, "A-retry"); ok {
		t.Fatal("a second claim was granted while the first lease is live")
	}
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Renudge) != 0 {
		t.Fatalf("sweep renudged a live lease: %+v %v", rep, err)
	}
	b.expireLease(t)
	c := b.mustClaim(t, "B")
	if c.Token != lost.Token+1 {
		t.Fatalf("token %d after the lease, want %d", c.Token, lost.Token+1)
	}
}

// 50 goroutines race one claim: exactly one wins.
func TestFiftyRacingClaimsOneWinner(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	var wins atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, ok, err := b.ledger.Claim(b.ctx, b.ref, "w"+string(rune('a'+i%26)))
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d winners, want 1", n)
	}
	if j := b.job(t); j.ClaimedGeneration != 1 {
		t.Fatalf("claimed_generation %d, want 1", j.ClaimedGeneration)
	}
}

// Scenario 12: the lease is stamped with the database clock at the
// statement, not at the start of an old transaction.
func TestClaimInsideOldTransactionGetsAFreshLease(t *testing.T) {
	b := setup(t, rail.Config{Lease: 2 * time.Second})
	b.demand(t)
	tx, err := b.pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.ctx)
	if _, err := tx.Exec(b.ctx, `SELECT now(), pg_sleep(2.5)`); err != nil { // older than the lease
		t.Fatal(err)
	}
	c, ok, err := b.ledger.On(tx).Claim(b.ctx, b.ref, "A")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := tx.Commit(b.ctx); err != nil {
		t.Fatal(err)
	}
	j := b.job(t)
	if j.LeaseExpired {
		t.Fatalf("lease already expired right after the claim: age %vs", *j.LeaseAgeSeconds)
	}
	if _, ok := b.claim(t, "B"); ok {
		t.Fatal("a second worker took over a fresh lease")
	}
	_ = c
}

// Scenario 10: 1,000 concurrent demands during a build raise
// requested_generation by exactly 1,000 and cost exactly one follow-up.
func TestThousandDemandsDuringABuildCostOneFollowUp(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	a := b.mustClaim(t, "A")
	before := b.job(t).RequestedGeneration
	var wg sync.WaitGroup
	sem := make(chan struct{}, 40)
	for range 1000 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := b.ledger.Demand(b.ctx, b.ref, 1); err != nil {
				t.Error(err)
			}
			if _, ok, err := b.ledger.Claim(b.ctx, b.ref, "nudged"); ok || err != nil {
				t.Errorf("a nudge during the build claimed (ok=%v err=%v)", ok, err)
			}
		}()
	}
	wg.Wait()
	if got := b.job(t).RequestedGeneration - before; got != 1000 {
		t.Fatalf("requested_generation rose by %d, want 1000", got)
	}
	res, err := b.ledger.Commit(b.ctx, a, frameOf("A"))
	if err != nil || !res.FollowUpDue {
		t.Fatalf("commit: %+v %v, want a follow-up due", res, err)
	}
	f := b.mustClaim(t, "follow-up")
	if f.Target != before+1000 {
		t.Fatalf("follow-up covers %d, want %d", f.Target, before+1000)
	}
	if _, ok := b.claim(t, "extra"); ok {
		t.Fatal("a second follow-up was granted")
	}
	res, err = b.ledger.Commit(b.ctx, f, frameOf("F"))
	if err != nil || res.FollowUpDue {
		t.Fatalf("follow-up commit: %+v %v", res, err)
	}
	if _, ok := b.claim(t, "extra"); ok {
		t.Fatal("a build was granted after the follow-up served everything")
	}
}
