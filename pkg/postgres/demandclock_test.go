package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The age of the oldest unserved demand is exact across claim, heartbeat,
// commit with a follow-up due, failure, lease expiry, quarantine and
// release. Time passes by moving the row's timestamps back (ageDemand), so
// the ages asserted are minutes apart and no assertion depends on how fast
// the machine is.
func TestOldestUnservedDemandIsExact(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 2})
	oldest := func() float64 {
		t.Helper()
		g, err := b.ledger.Gauges(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return g.OldestUnservedDemandSeconds
	}
	// between asserts the gauge is at least lo (exact lower bound: the
	// demand arrived that long ago) and below hi (a bound minutes wide,
	// separating the demand meant from an older or younger one).
	between := func(what string, lo, hi time.Duration) {
		t.Helper()
		if got := oldest(); got < lo.Seconds() || got >= hi.Seconds() {
			t.Fatalf("%s: oldest unserved demand %.0fs, want [%v, %v); row %+v", what, got, lo, hi, b.job(t))
		}
	}

	b.demand(t) // demand A
	b.ageDemand(t, 20*time.Minute)
	between("demand A waiting", 20*time.Minute, 25*time.Minute)
	c := b.mustClaim(t, "w1")
	b.ageDemand(t, 2*time.Minute)
	between("A claimed", 22*time.Minute, 27*time.Minute)
	if err := b.ledger.Heartbeat(b.ctx, c); err != nil {
		t.Fatal(err)
	}
	between("A claimed, heartbeat", 22*time.Minute, 27*time.Minute)

	b.demand(t) // demand B arrives during the build: not covered by the claim
	b.ageDemand(t, 3*time.Minute)
	b.demand(t) // demand C, younger: B stays the oldest uncovered
	if err := b.ledger.Heartbeat(b.ctx, c); err != nil {
		t.Fatal(err) // the lease is fresh: claimed_at is now, B is 3 minutes old
	}
	res, err := b.ledger.Commit(b.ctx, c, frameOf("A"))
	if err != nil || !res.FollowUpDue {
		t.Fatalf("commit A: %+v %v", res, err)
	}
	// B is now the oldest unbuilt demand: 3 minutes, not the heartbeat's 0
	// (the defect: demand_since was set from claimed_at) and not A's 25.
	between("A landed, B and C unserved", 3*time.Minute, 8*time.Minute)
	if j := b.job(t); j.UnservedAgeSeconds == nil || *j.UnservedAgeSeconds < (3*time.Minute).Seconds() {
		t.Fatalf("row's unserved age: %+v", j)
	}

	// Follow-up claimed, then fails: the target is handed back, B stays oldest.
	c = b.mustClaim(t, "w2")
	b.ageDemand(t, time.Minute)
	if _, err := b.ledger.Fail(b.ctx, c, errors.New("model timeout")); err != nil {
		t.Fatal(err)
	}
	between("follow-up failed", 4*time.Minute, 9*time.Minute)
	b.demand(t) // D while idle: B stays oldest
	between("D while backing off", 4*time.Minute, 9*time.Minute)

	// Claimed after the backoff; the lease expires; the sweeper quarantines
	// (attempt 2 of 2): the target is handed back, B stays oldest.
	b.ageDemand(t, rail.DefaultBackoffMax)
	c = b.mustClaim(t, "w3")
	b.expireLease(t)
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Quarantined) != 1 {
		t.Fatalf("sweep: %+v %v", rep, err)
	}
	if got := b.job(t); got.UncoveredSince == nil || got.DemandSince == nil || !got.UncoveredSince.Equal(*got.DemandSince) {
		t.Fatalf("quarantined row: uncovered_since %v, demand_since %v; want equal", got.UncoveredSince, got.DemandSince)
	}
	if ok, err := b.ledger.Release(b.ctx, b.ref); err != nil || !ok {
		t.Fatalf("release: %v %v", ok, err)
	}
	between("released", 9*time.Minute, 14*time.Minute)

	// Claim, an expired lease taken over, and the takeover lands with no
	// demand left: nothing unserved.
	b.mustClaim(t, "w4")
	b.expireLease(t)
	c = b.mustClaim(t, "w5")
	if !c.TookOverExpiry {
		t.Fatalf("want a takeover: %+v", c)
	}
	between("taken over", 9*time.Minute, 14*time.Minute)
	if res, err := b.ledger.Commit(b.ctx, c, frameOf("all")); err != nil || res.FollowUpDue {
		t.Fatalf("commit: %+v %v", res, err)
	}
	if got := oldest(); got != 0 {
		t.Fatalf("all built: oldest unserved %.0fs, want 0", got)
	}
	if j := b.job(t); j.DemandSince != nil || j.UncoveredSince != nil {
		t.Fatalf("all built: %+v", j)
	}
}
