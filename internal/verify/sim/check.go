package sim

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// snapshotSQL reads the rows with the ledger's own rules (postgres.SQLLeaseExpired,
// postgres.SQLPastBackoff): the simulation checks the rules the ledger runs on.
var snapshotSQL = `
SELECT j.matter_id, j.requested_generation, j.claimed_generation, j.target_generation, j.built_generation, j.run_status,
       coalesce(` + postgres.SQLLeaseExpired("j", "$1") + `, false),
       j.not_before IS NOT NULL, j.not_before IS NOT NULL AND ` + postgres.SQLPastBackoff("j") + `, j.attempts
FROM ops.matter_frame_jobs j`

// observe snapshots the ledger rows after a step and checks the table
// invariants and the monotone counters.
func (r *run) observe() {
	rows, err := r.env.Admin.Query(r.ctx, snapshotSQL, r.cfg.Ledger.Lease.Seconds())
	r.must(err, "snapshot")
	next := make([]row, len(r.matters))
	for rows.Next() {
		var (
			id uuid.UUID
			s  row
		)
		r.must(rows.Scan(&id, &s.requested, &s.claimed, &s.target, &s.built, &s.status,
			&s.leaseExpired, &s.backoffSet, &s.backoffDue, &s.attempts), "scan snapshot")
		m, ok := r.byID[id]
		if !ok {
			r.fail("ledger row of an unknown matter %s", id)
		}
		s.exists = true
		next[m] = s
	}
	r.must(rows.Err(), "snapshot")
	for m, s := range next {
		p := r.snap[m]
		if s.built < p.built {
			r.res.violate(VBuiltDecreased, "step %d m%d: built_generation %d -> %d", r.step, m, p.built, s.built)
		}
		if s.claimed < p.claimed {
			r.res.violate(VTokenReused, "step %d m%d: claimed_generation %d -> %d", r.step, m, p.claimed, s.claimed)
		}
		if s.requested < p.requested {
			r.res.violate(VDemandLost, "step %d m%d: requested_generation %d -> %d", r.step, m, p.requested, s.requested)
		}
		r.hist[m].built = max(r.hist[m].built, s.built)
	}
	r.snap = next
	bad, err := r.env.Admin.Query(r.ctx, `SELECT * FROM sim.invariant_violations()`)
	r.must(err, "table invariants")
	for bad.Next() {
		var s string
		r.must(bad.Scan(&s), "scan invariants")
		r.res.violate(VTable, "step %d: %s", r.step, s)
	}
	r.must(bad.Err(), "table invariants")
	if len(r.pending) == 0 {
		r.checkGauges()
	}
}

// drain stops demands and faults and runs the system fairly: stalled
// workers resume, every nudge is delivered, every worker finishes; when
// nothing is left to do, time passes beyond the lease and the sweep runs.
// Every matter must end built == requested, or quarantined.
func (r *run) drain() {
	r.draining = true
	r.tracef("drain: demands and faults stop; closed matters are re-opened")
	for m, c := range r.closed {
		if c && r.holder == nil {
			r.reopen(m)
		}
	}
	if r.holder != nil {
		r.resolveHolder(true)
		r.observe()
	}
	for m, c := range r.closed {
		if c {
			r.reopen(m)
		}
	}
	for _, w := range r.workers {
		w.stalled = false
	}
	for round := 0; round < 25; round++ {
		for progressed := true; progressed; {
			progressed = false
			for _, w := range r.workers {
				for w.phase != idle {
					switch w.phase {
					case claimed:
						r.load(w)
					case built:
						r.commitPlain(w)
					case unsure:
						r.resolve(w)
					default:
						r.fail("drain: %s in phase %s", w.name, phaseNames[w.phase])
					}
					r.observe()
					progressed = true
				}
			}
			if len(r.bag) > 0 {
				n := r.bag[0]
				r.bag = r.bag[1:]
				r.claimFor(r.workers[0], n, false)
				r.observe()
				progressed = true
			}
		}
		if r.served() {
			return
		}
		r.timeTravel(r.cfg.Ledger.Lease + r.cfg.Ledger.BackoffMax + time.Minute)
		r.tracef("drain: clock past lease, backoff and sweep grace")
		r.doSweep()
		r.observe()
	}
}

// drainAll is the ledger's drain, then the relays'.
func (r *run) drainAll() {
	r.drain()
	r.relayDrain()
}

func (r *run) served() bool {
	for _, s := range r.snap {
		if s.exists && s.built != s.requested && s.status != rail.StatusQuarantined {
			return false
		}
	}
	return true
}

// finalChecks: liveness, and the history against what the database holds.
func (r *run) finalChecks() {
	for m, s := range r.snap {
		h := &r.hist[m]
		switch {
		case s.status == rail.StatusQuarantined:
			r.res.Quarantined++
		case s.built != s.requested:
			r.res.DemandsLost += int(s.requested - s.built)
			r.res.violate(VDemandLost, "m%d: requested %d built %d (%s) after the drain", m, s.requested, s.built, s.status)
		}
		if s.requested != h.requested {
			r.res.violate(VMismatch, "m%d: requested_generation %d, history recorded %d demands", m, s.requested, h.requested)
		}
		if s.claimed != h.lastToken {
			r.res.violate(VMismatch, "m%d: claimed_generation %d, history's last claim %d", m, s.claimed, h.lastToken)
		}
	}
	// Every frame in the table is one the history saw land, and vice versa.
	rows, err := r.env.Admin.Query(r.ctx, `SELECT matter_id, token FROM ops.matter_frames`)
	r.must(err, "frames")
	inDB := map[[2]int64]bool{}
	for rows.Next() {
		var (
			id    uuid.UUID
			token int64
		)
		r.must(rows.Scan(&id, &token), "scan frames")
		m := r.byID[id]
		inDB[[2]int64{int64(m), token}] = true
		if !r.hist[m].frames[token] {
			r.res.violate(VMismatch, "m%d: frame token %d in the table, never seen to land", m, token)
		}
	}
	r.must(rows.Err(), "frames")
	for m, h := range r.hist {
		for token := range h.frames {
			if !inDB[[2]int64{int64(m), token}] {
				r.res.violate(VMismatch, "m%d: frame token %d recorded as landed, not in the table", m, token)
			}
		}
	}
	// By the database's own clock: no frame lands after the next token was
	// claimed (a cross-check of the history's order).
	rows, err = r.env.Admin.Query(r.ctx, `SELECT f.matter_id, f.token FROM ops.matter_frames f
        JOIN ops.matter_frame_runs n ON n.firm_id = f.firm_id AND n.matter_id = f.matter_id AND n.token > f.token
        WHERE f.built_at > n.claimed_at GROUP BY 1, 2`)
	r.must(err, "frame order")
	for rows.Next() {
		var (
			id    uuid.UUID
			token int64
		)
		r.must(rows.Scan(&id, &token), "scan frame order")
		r.res.violate(VStaleFrameDB, "m%d: frame token %d built_at after a later token's claim (database clock)", r.byID[id], token)
	}
	r.must(rows.Err(), "frame order")
	r.checkOutbox()
	r.tracef("end: %s", r.describeRows())
}

func (r *run) describeRows() string {
	s := ""
	for m, x := range r.snap {
		s += fmt.Sprintf("m%d[req %d tok %d tgt %d built %d %s att %d] ", m, x.requested, x.claimed, x.target, x.built, x.status, x.attempts)
	}
	return s
}
