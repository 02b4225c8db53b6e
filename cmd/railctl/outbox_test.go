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

	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

// railctl regenerate / emit record facts; railctl relay publishes them to
// EventBridge (moto_server) where the trigger's rule routes the demand
// facts to its queue.
func TestEmitAndRelayToMoto(t *testing.T) {
	ctx := context.Background()
	moto := startMoto(t)
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
	// The trigger's rule as template.yaml declares it, not a copy.
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rawPattern, err := tpl.RulePattern("TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	pattern := string(rawPattern)
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
	// A row the host application wrote with a number and a nested object in
	// its payload (the CHECKs accept any JSON object) goes out with the rest.
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, payload)
        VALUES ($1, 'frame.built', '{"token": 1, "meta": {"pages": [1, 2]}}')`, firm); err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(c.must("relay", "--once", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st["published"].(float64) != 4 { // matter.created, brief.regeneration_requested, two frame.built
		t.Fatalf("relay stats %v, want 4 published", st)
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

// A row that can never be delivered is parked by `railctl relay --once`
// (which succeeds), listed with its reason by `railctl outbox parked`, and
// released by `railctl outbox unpark`.
func TestOutboxParkedAndUnpark(t *testing.T) {
	db := railtest.NewDB(t)
	ctx := context.Background()
	c := cli{t: t, url: db.URL}
	id := uuid.New()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, event_name, occurred_at)
        VALUES ($1, $2, 'document.uploaded', 'infinity')`, id, uuid.New()); err != nil {
		t.Fatal(err)
	}
	if out := c.must("outbox", "parked"); !strings.Contains(out, "no parked facts") {
		t.Fatalf("outbox parked before the relay: %q", out)
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // never called: the only row is undeliverable
	// The relay function's handler ran: its result, and its gauges (EMF).
	code, out, errOut := c.run("relay", "--once", "--metrics")
	if code != 0 || !strings.Contains(out, "parked 1") {
		t.Fatalf("relay --once: exit %d %q %q, want the row parked", code, out, errOut)
	}
	if !strings.Contains(errOut, `"OutboxParked":1`) || !strings.Contains(errOut, `"OutboxBacklog":0`) {
		t.Fatalf("relay --once --metrics wrote no outbox gauges: %q", errOut)
	}
	out = c.must("outbox", "parked")
	if !strings.Contains(out, id.String()) || !strings.Contains(out, "reason: undeliverable: occurred_at is not a finite time") ||
		!strings.Contains(out, "occurred infinity") {
		t.Fatalf("outbox parked: %q", out)
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(c.must("outbox", "parked", "--json")), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("outbox parked --json: %v %v", listed, err)
	}
	if code, _, _ := c.run("outbox", "unpark"); code != exitUsage {
		t.Errorf("unpark without --event: exit %d, want %d", code, exitUsage)
	}
	if out := c.must("outbox", "unpark", "--event", id.String()); !strings.Contains(out, "1 fact(s) released") {
		t.Fatalf("unpark: %q", out)
	}
	if out := c.must("outbox", "parked"); !strings.Contains(out, "no parked facts") {
		t.Fatalf("after unpark: %q", out)
	}
	// The relay run released its lease; a run that did not is shown as ended.
	if out := c.must("outbox", "lease"); !strings.Contains(out, "released (token 1)") {
		t.Fatalf("outbox lease after the relay's run: %q", out)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET holder = gen_random_uuid(), lease_until = clock_timestamp() + interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	if out := c.must("outbox", "lease"); !strings.Contains(out, "held by relay run") {
		t.Fatalf("outbox lease while held: %q", out)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET lease_until = clock_timestamp() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if out := c.must("outbox", "lease"); !strings.Contains(out, "did not release it") {
		t.Fatalf("outbox lease once ended: %q", out)
	}
}

// startMoto starts a moto_server for the test, stopped at its end, and
// points the AWS SDK's environment (endpoint, region, credentials) at it.
func startMoto(t *testing.T) *motoserver.Server {
	t.Helper()
	moto, err := motoserver.Start(context.Background(), t.Logf)
	if err != nil {
		t.Fatalf("moto_server: %v", err)
	}
	t.Cleanup(func() { _ = moto.Stop() })
	for _, kv := range moto.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return moto
}
