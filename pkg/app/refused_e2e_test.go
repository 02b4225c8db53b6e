package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// nulBuilder returns a Brief that is valid JSON but that jsonb refuses.
type nulBuilder struct{}

func (nulBuilder) Name() string { return "nul/v1" }
func (nulBuilder) Build(context.Context, rail.Inputs) (json.RawMessage, error) {
	return json.RawMessage(`{"schema":"brief/v2","title":"Harlow\u0000 v. Penmark"}`), nil
}

// TestBuilderRecordsABodyTheDatabaseRefuses: through the assembled builder
// handler, a build whose body jsonb refuses is a recorded failure: the
// nudge is acknowledged (no redelivery that would repeat the model call),
// BuildsFailed counts it, and the row is idle, backing off, with the
// reason. On main the commit was refused, taken as ambiguous, and the
// handler reported the nudge for retry with the row left running for its
// whole lease.
func TestBuilderRecordsABodyTheDatabaseRefuses(t *testing.T) {
	t.Parallel()
	lr := newLocalRailWith(t, nulBuilder{})
	lr.upload("complaint.txt", "COMPLAINT.")
	if lr.relay().Published < 1 || lr.trigger() != 1 {
		t.Fatal("the upload's fact did not reach the trigger")
	}
	msgs, err := lr.tr.BuildQueue.Receive(lr.ctx, 1, 2*time.Second)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("build queue: %v %d", err, len(msgs))
	}
	resp, err := lr.r.Builder.Handle(lr.ctx, events.SQSEvent{Records: msgs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("builder: %+v %v; want the nudge acknowledged, the failure in the ledger", resp, err)
	}
	j := lr.job()
	if j.RunStatus != rail.StatusIdle || j.NotBefore == nil || !strings.Contains(j.LastError, rail.ErrBodyNotStorable.Error()) {
		t.Fatalf("row %+v; want idle, backing off, the reason recorded", j)
	}
	if !strings.Contains(lr.metrics.String(), `"`+lambdafn.MetricBuildsFailed+`":1`) {
		t.Fatalf("BuildsFailed not counted: %s", lr.metrics.String())
	}
}
