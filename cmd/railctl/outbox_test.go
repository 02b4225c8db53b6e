package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	evb "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	evbtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/motoserver"
	"github.com/pramaan/brief-rail/pkg/railtest"
)

// railctl regenerate / emit record facts; railctl relay publishes them to
// EventBridge (moto_server) where the trigger's rule routes the demand
// facts to its queue.
func TestEmitAndRelayToMoto(t *testing.T) {
	ctx := context.Background()
	moto, err := motoserver.Start(ctx, t.Logf)
	if err != nil {
		t.Fatalf("moto_server: %v", err)
	}
	t.Cleanup(func() { _ = moto.Stop() })
	for _, kv := range moto.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("RAIL_EVENT_BUS", "brief-rail-test")
	acfg, err := moto.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eb, sq := evb.NewFromConfig(acfg), sqs.NewFromConfig(acfg)
	if _, err := eb.CreateEventBus(ctx, &evb.CreateEventBusInput{Name: aws.String("brief-rail-test")}); err != nil {
		t.Fatal(err)
	}
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("trigger")})
	if err != nil {
		t.Fatal(err)
	}
	qa, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	pattern := `{"source":["pramaan.domain"],"detail-type":["document.uploaded","document.removed","brief.regeneration_requested"]}`
	if _, err := eb.PutRule(ctx, &evb.PutRuleInput{Name: aws.String("trigger"), EventBusName: aws.String("brief-rail-test"),
		EventPattern: aws.String(pattern)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &evb.PutTargetsInput{Rule: aws.String("trigger"), EventBusName: aws.String("brief-rail-test"),
		Targets: []evbtypes.Target{{Id: aws.String("q"), Arn: aws.String(qa.Attributes["QueueArn"])}}}); err != nil {
		t.Fatal(err)
	}

	db := railtest.NewDB(t)
	c := cli{t: t, url: db.URL}
	firm, matter := uuid.NewString(), uuid.NewString()
	c.must("matter", "add", "--firm", firm, "--matter", matter)
	// Wishes are refused before anything is written.
	for _, bad := range []string{"brief.rebuild", "Matter.Created", "rebuild.brief.now"} {
		if code, _, errOut := c.run("emit", "--firm", firm, "--name", bad); code != exitUsage || !strings.Contains(errOut, "past-tense") {
			t.Errorf("emit %s: exit %d %q, want a usage error naming the grammar", bad, code, errOut)
		}
	}
	c.must("regenerate", "--firm", firm, "--matter", matter)
	c.must("emit", "--firm", firm, "--matter", matter, "--name", "frame.built", "--payload", "token=1")
	var st map[string]any
	if err := json.Unmarshal([]byte(c.must("relay", "--once", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st["Published"].(float64) != 3 { // matter.created, brief.regeneration_requested, frame.built
		t.Fatalf("relay stats %v, want 3 published", st)
	}
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	for time.Now().Before(deadline) && len(got) < 1 {
		out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var env struct {
				DetailType string `json:"detail-type"`
			}
			_ = json.Unmarshal([]byte(*m.Body), &env)
			got = append(got, env.DetailType)
		}
	}
	if len(got) != 1 || got[0] != "brief.regeneration_requested" {
		t.Fatalf("trigger queue received %v, want only brief.regeneration_requested", got)
	}
}
