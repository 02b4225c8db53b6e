package lambdafn_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
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

// atDeadline is a Brief builder whose model call returns exactly when the
// build's context ends: a build that finished at its deadline.
type atDeadline struct{ started chan<- time.Time }

func (atDeadline) Name() string { return "at-deadline/v1" }

func (b atDeadline) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	if dl, ok := ctx.Deadline(); ok && b.started != nil {
		b.started <- dl
	}
	<-ctx.Done()
	return json.RawMessage(`{"finished":"at the build deadline"}`), nil
}

// deadlineRig is the builder handler alone over a real database, invoked
// the way Lambda invokes it, with a chosen invocation deadline.
type deadlineRig struct {
	t    *testing.T
	db   *railtest.DB
	ref  rail.MatterRef
	logs *syncBuffer
	h    *lambdafn.BuilderHandler
}

func newDeadlineRig(t *testing.T, fb rail.FrameBuilder) *deadlineRig {
	t.Helper()
	db := railtest.NewDB(t)
	ctx := context.Background()
	r := &deadlineRig{t: t, db: db, ref: rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}, logs: &syncBuffer{}}
	if _, err := postgres.AddMatter(ctx, db.Pool, r.ref, "Harlow Logistics v. Penmark Freight"); err != nil {
		t.Fatal(err)
	}
	ledger := postgres.NewLedger(db.Pool, rail.Config{})
	if _, err := ledger.Demand(ctx, r.ref, 1); err != nil {
		t.Fatal(err)
	}
	r.h = &lambdafn.BuilderHandler{
		Worker:   rail.Worker{Ledger: ledger, Builder: fb, Heartbeat: -1, CommitTimeout: 5 * time.Second},
		Reserve:  2 * time.Second,
		MinBuild: 200 * time.Millisecond,
		Metrics:  emf.New(&syncBuffer{}),
		Log:      slog.New(slog.NewJSONHandler(r.logs, nil)),
	}
	return r
}

// invoke hands the handler one nudge with left until the invocation's
// deadline, which it returns.
func (r *deadlineRig) invoke(left time.Duration) (events.SQSEventResponse, time.Time) {
	r.t.Helper()
	return r.invokeFor("demand", left)
}

// invokeFor is invoke with the nudge's reason.
func (r *deadlineRig) invokeFor(reason string, left time.Duration) (events.SQSEventResponse, time.Time) {
	r.t.Helper()
	body := `{"v":1,"firm_id":"` + r.ref.FirmID.String() + `","matter_id":"` + r.ref.MatterID.String() + `","reason":"` + reason + `"}`
	dl := time.Now().Add(left)
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	resp, err := r.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: body,
		Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp, dl
}

func (r *deadlineRig) job() postgres.JobRow {
	r.t.Helper()
	j, err := postgres.NewLedger(r.db.Pool, rail.Config{}).Job(context.Background(), r.ref)
	if err != nil {
		r.t.Fatal(err)
	}
	return j
}

// The handler ends the build a reserve before the invocation's deadline,
// and a build that runs right up to that deadline still lands its frame
// (and its frame.built fact). The control records the outcome on the
// build's context, as before the fix: the commit is cancelled, the nudge
// is reported for retry and the row stays running until its lease expires.
func TestBuilderBuildEndingAtItsDeadlineLands(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "detached outcome"
		if control {
			name = "control: outcome on the build context"
		}
		t.Run(name, func(t *testing.T) {
			started := make(chan time.Time, 1)
			r := newDeadlineRig(t, atDeadline{started: started})
			if control {
				r.h.Worker.OutcomeContext = func(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
					return ctx, func() {}
				}
			}
			resp, invocationDL := r.invoke(r.h.Reserve + 4*time.Second) // room for the claim on a loaded machine
			// The build's deadline leaves the reserve for the outcome.
			if buildDL := <-started; buildDL.After(invocationDL.Add(-r.h.Reserve)) {
				t.Fatalf("the build may run until %s before the invocation's deadline; want at least the reserve %s",
					invocationDL.Sub(buildDL), r.h.Reserve)
			}
			j := r.job()
			var facts int
			if err := r.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM ops.domain_event_outbox
                WHERE matter_id = $1 AND event_name = 'frame.built'`, r.ref.MatterID).Scan(&facts); err != nil {
				t.Fatal(err)
			}
			if control {
				if len(resp.BatchItemFailures) != 1 || j.RunStatus != rail.StatusRunning || j.BuiltGeneration != 0 || facts != 0 {
					t.Fatalf("control: want the old behaviour (row left running, nothing landed): %+v row %+v facts %d", resp, j, facts)
				}
				return
			}
			if len(resp.BatchItemFailures) != 0 || j.RunStatus != rail.StatusIdle || !j.Current || facts != 1 {
				t.Fatalf("build at its deadline: %+v row %+v frame.built facts %d\n%s", resp, j, facts, r.logs)
			}
		})
	}
}

// With less than the reserve plus the least build time left, the handler
// claims nothing and hands the nudge back for redelivery.
func TestBuilderRefusesToStartWithoutTimeForTheOutcome(t *testing.T) {
	started := make(chan time.Time, 1)
	r := newDeadlineRig(t, atDeadline{started: started})
	resp, _ := r.invoke(r.h.Reserve) // less than Reserve + MinBuild
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Fatalf("the nudge was not handed back: %+v", resp)
	}
	if len(started) != 0 {
		t.Fatal("a build started")
	}
	j := r.job()
	if j.ClaimedGeneration != 0 || j.RunStatus != rail.StatusIdle || j.RequestedGeneration != 1 {
		t.Fatalf("the refused nudge touched the row: %+v", j)
	}
	if !strings.Contains(r.logs.String(), lambdafn.ErrNoTimeToBuild.Error()) || !strings.Contains(r.logs.String(), `"level":"WARN"`) {
		t.Fatalf("refusal not logged as a warning:\n%s", r.logs)
	}
	// With the time there, the same nudge builds.
	if resp, _ := r.invoke(r.h.Reserve + time.Second); len(resp.BatchItemFailures) != 0 || !r.job().Current {
		t.Fatalf("redelivered nudge: %+v %+v", resp, r.job())
	}
}
