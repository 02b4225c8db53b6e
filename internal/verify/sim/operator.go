package sim

import (
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Operator commands run with other settings: `railctl sweep` or
// `railctl build` (or a sweeper deployed with another configuration) acting
// on the workers' rows with a shorter or longer lease and a lower or higher
// attempt limit than the claims were granted. The ledger stores a claim's
// lease and attempt limit on the row (migration 007), so such a pass may
// act only on what the row's own claim allows: it never quarantines a live
// build or one with attempts left, never marks a live build's run expired,
// and never takes over a live claim.
const (
	FaultOperatorSettings = "operator pass with other settings (sweep or build)"
	VOperatorTouchedLive  = "operator pass with other settings acted on a build its claim protects"
)

// Operator settings the seed picks from: leases that are never near a
// multiple of the clock step or the workers' lease plus its expiry margin,
// so a row's liveness never depends on seconds of real time.
var (
	operatorLeases   = []time.Duration{time.Minute, 6 * time.Minute, 60 * time.Minute}
	operatorAttempts = []int{1, 2, 10}
)

func (r *run) operatorConfig() rail.Config {
	c := r.cfg.Ledger
	c.Lease = operatorLeases[r.rng.IntN(len(operatorLeases))]
	c.MaxAttempts = operatorAttempts[r.rng.IntN(len(operatorAttempts))]
	return c
}

// operatorPossible: an operator pass may be scheduled (as a sweep may).
func (r *run) operatorPossible() bool { return !r.sweepBusy && len(r.pending) == 0 }

// doOperator runs one operator pass with other settings: a build (a claim
// by a free worker with the operator's lease and limit) when a matter has
// unserved demand and a worker is free, else a sweep.
func (r *run) doOperator() {
	op := r.operatorConfig()
	r.fault(FaultOperatorSettings)
	var behind []int
	for i, s := range r.snap {
		if s.exists && s.requested > s.built {
			behind = append(behind, i)
		}
	}
	if len(behind) > 0 && r.freeWorker() && r.chance(0.5) {
		var free []*worker
		for _, w := range r.workers {
			if w.phase == idle && !w.busy {
				free = append(free, w)
			}
		}
		w := free[r.rng.IntN(len(free))]
		m := behind[r.rng.IntN(len(behind))]
		r.tracef("operator build m%d with lease %v, max attempts %d (as %s)", m, op.Lease, op.MaxAttempts, w.name)
		r.claimWith(w, postgres.NewLedger(w.pool, op), nudge{m: m, reason: "operator"}, false)
		return
	}
	r.operatorSweep(op)
}

// operatorSweep sweeps with op and checks that every row it quarantined or
// expired was, by its own claim's lease and limit, expired (and out of
// attempts, for a quarantine) before the pass.
func (r *run) operatorSweep(op rail.Config) {
	type pre struct{ expired, exhausted bool }
	before := map[uuid.UUID]pre{}
	expiredRows := 0
	rows, err := r.env.Admin.Query(r.ctx, `SELECT j.matter_id,
            `+postgres.SQLLeaseExpired("j", "$1")+`, NOT `+postgres.SQLAttemptsLeft("j", "$2")+`
        FROM ops.matter_frame_jobs j`, r.cfg.Ledger.Lease.Seconds(), r.cfg.Ledger.MaxAttempts)
	r.must(err, "operator sweep: rows before")
	for rows.Next() {
		var (
			id uuid.UUID
			p  pre
		)
		r.must(rows.Scan(&id, &p.expired, &p.exhausted), "operator sweep: scan")
		before[id] = p
		if p.expired {
			expiredRows++
		}
	}
	r.must(rows.Err(), "operator sweep: rows before")

	l := postgres.NewLedger(r.env.Sweeper, op)
	var rep postgres.SweepReport
	r.sweepBusy = true
	r.exec(AppName("sweeper"), func() { rep, err = l.Sweep(r.ctx, 0) }, func() {
		r.sweepBusy = false
		r.must(err, "operator sweep")
		r.tracef("operator sweep with lease %v, max attempts %d: %d quarantined, %d expiries (the operator sends no nudges)",
			op.Lease, op.MaxAttempts, len(rep.Quarantined), rep.LeaseExpiries)
		for _, ref := range append(rep.Quarantined, rep.Released...) { // released: spared quarantine by demand during the attempt
			if p := before[ref.MatterID]; !p.expired || !p.exhausted {
				r.res.violate(VOperatorTouchedLive, "m%d quarantined by a sweep with lease %v, max attempts %d: lease expired %v, out of attempts %v",
					r.byID[ref.MatterID], op.Lease, op.MaxAttempts, p.expired, p.exhausted)
			}
		}
		if rep.LeaseExpiries > expiredRows {
			r.res.violate(VOperatorTouchedLive, "a sweep with lease %v marked %d runs expired; %d rows had expired leases",
				op.Lease, rep.LeaseExpiries, expiredRows)
		}
	})
}
