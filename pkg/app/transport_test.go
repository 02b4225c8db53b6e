package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// AWSTransport: a queue without a URL is nobody's; its nudges are refused
// naming the variable (an operator's sweep without RAIL_BUILD_QUEUE_URL),
// never sent nowhere. With the URLs, the queues RunLocal polls are there.
func TestAWSTransport(t *testing.T) {
	acfg := aws.Config{Region: "us-east-1"}
	none := app.AWSTransport(acfg, app.Config{EventBus: "b", EventSource: "s"}, "")
	if none.Publisher == nil || none.Nudger == nil {
		t.Fatalf("transport without queues: %+v", none)
	}
	if none.BackfillNudger != nil || none.BuildQueue != nil || none.BackfillQueue != nil || none.TriggerQueue != nil {
		t.Fatalf("transport without queues has a queue: %+v", none)
	}
	err := none.Nudger.Nudge(context.Background(), []rail.Nudge{{V: 1}}, 0)
	if !errors.Is(err, app.ErrNoQueue) || !strings.Contains(err.Error(), "RAIL_BUILD_QUEUE_URL") {
		t.Fatalf("nudge without a build queue: %v, want ErrNoQueue naming RAIL_BUILD_QUEUE_URL", err)
	}
	all := app.AWSTransport(acfg, app.Config{BuildQueueURL: "http://q/build", BackfillQueueURL: "http://q/backfill"}, "http://q/trigger")
	if all.BackfillNudger == nil || all.BuildQueue == nil || all.BackfillQueue == nil || all.TriggerQueue == nil {
		t.Fatalf("transport with every queue lacks one: %+v", all)
	}
}

// The local transport is fair by firm, as the deployed queues are: a nudge
// on either build queue carries its firm as the message group, and the
// build queue serves a firm with nothing in flight ahead of another firm's
// backlog (make run and make serve get this wiring).
func TestLocalTransportIsFairByFirm(t *testing.T) {
	cfg := app.Config{EventBus: "b", EventSource: "s"}
	w, err := app.LocalWiring("../../template.yaml", cfg, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr := app.LocalTransport(w, nil)
	ctx := context.Background()
	big, small := uuid.New(), uuid.New()
	var backlog []rail.Nudge
	for range 20 {
		backlog = append(backlog, rail.Nudge{V: 1, FirmID: big, MatterID: uuid.New(), Reason: rail.ReasonDemand})
	}
	if err := tr.Nudger.Nudge(ctx, backlog, 0); err != nil {
		t.Fatal(err)
	}
	if err := tr.Nudger.Nudge(ctx, []rail.Nudge{{V: 1, FirmID: small, MatterID: uuid.New(), Reason: rail.ReasonDemand}}, 0); err != nil {
		t.Fatal(err)
	}
	var firms []string
	for range 2 { // two builder invocations of one message each
		msgs, err := tr.BuildQueue.Receive(ctx, 1, 0)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("receive: %v %v", msgs, err)
		}
		firms = append(firms, msgs[0].Attributes["MessageGroupId"])
	}
	if firms[0] != big.String() || firms[1] != small.String() {
		t.Fatalf("two receives gave groups %v: want the big firm's oldest, then the small firm's ahead of the backlog", firms)
	}
	if err := tr.BackfillNudger.Nudge(ctx, []rail.Nudge{{V: 1, FirmID: small, MatterID: uuid.New(), Reason: rail.ReasonBackfill}}, 0); err != nil {
		t.Fatal(err)
	}
	if msgs, err := tr.BackfillQueue.Receive(ctx, 1, 0); err != nil || len(msgs) != 1 || msgs[0].Attributes["MessageGroupId"] != small.String() {
		t.Fatalf("backfill queue: %+v %v", msgs, err)
	}
}
