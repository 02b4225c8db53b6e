package lambdafn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// together is a Brief builder whose model call returns only once `want`
// builds are in it at the same time (or fails after a bound): a batch
// built one record at a time never gets there. A matter whose title is
// "fails" fails its build.
type together struct {
	want    int
	mu      sync.Mutex
	in      int
	all     chan struct{}
	started chan time.Time // each build's deadline
}

func newTogether(want int) *together {
	return &together{want: want, all: make(chan struct{}), started: make(chan time.Time, 64)}
}

func (*together) Name() string { return "together/v1" }

func (b *together) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	dl, _ := ctx.Deadline()
	b.started <- dl
	b.mu.Lock()
	b.in++
	if b.in == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(5 * time.Second):
		return nil, errors.New("the batch's other builds never ran alongside this one")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if in.Title == "fails" {
		return nil, errors.New("model unavailable")
	}
	return json.Marshal(map[string]string{"title": in.Title})
}

// batchRig is the builder handler over a real database, handed SQS
// batches the way Lambda hands them.
type batchRig struct {
	t      *testing.T
	db     *railtest.DB
	ledger *postgres.Ledger
	nudges *nudgeLog
	logs   *syncBuffer
}

func newBatchRig(t *testing.T) *batchRig {
	t.Helper()
	db := railtest.NewDB(t)
	return &batchRig{t: t, db: db, ledger: postgres.NewLedger(db.Pool, rail.Config{}), nudges: &nudgeLog{}, logs: &syncBuffer{}}
}

func (r *batchRig) handler(fb rail.FrameBuilder) *lambdafn.BuilderHandler {
	return &lambdafn.BuilderHandler{
		Worker:   rail.Worker{Ledger: r.ledger, Builder: fb, Heartbeat: -1, CommitTimeout: 5 * time.Second},
		Nudger:   r.nudges,
		Reserve:  2 * time.Second,
		MinBuild: 200 * time.Millisecond,
		Metrics:  emf.New(&syncBuffer{}),
		Log:      slog.New(slog.NewJSONHandler(r.logs, nil)),
	}
}

func (r *batchRig) matter(title string, demand bool) rail.MatterRef {
	r.t.Helper()
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(context.Background(), r.db.Pool, ref, title); err != nil {
		r.t.Fatal(err)
	}
	if demand {
		if _, err := r.ledger.Demand(context.Background(), ref, 1); err != nil {
			r.t.Fatal(err)
		}
	}
	return ref
}

func nudgeRecord(id string, ref rail.MatterRef, reason string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		Body: `{"v":1,"firm_id":"` + ref.FirmID.String() + `","matter_id":"` + ref.MatterID.String() + `","reason":"` + reason + `"}`}
}

func (r *batchRig) invoke(h *lambdafn.BuilderHandler, left time.Duration, recs ...events.SQSMessage) (events.SQSEventResponse, time.Time) {
	r.t.Helper()
	dl := time.Now().Add(left)
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: recs})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp, dl
}

func (r *batchRig) job(ref rail.MatterRef) postgres.JobRow {
	r.t.Helper()
	j, err := r.ledger.Job(context.Background(), ref)
	if err != nil {
		r.t.Fatal(err)
	}
	return j
}

func (r *batchRig) frames(ref rail.MatterRef) int {
	r.t.Helper()
	var n int
	if err := r.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM ops.matter_frames
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID).Scan(&n); err != nil {
		r.t.Fatal(err)
	}
	return n
}

func failed(resp events.SQSEventResponse) map[string]bool {
	m := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		m[f.ItemIdentifier] = true
	}
	return m
}

// One invocation serves a whole batch: one claim statement claims every
// matter with work (all claims of one statement: one worker id, leases
// starting together), the builds run at the same time (the builder returns
// only once all three are in it), each lands or fails on its own, and the
// response retries only what was not handled: the malformed record. A
// nudge whose matter has nothing to do, and a second nudge for a matter
// the batch already builds, are acknowledged; a failed build is recorded
// (backoff, a retry nudge) and acknowledged; demand arriving during a
// build gets its follow-up. Every build's deadline is the invocation's
// less the reserve.
func TestBuilderServesItsSQSBatchConcurrently(t *testing.T) {
	r := newBatchRig(t)
	a, b, c := r.matter("Harlow v. Penmark", true), r.matter("fails", true), r.matter("Ostrander v. Vale", true)
	idle := r.matter("nothing to do", false)
	fb := newTogether(3)
	h := r.handler(fb)
	h.Worker.BeforeCommit = func(_ context.Context, cl rail.Claim) {
		if cl.MatterRef == c { // demand during c's build: one follow-up
			if _, err := r.ledger.Demand(context.Background(), c, 1); err != nil {
				t.Error(err)
			}
		}
	}
	resp, dl := r.invoke(h, h.Reserve+8*time.Second,
		nudgeRecord("a", a, "demand"), nudgeRecord("b", b, "demand"), nudgeRecord("a-again", a, "sweep"),
		nudgeRecord("idle", idle, "demand"), events.SQSMessage{MessageId: "junk", Body: "{not json"},
		nudgeRecord("c", c, "demand"))
	if f := failed(resp); len(f) != 1 || !f["junk"] {
		t.Fatalf("batch item failures %v; want only the malformed record\n%s", f, r.logs)
	}
	close(fb.started)
	var builds int
	for bdl := range fb.started {
		builds++
		if bdl.After(dl.Add(-h.Reserve)) {
			t.Errorf("a build may run until %s before the invocation's deadline; want at least the reserve %s", dl.Sub(bdl), h.Reserve)
		}
	}
	if builds != 3 {
		t.Fatalf("%d builds; want 3 (a, b, c once each)", builds)
	}
	if r.frames(a) != 1 || r.frames(c) != 1 || r.frames(b) != 0 || r.frames(idle) != 0 {
		t.Fatalf("frames a %d b %d c %d idle %d; want a and c one each", r.frames(a), r.frames(b), r.frames(c), r.frames(idle))
	}
	if j := r.job(b); j.RunStatus != rail.StatusIdle || j.Attempts != 1 || j.NotBefore == nil {
		t.Fatalf("failed build's row %+v; want idle, backing off", j)
	}
	var workers, claims int
	var spread float64
	if err := r.db.Pool.QueryRow(context.Background(), `SELECT count(DISTINCT worker_id), count(*),
            extract(epoch FROM max(claimed_at) - min(claimed_at))::float8
        FROM ops.matter_frame_runs`).Scan(&workers, &claims, &spread); err != nil {
		t.Fatal(err)
	}
	if workers != 1 || claims != 3 || spread > 1 {
		t.Fatalf("%d runs by %d workers, started %.3fs apart; want 3 claims of one statement", claims, workers, spread)
	}
	r.nudges.mu.Lock()
	defer r.nudges.mu.Unlock()
	var retries, followUps int
	for _, n := range r.nudges.sent {
		switch {
		case n.Reason == rail.ReasonRetry && n.Ref() == b:
			retries++
		case n.Reason == rail.ReasonFollowUp && n.Ref() == c:
			followUps++
		default:
			t.Errorf("unexpected nudge %+v", n)
		}
	}
	if retries != 1 || followUps != 1 {
		t.Fatalf("%d retry nudges for b, %d follow-ups for c; want one each", retries, followUps)
	}
}

// A batch that arrives with too little of the invocation left claims
// nothing and hands every nudge back.
func TestBuilderBatchWithoutTimeClaimsNothing(t *testing.T) {
	r := newBatchRig(t)
	a, b := r.matter("Harlow v. Penmark", true), r.matter("Ostrander v. Vale", true)
	h := r.handler(newTogether(2))
	resp, _ := r.invoke(h, h.Reserve+h.MinBuild/2, nudgeRecord("a", a, "demand"), nudgeRecord("b", b, "demand"))
	if f := failed(resp); len(f) != 2 {
		t.Fatalf("failures %v; want both handed back", f)
	}
	for _, ref := range []rail.MatterRef{a, b} {
		if j := r.job(ref); j.RunStatus != rail.StatusIdle || j.ClaimedGeneration != 0 {
			t.Fatalf("row %+v; want nothing claimed", j)
		}
	}
}

// blocked is a Brief builder that never returns until released: an
// invocation killed mid-batch (no heartbeat, no commit) until then.
type blocked struct {
	release chan struct{}
	in      chan struct{}
}

func (blocked) Name() string { return "blocked/v1" }

func (b blocked) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	b.in <- struct{}{}
	<-b.release
	return json.Marshal(map[string]string{"zombie": in.Title})
}

// An invocation killed mid-batch leaves every claim of its batch running:
// the re-delivered nudges find live leases and are acknowledged without a
// build; once the leases expire the sweeper re-nudges every matter and the
// next batch takes the claims over and lands them. The killed invocation's
// builds, should they ever finish, are fenced: nothing lands twice.
func TestBuilderBatchKilledMidBatchIsRecoveredAfterItsLeases(t *testing.T) {
	r := newBatchRig(t)
	refs := []rail.MatterRef{r.matter("one", true), r.matter("two", true), r.matter("three", true)}
	recs := make([]events.SQSMessage, len(refs))
	for i, ref := range refs {
		recs[i] = nudgeRecord(fmt.Sprint("m", i), ref, "demand")
	}
	zombie := blocked{release: make(chan struct{}), in: make(chan struct{}, len(refs))}
	killed := r.handler(zombie)
	killedDone := make(chan events.SQSEventResponse, 1)
	go func() {
		resp, _ := r.invoke(killed, time.Hour, recs...)
		killedDone <- resp
	}()
	for range refs {
		select {
		case <-zombie.in:
		case <-time.After(10 * time.Second):
			t.Fatal("the first invocation's builds never started")
		}
	}

	// Redelivered (the visibility timeout passed): live leases, nothing to do.
	built := newTogether(len(refs))
	next := r.handler(built)
	resp, _ := r.invoke(next, 30*time.Second, recs...)
	if len(resp.BatchItemFailures) != 0 || len(built.started) != 0 {
		t.Fatalf("redelivery: failures %v, %d builds; want every nudge acknowledged, none built", resp.BatchItemFailures, len(built.started))
	}
	for _, ref := range refs {
		if j := r.job(ref); j.RunStatus != rail.StatusRunning || j.ClaimedGeneration != 1 {
			t.Fatalf("row %+v; want the killed invocation's claim still running", j)
		}
	}

	// The leases expire (time travel on the rows; the clock is the database's).
	if _, err := r.db.Pool.Exec(context.Background(), `UPDATE ops.matter_frame_jobs SET
        claimed_at = claimed_at - make_interval(secs => lease_seconds + 1),
        last_demanded_at = last_demanded_at - interval '1 hour', demand_since = demand_since - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	cfg, err := lambdafn.LoadConfig(lambdafn.Sweeper, func(k string) string {
		return map[string]string{lambdafn.EnvBuildQueueURL: "unused: the nudger is given"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sweeps := &nudgeLog{}
	sw := lambdafn.NewSweeper(cfg, lambdafn.Deps{Pool: r.db.Pool, Nudger: sweeps, Metrics: emf.New(&syncBuffer{}),
		Log: slog.New(slog.DiscardHandler)})
	if _, err := sw.Handle(context.Background(), lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: lambdafn.Sweeper}); err != nil {
		t.Fatal(err)
	}
	if len(sweeps.sent) != len(refs) {
		t.Fatalf("the sweeper re-nudged %d matters; want %d", len(sweeps.sent), len(refs))
	}
	renudged := make([]events.SQSMessage, len(sweeps.sent))
	for i, n := range sweeps.sent {
		renudged[i] = nudgeRecord(fmt.Sprint("s", i), n.Ref(), n.Reason)
	}
	resp, _ = r.invoke(next, 30*time.Second, renudged...)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("after the sweep: failures %v\n%s", resp.BatchItemFailures, r.logs)
	}
	for _, ref := range refs {
		if j := r.job(ref); j.RunStatus != rail.StatusIdle || !j.Current || j.ClaimedGeneration != 2 || r.frames(ref) != 1 {
			t.Fatalf("row %+v, %d frames; want the take-over's frame landed", j, r.frames(ref))
		}
	}

	// The killed invocation comes back to life: fenced, acknowledged.
	close(zombie.release)
	resp = <-killedDone
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("zombie batch: failures %v; a fenced build is acknowledged", resp.BatchItemFailures)
	}
	for _, ref := range refs {
		if r.frames(ref) != 1 {
			t.Fatalf("%d frames; the zombie's commit must be fenced", r.frames(ref))
		}
	}
}
