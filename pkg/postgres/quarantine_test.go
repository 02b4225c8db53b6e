package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/verify/ledgercheck"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Demand that arrives during the last allowed attempt, which then fails,
// is not swallowed by the quarantine: it releases the row (idle, attempts
// reset), exactly as the same demand arriving a moment after the
// quarantine would, and is built. Before the fix Fail quarantined the row
// and the upload waited for an operator, though "new demand releases a
// quarantine".
func TestDemandDuringLastFailedAttemptIsNotSwallowed(t *testing.T) {
	for _, swallow := range []bool{false, true} {
		name := map[bool]string{false: "released", true: "SwallowingUncovered quarantines"}[swallow]
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{MaxAttempts: 2})
			l := b.ledger
			if swallow {
				l = l.SwallowingUncovered() // the negative control's seam: the behaviour before the fix
			}
			b.demand(t)
			c := b.mustClaim(t, "w")
			if fr, err := l.Fail(b.ctx, c, errors.New("model said no")); err != nil || fr.Status != rail.StatusIdle {
				t.Fatalf("first failure: %+v %v", fr, err)
			}
			b.ageDemand(t, time.Hour) // past the backoff
			c = b.mustClaim(t, "w")   // the last allowed attempt
			if c.Attempt != 2 {
				t.Fatalf("attempt %d, want 2", c.Attempt)
			}
			b.demand(t) // an upload during it
			fr, err := l.Fail(b.ctx, c, errors.New("model said no"))
			if err != nil {
				t.Fatal(err)
			}
			j := b.job(t)
			if swallow {
				if fr.Status != rail.StatusQuarantined || j.RunStatus != rail.StatusQuarantined {
					t.Fatalf("SwallowingUncovered: %+v, row %+v; want the old quarantine", fr, j)
				}
				b.swallowedCaught(t)
				return
			}
			if fr.Status != rail.StatusIdle || fr.Attempts != 0 || j.RunStatus != rail.StatusIdle || j.Attempts != 0 {
				t.Fatalf("last attempt failed with demand that arrived during it: %+v, row %+v; want idle, attempts reset", fr, j)
			}
			if g := b.gauges(t); g.MattersQuarantined != 0 || g.MattersBehind != 1 {
				t.Fatalf("gauges %+v; want it behind, not quarantined", g)
			}
			runs, err := b.ledger.Runs(b.ctx, b.ref, 1)
			if err != nil || len(runs) != 1 || runs[0].Outcome != "failed" {
				t.Fatalf("runs %+v %v; want the attempt failed, not quarantined", runs, err)
			}
			b.ageDemand(t, time.Hour)
			rep, err := b.ledger.Sweep(b.ctx, 0)
			if err != nil || len(rep.Renudge) != 1 {
				t.Fatalf("sweep: %+v %v; want the demand re-nudged", rep, err)
			}
			c = b.mustClaim(t, "w")
			if c.Target != 2 || c.Attempt != 1 {
				t.Fatalf("claim after the release: %+v; want target 2, a fresh first attempt", c)
			}
			if _, err := b.ledger.Commit(b.ctx, c, frameOf("built")); err != nil {
				t.Fatal(err)
			}
			if !b.job(t).Current {
				t.Fatal("not current")
			}
		})
	}
}

// Without demand during it, the last failed attempt still quarantines.
func TestLastFailedAttemptWithoutNewDemandQuarantines(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 1})
	b.demand(t)
	b.demand(t) // before the claim: covered by it
	c := b.mustClaim(t, "w")
	if fr, err := b.ledger.Fail(b.ctx, c, errors.New("poison")); err != nil || fr.Status != rail.StatusQuarantined {
		t.Fatalf("last attempt, no new demand: %+v %v; want quarantined", fr, err)
	}
}

// The sweep's quarantine of an expired lease on its last attempt: demand
// that arrived during that attempt releases it (idle, attempts reset, the
// run marked lease_expired), the sweeper re-nudges it and it is built; the
// expired worker's late commit is fenced. Without such demand the row is
// quarantined as before. Before the fix both were quarantined.
func TestDemandDuringLastExpiredLeaseIsNotSwallowed(t *testing.T) {
	for _, swallow := range []bool{false, true} {
		name := map[bool]string{false: "released", true: "SwallowingUncovered quarantines"}[swallow]
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{MaxAttempts: 1})
			l := b.ledger
			if swallow {
				l = l.SwallowingUncovered()
			}
			poison := b.newMatter(t, "Poison v. Matter") // no demand during its attempt
			if _, err := b.ledger.Demand(b.ctx, poison, 1); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := b.ledger.Claim(b.ctx, poison, "dies"); err != nil || !ok {
				t.Fatal(ok, err)
			}
			b.demand(t)
			stale := b.mustClaim(t, "dies")
			b.demand(t) // an upload during the last attempt
			if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 day'`); err != nil {
				t.Fatal(err)
			}
			rep, err := l.Sweep(b.ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			j := b.job(t)
			if swallow {
				if len(rep.Quarantined) != 2 || j.RunStatus != rail.StatusQuarantined {
					t.Fatalf("SwallowingUncovered: %+v, row %+v; want both quarantined", rep.Quarantined, j)
				}
				b.swallowedCaught(t)
				return
			}
			if len(rep.Quarantined) != 1 || rep.Quarantined[0] != poison || len(rep.Released) != 1 || rep.Released[0] != b.ref {
				t.Fatalf("quarantined %v, released %v; want only the matter with no demand during its attempt quarantined, the other released",
					rep.Quarantined, rep.Released)
			}
			if j.RunStatus != rail.StatusIdle || j.Attempts != 0 || j.TargetGeneration != j.BuiltGeneration {
				t.Fatalf("row %+v; want idle, attempts reset, target handed back", j)
			}
			runs, err := b.ledger.Runs(b.ctx, b.ref, 1)
			if err != nil || len(runs) != 1 || runs[0].Outcome != "lease_expired" {
				t.Fatalf("runs %+v %v", runs, err)
			}
			if _, err := b.ledger.Commit(b.ctx, stale, frameOf("late")); !errors.Is(err, rail.ErrFenced) {
				t.Fatalf("late commit of the released attempt: %v; want ErrFenced", err)
			}
			b.ageDemand(t, time.Hour)
			rep, err = b.ledger.Sweep(b.ctx, 0)
			if err != nil || len(rep.Renudge) != 1 || rep.Renudge[0] != b.ref || rep.MattersQuarantined != 1 {
				t.Fatalf("sweep: %+v %v; want this matter re-nudged, the poison one quarantined", rep, err)
			}
			c := b.mustClaim(t, "w")
			if c.Target != 2 {
				t.Fatalf("claim %+v; want target 2", c)
			}
			if _, err := b.ledger.Commit(b.ctx, c, frameOf("built")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// swallowedCaught: the ledger's invariants (internal/verify/ledgercheck,
// which the simulation checks after every step) see the swallowed demand;
// the row is then released so the test's own final check passes.
func (b *bundle) swallowedCaught(t *testing.T) {
	t.Helper()
	bad, err := ledgercheck.Violations(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "quarantined with demand its last attempt never covered: "+b.ref.MatterID.String()) {
		t.Fatalf("invariants %v; want the swallowed demand reported", bad)
	}
	if ok, err := b.ledger.Release(b.ctx, b.ref); err != nil || !ok {
		t.Fatal(ok, err)
	}
}
