package eventbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseb "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/aws/eventbridge"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

func TestMain(m *testing.M) { railtest.Main(m) }

// moto is one moto_server shared by the subtests of TestAgainstMoto; each
// subtest makes its own bus, rule and queue.
type moto struct {
	cfg aws.Config
	eb  *awseb.Client
	sqs *sqs.Client
	seq atomic.Int64
}

func TestAgainstMoto(t *testing.T) {
	if _, err := exec.LookPath("moto_server"); err != nil {
		ci.MissingTool(t, motoserver.ErrNotInstalled.Error())
	}
	ctx := context.Background()
	srv, err := motoserver.Start(ctx, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	cfg, err := srv.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := &moto{cfg: cfg, eb: awseb.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg)}
	t.Run("EndToEnd", m.testEndToEnd)
	t.Run("OutOfOrderCommits", m.testOutOfOrderCommits)
	t.Run("CrashBetweenPutEventsAndMark", m.testCrashBetweenPutEventsAndMark)
}

// triggerPattern is the trigger rule's pattern, read from template.yaml.
func triggerPattern(t *testing.T) string {
	t.Helper()
	tpl, err := samtemplate.Load("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := tpl.RulePattern("TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// busToQueue creates a bus, the trigger's rule on it and an SQS queue as the
// rule's target (with the queue policy EventBridge needs).
func (m *moto) busToQueue(t *testing.T) (bus, queueURL string) {
	t.Helper()
	ctx := context.Background()
	n := m.seq.Add(1)
	bus = fmt.Sprintf("brief-rail-test-%d", n)
	if _, err := m.eb.CreateEventBus(ctx, &awseb.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	rule, err := m.eb.PutRule(ctx, &awseb.PutRuleInput{Name: aws.String(fmt.Sprintf("trigger-%d", n)),
		EventBusName: aws.String(bus), EventPattern: aws.String(triggerPattern(t)), State: ebtypes.RuleStateEnabled})
	if err != nil {
		t.Fatal(err)
	}
	q, err := m.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("trigger-queue-%d", n))})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := m.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	queueArn := attrs.Attributes["QueueArn"]
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},
        "Action":"sqs:SendMessage","Resource":%q,"Condition":{"ArnEquals":{"aws:SourceArn":%q}}}]}`, queueArn, aws.ToString(rule.RuleArn))
	if _, err := m.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: q.QueueUrl,
		Attributes: map[string]string{"Policy": policy}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.eb.PutTargets(ctx, &awseb.PutTargetsInput{Rule: aws.String(fmt.Sprintf("trigger-%d", n)),
		EventBusName: aws.String(bus), Targets: []ebtypes.Target{{Id: aws.String("trigger-queue"), Arn: aws.String(queueArn)}}}); err != nil {
		t.Fatal(err)
	}
	return bus, aws.ToString(q.QueueUrl)
}

type envelope struct {
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Detail     json.RawMessage `json:"detail"`
	fact       rail.FactDetail
}

// receive reads (and deletes) messages until want arrived and then quiet
// more seconds pass with nothing new, or the deadline.
func (m *moto) receive(t *testing.T, queueURL string, want int, quiet time.Duration) []envelope {
	t.Helper()
	ctx := context.Background()
	var out []envelope
	deadline := time.Now().Add(motoTimeout)
	var quietUntil time.Time
	for time.Now().Before(deadline) {
		if len(out) >= want {
			if quietUntil.IsZero() {
				quietUntil = time.Now().Add(quiet)
			}
			if time.Now().After(quietUntil) {
				break
			}
		}
		r, err := m.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range r.Messages {
			var e envelope
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &e); err != nil {
				t.Fatalf("message body is not an EventBridge envelope: %v: %s", err, aws.ToString(msg.Body))
			}
			if e.fact, err = rail.DecodeFactDetail(e.Detail); err != nil {
				t.Fatalf("detail: %v: %s", err, e.Detail)
			}
			out = append(out, e)
			if _, err := m.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: msg.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// motoTimeout: moto_server is one Python process and slows to seconds per
// PutEvents when the whole test suite loads the machine.
const motoTimeout = time.Minute

func drainAll(t *testing.T, r *rail.Relay) rail.RelayStats {
	t.Helper()
	var total rail.RelayStats
	for range 20 {
		st, err := r.DrainOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		total.Published += st.Published
		total.Failed += st.Failed
		if st.Backlog == 0 {
			return total
		}
	}
	t.Fatal("backlog never drained")
	return total
}

func record(t *testing.T, q postgres.Querier, f rail.Fact) uuid.UUID {
	t.Helper()
	id, err := postgres.RecordFact(context.Background(), q, f)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func matterFact(ref rail.MatterRef, name string, payload map[string]string) rail.Fact {
	return rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}, Name: name, Payload: payload}
}

// newRef adds a matter (the outbox names only matters that exist: its key
// to app.matters) and returns it.
func newRef(t *testing.T, q postgres.Querier) rail.MatterRef {
	t.Helper()
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(context.Background(), q, ref, ""); err != nil {
		t.Fatal(err)
	}
	return ref
}

func unpublished(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (m *moto) testEndToEnd(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	bus, queue := m.busToQueue(t)
	ref := newRef(t, db.Pool)
	doc := uuid.NewString()
	want := map[uuid.UUID]string{}
	var unrouted []uuid.UUID
	err := pgx.BeginFunc(context.Background(), db.Pool, func(tx pgx.Tx) error {
		unrouted = append(unrouted, record(t, tx, matterFact(ref, "matter.created", nil)))
		f := matterFact(ref, "document.uploaded", map[string]string{"document_id": doc})
		f.TraceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
		want[record(t, tx, f)] = "document.uploaded"
		want[record(t, tx, matterFact(ref, "document.removed", map[string]string{"document_id": doc}))] = "document.removed"
		want[record(t, tx, matterFact(ref, "brief.regeneration_requested", nil))] = "brief.regeneration_requested"
		unrouted = append(unrouted, record(t, tx, matterFact(ref, "frame.built", map[string]string{"frame_id": uuid.NewString()})))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: eventbridge.New(m.cfg, bus, ""), PublishTimeout: motoTimeout}
	if st := drainAll(t, r); st.Published != 5 {
		t.Fatalf("published %d, want 5 (frame.built and matter.created go on the bus too)", st.Published)
	}
	got := m.receive(t, queue, len(want), 2*time.Second)
	if len(got) != len(want) {
		t.Fatalf("queue got %d messages, want %d: %+v", len(got), len(want), got)
	}
	for _, e := range got {
		name, ok := want[e.fact.EventID]
		if !ok {
			t.Fatalf("unexpected event on the trigger queue: %s %s", e.DetailType, e.fact.EventID)
		}
		delete(want, e.fact.EventID)
		if e.DetailType != name || e.fact.EventName != name || e.Source != rail.DefaultEventSource {
			t.Errorf("envelope detail-type %q source %q, fact %q; want %q from %s", e.DetailType, e.Source, e.fact.EventName, name, rail.DefaultEventSource)
		}
		if r, ok := e.fact.Ref(); !ok || r != ref {
			t.Errorf("detail names %v, want %v", r, ref)
		}
		if got, _ := e.fact.PayloadString("document_id"); name != "brief.regeneration_requested" && got != doc {
			t.Errorf("%s payload %s", name, e.fact.Payload)
		}
		if e.ID == "" || e.ID == e.fact.EventID.String() {
			t.Errorf("envelope id %q should be the bus's own", e.ID)
		}
	}
	for _, id := range unrouted {
		for _, e := range got {
			if e.fact.EventID == id {
				t.Errorf("%s reached the trigger queue", e.DetailType)
			}
		}
	}
	if n := unpublished(t, db.Pool); n != 0 {
		t.Fatalf("%d rows unpublished", n)
	}
}

// T1 records a fact and stays open; T2 records a later fact and commits;
// the relay publishes T2's; T1 commits; the relay publishes T1's. T1's fact
// is older (occurred_at) than one already published: a high-water mark
// would have skipped it for good.
func (m *moto) testOutOfOrderCommits(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	bus, queue := m.busToQueue(t)
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: eventbridge.New(m.cfg, bus, ""), PublishTimeout: motoTimeout}
	ref := newRef(t, db.Pool)

	t1, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer t1.Rollback(ctx)
	a := record(t, t1, matterFact(ref, "document.uploaded", map[string]string{"document_id": uuid.NewString()}))
	b := record(t, db.Pool, matterFact(ref, "document.uploaded", map[string]string{"document_id": uuid.NewString()}))

	st, err := r.DrainOnce(ctx)
	if err != nil || st.Published != 1 || st.Backlog != 0 {
		t.Fatalf("first drain: %+v %v; want T2's fact only", st, err)
	}
	if err := t1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var aAt, bAt time.Time
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT occurred_at FROM ops.domain_event_outbox WHERE event_id = $1),
        (SELECT occurred_at FROM ops.domain_event_outbox WHERE event_id = $2)`, a, b).Scan(&aAt, &bAt); err != nil {
		t.Fatal(err)
	}
	if !aAt.Before(bAt) {
		t.Fatalf("setup: T1's fact (%s) should be older than T2's (%s)", aAt, bAt)
	}
	st, err = r.DrainOnce(ctx)
	if err != nil || st.Published != 1 {
		t.Fatalf("second drain: %+v %v; want T1's fact", st, err)
	}
	got := m.receive(t, queue, 2, 2*time.Second)
	if len(got) != 2 || got[0].fact.EventID != b || got[1].fact.EventID != a {
		ids := []string{}
		for _, e := range got {
			ids = append(ids, e.fact.EventID.String())
		}
		t.Fatalf("queue got %v, want exactly [%s %s]", ids, b, a)
	}
}

// A relay dies after PutEvents and before marking: once its lease ends,
// the next drain publishes again. Consumers see duplicates with the same event_id (and
// new envelope ids), never a loss.
func (m *moto) testCrashBetweenPutEventsAndMark(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	bus, queue := m.busToQueue(t)
	ref := newRef(t, db.Pool)
	ids := map[uuid.UUID]bool{}
	for range 3 {
		ids[record(t, db.Pool, matterFact(ref, "brief.regeneration_requested", nil))] = true
	}
	pub := eventbridge.New(m.cfg, bus, "")
	crashing := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: pub, PublishTimeout: motoTimeout, AfterPublish: func() { panic("relay killed after PutEvents") }}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the crash hook did not run")
			}
		}()
		_, _ = crashing.DrainOnce(ctx)
	}()
	if n := unpublished(t, db.Pool); n != 3 {
		t.Fatalf("%d unpublished after the crash, want 3 (nothing marked)", n)
	}
	// The dead relay's lease ends (moved back here rather than waited for).
	if tag, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET lease_until = clock_timestamp() - interval '1 second'
        WHERE holder IS NOT NULL`); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the dead relay's lease: %v %v", tag, err)
	}
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: pub, PublishTimeout: motoTimeout}
	if st := drainAll(t, r); st.Published != 3 {
		t.Fatalf("re-published %d, want 3", st.Published)
	}
	got := m.receive(t, queue, 6, 2*time.Second)
	seen := map[uuid.UUID][]string{}
	for _, e := range got {
		if !ids[e.fact.EventID] {
			t.Fatalf("unexpected event %s", e.fact.EventID)
		}
		seen[e.fact.EventID] = append(seen[e.fact.EventID], e.ID)
	}
	if len(got) != 6 || len(seen) != 3 {
		t.Fatalf("got %d messages for %d events, want 6 for 3 (each twice)", len(got), len(seen))
	}
	for id, envs := range seen {
		if len(envs) != 2 || envs[0] == envs[1] {
			t.Errorf("event %s: envelope ids %v, want two different ones", id, envs)
		}
	}
	if !strings.HasPrefix(bus, "brief-rail-test-") {
		t.Fatal(bus)
	}
}
