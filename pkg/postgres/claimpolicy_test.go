package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Operator commands run with other settings than the workers (railctl with
// the CLI's defaults, a sweeper deployed with a shorter lease): the lease
// and attempt limit a claim was granted with are stored on the row, so an
// operator's shorter lease or lower attempt limit can neither quarantine,
// expire nor take over a live build, and a higher limit cannot leave an
// exhausted row running.
func TestOperatorSettingsCannotTouchALiveBuild(t *testing.T) {
	b := setup(t, rail.Config{Lease: 15 * time.Minute, MaxAttempts: 5})
	b.demand(t)
	c := b.mustClaim(t, "worker")
	j := b.job(t)
	if j.LeaseSeconds == nil || *j.LeaseSeconds != 900 || j.MaxAttempts == nil || *j.MaxAttempts != 5 {
		t.Fatalf("claim did not store its lease and attempt limit: lease %v max %v", j.LeaseSeconds, j.MaxAttempts)
	}
	// Two minutes into a 15-minute lease (time travel on the row).
	b.ageDemand(t, 2*time.Minute+30*time.Second)

	operator := postgres.NewLedger(b.pool, rail.Config{Lease: time.Minute, MaxAttempts: 1})
	rep, err := operator.Sweep(b.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Quarantined) != 0 || rep.LeaseExpiries != 0 || len(rep.Renudge) != 0 {
		t.Fatalf("a sweep with a 1m lease and 1 attempt touched a live 15m build: %+v", rep)
	}
	if oj, err := operator.Job(b.ctx, b.ref); err != nil || oj.LeaseExpired || oj.RunStatus != rail.StatusRunning {
		t.Fatalf("operator status reads the live lease as expired: %+v %v", oj, err)
	}
	if _, ok, err := operator.Claim(b.ctx, b.ref, "operator"); err != nil || ok {
		t.Fatalf("an operator build with a 1m lease took over a live 15m claim: ok %v err %v", ok, err)
	}
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("worker")); err != nil {
		t.Fatalf("the live build's commit: %v", err)
	}
	runs, err := b.ledger.Runs(b.ctx, b.ref, 5)
	if err != nil || len(runs) != 1 || runs[0].Outcome != "landed" {
		t.Fatalf("runs: %+v %v", runs, err)
	}
}

// The worker's lease is honoured when the row's lease does expire, and the
// row's attempt limit decides quarantine whatever the sweeper's own is.
func TestRowAttemptLimitDecidesQuarantine(t *testing.T) {
	b := setup(t, rail.Config{Lease: 15 * time.Minute, MaxAttempts: 1})
	b.demand(t)
	b.mustClaim(t, "worker")
	b.expireLease(t)
	// A sweeper allowing 10 attempts still quarantines a row whose claim
	// was its last (1 of 1): with its own limit it would leave the row
	// running for ever (no worker may reclaim it, no sweep quarantines it).
	lenient := postgres.NewLedger(b.pool, rail.Config{Lease: 15 * time.Minute, MaxAttempts: 10})
	rep, err := lenient.Sweep(b.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Quarantined) != 1 {
		t.Fatalf("expired last attempt not quarantined by a lenient sweeper: %+v", rep)
	}
	if j := b.job(t); j.RunStatus != rail.StatusQuarantined || j.LastError != "lease expired on attempt 1 of 1" {
		t.Fatalf("row: %+v", j)
	}
}

// A lease shorter than the workers' is honoured for the claim it was
// granted to (railctl build --lease 5s): the row expires on its own lease,
// whoever asks.
func TestShortOperatorLeaseExpiresForEveryone(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	operator := postgres.NewLedger(b.pool, rail.Config{Lease: time.Minute})
	oc, ok, err := operator.Claim(b.ctx, b.ref, "operator")
	if err != nil || !ok {
		t.Fatalf("operator claim: %v %v", ok, err)
	}
	b.ageDemand(t, 90*time.Second)
	if j := b.job(t); !j.LeaseExpired {
		t.Fatalf("a worker configured with 15m does not see the operator's 1m lease as expired: %+v", j)
	}
	wc := b.mustClaim(t, "worker") // the default 15m ledger takes over
	if wc.Token != oc.Token+1 || !wc.TookOverExpiry {
		t.Fatalf("takeover: %+v", wc)
	}
	if _, err := operator.Commit(b.ctx, oc, frameOf("operator")); !errors.Is(err, rail.ErrFenced) {
		t.Fatalf("stale operator commit: %v", err)
	}
}

// Rows last claimed before migration 007 carry no policy and fall back to
// the caller's settings, as before.
func TestRowWithoutStoredPolicyFallsBackToCaller(t *testing.T) {
	b := setup(t, rail.Config{Lease: 15 * time.Minute, MaxAttempts: 5})
	b.demand(t)
	b.mustClaim(t, "worker")
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET lease_seconds = NULL, max_attempts = NULL`); err != nil {
		t.Fatal(err)
	}
	b.ageDemand(t, 2*time.Minute+30*time.Second)
	operator := postgres.NewLedger(b.pool, rail.Config{Lease: time.Minute, MaxAttempts: 1})
	rep, err := operator.Sweep(b.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Quarantined) != 1 {
		t.Fatalf("pre-007 row: the caller's settings should apply: %+v", rep)
	}
}
