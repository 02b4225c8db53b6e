package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

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
