package sim

import (
	"context"
	"errors"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Builds that end at their deadline (issue 10, defect 2). The build's
// context is cancelled as the build returns (before the commit or the
// Fail), or while the commit waits on a row lock another transaction holds
// (during the commit). The worker records the outcome the way
// rail.Worker.BuildOnce does: on rail.OutcomeContext, detached from the
// build's context and bounded by its own timeout; after a commit error it
// asks FrameLanded; after that it gives up. The check: an attempt that ends
// this way never leaves its row running under its own token (a stuck row,
// held until the lease expires). Config.OutcomeOnBuildContext is the
// negative control: the outcome recorded on the build's context.

// outcomeTimeout bounds a deadline build's outcome statements in the
// simulation: longer than any seed, so no timer fires in real time (a
// commit may wait on a stalled holder for many steps).
const outcomeTimeout = 2 * time.Minute

// outcomeContext is the context a worker records a deadline build's
// outcome on.
func (r *run) outcomeContext(build context.Context) (context.Context, context.CancelFunc) {
	if r.cfg.OutcomeOnBuildContext {
		return build, func() {}
	}
	return rail.OutcomeContext(build, outcomeTimeout)
}

// holdsRowOf reports whether the lock holder holds matter m's row, so a
// commit on it would wait (the "during the commit" variant).
func (r *run) holdsRowOf(m int) bool {
	return r.holder != nil && r.holder.m == m
}

// commitAtDeadline commits a finished build whose deadline passes as it
// returns, or, when the row is locked, while the commit waits for it.
func (r *run) commitAtDeadline(w *worker, during bool) {
	kind := FaultDeadlineBeforeCommit
	if during {
		kind = FaultDeadlineDuringCommit
	}
	r.fault(kind)
	bctx, deadline := context.WithCancel(r.ctx)
	defer deadline()
	if !during {
		deadline()
	}
	var (
		res             rail.CommitResult
		err, markErr    error
		landed, checked bool
		landedErr       error
	)
	w.busy = true
	blocked := r.exec(w.app, func() {
		octx, stop := r.outcomeContext(bctx)
		defer stop()
		res, err = r.cfg.Commit(octx, w.ledger, w.pool, w.claim, w.frame)
		switch {
		case errors.Is(err, rail.ErrFenced):
			markErr = w.ledger.MarkRun(octx, w.claim, "fenced", "sim: token stale at commit")
		case err != nil:
			checked = true
			landed, landedErr = w.ledger.FrameLanded(octx, w.claim)
		}
	}, func() {
		w.busy = false
		if checked && landedErr == nil && landed {
			// The real worker reports a landed frame; here the history
			// must already agree (the commit landed before its error).
			r.landed(w, "commit at the deadline, landed despite the error")
			w.phase = idle
			return
		}
		if checked {
			r.tracef("%s commit at the deadline m%d token %d failed (%v); landed check: %v %v; gives up",
				w.name, w.m, w.claim.Token, err, landed, landedErr)
			w.phase = idle
			r.checkNotStuck(w, "commit at its deadline")
			return
		}
		r.afterCommit(w, res, err, markErr, "commit at the deadline")
	})
	if during {
		if blocked {
			r.tracef("%s build deadline passes while its commit m%d token %d waits on the row lock", w.name, w.m, w.claim.Token)
		}
		deadline()
	}
}

// failAtDeadline: the build is cut off by its deadline (the model call
// returns the context's error); the worker records the failure.
func (r *run) failAtDeadline(w *worker) {
	r.fault(FaultDeadlineBuildCut)
	bctx, deadline := context.WithTimeout(r.ctx, 0)
	defer deadline()
	<-bctx.Done()
	cause := bctx.Err()
	var (
		fr  rail.FailResult
		err error
	)
	w.busy = true
	r.exec(w.app, func() {
		octx, stop := r.outcomeContext(bctx)
		defer stop()
		fr, err = w.ledger.Fail(octx, w.claim, cause)
	}, func() {
		w.busy = false
		switch {
		case errors.Is(err, rail.ErrFenced):
			r.res.Fenced++
			r.tracef("%s build cut off at its deadline; Fail fenced (token %d)", w.name, w.claim.Token)
		case err != nil:
			r.tracef("%s build cut off at its deadline m%d token %d; recording the failure failed (%v); gives up",
				w.name, w.m, w.claim.Token, err)
			r.checkNotStuck(w, "build cut off at its deadline")
		default:
			r.tracef("%s build cut off at its deadline m%d token %d -> %s after %d attempts", w.name, w.m, w.claim.Token, fr.Status, fr.Attempts)
		}
		w.phase = idle
	})
}

// checkNotStuck: a worker that ended its attempt must not leave the row
// running under its own token.
func (r *run) checkNotStuck(w *worker, how string) {
	var stuck bool
	err := r.env.Admin.QueryRow(r.ctx, `SELECT `+postgres.SQLHoldsToken("j", "$3")+`
        FROM ops.matter_frame_jobs j WHERE j.firm_id = $1 AND j.matter_id = $2`,
		w.claim.FirmID, w.claim.MatterID, w.claim.Token).Scan(&stuck)
	r.must(err, "stuck-row check")
	if stuck {
		r.res.violate(VStuckRow, "m%d: token %d's worker ended its attempt (%s) with the row still running under its token",
			w.m, w.claim.Token, how)
	}
}
