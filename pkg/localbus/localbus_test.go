package localbus

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

func receive(t *testing.T, q *Queue, max int, wait time.Duration) []events.SQSMessage {
	t.Helper()
	msgs, err := q.Receive(context.Background(), max, wait)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// fakeClock is the queues' clock in these tests: time passes only when
// the test says so, so no assertion depends on how fast the machine is.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestVisibilityTimeoutRedelivers(t *testing.T) {
	clk := newClock()
	q := NewQueue(QueueConfig{Name: "q", Visibility: 150 * time.Millisecond, Now: clk.Now})
	id, err := q.Send("hello", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	first := receive(t, q, 10, 0)
	if len(first) != 1 || first[0].MessageId != id || first[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("first receive: %+v", first)
	}
	clk.Advance(149 * time.Millisecond)
	if got := receive(t, q, 10, 0); len(got) != 0 {
		t.Fatalf("message visible again inside its visibility timeout: %+v", got)
	}
	clk.Advance(time.Millisecond)
	second := receive(t, q, 10, 0)
	if len(second) != 1 || second[0].MessageId != id {
		t.Fatalf("message did not reappear when the visibility timeout passed: %+v", second)
	}
	if second[0].Attributes["ApproximateReceiveCount"] != "2" || second[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Fatalf("second receive: count %s, receipt %q (first %q)", second[0].Attributes["ApproximateReceiveCount"],
			second[0].ReceiptHandle, first[0].ReceiptHandle)
	}
	if err := q.Delete(first[0].ReceiptHandle); !errors.Is(err, ErrStaleReceipt) {
		t.Fatalf("delete with a stale receipt: %v, want ErrStaleReceipt", err)
	}
	if err := q.Delete(second[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if got := receive(t, q, 10, 0); len(got) != 0 {
		t.Fatalf("deleted message came back: %+v", got)
	}
	if s := q.Stats(); s.Visible+s.InFlight+s.Delayed != 0 {
		t.Fatalf("deleted message still counted: %+v", s)
	}
}

// A long poll returns the message as soon as its visibility timeout passes
// on the real clock (no upper bound on how long that takes: only that it
// comes back, well inside a generous wait).
func TestLongPollWaitsForVisibility(t *testing.T) {
	q := NewQueue(QueueConfig{Name: "q", Visibility: 20 * time.Millisecond})
	q.Send("hello", 0, "")
	first := receive(t, q, 10, 0)
	second := receive(t, q, 10, time.Minute)
	if len(first) != 1 || len(second) != 1 || second[0].MessageId != first[0].MessageId {
		t.Fatalf("long poll: %+v then %+v", first, second)
	}
}

func TestDeletedInTimeDoesNotReappear(t *testing.T) {
	clk := newClock()
	q := NewQueue(QueueConfig{Name: "q", Visibility: 50 * time.Millisecond, Now: clk.Now})
	q.Send("a", 0, "")
	m := receive(t, q, 1, 0)
	if err := q.Delete(m[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	clk.Advance(150 * time.Millisecond)
	if got := receive(t, q, 10, 0); len(got) != 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestDelay(t *testing.T) {
	clk := newClock()
	q := NewQueue(QueueConfig{Name: "q", Visibility: time.Second, Delay: 300 * time.Millisecond, Now: clk.Now})
	q.Send("per-message", 200*time.Millisecond, "")
	q.Send("queue-default", -1, "")
	clk.Advance(199 * time.Millisecond)
	if got := receive(t, q, 10, 0); len(got) != 0 {
		t.Fatalf("delayed message delivered early: %+v", got)
	}
	if s := q.Stats(); s.Delayed != 2 {
		t.Fatalf("stats while delayed: %+v", s)
	}
	clk.Advance(time.Millisecond)
	got := receive(t, q, 10, 0)
	if len(got) != 1 || got[0].Body != "per-message" {
		t.Fatalf("at 200ms: %+v, want only the per-message delay", got)
	}
	clk.Advance(99 * time.Millisecond)
	if got := receive(t, q, 10, 0); len(got) != 0 {
		t.Fatalf("queue default delay (300ms) delivered at 299ms: %+v", got)
	}
	clk.Advance(time.Millisecond)
	got = receive(t, q, 10, 0)
	if len(got) != 1 || got[0].Body != "queue-default" {
		t.Fatalf("queue default delay: %+v at 300ms", got)
	}
	if _, err := q.Send("x", 901*time.Second, ""); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("delay over 900s: %v", err)
	}
}

func TestRedriveToDLQAfterMaxReceiveCount(t *testing.T) {
	clk := newClock()
	dlq := NewQueue(QueueConfig{Name: "dlq", Now: clk.Now})
	q := NewQueue(QueueConfig{Name: "q", Visibility: 20 * time.Millisecond, MaxReceiveCount: 3, DLQ: dlq, Now: clk.Now})
	id, _ := q.Send("poison", 0, "Root=1-abc")
	receives := 0
	for range 10 {
		receives += len(receive(t, q, 10, 0))
		if dlq.Stats().Visible > 0 {
			break
		}
		clk.Advance(20 * time.Millisecond) // the visibility timeout passes; not deleted
	}
	if receives != 3 {
		t.Fatalf("received %d times before redrive, want maxReceiveCount = 3", receives)
	}
	got := receive(t, dlq, 10, 0)
	if len(got) != 1 || got[0].MessageId != id || got[0].Body != "poison" {
		t.Fatalf("DLQ holds %+v", got)
	}
	if got[0].Attributes["DeadLetterQueueSourceArn"] != q.ARN() || got[0].Attributes["AWSTraceHeader"] != "Root=1-abc" {
		t.Fatalf("DLQ attributes %v", got[0].Attributes)
	}
	if s := q.Stats(); s.Visible+s.InFlight+s.Delayed != 0 || s.Redriven != 1 {
		t.Fatalf("source queue after redrive: %+v", s)
	}
}

func TestBatchReceiveLimit(t *testing.T) {
	q := NewQueue(QueueConfig{Name: "q", Visibility: time.Minute})
	for i := range 15 {
		q.Send(strings.Repeat("x", i+1), 0, "")
	}
	if _, err := q.Receive(context.Background(), 11, 0); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("receive 11: %v", err)
	}
	if got := receive(t, q, 10, 0); len(got) != 10 {
		t.Fatalf("first batch %d, want 10", len(got))
	}
	if got := receive(t, q, 10, 0); len(got) != 5 {
		t.Fatalf("second batch %d, want 5", len(got))
	}
}

func TestDuplicateDelivery(t *testing.T) {
	q := NewQueue(QueueConfig{Name: "q", Visibility: time.Minute, Duplicate: 1})
	id, _ := q.Send("twice", 0, "")
	got := receive(t, q, 10, 0)
	if len(got) != 2 || got[0].MessageId != id || got[1].MessageId != id || got[0].ReceiptHandle == got[1].ReceiptHandle {
		t.Fatalf("want the message delivered twice under the fault knob, got %+v", got)
	}
	q.SetDuplicate(0)
	q.Send("once", 0, "")
	if got := receive(t, q, 10, 0); len(got) != 1 {
		t.Fatalf("knob off: %d deliveries", len(got))
	}
}

func loadTemplate(t *testing.T) *samtemplate.Template {
	t.Helper()
	tpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestWiringFollowsTemplate(t *testing.T) {
	tpl := loadTemplate(t)
	w, err := FromTemplate(tpl, "local", "pramaan.domain", 0.01, "TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"TriggerQueue", "BuildQueue"} {
		spec, _ := tpl.Queue(id)
		c := w.Queue(id).Config()
		if c.MaxReceiveCount != spec.RedriveMaxReceiveCount || c.MaxReceiveCount == 0 {
			t.Errorf("%s: maxReceiveCount %d, template %d", id, c.MaxReceiveCount, spec.RedriveMaxReceiveCount)
		}
		if c.DLQ != w.Queue(spec.DLQ) {
			t.Errorf("%s: DLQ is not %s", id, spec.DLQ)
		}
		want := time.Duration(float64(spec.VisibilityTimeout) * 0.01 * float64(time.Second))
		if c.Visibility != want {
			t.Errorf("%s: visibility %s, want %s (template %ds scaled by 0.01)", id, c.Visibility, want, spec.VisibilityTimeout)
		}
	}
}

func event(name, source string, detail map[string]any) Entry {
	b, _ := json.Marshal(detail)
	return Entry{Source: source, DetailType: name, Detail: b}
}

func TestTemplateRuleRoutesDemandFactsOnly(t *testing.T) {
	w, err := FromTemplate(loadTemplate(t), "local", "pramaan.domain", 0.01, "TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	tq := w.Queue("TriggerQueue")
	detail := map[string]any{"event_id": uuid.NewString(), "firm_id": uuid.NewString(), "matter_id": uuid.NewString()}
	cases := []struct {
		name, source string
		routed       bool
	}{
		{"document.uploaded", "pramaan.domain", true},
		{"document.removed", "pramaan.domain", true},
		{"brief.regeneration_requested", "pramaan.domain", true},
		{"frame.built", "pramaan.domain", false}, // the rail's own fact never creates demand
		{"matter.created", "pramaan.domain", false},
		{"document.uploaded", "someone.else", false},
	}
	for _, c := range cases {
		errs, err := w.Bus.PutEvents([]Entry{event(c.name, c.source, detail)})
		if err != nil || errs[0] != nil {
			t.Fatalf("%s: %v %v", c.name, err, errs)
		}
		got := receive(t, tq, 10, 0)
		if c.routed != (len(got) == 1) {
			t.Errorf("%s from %s: routed %d messages, want routed=%v", c.name, c.source, len(got), c.routed)
			continue
		}
		if !c.routed {
			continue
		}
		var env Envelope
		if err := json.Unmarshal([]byte(got[0].Body), &env); err != nil {
			t.Fatal(err)
		}
		var d map[string]any
		json.Unmarshal(env.Detail, &d)
		if env.DetailType != c.name || env.Source != c.source || env.ID == "" || d["event_id"] != detail["event_id"] {
			t.Errorf("envelope %+v", env)
		}
		tq.Delete(got[0].ReceiptHandle)
	}
	if got := receive(t, w.Queue("BuildQueue"), 10, 0); len(got) != 0 {
		t.Errorf("facts reached the build queue: %+v", got)
	}
}

func TestPatternSubset(t *testing.T) {
	p, err := CompilePattern([]byte(`{"source":["a"],"detail":{"kind":["x", 3, true],"inner":{"k":["v"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(src string, kind any, k string) map[string]any {
		return map[string]any{"source": src, "detail": map[string]any{"kind": kind, "inner": map[string]any{"k": k}}}
	}
	if !p.Match(ev("a", "x", "v")) || !p.Match(ev("a", json.Number("3.0"), "v")) || !p.Match(ev("a", true, "v")) {
		t.Error("exact matches should match")
	}
	if p.Match(ev("b", "x", "v")) || p.Match(ev("a", "y", "v")) || p.Match(ev("a", "x", "w")) || p.Match(ev("a", "3", "v")) {
		t.Error("a non-matching value matched")
	}
	if p.Match(map[string]any{"source": "a"}) {
		t.Error("a missing detail key matched")
	}
	if !p.Match(map[string]any{"source": []any{"z", "a"}, "detail": ev("a", "x", "v")["detail"]}) {
		t.Error("an array field matches when any element matches")
	}
	for _, bad := range []string{
		`{"source":[{"prefix":"pra"}]}`,
		`{"detail":{"n":[{"numeric":[">",1]}]}}`,
		`{"source":[{"anything-but":"x"}]}`,
		`{"source":"pramaan.domain"}`,
		`{"source":[]}`,
		`{"source":[["nested"]]}`,
		`{}`,
		`["source"]`,
		`not json`,
	} {
		if _, err := CompilePattern([]byte(bad)); err == nil {
			t.Errorf("pattern %s compiled; want an error", bad)
		}
	}
}

func TestPublisherAndNudgerBodies(t *testing.T) {
	w, err := FromTemplate(loadTemplate(t), "local", "pramaan.domain", 0.01, "TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	var pub rail.Publisher = w.Bus
	id := uuid.New()
	res, err := pub.Publish(context.Background(), []rail.BusEntry{
		{EventID: id, Name: "document.uploaded", Detail: json.RawMessage(`{"event_id":"` + id.String() + `"}`), TraceHeader: "Root=1-x"},
		{EventID: uuid.New(), Name: "document.uploaded", Detail: json.RawMessage(`[1]`)},
	})
	if err != nil || len(res) != 2 || res[0].Err != nil || res[1].Err == nil || res[0].EventID != id {
		t.Fatalf("publish: %v %+v", err, res)
	}
	got := receive(t, w.Queue("TriggerQueue"), 10, 0)
	if len(got) != 1 || got[0].Attributes["AWSTraceHeader"] != "Root=1-x" {
		t.Fatalf("trigger queue: %+v", got)
	}

	var nd rail.Nudger = &Nudger{Queue: w.Queue("BuildQueue"), Exact: true}
	f, m := uuid.New(), uuid.New()
	if err := nd.Nudge(context.Background(), []rail.Nudge{{FirmID: f, MatterID: m, Reason: rail.ReasonFollowUp}}, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	msgs := receive(t, w.Queue("BuildQueue"), 10, time.Second)
	want := `{"v":1,"firm_id":"` + f.String() + `","matter_id":"` + m.String() + `","reason":"follow_up"}`
	if len(msgs) != 1 || msgs[0].Body != want {
		t.Fatalf("nudge body %+v, want %s", msgs, want)
	}
	if err := nd.Nudge(context.Background(), []rail.Nudge{{FirmID: f, MatterID: m, Reason: "please"}}, 0); err == nil {
		t.Fatal("a nudge with an unknown reason was sent")
	}
}

func TestPollerDeletesOnlySuccesses(t *testing.T) {
	clk := newClock()
	q := NewQueue(QueueConfig{Name: "q", Visibility: 100 * time.Millisecond, Now: clk.Now})
	good, _ := q.Send("good", 0, "")
	bad, _ := q.Send("bad", 0, "")
	var calls atomic.Int32
	p := &Poller{Name: "t", Source: q, Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		calls.Add(1)
		var r events.SQSEventResponse
		for _, m := range ev.Records {
			if m.Body == "bad" {
				r.BatchItemFailures = append(r.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return r, nil
	}}
	if n, err := p.PollOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("poll: %d %v", n, err)
	}
	clk.Advance(100 * time.Millisecond)
	got := receive(t, q, 10, 0)
	if len(got) != 1 || got[0].MessageId != bad {
		t.Fatalf("after a partial failure the queue redelivers %+v; want only %s (not %s)", got, bad, good)
	}

	// A handler error fails the whole batch: nothing is deleted.
	q2 := NewQueue(QueueConfig{Name: "q2", Visibility: 50 * time.Millisecond, Now: clk.Now})
	q2.Send("a", 0, "")
	q2.Send("b", 0, "")
	var reported atomic.Int32
	p2 := &Poller{Name: "t2", Source: q2, OnError: func(error) { reported.Add(1) },
		Handler: func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		}}
	p2.PollOnce(context.Background())
	clk.Advance(50 * time.Millisecond)
	if got := receive(t, q2, 10, 0); len(got) != 2 || reported.Load() != 1 {
		t.Fatalf("after a failed invocation: %d messages back, %d errors reported", len(got), reported.Load())
	}
}
