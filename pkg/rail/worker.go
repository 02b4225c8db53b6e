package rail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// FrameBuilder turns a matter's inputs into a frame body (the Brief). It may
// take minutes (model calls); it runs outside any transaction and must
// honour ctx: the worker cancels it when its claim is superseded.
type FrameBuilder interface {
	Name() string
	Build(ctx context.Context, in Inputs) (json.RawMessage, error)
}

// Outcome is what one BuildOnce did.
type Outcome struct {
	Claimed      bool
	Claim        Claim
	Landed       bool
	Fenced       bool // the commit (or a heartbeat) found the token stale; nothing landed
	Failed       bool // the build failed and was recorded
	Quarantined  bool
	FollowUpDue  bool // demand arrived during the build: send one follow-up nudge
	ModelInvoked bool // false when the inputs matched the last landed frame
	Duration     time.Duration
	// Served: the demands the landed frame served, with their upload ->
	// current latency (empty unless Landed, and after an ambiguous commit).
	Served []ServedDemand
}

// ErrSuperseded is the cause given to a build's context when a heartbeat
// finds its claim superseded.
var ErrSuperseded = errors.New("claim superseded")

// Worker runs builds: claim, read inputs, build while heartbeating, fenced
// commit. It holds no transaction and no connection during the build.
type Worker struct {
	Ledger  Ledger
	Builder FrameBuilder
	ID      string // recorded on the claim and the run
	// Heartbeat interval; zero: a third of the lease. Negative: none.
	Heartbeat time.Duration
	// BeforeCommit, if set, runs after the build and before the commit, with
	// heartbeats already stopped (a fault-injection point: a stalled worker).
	BeforeCommit func(ctx context.Context, c Claim)
	// CommitTimeout bounds each statement that records the build's outcome
	// (commit, the frame-landed check after an ambiguous commit, Fail,
	// MarkRun). Those run on a context detached from the build's, so a
	// build that ends at its deadline still lands its frame or records its
	// failure. Zero: DefaultCommitTimeout.
	CommitTimeout time.Duration
	// TraceHeader, if set, is carried onto the frame.built fact of a frame
	// this worker lands (the X-Ray header of the nudge that started the
	// build; pkg/lambdafn sets it per invocation).
	TraceHeader string
	// OutcomeContext, if set, replaces OutcomeContext for this worker (a
	// seam for negative controls: a test that passes the build's own
	// context shows what a detached outcome context prevents).
	OutcomeContext func(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc)
	// AmbiguousRefusals is a seam for negative controls only, never set by
	// the rail: the worker skips CheckStorable and treats a commit the
	// database refused (ErrCommitRefused) like a lost connection, recording
	// no failure, as it did before it told the two apart (the row then
	// stays running until its lease expires, and each retry repeats the
	// build).
	AmbiguousRefusals bool
	Log               *slog.Logger
}

// DefaultCommitTimeout bounds each outcome statement of a build when
// Worker.CommitTimeout is zero. The statements are single round trips; the
// bound covers a row lock held by a stalled transaction and a slow proxy.
const DefaultCommitTimeout = 10 * time.Second

// OutcomeContext returns the context a build's outcome is recorded on: ctx's
// values (logger, trace) without its cancellation or deadline, bounded by
// timeout of its own. A build cancelled at its deadline, or by the Lambda
// runtime's budget, must not take its commit or its Fail down with it.
func OutcomeContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = DefaultCommitTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}

// outcomeContext is OutcomeContext with the worker's timeout and seam.
func (w *Worker) outcomeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.OutcomeContext != nil {
		return w.OutcomeContext(ctx, w.CommitTimeout)
	}
	return OutcomeContext(ctx, w.CommitTimeout)
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.New(slog.DiscardHandler)
}

// BuildOnce claims the matter's job and, if granted, builds and commits
// once. It returns Claimed=false when there was nothing to claim. A fenced
// commit is reported in Outcome.Fenced with a nil error: being fenced is the
// protocol working, not a fault.
func (w *Worker) BuildOnce(ctx context.Context, ref MatterRef) (Outcome, error) {
	start := time.Now()
	c, ok, err := w.Ledger.Claim(ctx, ref, w.ID)
	if err != nil || !ok {
		return Outcome{}, err
	}
	return w.serve(ctx, c, nil, w.TraceHeader, w.log(), start, w.commitOne, func() {})
}

// BatchItem is one nudge of a batch BuildBatch serves.
type BatchItem struct {
	Ref MatterRef
	// Ctx is the item's build context (its deadline, its trace); nil: the
	// batch's. The claim statement runs on the batch's context.
	Ctx context.Context
	// TraceHeader is carried onto the frame.built fact of the frame this
	// item lands (Worker.TraceHeader for a single build).
	TraceHeader string
	// Log, if set, replaces the worker's logger for this item's build.
	Log *slog.Logger
}

// BuildBatch serves a batch of nudges the way BuildOnce serves one: one
// claim statement for the whole batch (Ledger.ClaimBatch; Claim for a
// batch of one), one statement for the builds' reads (Ledger.LoadBuilds),
// then every claimed matter built concurrently, one goroutine per claim, each under
// its own heartbeat (every claim's lease starts when the batch is claimed,
// so none waits for a slot while its lease runs) and on its own item's
// context, and committed through the one commit path (Ledger.CommitGroup)
// as soon as its build finishes: the batch's commit goroutine takes every
// finished build waiting when no commit statement is in flight and lands
// them in one statement (a group commit; a build that finishes while a
// statement is in flight waits for that statement only, never on purpose
// for more builds). Each member is fenced by its own token in that
// statement: a stale member is reported fenced and its neighbours land; a
// group the database refuses (one member's frame) is committed again
// member by member, so a refusal fails only its own build. done, if set,
// is called once per item from the goroutine that served it, right after
// its outcome is recorded (an item whose claim found nothing:
// Claimed=false, at once); it must be safe for concurrent use. BuildBatch returns when every build has ended,
// with outcomes and errors by item index. An item naming a matter an
// earlier item of the batch names is not claimed again (Claimed=false).
//
// If the claim statement fails, err is that error and nothing was served
// (the claims may have committed: their leases recover them).
func (w *Worker) BuildBatch(ctx context.Context, items []BatchItem, done func(i int, out Outcome, err error)) (outs []Outcome, errs []error, err error) {
	start := time.Now()
	refs := make([]MatterRef, len(items))
	for i, it := range items {
		refs[i] = it.Ref
	}
	var claims []Claim
	if len(refs) == 1 {
		// A batch of one (a quiet queue): the single-row claim, cheaper
		// than the batch statement for one row and conditioned the same.
		c, ok, err := w.Ledger.Claim(ctx, refs[0], w.ID)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			claims = []Claim{c}
		}
	} else if claims, err = w.Ledger.ClaimBatch(ctx, refs, w.ID); err != nil {
		return nil, nil, err
	}
	// The builds' reads, one statement for the batch; if it fails (a claim
	// superseded already, a lost connection) each build reads its own.
	var loaded []Loaded
	if len(claims) > 1 {
		if loaded, err = w.Ledger.LoadBuilds(ctx, claims); err != nil {
			w.log().WarnContext(ctx, "batch read failed; each build reads its own", "claims", len(claims), "err", err)
			loaded = nil
		}
	}
	type won struct {
		c   Claim
		pre *Loaded
	}
	wins := make(map[MatterRef]won, len(claims))
	for i, c := range claims {
		wn := won{c: c}
		if loaded != nil {
			wn.pre = &loaded[i]
		}
		wins[c.MatterRef] = wn
	}
	outs, errs = make([]Outcome, len(items)), make([]error, len(items))
	commit := w.commitOne
	var g *groupCommit
	if len(wins) > 1 {
		g = w.startGroupCommit(len(wins))
		defer g.stop()
	}
	var wg sync.WaitGroup
	for i, it := range items {
		wn, ok := wins[it.Ref]
		if !ok {
			if done != nil {
				done(i, outs[i], nil)
			}
			continue
		}
		delete(wins, it.Ref) // a later item naming the same matter finds nothing
		ictx := it.Ctx
		if ictx == nil {
			ictx = ctx
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			log := it.Log
			if log == nil {
				log = w.log()
			}
			cf, ready := commit, func() {}
			if g != nil {
				ready = g.readyOnce()
				cf = func(ctx context.Context, c Claim, f Frame) (CommitResult, error) {
					return g.commit(ctx, c, f, ready)
				}
			}
			outs[i], errs[i] = w.serve(ictx, wn.c, wn.pre, it.TraceHeader, log, start, cf, ready)
			ready() // fenced, failed or superseded: it hands nothing
			if done != nil {
				done(i, outs[i], errs[i])
			}
		}()
	}
	wg.Wait()
	return outs, errs, nil
}

// commitFunc lands one finished build: alone (commitOne) or with the
// other builds of its batch that finish with it (groupCommit.commit).
type commitFunc func(ctx context.Context, c Claim, f Frame) (CommitResult, error)

// commitOne commits c's frame as a group of one, on its own detached,
// bounded outcome context.
func (w *Worker) commitOne(ctx context.Context, c Claim, f Frame) (CommitResult, error) {
	octx, cancel := w.outcomeContext(ctx)
	defer cancel()
	res, errs, err := w.Ledger.CommitGroup(octx, []FrameCommit{{Claim: c, Frame: f}})
	if err != nil {
		return CommitResult{}, err
	}
	return res[0], errs[0]
}

// groupCommit is a batch's commit goroutine: builds hand it their frames
// and wait; it takes every frame waiting, commits them in one statement
// (Ledger.CommitGroup) and answers each build with its own result.
type groupCommit struct {
	w    *Worker
	reqs chan *groupMember
	done chan struct{}
	// computing counts the batch's builds that are still computing without
	// a model call: they have not yet handed over a frame, called the
	// model, reached BeforeCommit or ended. Each that stops computing
	// sends one wake.
	computing atomic.Int64
	wake      chan struct{}
}

type groupMember struct {
	ctx   context.Context
	m     FrameCommit
	res   CommitResult
	err   error
	reply chan struct{}
}

func (w *Worker) startGroupCommit(n int) *groupCommit {
	g := &groupCommit{w: w, reqs: make(chan *groupMember, n), done: make(chan struct{}), wake: make(chan struct{}, n)}
	g.computing.Store(int64(n))
	go g.loop()
	return g
}

// stop ends the goroutine once every build has been answered.
func (g *groupCommit) stop() { close(g.reqs); <-g.done }

// readyOnce returns the function one build calls when it stops computing
// (any number of times; the first counts), from its own goroutine.
func (g *groupCommit) readyOnce() func() {
	done := false
	return func() {
		if !done {
			done = true
			g.computing.Add(-1)
			g.wake <- struct{}{} // never blocks: one wake a build
		}
	}
}

func (g *groupCommit) commit(ctx context.Context, c Claim, f Frame, ready func()) (CommitResult, error) {
	p := &groupMember{ctx: ctx, m: FrameCommit{Claim: c, Frame: f}, reply: make(chan struct{})}
	g.reqs <- p // never blocks: the channel holds every build of the batch
	ready()
	<-p.reply
	return p.res, p.err
}

func (g *groupCommit) loop() {
	defer close(g.done)
	for p := range g.reqs {
		group := []*groupMember{p}
		// The group waits for the builds still computing without a model
		// call (an unchanged matter's build, a build before its model
		// call: CPU time, or a read of its own), never for a model call,
		// never on a timer: without that the first build of a batch to
		// finish committed alone. Then one yield of the processor, so a
		// build finishing at this very instant joins.
	wait:
		for g.computing.Load() > 0 {
			select {
			case q, ok := <-g.reqs:
				if !ok {
					break wait
				}
				group = append(group, q)
			case <-g.wake:
			}
		}
		runtime.Gosched()
		group = g.takeWaiting(group)
		g.land(group)
	}
}

// takeWaiting appends every frame already handed over; it waits for none.
func (g *groupCommit) takeWaiting(group []*groupMember) []*groupMember {
	for {
		select {
		case q, ok := <-g.reqs:
			if !ok {
				return group
			}
			group = append(group, q)
		default:
			return group
		}
	}
}

// land commits group in one statement and answers each member. The
// statement runs on the first member's outcome context (detached from its
// build, bounded by CommitTimeout). A group the database refused is
// committed again member by member: one member's refused frame fails
// that member only.
func (g *groupCommit) land(group []*groupMember) {
	ms := make([]FrameCommit, len(group))
	for i, p := range group {
		ms[i] = p.m
	}
	octx, cancel := g.w.outcomeContext(group[0].ctx)
	res, errs, err := g.w.Ledger.CommitGroup(octx, ms)
	cancel()
	if err != nil && errors.Is(err, ErrCommitRefused) && len(group) > 1 {
		for _, p := range group {
			g.land([]*groupMember{p})
		}
		return
	}
	for i, p := range group {
		if err != nil {
			p.err = err
		} else {
			p.res, p.err = res[i], errs[i]
		}
		close(p.reply)
	}
}

// serve builds and commits claim c once (BuildOnce after its claim), from
// pre when its reads were made already (BuildBatch), landing the frame
// through commit.
//
// ready is called when the build stops computing on its own (before a
// model call, before BeforeCommit); commit calls it too (the group commit's
// wait, groupCommit.loop).
func (w *Worker) serve(ctx context.Context, c Claim, pre *Loaded, traceHeader string, log *slog.Logger, start time.Time, commit commitFunc, ready func()) (Outcome, error) {
	ref := c.MatterRef
	out := Outcome{Claimed: true, Claim: c}
	log = log.With("firm_id", ref.FirmID, "matter_id", ref.MatterID, "token", c.Token, "target", c.Target)
	log.InfoContext(ctx, "claimed", "attempt", c.Attempt, "took_over_expired_lease", c.TookOverExpiry)

	frame, err := w.build(ctx, c, pre, &out, ready)
	out.Duration = time.Since(start)
	if err != nil {
		ready() // no frame: the group does not wait for its outcome statement
	}
	// From here on, the build's context may be cancelled or past its
	// deadline (a build that ended at the deadline): every outcome statement
	// runs on its own detached, bounded context.
	if errors.Is(err, ErrSuperseded) || errors.Is(err, ErrFenced) {
		out.Fenced = true
		w.markRun(ctx, c, "superseded", "heartbeat found the claim superseded")
		log.WarnContext(ctx, "superseded during build; not committing")
		return out, nil
	}
	if err != nil {
		return w.fail(ctx, c, out, err, "build failed")
	}
	if w.BeforeCommit != nil {
		ready() // a hook may wait for anything, another build's commit too
		w.BeforeCommit(ctx, c)
	}
	frame.TraceHeader = traceHeader
	if len(frame.TraceHeader) > MaxTraceHeaderLen {
		frame.TraceHeader = "" // the outbox's CHECK would refuse the commit; a trace is not worth a frame
	}
	res, err := commit(ctx, c, frame)
	out.Duration = time.Since(start)
	switch {
	case errors.Is(err, ErrFenced):
		out.Fenced = true
		w.markRun(ctx, c, "fenced", "token stale at commit")
		log.WarnContext(ctx, "commit fenced: a newer claim owns the matter; nothing landed")
		return out, nil
	case errors.Is(err, ErrCommitRefused) && !w.AmbiguousRefusals:
		// The database answered with an error: the statement rolled back and
		// nothing landed. A failure like any other, with its backoff.
		return w.fail(ctx, c, out, err, "commit refused by the database")
	case err != nil:
		// Ambiguous (the connection was lost, the client timed out): the
		// commit may have landed before the error. Ask the ledger rather
		// than guess; never commit twice.
		lctx, cancel := w.outcomeContext(ctx)
		landed, lerr := w.Ledger.FrameLanded(lctx, c)
		cancel()
		if lerr != nil || !landed {
			return out, err
		}
		out.Landed = true
		log.WarnContext(ctx, "commit reported an error but the frame landed", "err", err)
		return out, nil
	}
	out.Landed, out.FollowUpDue, out.Served = true, res.FollowUpDue, res.Served
	log.InfoContext(ctx, "frame landed", "follow_up_due", res.FollowUpDue,
		"model_invoked", out.ModelInvoked, "duration_ms", out.Duration.Milliseconds())
	return out, nil
}

// fail records a failed attempt (the build's error, or the commit's the
// database refused) on a detached context: the row goes back to idle with
// its backoff, or to quarantined.
//
// The cause is recorded and logged as SafeText: ids, lengths and classes,
// never a document's or the model's text (safetext.go).
func (w *Worker) fail(ctx context.Context, c Claim, out Outcome, cause error, what string) (Outcome, error) {
	octx, cancel := w.outcomeContext(ctx)
	fr, ferr := w.Ledger.Fail(octx, c, Safe(cause))
	cancel()
	if errors.Is(ferr, ErrFenced) {
		out.Fenced = true
		return out, nil
	}
	if ferr != nil {
		return out, fmt.Errorf("%s (%s) and recording it failed: %w", what, SafeText(cause), ferr)
	}
	out.Failed, out.Quarantined = true, fr.Status == StatusQuarantined
	w.log().ErrorContext(ctx, what, "firm_id", c.FirmID, "matter_id", c.MatterID, "token", c.Token,
		"target", c.Target, "err", SafeText(cause), "attempts", fr.Attempts, "status", fr.Status)
	return out, nil
}

// markRun records a run's outcome on a detached context; best effort (the
// job row is the truth), so a failure is logged, not returned.
func (w *Worker) markRun(ctx context.Context, c Claim, outcome, msg string) {
	octx, cancel := w.outcomeContext(ctx)
	defer cancel()
	if err := w.Ledger.MarkRun(octx, c, outcome, msg); err != nil {
		w.log().WarnContext(ctx, "run outcome not recorded", "outcome", outcome, "err", err)
	}
}

// build reads inputs and the last frame (one statement, LoadBuild; or
// takes them from pre) and runs the builder under heartbeats. When the inputs
// match the last landed frame's (same fingerprint and builder) the previous
// body is reused and the builder is not called.
func (w *Worker) build(ctx context.Context, c Claim, pre *Loaded, out *Outcome, ready func()) (Frame, error) {
	if pre == nil {
		in, prev, found, err := w.Ledger.LoadBuild(ctx, c)
		if err != nil {
			return Frame{}, err
		}
		pre = &Loaded{Inputs: in, Prev: prev, Found: found}
	}
	in, prev, found := pre.Inputs, pre.Prev, pre.Found
	id := IdentityOf(w.Builder)
	fp := in.FingerprintFor(id)
	if found && prev.Fingerprint == fp && prev.Identity == id {
		return Frame{Body: prev.Body, Fingerprint: fp, Builder: prev.Builder, Identity: id}, nil
	}

	ready() // a model call: the group commit does not wait for it
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := w.startHeartbeat(bctx, c, cancel)
	body, err := w.Builder.Build(bctx, in)
	stop()
	if cause := context.Cause(bctx); errors.Is(cause, ErrSuperseded) {
		return Frame{}, ErrSuperseded
	}
	out.ModelInvoked = true
	if err != nil {
		return Frame{}, &BuildError{Builder: w.Builder.Name(), Err: err}
	}
	if !json.Valid(body) {
		return Frame{}, fmt.Errorf("build with %s: body is not valid JSON", w.Builder.Name())
	}
	if !w.AmbiguousRefusals {
		// Valid JSON jsonb would still refuse (a \u0000, a lone surrogate,
		// a number beyond numeric) fails the build here, not the commit.
		if err := CheckStorable(body); err != nil {
			return Frame{}, fmt.Errorf("build with %s: %w", w.Builder.Name(), err)
		}
	}
	return Frame{Body: body, Fingerprint: fp, Builder: id.Name, Identity: id, ModelInvoked: true}, nil
}

// startHeartbeat refreshes the lease until stop is called. When a heartbeat
// finds the claim superseded it cancels the build with ErrSuperseded.
func (w *Worker) startHeartbeat(ctx context.Context, c Claim, cancel context.CancelCauseFunc) (stop func()) {
	every := w.Heartbeat
	if every == 0 {
		every = w.Ledger.Config().Lease / 3
	}
	if every < 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				err := w.Ledger.Heartbeat(ctx, c)
				if errors.Is(err, ErrFenced) {
					cancel(ErrSuperseded)
					return
				}
				if err != nil {
					w.log().WarnContext(ctx, "heartbeat failed; lease not refreshed", "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// DigestBuilder is the placeholder Brief: an honest digest of the matter's
// documents (names, content hashes, page counts), no model, no invention.
// It reads the documents one at a time (in id order; the digest lists them
// in that order) and keeps only their metadata.
type DigestBuilder struct{}

func (DigestBuilder) Name() string { return "digest/v1" }

func (DigestBuilder) Build(ctx context.Context, in Inputs) (json.RawMessage, error) {
	type doc struct {
		DocumentID string `json:"document_id"`
		Name       string `json:"name"`
		SHA256     string `json:"sha256"`
		Pages      int    `json:"pages"`
		Note       string `json:"note,omitempty"`
	}
	body := struct {
		Schema    string `json:"schema"`
		FirmID    string `json:"firm_id"`
		MatterID  string `json:"matter_id"`
		Title     string `json:"title"`
		Documents []doc  `json:"documents"`
	}{Schema: "digest/v1", FirmID: in.Ref.FirmID.String(), MatterID: in.Ref.MatterID.String(), Title: in.Title, Documents: []doc{}}
	for d, err := range in.Documents(ctx) {
		if err != nil {
			return nil, err
		}
		body.Documents = append(body.Documents, doc{d.ID.String(), d.Name, d.SHA256, len(d.Pages), d.Note})
	}
	return json.Marshal(body)
}
