package postgres_test

import (
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func (b *bundle) setStatus(t *testing.T, status string) {
	t.Helper()
	if err := postgres.SetMatterStatus(b.ctx, b.pool, b.ref, status); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) gauges(t *testing.T) postgres.Gauges {
	t.Helper()
	g, err := b.ledger.Gauges(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A closed matter's demand is held, not late: it leaves the unserved
// gauges (which OldestUnservedDemandAlarm watches) for MattersClosedWithDemand,
// is never claimed or re-nudged, and is served after re-opening, aged from
// the re-opening. Demand that arrives while the matter is closed is
// recorded and held the same way (it used to be refused with
// ErrMatterClosed, and the trigger acknowledged the fact away).
func TestClosedMatterHoldsDemandUntilReopened(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	b.demand(t)
	b.ageDemand(t, time.Hour)
	if g := b.gauges(t); g.MattersBehind != 1 || g.OldestUnservedDemandSeconds < 3600 {
		t.Fatalf("open, behind an hour: %+v", g)
	}
	b.setStatus(t, "closed")

	g := b.gauges(t)
	if g.MattersBehind != 0 || g.OldestUnservedDemandSeconds != 0 || g.MattersClosedWithDemand != 1 {
		t.Fatalf("closed: gauges %+v; want nothing unserved, one closed matter with demand", g)
	}
	j := b.job(t)
	if j.HeldDemands != 2 || j.MatterStatus != "closed" || j.RequestedGeneration != 2 {
		t.Fatalf("closed: row %+v; want 2 demands held", j)
	}
	if _, ok := b.claim(t, "w"); ok {
		t.Fatal("a closed matter was claimed")
	}
	rep, err := b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Renudge) != 0 {
		t.Fatalf("sweep of a closed matter: %+v %v; want no re-nudge", rep, err)
	}
	// Demand arriving while closed (an upload in flight at the close) is
	// recorded and held with the rest: never refused, never dropped.
	res, err := b.ledger.Demand(b.ctx, b.ref, 1)
	if err != nil || !res.Held || res.Requested != 3 {
		t.Fatalf("demand on a closed matter: %+v %v; want it recorded (requested 3) and held", res, err)
	}
	if j := b.job(t); j.HeldDemands != 3 {
		t.Fatalf("closed, demand arrived: row %+v; want 3 demands held", j)
	}
	if g := b.gauges(t); g.MattersBehind != 0 || g.OldestUnservedDemandSeconds != 0 || g.MattersClosedWithDemand != 1 {
		t.Fatalf("closed, demand arrived: gauges %+v; want it held, not late", g)
	}
	if _, ok := b.claim(t, "w"); ok {
		t.Fatal("a closed matter was claimed after new demand")
	}

	b.setStatus(t, "open")
	g = b.gauges(t)
	if g.MattersBehind != 1 || g.MattersClosedWithDemand != 0 || g.OldestUnservedDemandSeconds >= 600 {
		t.Fatalf("re-opened: gauges %+v; want one behind, aged from the re-opening (not an hour)", g)
	}
	if j := b.job(t); j.HeldDemands != 0 || j.DemandSince == nil || j.UncoveredSince == nil {
		t.Fatalf("re-opened: row %+v", j)
	}
	// The sweeper's next pass after its grace re-nudges it, and it builds.
	b.ageDemand(t, rail.DefaultSweepGrace+time.Second)
	rep, err = b.ledger.Sweep(b.ctx, 0)
	if err != nil || len(rep.Renudge) != 1 || rep.Renudge[0] != b.ref {
		t.Fatalf("sweep after re-opening: %+v %v; want this matter re-nudged", rep, err)
	}
	c := b.mustClaim(t, "w")
	if c.Target != 3 {
		t.Fatalf("claim after re-opening: %+v; want target 3 (all the held demand)", c)
	}
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("after re-open")); err != nil {
		t.Fatal(err)
	}
	if g := b.gauges(t); g.MattersBehind != 0 || g.OldestUnservedDemandSeconds != 0 {
		t.Fatalf("built: %+v", g)
	}
}

// A matter closed mid-build: the build already claimed lands (its inputs
// were read while the matter was open); demand that arrived during the
// build is held, not claimed, until the matter is re-opened.
func TestMatterClosedMidBuildLandsAndHoldsTheFollowUp(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	c := b.mustClaim(t, "w")
	b.demand(t) // arrives during the build
	b.setStatus(t, "closed")
	res, err := b.ledger.Commit(b.ctx, c, frameOf("mid-build"))
	if err != nil || !res.FollowUpDue || res.Target != 1 {
		t.Fatalf("commit on a matter closed mid-build: %+v %v; want it landed, follow-up due", res, err)
	}
	if _, ok := b.claim(t, "follow-up"); ok {
		t.Fatal("the follow-up was claimed on a closed matter")
	}
	if g := b.gauges(t); g.MattersBehind != 0 || g.OldestUnservedDemandSeconds != 0 || g.MattersClosedWithDemand != 1 {
		t.Fatalf("closed after a build: %+v", g)
	}
	b.setStatus(t, "open")
	c = b.mustClaim(t, "follow-up")
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("after re-open")); err != nil {
		t.Fatal(err)
	}
	if j := b.job(t); !j.Current {
		t.Fatalf("re-opened and built: %+v", j)
	}
}

// A matter closed with an expired lease stays running (the lease is not
// taken over while closed) and is taken over after re-opening.
func TestClosedMatterExpiredLeaseTakenOverAfterReopen(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	b.mustClaim(t, "crashed")
	b.setStatus(t, "closed")
	b.expireLease(t)
	if _, ok := b.claim(t, "w"); ok {
		t.Fatal("took over a lease on a closed matter")
	}
	if g := b.gauges(t); g.MattersClosedWithDemand != 1 || g.MattersBehind != 0 {
		t.Fatalf("closed, lease expired: %+v", g)
	}
	b.setStatus(t, "open")
	c := b.mustClaim(t, "w")
	if !c.TookOverExpiry {
		t.Fatalf("claim after re-opening: %+v; want a takeover", c)
	}
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("x")); err != nil {
		t.Fatal(err)
	}
}
