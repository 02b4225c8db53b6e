package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

// TestSweepInvokesTheSweeperFunction: `railctl sweep` is one invocation of
// the deployed sweeper's own handler (app.ForOperator), not a ledger pass
// of its own: it prunes the outbox and the trigger inbox, writes the
// sweeper's gauges, and re-nudges lost demand onto the build queue,
// recording each nudge for `railctl why`. Without a build queue it says so
// (exit 1) after the rest of the pass ran, and the refused nudge is
// recorded as refused. (Before railctl invoked the handler, `railctl
// sweep` pruned nothing, wrote no gauge and sent no nudge: this test failed
// at its first pruning check.)
func TestSweepInvokesTheSweeperFunction(t *testing.T) {
	ctx := context.Background()
	db := railtest.NewDB(t)
	c := cli{t: t, url: db.URL}
	firm, matter := uuid.NewString(), uuid.NewString()
	c.must("matter", "add", "--firm", firm, "--matter", matter)
	c.must("demand", "--firm", firm, "--matter", matter)
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// A nudge lost an hour ago (past the sweep grace), and an outbox row and
	// an inbox row older than the retentions (168 h, 360 h): all by the
	// database clock.
	if _, err := conn.Exec(ctx, `UPDATE ops.matter_frame_jobs SET last_demanded_at = last_demanded_at - interval '1 hour',
            demand_since = demand_since - interval '1 hour', uncovered_since = uncovered_since - interval '1 hour'
        WHERE matter_id = $1`, matter); err != nil {
		t.Fatal(err)
	}
	var outboxID, inboxID string
	if err := conn.QueryRow(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, occurred_at, published_at)
        VALUES (gen_random_uuid(), 'matter.created', clock_timestamp() - interval '401 hours', clock_timestamp() - interval '400 hours')
        RETURNING event_id::text`).Scan(&outboxID); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `WITH f AS (INSERT INTO app.firms (firm_id) VALUES (gen_random_uuid()) RETURNING firm_id),
             m AS (INSERT INTO app.matters (firm_id, matter_id) SELECT firm_id, gen_random_uuid() FROM f RETURNING firm_id, matter_id)
        INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name, received_at)
        SELECT gen_random_uuid(), firm_id, matter_id, 'document.uploaded', clock_timestamp() - interval '400 hours' FROM m
        RETURNING event_id::text`).Scan(&inboxID); err != nil {
		t.Fatal(err)
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// No build queue: the pass runs, the re-nudge fails naming the variable.
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv(lambdafn.EnvBuildQueueURL, "")
	t.Setenv(lambdafn.EnvBackfillQueue, "")
	code, out, errOut := c.run("sweep", "--metrics")
	if n := count(`SELECT (SELECT count(*) FROM ops.domain_event_outbox WHERE event_id::text = $1)
            + (SELECT count(*) FROM ops.trigger_inbox WHERE event_id::text = $2)`, outboxID, inboxID); n != 0 {
		t.Fatalf("railctl sweep left %d of the old outbox and inbox rows: it did not run the sweeper's pruning\nstdout: %s", n, out)
	}
	if code != exitError || !strings.Contains(errOut, "RAIL_BUILD_QUEUE_URL is not set") {
		t.Fatalf("sweep without a build queue: exit %d, stderr %q; want exit %d naming RAIL_BUILD_QUEUE_URL", code, errOut, exitError)
	}
	if !strings.Contains(out, "pruned: outbox 1 (0 left), inbox 1") || !strings.Contains(out, "matters behind: 1") {
		t.Errorf("sweep's printed result:\n%s", out)
	}
	// The sweeper's gauges, as the function writes them (EMF).
	for _, gauge := range []string{`"MattersBehind":1`, `"OutboxBacklog":1`, `"MattersOutdated":0`, `"OldestUnservedDemandSeconds":`} {
		if !strings.Contains(errOut, gauge) {
			t.Errorf("sweep --metrics wrote no %s: %s", gauge, errOut)
		}
	}
	if n := count(`SELECT count(*) FROM ops.matter_nudges WHERE matter_id = $1 AND reason = 'sweep'
            AND error LIKE '%RAIL_BUILD_QUEUE_URL is not set%'`, matter); n != 1 {
		t.Errorf("the refused re-nudge was recorded %d times, want once", n)
	}

	// With the build queue (SQS on moto_server), the lost demand is re-nudged.
	moto := startMoto(t)
	acfg, err := moto.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sq := sqs.NewFromConfig(acfg)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("build")})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(lambdafn.EnvBuildQueueURL, *q.QueueUrl)
	var res lambdafn.SweepResult
	if err := json.Unmarshal([]byte(c.must("sweep", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Renudged != 1 || res.MattersBehind != 1 {
		t.Fatalf("sweep with a build queue: %+v, want one matter behind and re-nudged", res)
	}
	msgs, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs.Messages) != 1 || !strings.Contains(*msgs.Messages[0].Body, matter) || !strings.Contains(*msgs.Messages[0].Body, `"reason":"sweep"`) {
		t.Fatalf("build queue holds %d message(s), want the sweep's nudge for %s: %+v", len(msgs.Messages), matter, msgs.Messages)
	}
	if n := count(`SELECT count(*) FROM ops.matter_nudges WHERE matter_id = $1 AND reason = 'sweep' AND error = ''`, matter); n != 1 {
		t.Errorf("the sent re-nudge was recorded %d times, want once", n)
	}
}
