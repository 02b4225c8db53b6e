package lambdafn_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// failing is a Brief builder whose model call fails.
type failing struct{}

func (failing) Name() string { return "failing/v1" }

func (failing) Build(context.Context, rail.Inputs) (json.RawMessage, error) {
	return nil, errors.New("model unavailable")
}

type sentNudge struct {
	rail.Nudge
	delay time.Duration
}

type nudgeLog struct {
	mu   sync.Mutex
	sent []sentNudge
}

func (l *nudgeLog) Nudge(_ context.Context, ns []rail.Nudge, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range ns {
		l.sent = append(l.sent, sentNudge{n, d})
	}
	return nil
}

// Issue 18, defect 8: a failed build waited for the sweeper (its grace,
// keyed on claimed_at: two to three minutes), not for its 5 s backoff,
// since nothing nudged the matter when the backoff ended. The builder
// nudges it with the backoff as the delay; at the end of the backoff (time
// travel on the row) that nudge claims the next attempt. The control
// (Reverts.NoRetryNudge) sends nothing.
func TestBuilderNudgesAFailedBuildForTheEndOfItsBackoff(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "fixed"
		if control {
			name = "control: no retry nudge"
		}
		t.Run(name, func(t *testing.T) {
			r := newDeadlineRig(t, failing{})
			nudges := &nudgeLog{}
			r.h.Nudger, r.h.Reverts.NoRetryNudge = nudges, control
			if resp, _ := r.invoke(time.Minute); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("a recorded failure is acknowledged: %+v", resp)
			}
			j := r.job()
			if j.RunStatus != rail.StatusIdle || j.Attempts != 1 || j.NotBefore == nil {
				t.Fatalf("row after the failure: %+v", j)
			}
			if control {
				if len(nudges.sent) != 0 {
					t.Fatalf("control: want the old behaviour (no nudge): %+v", nudges.sent)
				}
				return
			}
			want := rail.Config{}.Backoff(1)
			if len(nudges.sent) != 1 || nudges.sent[0].Reason != rail.ReasonRetry || nudges.sent[0].delay != want ||
				nudges.sent[0].Ref() != r.ref {
				t.Fatalf("nudges %+v: want one retry nudge delayed by the backoff %s", nudges.sent, want)
			}
			// The nudge arrives when the backoff is over: it claims attempt 2.
			if _, err := r.db.Pool.Exec(context.Background(), `UPDATE ops.matter_frame_jobs
                SET not_before = not_before - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
				r.ref.FirmID, r.ref.MatterID, want.Seconds()); err != nil {
				t.Fatal(err)
			}
			r.invoke(time.Minute)
			if j := r.job(); j.Attempts != 2 || j.ClaimedGeneration != 2 {
				t.Fatalf("row after the retry nudge: %+v: want attempt 2 claimed", j)
			}
		})
	}
}

// A failed backfill build gets no retry nudge from the builder: its nudger
// is the live build queue's, and backfill work never goes there (issue 18,
// defect 4; the promise simulation found the retry nudge of a failed
// backfill build on the live queue after defect 8's fix). The sweeper
// re-nudges the demand onto the backfill queue once its backoff and grace
// are over.
func TestBuilderSendsNoLiveRetryNudgeForAFailedBackfillBuild(t *testing.T) {
	r := newDeadlineRig(t, failing{})
	nudges := &nudgeLog{}
	r.h.Nudger = nudges
	if resp, _ := r.invokeFor(rail.ReasonBackfill, time.Minute); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a recorded failure is acknowledged: %+v", resp)
	}
	if j := r.job(); j.RunStatus != rail.StatusIdle || j.Attempts != 1 || j.NotBefore == nil {
		t.Fatalf("row after the failure: %+v", j)
	}
	if len(nudges.sent) != 0 {
		t.Fatalf("a failed backfill build nudged the live build queue: %+v", nudges.sent)
	}
}
