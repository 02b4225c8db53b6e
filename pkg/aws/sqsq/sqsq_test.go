package sqsq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/rail"
)

var moto *motoserver.Server

func TestMain(m *testing.M) {
	s, err := motoserver.Start(context.Background(), nil)
	switch {
	case errors.Is(err, motoserver.ErrNotInstalled) && !ci.Enabled():
		fmt.Fprintln(os.Stderr, "sqsq: SQS tests will skip:", err)
	case err != nil:
		fmt.Fprintln(os.Stderr, "sqsq:", err)
		os.Exit(1)
	default:
		moto = s
	}
	code := railtest.Run(m)
	if moto != nil {
		_ = moto.Stop()
	}
	os.Exit(code)
}

func client(t *testing.T) *sqs.Client {
	c, _ := recordingClient(t)
	return c
}

// wireLog is an HTTP client that keeps every request body it forwards, so a
// test can check what went on the wire when the emulator drops a field.
type wireLog struct {
	mu     sync.Mutex
	bodies []string
}

func (w *wireLog) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		w.mu.Lock()
		w.bodies = append(w.bodies, string(b))
		w.mu.Unlock()
	}
	return http.DefaultClient.Do(r)
}

func (w *wireLog) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.bodies, "\n")
}

func recordingClient(t *testing.T) (*sqs.Client, *wireLog) {
	t.Helper()
	if moto == nil {
		ci.MissingTool(t, `moto_server is not installed (pip install "moto[server]")`)
	}
	cfg, err := moto.AWSConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := &wireLog{}
	cfg.HTTPClient = w
	return sqs.NewFromConfig(cfg), w
}

func queue(t *testing.T, c *sqs.Client) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("q-" + uuid.NewString()[:8])})
	if err != nil {
		t.Fatal(err)
	}
	return *out.QueueUrl
}

func receiveAll(t *testing.T, c *sqs.Client, url string, want int, within time.Duration) []types.Message {
	t.Helper()
	var got []types.Message
	deadline := time.Now().Add(within)
	for len(got) < want && time.Now().Before(deadline) {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out.Messages...)
	}
	return got
}

func TestNudgerSendsBatchesWithTraceHeaderAndDelay(t *testing.T) {
	c, wire := recordingClient(t)
	url := queue(t, c)
	n := sqsq.NewNudger(c, url)
	var sent []rail.Nudge
	for i := range 23 { // three SendMessageBatch calls
		nd := rail.Nudge{V: 1, FirmID: uuid.New(), MatterID: uuid.New(), Reason: rail.ReasonDemand}
		if i%2 == 0 {
			nd.TraceHeader = fmt.Sprintf("Root=1-6968b3d8-0123456789abcdef0123%04d;Parent=0123456789abcdef;Sampled=1", i)
		}
		sent = append(sent, nd)
	}
	if err := n.Nudge(context.Background(), sent, 0); err != nil {
		t.Fatal(err)
	}
	got := receiveAll(t, c, url, len(sent), 20*time.Second)
	if len(got) != len(sent) {
		t.Fatalf("received %d, sent %d", len(got), len(sent))
	}
	byMatter := map[uuid.UUID]rail.Nudge{}
	for _, s := range sent {
		byMatter[s.MatterID] = s
	}
	for _, m := range got {
		nd, err := sqsq.DecodeNudge(*m.Body)
		if err != nil {
			t.Fatal(err)
		}
		want := byMatter[nd.MatterID]
		if nd.FirmID != want.FirmID || nd.Reason != want.Reason {
			t.Fatalf("got %+v, want %+v", nd, want)
		}
		// moto 5.2 drops MessageSystemAttributes in SendMessageBatch (SQS
		// keeps them), so check the wire; a header that does arrive must match.
		if h := m.Attributes[string(types.MessageSystemAttributeNameAWSTraceHeader)]; h != "" && h != want.TraceHeader {
			t.Fatalf("AWSTraceHeader %q, want %q", h, want.TraceHeader)
		}
	}
	onWire := wire.all()
	for _, s := range sent {
		if s.TraceHeader != "" && !strings.Contains(onWire, `"AWSTraceHeader":{"DataType":"String","StringValue":"`+s.TraceHeader+`"}`) {
			t.Fatalf("trace header %q not sent as the AWSTraceHeader system attribute", s.TraceHeader)
		}
	}
	if strings.Count(onWire, `"Entries"`) != 3 {
		t.Fatalf("want three SendMessageBatch calls for 23 nudges")
	}

	// The settle delay: invisible at first, delivered after it.
	delayed := []rail.Nudge{{V: 1, FirmID: uuid.New(), MatterID: uuid.New(), Reason: rail.ReasonFollowUp}}
	start := time.Now()
	if err := n.Nudge(context.Background(), delayed, 1500*time.Millisecond); err != nil { // rounds up to 2 s
		t.Fatal(err)
	}
	got = receiveAll(t, c, url, 1, 10*time.Second)
	if len(got) != 1 || time.Since(start) < 2*time.Second {
		t.Fatalf("got %d after %s: want one message, no sooner than the 2 s delay", len(got), time.Since(start))
	}
}

func TestNudgerErrors(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	nd := []rail.Nudge{{V: 1, FirmID: uuid.New(), MatterID: uuid.New(), Reason: rail.ReasonSweep}}
	if err := sqsq.NewNudger(c, queue(t, c)).Nudge(ctx, nd, 901*time.Second); err == nil {
		t.Fatal("a delay over 900 s was accepted")
	}
	missing := strings.TrimSuffix(queue(t, c), "/") + "-missing"
	if err := sqsq.NewNudger(c, missing).Nudge(ctx, nd, 0); err == nil {
		t.Fatal("sending to a missing queue reported success")
	}
	bad := []rail.Nudge{{V: 1, FirmID: uuid.New(), MatterID: uuid.New(), Reason: "because"}}
	if err := sqsq.NewNudger(c, queue(t, c)).Nudge(ctx, bad, 0); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Fatalf("an unknown reason was sent: %v", err)
	}
}

func TestDecodeNudge(t *testing.T) {
	f, m := uuid.NewString(), uuid.NewString()
	ok := fmt.Sprintf(`{"v":1,"firm_id":%q,"matter_id":%q,"reason":"follow_up"}`, f, m)
	nd, err := sqsq.DecodeNudge(ok)
	if err != nil || nd.FirmID.String() != f || nd.MatterID.String() != m || nd.Reason != rail.ReasonFollowUp {
		t.Fatalf("%+v, %v", nd, err)
	}
	for body, want := range map[string]string{
		``:         "not a valid nudge",
		`not json`: "not a valid nudge",
		`[1,2]`:    "not a valid nudge",
		fmt.Sprintf(`{"v":2,"firm_id":%q,"matter_id":%q,"reason":"demand"}`, f, m):             "version 2",
		fmt.Sprintf(`{"firm_id":%q,"matter_id":%q,"reason":"demand"}`, f, m):                   "version 0",
		fmt.Sprintf(`{"v":1,"matter_id":%q,"reason":"demand"}`, m):                             "no firm_id",
		fmt.Sprintf(`{"v":1,"firm_id":%q,"reason":"demand"}`, f):                               "no matter_id",
		fmt.Sprintf(`{"v":1,"firm_id":"nope","matter_id":%q,"reason":"demand"}`, m):            "not a valid nudge",
		fmt.Sprintf(`{"v":1,"firm_id":%q,"matter_id":%q,"reason":"please"}`, f, m):             `reason "please"`,
		fmt.Sprintf(`{"v":1,"firm_id":%q,"matter_id":%q,"reason":"demand","x":1}`, f, m):       "unknown field",
		fmt.Sprintf(`{"v":1,"firm_id":%q,"matter_id":%q,"reason":"demand"} {}`, f, m):          "after the JSON",
		fmt.Sprintf(`{"v":1,"firm_id":%q,"matter_id":%q,"reason":"demand","trace":"x"}`, f, m): "unknown field",
	} {
		if _, err := sqsq.DecodeNudge(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeNudge(%q) = %v, want an error containing %q", body, err, want)
		}
	}
	// Round trip through the encoder.
	b, err := sqsq.EncodeNudge(rail.Nudge{FirmID: nd.FirmID, MatterID: nd.MatterID, Reason: rail.ReasonSweep, TraceHeader: "Root=x"})
	if err != nil || strings.Contains(b, "Root") {
		t.Fatalf("%s, %v: the trace header must not be in the body", b, err)
	}
	if back, err := sqsq.DecodeNudge(b); err != nil || back.Reason != rail.ReasonSweep {
		t.Fatalf("%+v %v", back, err)
	}
}

func TestDecodeEnvelope(t *testing.T) {
	raw, err := os.ReadFile("../../../events/trigger.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	env, err := sqsq.DecodeEnvelope(ev.Records[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	if env.DetailType != rail.FactDocumentUploaded || env.Source != "pramaan.domain" || env.Detail.EventName != rail.FactDocumentUploaded ||
		env.Detail.EventID.String() != "44444444-4444-4444-8444-444444444444" || env.Detail.MatterID.UUID.String() != "22222222-2222-4222-8222-222222222222" {
		t.Fatalf("%+v", env)
	}
	good := map[string]any{"event_id": uuid.NewString(), "event_name": "document.uploaded", "firm_id": uuid.NewString(),
		"matter_id": uuid.NewString(), "occurred_at": "2026-01-15T09:29:59Z", "payload": map[string]string{}}
	detail := func(change func(map[string]any)) string {
		d := map[string]any{}
		for k, v := range good {
			d[k] = v
		}
		change(d)
		b, _ := json.Marshal(map[string]any{"version": "0", "id": "x", "detail-type": "document.uploaded", "source": "pramaan.domain", "detail": d})
		return string(b)
	}
	if env, err := sqsq.DecodeEnvelope(detail(func(map[string]any) {})); err != nil || env.Detail.EventID.String() != good["event_id"] {
		t.Fatalf("%+v %v", env, err)
	}
	for body, want := range map[string]string{
		`{`:                                "not an EventBridge envelope",
		`{"source":"s","detail":{}}`:       "no detail-type",
		`{"detail-type":"d","detail":{}}`:  "no source",
		`{"detail-type":"d","source":"s"}`: "no detail",
		detail(func(d map[string]any) { delete(d, "event_id") }):           "event_id",
		detail(func(d map[string]any) { delete(d, "firm_id") }):            "firm_id",
		detail(func(d map[string]any) { d["matter_id"] = "22" }):           "matter_id",
		detail(func(d map[string]any) { d["event_id"] = "zz" }):            "event_id",
		detail(func(d map[string]any) { d["event_name"] = "frame.built" }): "event_name",
		`{"detail-type":"d","source":"s","detail":"a string"}`:             "fact detail",
	} {
		if _, err := sqsq.DecodeEnvelope(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeEnvelope(%s) = %v, want an error containing %q", body, err, want)
		}
	}
}

// The trigger takes facts only from the rail's source: EventBridge lets any
// principal with PutEvents on the bus set any source not starting "aws.".
func TestDecodeRailEnvelopeRefusesAForeignSource(t *testing.T) {
	body := `{"id":"e1","detail-type":"document.uploaded","source":"attacker.domain","detail":{"event_id":"44444444-4444-4444-8444-444444444444",` +
		`"event_name":"document.uploaded","firm_id":"11111111-1111-4111-8111-111111111111","matter_id":"22222222-2222-4222-8222-222222222222",` +
		`"occurred_at":"2026-01-15T09:29:59.512Z","payload":{}}}`
	if _, err := sqsq.DecodeRailEnvelope(body, "pramaan.domain"); !errors.Is(err, sqsq.ErrForeignSource) {
		t.Fatalf("foreign source: %v, want ErrForeignSource", err)
	}
	ok := strings.Replace(body, "attacker.domain", "pramaan.domain", 1)
	if _, err := sqsq.DecodeRailEnvelope(ok, "pramaan.domain"); err != nil {
		t.Fatalf("the rail's source: %v", err)
	}
	if _, err := sqsq.DecodeRailEnvelope(ok, ""); !errors.Is(err, sqsq.ErrForeignSource) {
		t.Fatalf("no configured source must take nothing: %v", err)
	}
}

// Every nudge carries its firm id as MessageGroupId (SQS fair queues on a
// standard queue), whatever its reason, in every batch: on the wire, and as
// moto keeps it, in the received message's MessageGroupId attribute.
func TestNudgerSendsFirmAsMessageGroupID(t *testing.T) {
	c, wire := recordingClient(t)
	url := queue(t, c)
	n := sqsq.NewNudger(c, url)
	reasons := []string{rail.ReasonDemand, rail.ReasonFollowUp, rail.ReasonSweep, rail.ReasonBackfill, rail.ReasonRetry}
	firms := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	var sent []rail.Nudge
	for i := range 23 { // three SendMessageBatch calls
		sent = append(sent, rail.Nudge{V: 1, FirmID: firms[i%len(firms)], MatterID: uuid.New(), Reason: reasons[i%len(reasons)]})
	}
	if err := n.Nudge(context.Background(), sent, 0); err != nil {
		t.Fatal(err)
	}
	var entries int
	for _, body := range strings.Split(wire.all(), "\n") {
		var req struct {
			Entries []struct {
				MessageBody    string
				MessageGroupId *string
			}
		}
		if json.Unmarshal([]byte(body), &req) != nil || len(req.Entries) == 0 {
			continue
		}
		for _, e := range req.Entries {
			entries++
			nd, err := sqsq.DecodeNudge(e.MessageBody)
			if err != nil {
				t.Fatal(err)
			}
			if e.MessageGroupId == nil || *e.MessageGroupId != nd.FirmID.String() {
				t.Fatalf("entry for %s (%s) went with MessageGroupId %v, want its firm id", nd.Ref(), nd.Reason, e.MessageGroupId)
			}
		}
	}
	if entries != len(sent) {
		t.Fatalf("saw %d entries on the wire, sent %d", entries, len(sent))
	}
	got := receiveAll(t, c, url, len(sent), 20*time.Second)
	if len(got) != len(sent) {
		t.Fatalf("received %d, sent %d", len(got), len(sent))
	}
	for _, m := range got {
		nd, err := sqsq.DecodeNudge(*m.Body)
		if err != nil {
			t.Fatal(err)
		}
		if g := m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]; g != nd.FirmID.String() {
			t.Fatalf("received %s with MessageGroupId %q, want firm %s", nd.Ref(), g, nd.FirmID)
		}
	}
}
