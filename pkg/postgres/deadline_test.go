package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// expiringContext is a build context whose deadline passes when the test
// says so (expire), not after a wall-clock time: the claim and the input
// read before it take however long the machine needs, and the deadline
// still falls exactly at the end of the build. Err reports
// context.DeadlineExceeded, as a real deadline does.
type expiringContext struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiringContext(parent context.Context) *expiringContext {
	return &expiringContext{Context: parent, done: make(chan struct{})}
}

func (c *expiringContext) expire()               { c.once.Do(func() { close(c.done) }) }
func (c *expiringContext) Done() <-chan struct{} { return c.done }
func (c *expiringContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// deadlineBuilder finishes exactly at its context's deadline: it lets the
// deadline pass, waits for the context to end, then returns a body (a build
// whose model call came back as the time ran out) or the context's error
// (one that did not).
type deadlineBuilder struct {
	fail   bool
	expire func()
}

func (deadlineBuilder) Name() string { return "deadline/v1" }

func (d deadlineBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	d.expire()
	<-ctx.Done()
	if d.fail {
		return nil, ctx.Err()
	}
	return json.RawMessage(`{"finished":"at the deadline"}`), nil
}

// buildContextForOutcome is the behaviour before the fix: the outcome
// statements run on the build's own context.
func buildContextForOutcome(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
	return ctx, func() {}
}

// A build that ends at its deadline still records its outcome: the frame
// lands, or the failure is recorded with backoff. The negative controls run
// the same builds with the outcome on the build's context, which leaves the
// row running (until the lease expires) with nothing landed or recorded.
func TestBuildEndingAtDeadlineRecordsOutcome(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     bool
		onBuild  bool // negative control
		wantRow  string
		wantRuns string
	}{
		{"lands", false, false, rail.StatusIdle, "landed"},
		{"fails", true, false, rail.StatusIdle, "failed"},
		{"lands/control: commit on the build context", false, true, rail.StatusRunning, "claimed"},
		{"fails/control: Fail on the build context", true, true, rail.StatusRunning, "claimed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, rail.Config{BackoffBase: time.Hour})
			b.demand(t)
			ctx := newExpiringContext(b.ctx)
			defer ctx.expire()
			w := &rail.Worker{Ledger: b.ledger, Builder: deadlineBuilder{fail: tc.fail, expire: ctx.expire}, ID: "w", Heartbeat: -1,
				CommitTimeout: time.Minute}
			if tc.onBuild {
				w.OutcomeContext = buildContextForOutcome
			}
			out, err := w.BuildOnce(ctx, b.ref)
			j := b.job(t)
			runs, rerr := b.ledger.Runs(b.ctx, b.ref, 0)
			if rerr != nil || len(runs) != 1 {
				t.Fatalf("runs: %+v %v", runs, rerr)
			}
			if j.RunStatus != tc.wantRow || runs[0].Outcome != tc.wantRuns {
				t.Fatalf("row %s, run %s (outcome %+v, err %v); want row %s, run %s",
					j.RunStatus, runs[0].Outcome, out, err, tc.wantRow, tc.wantRuns)
			}
			switch {
			case tc.onBuild:
				// The old behaviour: an error, nothing recorded, the row held.
				if err == nil || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("control: err %v, want the build's deadline", err)
				}
				if len(b.frames(t)) != 0 || j.NotBefore != nil {
					t.Fatalf("control: a frame or a backoff was recorded: %+v", j)
				}
				// Let the lease recover it so the invariant check sees a
				// consistent, settled row.
				b.expireLease(t)
				c := b.mustClaim(t, "recover")
				if _, err := b.ledger.Commit(b.ctx, c, frameOf("recovered")); err != nil {
					t.Fatal(err)
				}
			case tc.fail:
				if err != nil || !out.Failed || j.NotBefore == nil || !j.RebuildNeeded || j.LastError == "" {
					t.Fatalf("failure at the deadline not recorded: %+v %v %+v", out, err, j)
				}
			default:
				if err != nil || !out.Landed || !j.Current || len(b.frames(t)) != 1 {
					t.Fatalf("frame at the deadline did not land: %+v %v %+v", out, err, j)
				}
			}
			checkInvariants(t, b.pool)
		})
	}
}
