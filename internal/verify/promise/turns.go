package promise

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The builder function serves an SQS batch with one goroutine per claim
// (rail.Worker.BuildBatch). The simulated Brief builder draws its faults
// from the seed's one random stream and acts on the run's state (an
// upload, relay and trigger passes, a kill), and the handler's retry and
// follow-up nudges draw theirs too: run concurrently, a seed's faults
// would depend on the scheduler and the seed would not replay. So the
// oracle's stand-ins take turns: the builds of one invocation act one at
// a time, in the order the batch's claim statement returned its claims,
// each from its first act to its last. The product code stays concurrent
// (its goroutines all start; all but one wait at their first act); only
// what the oracle stands in for serialises itself.
//
// A claim's acts are what its goroutine does through the oracle's ports:
// the worker's ledger statements for that claim (turnLedger), the Brief
// builder's call (simBuilder.Build) and the nudge the handler sends after
// the outcome (faultNudger). Its last act follows from the outcome, as
// rail.Worker.serve and lambdafn.BuilderHandler.served decide it: MarkRun,
// FrameLanded, a landed Commit (or the follow-up nudge after it when
// demand came during the build), a Fail that fenced, errored or
// quarantined (or the retry nudge after it, when the handler sends one).
// A claim acting out of turn, or a turn never ended, is a harness error
// (VHarness): the rule fell out of step with the handler.
type turns struct {
	r    *run
	mu   sync.Mutex
	cond *sync.Cond

	active bool
	order  []rail.MatterRef // the claims of the invocation, in turn order
	idx    map[rail.MatterRef]int
	next   int                     // whose turn it is (len(order): all done)
	nudge  map[rail.MatterRef]bool // the claim's last act is a nudge still to come
	reason map[rail.MatterRef]string
	build  bool // the turn's holder is inside the Brief builder's call
	errs   []string
	// broken: a turn was waited for in vain; the run (failed already with
	// a harness error) goes on without turns rather than wait again.
	broken bool
}

// turnWait is how long an act waits for its turn before the harness gives
// up on the rule (a build's turn is milliseconds to a few seconds: a
// build, its outcome's statements, with demand during it a relay and a
// trigger pass; each statement bounded by its role's scaled timeouts).
const turnWait = 30 * time.Second

func newTurns(r *run) *turns {
	t := &turns{r: r}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// begin opens a builder invocation over the batch's messages: reasons is
// the nudge reason of each matter's first message (the item a claim
// serves).
func (t *turns) begin(reasons map[rail.MatterRef]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active, t.order, t.next, t.build = !t.broken, nil, 0, false
	t.idx, t.nudge, t.reason = map[rail.MatterRef]int{}, map[rail.MatterRef]bool{}, reasons
}

// claimed records the claims the invocation won, in turn order (called on
// the invocation's goroutine, before any build starts).
func (t *turns) claimed(cs []rail.Claim) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.active {
		return
	}
	for _, c := range cs {
		if _, ok := t.idx[c.MatterRef]; !ok {
			t.idx[c.MatterRef] = len(t.order)
			t.order = append(t.order, c.MatterRef)
		}
	}
}

// end closes the invocation and reports what fell out of step.
func (t *turns) end() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active && !t.broken && t.next < len(t.order) {
		t.errs = append(t.errs, fmt.Sprintf("turns: %d of %d claims never ended their turn (next %s)",
			len(t.order)-t.next, len(t.order), short(t.order[t.next])))
	}
	if t.active && len(t.order) > 1 {
		t.r.res.Batches++
		t.r.res.BatchClaims += len(t.order)
	}
	t.active = false
	errs := t.errs
	t.errs = nil
	return errs
}

// wait blocks until it is ref's turn. It reports false when the act is
// not a turn's (no invocation, not a claim of it, or a nudge from inside
// the holder's build: the trigger run by demand during a build).
func (t *turns) wait(ref rail.MatterRef, what string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.idx[ref]
	if !t.active || !ok {
		return false
	}
	deadline := time.Now().Add(turnWait)
	wake := time.AfterFunc(turnWait, func() { t.mu.Lock(); t.cond.Broadcast(); t.mu.Unlock() })
	defer wake.Stop()
	for t.next < i && !t.broken && time.Now().Before(deadline) {
		t.cond.Wait()
	}
	switch {
	case t.broken:
		return false
	case t.next > i:
		t.errs = append(t.errs, fmt.Sprintf("turns: %s acted (%s) after its turn ended", short(ref), what))
	case t.next < i:
		t.errs = append(t.errs, fmt.Sprintf("turns: %s waited %v for its turn (%s); %s's never ended; the run goes on without turns",
			short(ref), turnWait, what, short(t.order[t.next])))
		t.broken, t.active = true, false
		t.cond.Broadcast()
		return false
	}
	return true
}

// done ends ref's turn.
func (t *turns) done(ref rail.MatterRef) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.idx[ref]; ok && t.active && t.next == i {
		t.next++
		t.cond.Broadcast()
	}
}

// expectNudge: ref's turn ends with the nudge the handler sends next.
func (t *turns) expectNudge(ref rail.MatterRef) {
	t.mu.Lock()
	t.nudge[ref] = true
	t.mu.Unlock()
}

// retries: the handler sends a retry nudge after ref's recorded failure
// (lambdafn.BuilderHandler.served: not quarantined, not a backfill build,
// the fix of defect 8 on).
func (t *turns) retries(ref rail.MatterRef) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.r.cfg.Revert[8] && t.reason[ref] != rail.ReasonBackfill
}

// inBuild marks the holder's Brief builder call (nudges from inside it
// are the nested trigger's, not a turn's act).
func (t *turns) inBuild(on bool) {
	t.mu.Lock()
	t.build = on
	t.mu.Unlock()
}

// nudgeAct: a nudge sent now is a turn's act (a handler's retry or
// follow-up), not one from inside the holder's build.
func (t *turns) nudgeAct(nudges []rail.Nudge) (rail.MatterRef, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.active || t.build || len(nudges) != 1 {
		return rail.MatterRef{}, false
	}
	ref := nudges[0].Ref()
	if _, ok := t.idx[ref]; !ok {
		return rail.MatterRef{}, false
	}
	if !t.nudge[ref] {
		t.errs = append(t.errs, fmt.Sprintf("turns: %s nudged (%s) where its turn had ended", short(ref), nudges[0].Reason))
		return rail.MatterRef{}, false
	}
	return ref, true
}

// turnLedger is the builder's ledger port with the turns kept: the claim
// statements name the turns, every statement of a claim waits for its
// turn, and the claim's last statement ends it. It also checks what the
// claims won (VClosedClaimed), on the invocation's goroutine, where the
// run's record of closed matters is current: the host application closes
// and re-opens matters between invocations.
type turnLedger struct {
	rail.Ledger
	t *turns
}

func (l *turnLedger) Claim(ctx context.Context, ref rail.MatterRef, workerID string) (rail.Claim, bool, error) {
	c, ok, err := l.Ledger.Claim(ctx, ref, workerID)
	if ok && err == nil {
		l.won([]rail.Claim{c}, "Claim")
	}
	return c, ok, err
}

func (l *turnLedger) won(cs []rail.Claim, by string) {
	for _, c := range cs {
		if l.t.r.closed[c.MatterRef] {
			l.t.r.violate(VClosedClaimed, "%s claimed %s (token %d), a closed matter", by, short(c.MatterRef), c.Token)
		}
	}
	l.t.claimed(cs)
}

func (l *turnLedger) ClaimBatch(ctx context.Context, refs []rail.MatterRef, workerID string) ([]rail.Claim, error) {
	cs, err := l.Ledger.ClaimBatch(ctx, refs, workerID)
	if err == nil {
		l.won(cs, "ClaimBatch")
	}
	return cs, err
}

func (l *turnLedger) LoadBuild(ctx context.Context, c rail.Claim) (rail.Inputs, rail.StoredFrame, bool, error) {
	l.t.wait(c.MatterRef, "LoadBuild")
	return l.Ledger.LoadBuild(ctx, c)
}

// CommitGroup keeps the turns over the worker's group commit. A build
// hands its frame to the batch's commit goroutine only in its turn (the
// run's BeforeCommit waits for it, beforeCommit), so every group here is
// the turn holder's alone and its commit is its act; a member outside any
// turn (no invocation) just commits.
func (l *turnLedger) CommitGroup(ctx context.Context, group []rail.FrameCommit) ([]rail.CommitResult, []error, error) {
	turn := make([]bool, len(group))
	for i, m := range group {
		turn[i] = l.t.wait(m.Claim.MatterRef, "Commit")
	}
	res, errs, err := l.Ledger.CommitGroup(ctx, group)
	for i, m := range group {
		switch {
		case !turn[i]:
		case err != nil || errs[i] != nil: // MarkRun, Fail or FrameLanded follows
		case res[i].FollowUpDue:
			l.t.expectNudge(m.Claim.MatterRef)
		default:
			l.t.done(m.Claim.MatterRef)
		}
	}
	return res, errs, err
}

// beforeCommit is the builder worker's BeforeCommit while turns are kept:
// a build whose frame is ready (a reused body reaches it without calling
// the Brief builder, so without waiting for its turn there) waits for its
// turn before it joins a commit group. Otherwise a group could hold a
// later turn's frame while an earlier turn's build still runs, and the
// group's statement would wait for a turn that cannot come.
func (t *turns) beforeCommit(_ context.Context, c rail.Claim) { t.wait(c.MatterRef, "BeforeCommit") }

func (l *turnLedger) Fail(ctx context.Context, c rail.Claim, cause error) (rail.FailResult, error) {
	if !l.t.wait(c.MatterRef, "Fail") {
		return l.Ledger.Fail(ctx, c, cause)
	}
	fr, err := l.Ledger.Fail(ctx, c, cause)
	if err == nil && fr.Status != rail.StatusQuarantined && l.t.retries(c.MatterRef) {
		l.t.expectNudge(c.MatterRef)
	} else {
		l.t.done(c.MatterRef)
	}
	return fr, err
}

func (l *turnLedger) FrameLanded(ctx context.Context, c rail.Claim) (bool, error) {
	l.t.wait(c.MatterRef, "FrameLanded")
	defer l.t.done(c.MatterRef)
	return l.Ledger.FrameLanded(ctx, c)
}

func (l *turnLedger) MarkRun(ctx context.Context, c rail.Claim, outcome, msg string) error {
	l.t.wait(c.MatterRef, "MarkRun")
	defer l.t.done(c.MatterRef)
	return l.Ledger.MarkRun(ctx, c, outcome, msg)
}
