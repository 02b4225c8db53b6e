package lambdafn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

var (
	moto    *motoserver.Server
	motoErr error
)

func TestMain(m *testing.M) {
	moto, motoErr = motoserver.Start(context.Background(), nil)
	if motoErr != nil && !(errors.Is(motoErr, motoserver.ErrNotInstalled) && !ci.Enabled()) {
		fmt.Fprintln(os.Stderr, "lambdafn:", motoErr)
		os.Exit(1) // in CI (or on any other failure) a missing emulator is a failure, not a skip
	}
	code := railtest.Run(m)
	if moto != nil {
		_ = moto.Stop()
	}
	stopEmulatorMoto()
	os.Exit(code)
}

// syncBuffer collects log or metric lines from concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// metricSum adds up a metric over every EMF line written so far.
func (b *syncBuffer) metricSum(t *testing.T, name string) float64 {
	t.Helper()
	var sum float64
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.Contains(line, `"_aws"`) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("EMF line is not JSON: %v: %s", err, line)
		}
		switch v := m[name].(type) {
		case float64:
			sum += v
		case []any:
			for _, x := range v {
				sum += x.(float64)
			}
		}
	}
	return sum
}

// metricSeen reports whether some EMF line carried the metric.
func (b *syncBuffer) metricSeen(name string) bool {
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, `"_aws"`) && strings.Contains(line, `"`+name+`":`) {
			return true
		}
	}
	return false
}

type queue struct{ url, arn string }

// stack is the rail wired locally the way template.yaml wires it in AWS.
type stack struct {
	t        *testing.T
	ctx      context.Context
	moto     *motoserver.Server // the stack's queues and bus live here
	db       *railtest.DB
	tpl      *samtemplate.Template
	sqs      *sqs.Client
	bus      string
	trigQ    queue
	trigDLQ  queue
	buildQ   queue
	buildDLQ queue
	// The backfill's own queue (template: BackfillQueue, BackfillDLQ).
	backfillQ, backfillDLQ queue
	logs                   *syncBuffer
	metrics                *syncBuffer

	relay   *lambdafn.RelayHandler
	trigger *lambdafn.TriggerHandler
	builder *lambdafn.BuilderHandler
	sweeper *lambdafn.SweeperHandler
}

// Visibility override so retries and dead-lettering happen in seconds; every
// other setting (redrive count, delays, the rule's pattern) is the template's.
const testVisibility = 1

func newStack(t *testing.T) *stack {
	t.Helper()
	if moto == nil {
		ci.MissingTool(t, fmt.Sprintf(`moto_server is not available (%v); pip install "moto[server]"`, motoErr))
	}
	return newStackOn(t, moto)
}

// newStackOn builds the stack's queues and bus in the moto_server srv.
func newStackOn(t *testing.T, srv *motoserver.Server) *stack {
	t.Helper()
	t.Parallel()
	ctx := context.Background()
	awsCfg, err := srv.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, ctx: ctx, moto: srv, db: railtest.NewDB(t), tpl: tpl, sqs: sqs.NewFromConfig(awsCfg),
		logs: &syncBuffer{}, metrics: &syncBuffer{}}
	suffix := uuid.NewString()[:8]

	// Queues first: DLQs, then the queues that redrive to them.
	mk := func(logical string) queue {
		spec, err := tpl.Queue(logical)
		if err != nil {
			t.Fatal(err)
		}
		dlqARN := ""
		if spec.DLQ != "" {
			d := map[string]queue{"TriggerDLQ": s.trigDLQ, "BuildDLQ": s.buildDLQ, "BackfillDLQ": s.backfillDLQ}[spec.DLQ]
			if d.arn == "" {
				t.Fatalf("queue %s redrives to %s, which was not created first", logical, spec.DLQ)
			}
			dlqARN = d.arn
			if spec.RedriveMaxReceiveCount < 5 {
				t.Fatalf("%s maxReceiveCount %d, want >= 5", logical, spec.RedriveMaxReceiveCount)
			}
			spec.VisibilityTimeout = testVisibility
		}
		out, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(logical + "-" + suffix), Attributes: spec.Attributes(dlqARN)})
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		return queue{url: *out.QueueUrl, arn: attrs.Attributes["QueueArn"]}
	}
	s.trigDLQ, s.buildDLQ = mk("TriggerDLQ"), mk("BuildDLQ")
	s.trigQ, s.buildQ = mk("TriggerQueue"), mk("BuildQueue")
	s.backfillDLQ = mk("BackfillDLQ")
	s.backfillQ = mk("BackfillQueue")

	// The bus and the trigger rule with the template's pattern and target.
	eb := eventbridge.NewFromConfig(awsCfg)
	s.bus = "brief-rail-" + suffix
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(s.bus)}); err != nil {
		t.Fatal(err)
	}
	pattern, err := tpl.RulePattern("TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	targets, err := tpl.RuleTargets("TriggerRule")
	if err != nil || len(targets) != 1 || targets[0] != "TriggerQueue" {
		t.Fatalf("TriggerRule targets %v (%v): want [TriggerQueue]", targets, err)
	}
	rule := "trigger-" + suffix
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(rule), EventBusName: aws.String(s.bus),
		EventPattern: aws.String(string(pattern)), State: ebtypes.RuleStateEnabled}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(s.bus),
		Targets: []ebtypes.Target{{Id: aws.String("trigger-queue"), Arn: aws.String(s.trigQ.arn)}}}); err != nil {
		t.Fatal(err)
	}

	// The functions, built by the same constructors the mains use, from the
	// environment the template gives them (queue URL and bus resolved here).
	env := map[string]string{
		"RAIL_EVENT_BUS": s.bus, "RAIL_BUILD_QUEUE_URL": s.buildQ.url, "RAIL_BACKFILL_QUEUE_URL": s.backfillQ.url,
		"RAIL_SETTLE_DELAY": "2s", "RAIL_RELAY_WINDOW": "1s",
	}
	deps := lambdafn.Deps{Pool: s.db.Pool, AWS: awsCfg,
		Log:     slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics: emf.New(s.metrics)}
	cfg := func(fn string) lambdafn.Config {
		c, err := lambdafn.LoadConfig(fn, envOf(env))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s.relay = lambdafn.NewRelay(cfg(lambdafn.Relay), deps)
	s.relay.Poll = 50 * time.Millisecond
	// moto_server answers PutEvents only after delivering to the rule's SQS
	// target; with the package's tests in parallel on a loaded 2-core machine
	// that has taken longer than the production bound of one pass's PutEvents
	// (rail.DefaultRelayPublishTimeout, 10 s), and a pass that times out
	// publishes nothing. The tests here prove what gets published, not how
	// fast moto is, so their passes get 40 s (the invocation still ends at the
	// template's 60 s timeout); publish failures are tested with injected
	// faults (pkg/postgres's relay tests), not with timing.
	s.relay.Relay.PublishTimeout = 40 * time.Second
	s.trigger = lambdafn.NewTrigger(cfg(lambdafn.Trigger), deps)
	s.builder = lambdafn.NewBuilder(cfg(lambdafn.Builder), deps, brief.ForRail(brief.NewExtractive()))
	s.sweeper = lambdafn.NewSweeper(cfg(lambdafn.Sweeper), deps)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("function logs:\n%s", s.logs)
		}
	})
	return s
}

// invocation is the context Lambda gives a handler: a request id and the
// function's timeout from the template.
func (s *stack) invocation(logicalID string) (context.Context, context.CancelFunc) {
	fn, err := s.tpl.Function(logicalID)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx := lambdacontext.NewContext(s.ctx, &lambdacontext.LambdaContext{AwsRequestID: uuid.NewString()})
	return context.WithTimeout(ctx, time.Duration(fn.Timeout)*time.Second)
}

type sqsHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// pollOnce is the Lambda SQS poller: receive a batch (with system
// attributes, AWSTraceHeader included), invoke, delete only the successes.
// It returns how many messages it received and how many failed.
func (s *stack) pollOnce(q queue, logicalID string, h sqsHandler, batch int32) (received, failed int) {
	s.t.Helper()
	out, err := s.sqs.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.url),
		MaxNumberOfMessages: batch, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"}})
	if err != nil {
		s.t.Fatal(err)
	}
	if len(out.Messages) == 0 {
		return 0, 0
	}
	ev := events.SQSEvent{}
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes,
			EventSource: "aws:sqs", EventSourceARN: q.arn, AWSRegion: motoserver.Region})
	}
	ctx, cancel := s.invocation(logicalID)
	resp, err := h(ctx, ev)
	cancel()
	if err != nil { // the whole batch failed: nothing is deleted
		return len(ev.Records), len(ev.Records)
	}
	failedIDs := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failedIDs[f.ItemIdentifier] = true
	}
	var del []sqstypes.DeleteMessageBatchRequestEntry
	for i, r := range ev.Records {
		if !failedIDs[r.MessageId] {
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(r.ReceiptHandle)})
		}
	}
	if len(del) > 0 {
		if _, err := s.sqs.DeleteMessageBatch(s.ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: del}); err != nil {
			s.t.Fatal(err)
		}
	}
	return len(ev.Records), len(resp.BatchItemFailures)
}

// drain polls until a receive comes back empty.
func (s *stack) drain(q queue, logicalID string, h sqsHandler, batch int32) (received int) {
	for {
		n, _ := s.pollOnce(q, logicalID, h, batch)
		if n == 0 {
			return received
		}
		received += n
	}
}

func (s *stack) runRelay() lambdafn.RelayResult {
	s.t.Helper()
	ctx, cancel := s.invocation("RelayFunction")
	defer cancel()
	res, err := s.relay.Handle(ctx, lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: "relay"})
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

func (s *stack) runSweeper() lambdafn.SweepResult {
	s.t.Helper()
	ctx, cancel := s.invocation("SweeperFunction")
	defer cancel()
	res, err := s.sweeper.Handle(ctx, lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: "sweeper"})
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

func (s *stack) triggerH() sqsHandler { return s.trigger.Handle }
func (s *stack) builderH() sqsHandler { return s.builder.Handle }

// batch is the BatchSize of the event source mapping that feeds logicalID
// from q in the template.
func (s *stack) batch(logicalID string, q queue) int32 {
	s.t.Helper()
	fn, err := s.tpl.Function(logicalID)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, qs := range fn.QueueSources {
		if (qs.Queue == "TriggerQueue" && q == s.trigQ) || (qs.Queue == "BuildQueue" && q == s.buildQ) {
			return int32(qs.BatchSize)
		}
	}
	s.t.Fatalf("the template feeds %s from no such queue", logicalID)
	return 0
}

// drainTrigger feeds the trigger until its queue is empty.
func (s *stack) drainTrigger() int {
	return s.drain(s.trigQ, "TriggerFunction", s.triggerH(), s.batch("TriggerFunction", s.trigQ))
}

// buildUntil feeds the builder (one batch of the template's size at a time)
// until cond holds or the deadline passes.
func (s *stack) buildUntil(within time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("condition not reached within %s", within)
		}
		s.pollOnce(s.buildQ, "BuilderFunction", s.builderH(), s.batch("BuilderFunction", s.buildQ))
	}
}

// seedUploads adds a matter and, per document, stores it and records its
// document.uploaded fact in the same transaction.
func (s *stack) seedUploads(n int) (rail.MatterRef, []uuid.UUID) {
	s.t.Helper()
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(s.ctx, s.db.Pool, ref, "Harlow Logistics v. Penmark Freight"); err != nil {
		s.t.Fatal(err)
	}
	return ref, s.upload(ref, n)
}

func (s *stack) upload(ref rail.MatterRef, n int) []uuid.UUID {
	s.t.Helper()
	var ids []uuid.UUID
	for i := range n {
		tx, err := s.db.Pool.Begin(s.ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(s.ctx) }() // a no-op after Commit; frees the connection on failure
		id, err := postgres.AddDocument(s.ctx, tx, ref, rail.NewDocument{Name: fmt.Sprintf("exhibit-%d-%s.pdf", i+1, uuid.NewString()[:4]),
			Pages: []string{fmt.Sprintf("On 3 March 2025 Harlow Logistics delivered consignment %d to Penmark Freight.", i+1)}})
		if err != nil {
			s.t.Fatal(err)
		}
		if _, err := postgres.RecordFact(s.ctx, tx, rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
			Name: rail.FactDocumentUploaded, Payload: map[string]string{"document_id": id.String()},
			TraceHeader: "Root=1-6968b3d8-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1"}); err != nil {
			s.t.Fatal(err)
		}
		if err := tx.Commit(s.ctx); err != nil {
			s.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func (s *stack) job(ref rail.MatterRef) postgres.JobRow {
	s.t.Helper()
	j, err := postgres.NewLedger(s.db.Pool, rail.Config{}).Job(s.ctx, ref)
	if err != nil {
		s.t.Fatal(err)
	}
	return j
}

func (s *stack) frames(ref rail.MatterRef) []string {
	s.t.Helper()
	rows, err := s.db.Pool.Query(s.ctx, `SELECT coalesce(f.body, b.body)::text FROM ops.matter_frames f
        LEFT JOIN ops.matter_frame_bodies b USING (firm_id, matter_id, body_sha256)
        WHERE f.firm_id = $1 AND f.matter_id = $2 ORDER BY f.token`,
		ref.FirmID, ref.MatterID)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func (s *stack) depth(q queue) int {
	s.t.Helper()
	out, err := s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		s.t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		var x int
		fmt.Sscan(v, &x)
		n += x
	}
	return n
}

func (s *stack) send(q queue, body string) {
	s.t.Helper()
	if _, err := s.sqs.SendMessage(s.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(body)}); err != nil {
		s.t.Fatal(err)
	}
}

// ---------------------------------------------------------------- scenarios

func TestEndToEndThreeUploadsOneFrame(t *testing.T) {
	s := newStack(t)
	ref, docs := s.seedUploads(3)

	res := s.runRelay()
	if res.Published != 3 || res.Backlog != 0 {
		t.Fatalf("relay: %+v, want 3 published and no backlog", res)
	}
	var bodies []string // keep one for the duplicate delivery below
	got := 0
	for {
		out, err := s.sqs.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.trigQ.url), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, VisibilityTimeout: 0})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			bodies = append(bodies, *m.Body)
		}
		got += len(out.Messages)
		if got >= 3 || len(out.Messages) == 0 {
			break
		}
	}
	if len(bodies) == 0 {
		t.Fatal("EventBridge delivered nothing to the trigger queue: rule pattern or target wrong")
	}
	// The peeked messages become visible again after the queue's visibility
	// timeout: receive (long polls of 1 s) until all three were handled.
	n, deadline := 0, time.Now().Add(30*time.Second)
	for n < 3 && time.Now().Before(deadline) {
		n += s.drainTrigger()
	}
	if n < 3 {
		t.Fatalf("trigger received %d messages, want 3", n)
	}
	j := s.job(ref)
	if j.RequestedGeneration != 3 {
		t.Fatalf("requested_generation %d after three uploads, want 3", j.RequestedGeneration)
	}
	if d := s.metrics.metricSum(t, "DemandsRecorded") + s.metrics.metricSum(t, "FactsCoalesced"); d != 3 {
		t.Fatalf("DemandsRecorded + FactsCoalesced = %v, want 3 (one per fact)", d)
	}

	// The nudges wait out the settle delay; then one build serves all three.
	s.buildUntil(20*time.Second, func() bool { return len(s.frames(ref)) > 0 })
	s.buildUntil(20*time.Second, func() bool { return s.depth(s.buildQ) == 0 })
	frames := s.frames(ref)
	if len(frames) != 1 {
		t.Fatalf("%d frames landed, want exactly 1", len(frames))
	}
	var b brief.Brief
	if err := json.Unmarshal([]byte(frames[0]), &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Documents) != 3 {
		t.Fatalf("frame has %d documents, want 3", len(b.Documents))
	}
	// One fingerprint: the Brief records the one its ledger row carries
	// (the worker's skip-if-unchanged key).
	if fr, ok, err := postgres.NewLedger(s.db.Pool, rail.Config{}).LatestFrame(s.ctx, ref); err != nil || !ok || fr.Fingerprint != b.InputFingerprint {
		t.Fatalf("ledger fingerprint %q (found %v, err %v), Brief's input_fingerprint %q", fr.Fingerprint, ok, err, b.InputFingerprint)
	}
	for _, id := range docs {
		if !strings.Contains(frames[0], id.String()) {
			t.Fatalf("frame does not reflect document %s", id)
		}
	}
	if j := s.job(ref); j.BuiltGeneration != 3 || j.RunStatus != rail.StatusIdle {
		t.Fatalf("row after the build: %+v", j)
	}
	if c := s.metrics.metricSum(t, "Claims"); c != 1 {
		t.Fatalf("Claims = %v, want 1 (the other nudges found nothing to claim)", c)
	}
	if s.metrics.metricSum(t, "FramesLanded") != 1 || !s.metrics.metricSeen("BuildDurationSeconds") {
		t.Fatal("FramesLanded / BuildDurationSeconds not reported")
	}

	// A duplicate delivery of one trigger message: no new demand, no build.
	s.send(s.trigQ, bodies[0])
	s.drainTrigger()
	if j := s.job(ref); j.RequestedGeneration != 3 {
		t.Fatalf("a duplicate delivery changed demand: requested %d", j.RequestedGeneration)
	}

	// The rail's own frame.built: the rule does not route it, and the
	// trigger ignores it even when it arrives.
	tx, err := s.db.Pool.Begin(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(s.ctx) }()
	if _, err := postgres.RecordFact(s.ctx, tx, rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: rail.FactFrameBuilt}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(s.ctx); err != nil {
		t.Fatal(err)
	}
	// Two frame.built facts go out: the one the builder's commit recorded
	// with its frame, and the one injected here.
	if res := s.runRelay(); res.Published != 2 {
		t.Fatalf("relay: %+v, want the commit's frame.built and the injected one", res)
	}
	if n := s.drainTrigger(); n != 0 {
		t.Fatalf("the rule routed %d frame.built facts to the trigger", n)
	}
	s.send(s.trigQ, envelope(rail.FactFrameBuilt, uuid.New(), ref))
	if n := s.drainTrigger(); n != 1 {
		t.Fatalf("received %d", n)
	}
	if j := s.job(ref); j.RequestedGeneration != 3 {
		t.Fatalf("frame.built created demand: requested %d", j.RequestedGeneration)
	}
	if s.depth(s.buildQ) != 0 {
		t.Fatal("frame.built produced a nudge")
	}

	// The sweeper emits its gauges even when all is well.
	sw := s.runSweeper()
	if sw.MattersBehind != 0 || sw.Renudged != 0 {
		t.Fatalf("sweep: %+v", sw)
	}
	for _, m := range []string{"MattersBehind", "OldestUnservedDemandSeconds", "MattersQuarantined", "MattersClosedWithDemand", "LeaseExpiries", "OutboxBacklog", "OutboxOldestAgeSeconds"} {
		if !s.metrics.metricSeen(m) {
			t.Errorf("sweeper did not emit %s", m)
		}
	}
}

func envelope(name string, eventID uuid.UUID, ref rail.MatterRef) string {
	d, _ := rail.EncodeFactDetail(rail.FactDetail{EventID: eventID, EventName: name, FirmID: ref.FirmID,
		MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}, OccurredAt: time.Now().UTC()})
	b, _ := json.Marshal(map[string]any{"version": "0", "id": uuid.NewString(), "detail-type": name,
		"source": "pramaan.domain", "account": "123456789012", "time": time.Now().UTC().Format(time.RFC3339),
		"region": motoserver.Region, "resources": []string{}, "detail": json.RawMessage(d)})
	return string(b)
}

func TestEndToEndMalformedTriggerMessageFailsAloneThenDeadLetters(t *testing.T) {
	s := newStack(t)
	ref, _ := s.seedUploads(0)
	s.send(s.trigQ, `{"detail-type":"document.uploaded","source":"pramaan.domain","detail":{"event_id":"not-a-uuid"}}`)
	good, err := postgres.RecordFact(s.ctx, s.db.Pool, rail.Fact{FirmID: ref.FirmID,
		MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}, Name: rail.FactRegenerationRequested})
	if err != nil {
		t.Fatal(err)
	}
	s.send(s.trigQ, envelope(rail.FactRegenerationRequested, good, ref))

	received, failed := s.pollOnce(s.trigQ, "TriggerFunction", s.triggerH(), s.batch("TriggerFunction", s.trigQ))
	if received == 2 && failed != 1 {
		t.Fatalf("batch of 2: %d failed, want exactly the malformed one", failed)
	}
	spec, err := s.tpl.Queue("TriggerQueue")
	if err != nil {
		t.Fatal(err)
	}
	// Keep receiving: the malformed message comes back after each visibility
	// timeout until maxReceiveCount, then SQS moves it to the DLQ.
	deadline := time.Now().Add(time.Duration(spec.RedriveMaxReceiveCount*testVisibility+15) * time.Second)
	for s.depth(s.trigDLQ) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("malformed message not dead-lettered after %d receives", spec.RedriveMaxReceiveCount)
		}
		s.pollOnce(s.trigQ, "TriggerFunction", s.triggerH(), s.batch("TriggerFunction", s.trigQ))
		time.Sleep(200 * time.Millisecond)
	}
	if j := s.job(ref); j.RequestedGeneration != 1 {
		t.Fatalf("the good fact's demand: requested %d, want exactly 1", j.RequestedGeneration)
	}
	if !strings.Contains(s.logs.String(), "malformed fact") || !strings.Contains(s.logs.String(), "not-a-uuid") {
		t.Fatal("the malformed message's reason was not logged")
	}
	if s.depth(s.trigQ) != 0 {
		t.Fatal("trigger queue not empty: a poison loop")
	}
}

func TestEndToEndLostNudgesAreRecoveredBySweeper(t *testing.T) {
	s := newStack(t)
	ref, _ := s.seedUploads(2)
	s.runRelay()
	// moto delivers the rule's events at PutEvents; wait for both.
	deadline := time.Now().Add(10 * time.Second)
	for s.job(ref).RequestedGeneration < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("demand %d, want 2", s.job(ref).RequestedGeneration)
		}
		s.drainTrigger()
	}
	// Every nudge is lost.
	if _, err := s.sqs.PurgeQueue(s.ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(s.buildQ.url)}); err != nil {
		t.Fatal(err)
	}
	if sw := s.runSweeper(); sw.Renudged != 0 || sw.MattersBehind != 1 {
		t.Fatalf("sweep inside the grace: %+v, want no re-nudge yet and one matter behind", sw)
	}
	// Time passes (the ledger's clock is the database's: move the demand back).
	if _, err := s.db.Pool.Exec(s.ctx, `UPDATE ops.matter_frame_jobs SET
        last_demanded_at = last_demanded_at - interval '10 minutes', demand_since = demand_since - interval '10 minutes'
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID); err != nil {
		t.Fatal(err)
	}
	if sw := s.runSweeper(); sw.Renudged != 1 {
		t.Fatalf("sweep: %+v, want one re-nudge", sw)
	}
	if s.metrics.metricSum(t, "OldestUnservedDemandSeconds") < 600 {
		t.Fatal("OldestUnservedDemandSeconds does not show the 10-minute-old demand")
	}
	s.buildUntil(15*time.Second, func() bool { return len(s.frames(ref)) == 1 })
	if j := s.job(ref); j.BuiltGeneration != 2 {
		t.Fatalf("row: %+v", j)
	}
	if !strings.Contains(s.logs.String(), `"reason":"sweep"`) {
		t.Fatal("the build was not started by the sweep's nudge")
	}
}

// Facts naming an unknown matter or another firm's matter are no facts the
// rail recorded (no outbox row can name them): each is refused, comes back
// after every visibility timeout until maxReceiveCount, and ends in the
// trigger DLQ (TriggerDLQNotEmptyAlarm), counted as FactsRefused; nothing is
// written or nudged. A fact that creates no demand is acknowledged once.
func TestEndToEndUnknownAndMisfiledFactsAreRefusedThenDeadLettered(t *testing.T) {
	s := newStack(t)
	ref, _ := s.seedUploads(0)
	s.send(s.trigQ, envelope(rail.FactDocumentUploaded, uuid.New(), rail.MatterRef{FirmID: ref.FirmID, MatterID: uuid.New()}))
	s.send(s.trigQ, envelope(rail.FactDocumentUploaded, uuid.New(), rail.MatterRef{FirmID: uuid.New(), MatterID: ref.MatterID}))
	s.send(s.trigQ, envelope("matter.renamed", uuid.New(), ref))
	spec, err := s.tpl.Queue("TriggerQueue")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Duration(spec.RedriveMaxReceiveCount*testVisibility+15) * time.Second)
	for s.depth(s.trigDLQ) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("refused facts not dead-lettered after %d receives (DLQ %d)", spec.RedriveMaxReceiveCount, s.depth(s.trigDLQ))
		}
		s.pollOnce(s.trigQ, "TriggerFunction", s.triggerH(), s.batch("TriggerFunction", s.trigQ))
		time.Sleep(200 * time.Millisecond)
	}
	var jobs, inbox int
	if err := s.db.Pool.QueryRow(s.ctx, `SELECT (SELECT count(*) FROM ops.matter_frame_jobs), (SELECT count(*) FROM ops.trigger_inbox)`).Scan(&jobs, &inbox); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 || inbox != 0 || s.depth(s.buildQ) != 0 || s.depth(s.trigDLQ) != 2 || s.depth(s.trigQ) != 0 {
		t.Fatalf("jobs %d inbox %d build queue %d DLQ %d trigger queue %d: want nothing written or sent, the two refused facts dead-lettered",
			jobs, inbox, s.depth(s.buildQ), s.depth(s.trigDLQ), s.depth(s.trigQ))
	}
	if !strings.Contains(s.logs.String(), "fact refused") || !strings.Contains(s.metrics.String(), rail.MetricFactsRefused) {
		t.Fatal("the refusals were not logged and counted")
	}
}
