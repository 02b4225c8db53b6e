package rail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
}

// ErrSuperseded is the cause given to a build's context when a heartbeat
// finds its claim superseded.
var ErrSuperseded = errors.New("claim superseded")

// Worker runs builds: claim, read inputs, build while heartbeating, fenced
// commit. It holds no transaction and no connection during the build.
type Worker struct {
	Ledger  *Ledger
	Builder FrameBuilder
	ID      string // recorded on the claim and the run
	// Heartbeat interval; zero: a third of the lease. Negative: none.
	Heartbeat time.Duration
	// BeforeCommit, if set, runs after the build and before the commit, with
	// heartbeats already stopped (a fault-injection point: a stalled worker).
	BeforeCommit func(ctx context.Context, c Claim)
	Log          *slog.Logger
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
	out := Outcome{Claimed: true, Claim: c}
	log := w.log().With("firm_id", ref.FirmID, "matter_id", ref.MatterID, "token", c.Token, "target", c.Target)
	log.InfoContext(ctx, "claimed", "attempt", c.Attempt, "took_over_expired_lease", c.TookOverExpiry)

	frame, err := w.build(ctx, c, &out)
	out.Duration = time.Since(start)
	if errors.Is(err, ErrSuperseded) || errors.Is(err, ErrFenced) {
		out.Fenced = true
		_ = w.Ledger.MarkRun(context.WithoutCancel(ctx), c, "superseded", "heartbeat found the claim superseded")
		log.WarnContext(ctx, "superseded during build; not committing")
		return out, nil
	}
	if err != nil {
		fr, ferr := w.Ledger.Fail(context.WithoutCancel(ctx), c, err)
		if errors.Is(ferr, ErrFenced) {
			out.Fenced = true
			return out, nil
		}
		if ferr != nil {
			return out, fmt.Errorf("build failed (%v) and recording it failed: %w", err, ferr)
		}
		out.Failed, out.Quarantined = true, fr.Status == StatusQuarantined
		log.ErrorContext(ctx, "build failed", "err", err, "attempts", fr.Attempts, "status", fr.Status)
		return out, nil
	}
	if w.BeforeCommit != nil {
		w.BeforeCommit(ctx, c)
	}
	res, err := w.Ledger.Commit(ctx, c, frame)
	out.Duration = time.Since(start)
	switch {
	case errors.Is(err, ErrFenced):
		out.Fenced = true
		_ = w.Ledger.MarkRun(context.WithoutCancel(ctx), c, "fenced", "token stale at commit")
		log.WarnContext(ctx, "commit fenced: a newer claim owns the matter; nothing landed")
		return out, nil
	case err != nil:
		// Ambiguous: the commit may have landed before the error. Ask the
		// ledger rather than guess; never commit twice.
		landed, lerr := w.Ledger.FrameLanded(context.WithoutCancel(ctx), c)
		if lerr != nil || !landed {
			return out, err
		}
		out.Landed = true
		log.WarnContext(ctx, "commit reported an error but the frame landed", "err", err)
		return out, nil
	}
	out.Landed, out.FollowUpDue = true, res.FollowUpDue
	log.InfoContext(ctx, "frame landed", "follow_up_due", res.FollowUpDue,
		"model_invoked", out.ModelInvoked, "duration_ms", out.Duration.Milliseconds())
	return out, nil
}

// build reads inputs and runs the builder under heartbeats. When the inputs
// match the last landed frame's (same fingerprint and builder) the previous
// body is reused and the builder is not called.
func (w *Worker) build(ctx context.Context, c Claim, out *Outcome) (Frame, error) {
	in, err := LoadInputs(ctx, w.Ledger.Pool(), c.MatterRef)
	if err != nil {
		return Frame{}, err
	}
	fp := in.Fingerprint(w.Builder.Name())
	prev, found, err := w.Ledger.LatestFrame(ctx, nil, c.MatterRef)
	if err != nil {
		return Frame{}, err
	}
	if found && prev.Fingerprint == fp && prev.Builder == w.Builder.Name() {
		return Frame{Body: prev.Body, Fingerprint: fp, Builder: prev.Builder}, nil
	}

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
		return Frame{}, fmt.Errorf("build with %s: %w", w.Builder.Name(), err)
	}
	if !json.Valid(body) {
		return Frame{}, fmt.Errorf("build with %s: body is not valid JSON", w.Builder.Name())
	}
	return Frame{Body: body, Fingerprint: fp, Builder: w.Builder.Name(), ModelInvoked: true}, nil
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
	for _, d := range in.Documents {
		body.Documents = append(body.Documents, doc{d.ID.String(), d.Name, d.SHA256, len(d.Pages), d.Note})
	}
	return json.Marshal(body)
}
