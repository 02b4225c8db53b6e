package eventbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/aws/eventbridge"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// fakeBus speaks EventBridge's PutEvents over the awsJson1.1 protocol, for
// what moto cannot do: refuse single entries (FailedEntryCount, per-entry
// ErrorCode) and fail a whole call. The client under test is the real SDK
// client, pointed here through BaseEndpoint.
type fakeBus struct {
	mu       sync.Mutex
	reject   map[string]string        // event_id → refuse the entry with this ErrorCode
	delay    map[string]time.Duration // event_id → answer a call carrying it this late
	failCall bool                     // refuse whole calls (400 ValidationException)
	calls    [][]putEntry
}

type putEntry struct {
	Source       string
	DetailType   string
	Detail       string
	EventBusName string
	TraceHeader  string
}

func (f *fakeBus) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if got := req.Header.Get("X-Amz-Target"); got != "AWSEvents.PutEvents" {
		http.Error(w, "unexpected target "+got, http.StatusBadRequest)
		return
	}
	var in struct{ Entries []putEntry }
	if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	var wait time.Duration
	for _, e := range in.Entries {
		wait = max(wait, f.delay[eventIDOf(e)])
	}
	f.mu.Unlock()
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-req.Context().Done(): // the client gave up (its deadline)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if f.failCall {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ValidationException","message":"the test refuses this call"}`))
		return
	}
	f.calls = append(f.calls, in.Entries)
	type result struct {
		EventId      string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	out := struct {
		FailedEntryCount int
		Entries          []result
	}{}
	for _, e := range in.Entries {
		id := eventIDOf(e)
		if code := f.reject[id]; code != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: code, ErrorMessage: "the test refuses " + id})
			continue
		}
		out.Entries = append(out.Entries, result{EventId: uuid.NewString()})
	}
	_ = json.NewEncoder(w).Encode(out)
}

func eventIDOf(e putEntry) string {
	var d struct {
		EventID string `json:"event_id"`
	}
	_ = json.Unmarshal([]byte(e.Detail), &d)
	return d.EventID
}

// set changes the bus's behaviour under its lock (the server goroutine reads it).
func (f *fakeBus) set(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
}

func (f *fakeBus) callSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n []int
	for _, c := range f.calls {
		n = append(n, len(c))
	}
	return n
}

func fakePublisher(t *testing.T, f *fakeBus) *eventbridge.Publisher {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(srv.URL),
	}
	return eventbridge.New(cfg, "brief-rail-contract", "")
}

type outboxRow struct {
	published, parked bool
	attempts          int
	lastError         string
	backoffSeconds    float64
}

func row(t *testing.T, db *railtest.DB, id uuid.UUID) outboxRow {
	t.Helper()
	var r outboxRow
	err := db.Pool.QueryRow(context.Background(), `SELECT published_at IS NOT NULL, parked_at IS NOT NULL, publish_attempts, last_error,
        coalesce(extract(epoch FROM next_attempt_at - clock_timestamp())::float8, 0)
        FROM ops.outbox_facts WHERE event_id = $1`, id).Scan(&r.published, &r.parked, &r.attempts, &r.lastError, &r.backoffSeconds)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPublisherSplitsAndMapsResults(t *testing.T) {
	t.Parallel()
	f := &fakeBus{reject: map[string]string{}}
	p := fakePublisher(t, f)
	var entries []rail.BusEntry
	codes := map[int]string{4: "InternalFailure", 9: "ThrottlingException", 17: "MalformedDetail", 20: "NotAuthorizedForSourceException"}
	for i := range 23 {
		id := uuid.New()
		if c := codes[i]; c != "" {
			f.reject[id.String()] = c
		}
		entries = append(entries, rail.BusEntry{EventID: id, Name: "document.uploaded",
			Detail: json.RawMessage(`{"event_id":"` + id.String() + `"}`)})
	}
	entries[0].TraceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793"
	res, err := p.Publish(context.Background(), entries)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.callSizes(); len(got) != 3 || got[0] != 10 || got[1] != 10 || got[2] != 3 {
		t.Fatalf("call sizes %v, want [10 10 3]", got)
	}
	for i, r := range res {
		var ee *eventbridge.EntryError
		code := codes[i]
		rejected := code != ""
		if r.EventID != entries[i].EventID || rejected != (r.Err != nil) || (rejected && (!errors.As(r.Err, &ee) || ee.Code != code)) {
			t.Errorf("result %d: %+v (rejected %v)", i, r, rejected)
		}
		// The API reference's retryable codes are not permanent; its
		// non-retryable ones are.
		if permanent := code == "MalformedDetail" || code == "NotAuthorizedForSourceException"; rejected && errors.Is(r.Err, rail.ErrPermanentRefusal) != permanent {
			t.Errorf("result %d (%s): permanent %v, want %v", i, code, errors.Is(r.Err, rail.ErrPermanentRefusal), permanent)
		}
	}
	first := f.calls[0][0]
	if first.Source != rail.DefaultEventSource || first.DetailType != "document.uploaded" || first.EventBusName != "brief-rail-contract" ||
		first.TraceHeader != entries[0].TraceHeader || f.calls[0][1].TraceHeader != "" {
		t.Errorf("entry on the wire: %+v", first)
	}
	f.set(func() { f.failCall = true })
	if _, err := p.Publish(context.Background(), entries[:2]); err == nil || !strings.Contains(err.Error(), "ValidationException") ||
		!errors.Is(err, rail.ErrPermanentRefusal) {
		t.Errorf("whole-call failure: %v; want a ValidationException, permanent", err)
	}
}

func TestRelayPartialPutEventsFailure(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	f := &fakeBus{reject: map[string]string{}}
	pub := fakePublisher(t, f)
	ref := newRef(t, db.Pool)
	var ids []uuid.UUID
	for range 12 {
		ids = append(ids, record(t, db.Pool, matterFact(ref, "document.uploaded", map[string]string{"document_id": uuid.NewString()})))
	}
	// poison: refused permanently; flaky: throttled, then accepted;
	// throttled: refused with a retryable code for the whole test.
	poison, flaky, throttled := ids[2], ids[11], ids[0]
	f.reject[poison.String()] = "MalformedDetail"
	f.reject[flaky.String()] = "ThrottlingException"

	slow := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: pub, Backoff: time.Hour}
	st, err := slow.DrainOnce(ctx)
	if err != nil || st.Published != 10 || st.Failed != 2 || st.Parked != 0 {
		t.Fatalf("first pass: %+v %v; want 10 published, 2 failed", st, err)
	}
	for _, id := range ids {
		r := row(t, db, id)
		if id == poison || id == flaky {
			if r.published || r.attempts != 1 || !strings.Contains(r.lastError, f.reject[id.String()]) || r.backoffSeconds < 3500 {
				t.Errorf("refused row %s: %+v; want unpublished, 1 attempt, error recorded, backed off ~1h", id, r)
			}
		} else if !r.published {
			t.Errorf("accepted row %s not marked", id)
		}
	}
	calls := len(f.callSizes())
	if st, err := slow.DrainOnce(ctx); err != nil || st.Published+st.Failed != 0 || len(f.callSizes()) != calls {
		t.Fatalf("a row in backoff was retried at once: %+v %v", st, err)
	}

	// Time machine: the backoff is over. The flaky row now goes through; the
	// poison row keeps failing and is parked after MaxAttempts, while new
	// facts keep flowing past it.
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET next_attempt_at = NULL`); err != nil {
		t.Fatal(err)
	}
	f.set(func() {
		delete(f.reject, flaky.String())
		f.reject[throttled.String()] = "InternalFailure" // published already: no effect
	})
	throttledLate := record(t, db.Pool, matterFact(ref, "document.uploaded", map[string]string{"document_id": uuid.NewString()}))
	f.set(func() { f.reject[throttledLate.String()] = "InternalFailure" })
	fast := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: pub, MaxAttempts: 3, Backoff: time.Millisecond, BackoffMax: time.Millisecond}
	var later []uuid.UUID
	for i := 0; i < 100 && !row(t, db, poison).parked; i++ {
		later = append(later, record(t, db.Pool, matterFact(ref, "document.removed", map[string]string{"document_id": uuid.NewString()})))
		if _, err := fast.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p := row(t, db, poison)
	if !p.parked || p.attempts != 3 || !strings.Contains(p.lastError, "the test refuses") {
		t.Fatalf("poison row: %+v; want parked after 3 attempts with its error", p)
	}
	// Refused with InternalFailure on every pass, more often than the
	// poison row's MaxAttempts: backed off, never parked.
	for i := 0; i < 100 && row(t, db, throttledLate).attempts < 5; i++ {
		if _, err := fast.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r := row(t, db, throttledLate); r.parked || r.published || r.attempts < 5 {
		t.Errorf("row refused with a retryable code: %+v; want it retried, never parked", r)
	}
	f.set(func() { delete(f.reject, throttledLate.String()) })
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET next_attempt_at = NULL WHERE event_id = $1`, throttledLate); err != nil {
		t.Fatal(err)
	}
	if st, err := fast.DrainOnce(ctx); err != nil || st.Backlog != 0 || st.ParkedTotal != 1 {
		t.Fatalf("after parking: %+v %v", st, err)
	}
	for _, id := range append([]uuid.UUID{flaky}, later...) {
		if !row(t, db, id).published {
			t.Errorf("row %s blocked behind the poison row", id)
		}
	}

	// A whole call failing: nothing marked, the attempt and error recorded,
	// never parked for it.
	f.set(func() { f.failCall = true })
	victim := record(t, db.Pool, matterFact(ref, "document.uploaded", nil))
	for range 4 {
		if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET next_attempt_at = NULL WHERE event_id = $1`, victim); err != nil {
			t.Fatal(err)
		}
		if _, err := fast.DrainOnce(ctx); err == nil || !strings.Contains(err.Error(), "ValidationException") {
			t.Fatalf("whole-call failure not reported: %v", err)
		}
	}
	if r := row(t, db, victim); r.published || r.parked || r.attempts != 4 || !strings.Contains(r.lastError, "PutEvents call failed") {
		t.Fatalf("after failed calls: %+v", r)
	}
	f.set(func() { f.failCall = false })
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET next_attempt_at = NULL WHERE event_id = $1`, victim); err != nil {
		t.Fatal(err)
	}
	if st, err := fast.DrainOnce(ctx); err != nil || st.Published != 1 {
		t.Fatalf("after recovery: %+v %v", st, err)
	}
}

// A call carrying one retried row that the pass's own publish budget cuts
// (the bus is slow, not refusing) backs the row off without counting it
// toward parking, even though another call of the pass succeeded. (Before,
// it counted as a refusal: with MaxAttempts 1 the row was parked at once.)
func TestRelayDeadlineCutDoesNotCountTowardParking(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	f := &fakeBus{reject: map[string]string{}, delay: map[string]time.Duration{}}
	pub := fakePublisher(t, f)
	ref := newRef(t, db.Pool)
	slowRow := record(t, db.Pool, matterFact(ref, "document.uploaded", map[string]string{"document_id": uuid.NewString()}))
	// It failed once before, so it is sent in a call of its own.
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET publish_attempts = 1, last_error = 'earlier',
        next_attempt_at = clock_timestamp() - interval '1 second' WHERE event_id = $1`, slowRow); err != nil {
		t.Fatal(err)
	}
	var fresh []uuid.UUID
	for range 3 {
		fresh = append(fresh, record(t, db.Pool, matterFact(ref, "document.uploaded", map[string]string{"document_id": uuid.NewString()})))
	}
	f.set(func() { f.delay[slowRow.String()] = 5 * time.Second })
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: pub, MaxAttempts: 1, PublishTimeout: 500 * time.Millisecond}
	st, err := r.DrainOnce(ctx)
	if err == nil || st.Published != 3 || st.Parked != 0 {
		t.Fatalf("pass: %+v %v; want the 3 fresh rows published, the slow call cut (an error), nothing parked", st, err)
	}
	if got := row(t, db, slowRow); got.parked || got.published || !strings.Contains(got.lastError, "cut by the pass's publish budget") {
		t.Fatalf("row whose call the budget cut: %+v; want it backed off, not parked, the cut recorded", got)
	}
	var refusals int
	if err := db.Pool.QueryRow(ctx, `SELECT publish_refusals FROM ops.domain_event_outbox WHERE event_id = $1`, slowRow).Scan(&refusals); err != nil || refusals != 0 {
		t.Fatalf("refusals %d (%v), want 0", refusals, err)
	}
}
