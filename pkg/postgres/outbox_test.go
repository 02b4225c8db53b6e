package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

var (
	goodNames = []string{"matter.created", "document.uploaded", "brief.regeneration_requested",
		"frame.built", "document.removed", "brief.rebuilt", "document.withdrawn", "invoice.paid",
		"matter_note.written", "doc2.sent", "terms.agreed", "document.shed"}
	badNames = []string{"Matter.Created", "matter", "brief.rebuild", "rebuild.brief.now", "document.upload",
		"", "document.", ".uploaded", "document.need", "document.embed", "document.set", "brief.regenerate",
		"document__x.uploaded", "document.uploaded_", "document.up-loaded", "document.uploaded ",
		"1doc.uploaded", "brief.regeneration_request", "document." + strings.Repeat("a", 130) + "ed"}
)

// The database is the authority: raw inserts that bypass the Go check are
// refused by the named CHECK, and it agrees with ValidEventName.
func TestEventNameCheckInDatabase(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	insert := func(name string) error {
		_, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name) VALUES ($1, $2)`,
			uuid.New(), name)
		return err
	}
	for _, n := range goodNames {
		if err := insert(n); err != nil {
			t.Errorf("database refused %q: %v", n, err)
		}
	}
	for _, n := range badNames {
		err := insert(n)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23514" || pe.ConstraintName != "outbox_event_name_is_past_tense_fact" {
			t.Errorf("database accepted or misreported %q: %v", n, err)
			continue
		}
		if !strings.Contains(err.Error(), "outbox_event_name_is_past_tense_fact") {
			t.Errorf("error for %q does not name the constraint: %v", n, err)
		}
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox`).Scan(&n); err != nil || n != len(goodNames) {
		t.Fatalf("rows = %d (%v), want %d", n, err, len(goodNames))
	}
}

// payloadOfSize builds a one-key payload whose jsonb text is exactly n bytes.
func payloadOfSize(n int) map[string]string {
	// {"document_id": "xxx"} = 19 bytes of framing around the value.
	return map[string]string{"document_id": strings.Repeat("x", n-19)}
}

func TestRecordFactPayloadLimits(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	firm := uuid.New()

	id, err := postgres.RecordFact(ctx, db.Pool, rail.Fact{FirmID: firm, Name: "document.uploaded", Payload: payloadOfSize(4096)})
	if err != nil {
		t.Fatalf("a 4096-byte payload was refused: %v", err)
	}
	var size int
	if err := db.Pool.QueryRow(ctx, `SELECT octet_length(payload::text) FROM ops.domain_event_outbox WHERE event_id = $1`, id).Scan(&size); err != nil || size != 4096 {
		t.Fatalf("stored payload is %d bytes (%v), want exactly 4096 (the Go size estimate is off)", size, err)
	}

	// Oversize: refused before insert, so the transaction is not even aborted.
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	_, err = postgres.RecordFact(ctx, tx, rail.Fact{FirmID: firm, Name: "document.uploaded", Payload: payloadOfSize(4097)})
	if !errors.Is(err, rail.ErrPayloadTooLarge) {
		t.Fatalf("4097-byte payload: %v, want ErrPayloadTooLarge", err)
	}
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
		t.Fatalf("the refusal reached the database (transaction aborted): %v", err)
	}
	tx.Rollback(ctx)

	// The CHECKs are there for writers that bypass RecordFact.
	for _, c := range []struct{ payload, constraint string }{
		{`{"document_id": "` + strings.Repeat("x", 4097-19) + `"}`, "outbox_payload_at_most_4kb"},
		{`["document_id"]`, "outbox_payload_is_object"},
	} {
		_, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, payload) VALUES ($1, 'document.uploaded', $2::jsonb)`, firm, c.payload)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.ConstraintName != c.constraint {
			t.Errorf("raw insert: %v, want a violation of %s", err, c.constraint)
		}
	}
	for _, f := range []rail.Fact{
		{Name: "document.uploaded"}, // no firm
		{FirmID: firm, Name: "document.uploaded", Payload: map[string]string{"Document-ID": "x"}}, // bad key
	} {
		if _, err := postgres.RecordFact(ctx, db.Pool, f); err == nil {
			t.Errorf("RecordFact(%+v) succeeded", f)
		}
	}
}

// A fact and the record it describes commit together or not at all.
func TestRecordFactIsAtomicWithTheRecord(t *testing.T) {
	b := setup(t, rail.Config{})
	ctx := b.ctx
	count := func(q string) int {
		var n int
		if err := b.pool.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	addWithFact := func(name string) error {
		return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			id, err := postgres.AddDocument(ctx, tx, b.ref, rail.NewDocument{Name: "complaint.pdf", Pages: []string{"p1"}})
			if err != nil {
				return err
			}
			_, err = postgres.RecordFact(ctx, tx, rail.Fact{FirmID: b.ref.FirmID,
				MatterID: uuid.NullUUID{UUID: b.ref.MatterID, Valid: true},
				Name:     name, Payload: map[string]string{"document_id": id.String()}})
			return err
		})
	}
	if err := addWithFact("document.upload"); err == nil {
		t.Fatal("wish-like name accepted")
	}
	if d, f := count(`SELECT count(*) FROM app.documents`), count(`SELECT count(*) FROM ops.domain_event_outbox`); d != 0 || f != 0 {
		t.Fatalf("half-written: %d documents, %d facts after a refused fact", d, f)
	}

	// The database refusing the fact aborts the transaction: even a careless
	// COMMIT cannot keep the document.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.AddDocument(ctx, tx, b.ref, rail.NewDocument{Name: "answer.pdf", Pages: []string{"p1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name) VALUES ($1, 'document.upload')`, b.ref.FirmID); err == nil {
		t.Fatal("database accepted document.upload")
	}
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("commit after a refused fact succeeded")
	}
	if d := count(`SELECT count(*) FROM app.documents`); d != 0 {
		t.Fatalf("%d documents survived a refused fact", d)
	}

	if err := addWithFact("document.uploaded"); err != nil {
		t.Fatal(err)
	}
	if d, f := count(`SELECT count(*) FROM app.documents`), count(`SELECT count(*) FROM ops.domain_event_outbox`); d != 1 || f != 1 {
		t.Fatalf("%d documents, %d facts; want 1 and 1", d, f)
	}
}

// sink is a test double of the rail.Publisher port (not of AWS: the real
// EventBridge adapter is tested against moto_server and an httptest
// server in pkg/aws/eventbridge). Tests use it where what reached the bus must
// be counted exactly.
type sink struct {
	mu      sync.Mutex
	got     map[uuid.UUID]int
	at      map[uuid.UUID]time.Time // first publish
	calls   int
	maxSize int
	delay   time.Duration
	reject  map[uuid.UUID]bool // refused permanently (MalformedDetail)
	// retryable: refused with a retryable code (ThrottlingException or
	// InternalFailure, alternately).
	retryable map[uuid.UUID]bool
	// failCallWith: a call carrying any of these fails as a whole.
	failCallWith map[uuid.UUID]bool
	details      map[uuid.UUID]rail.FactDetail // as the trigger decodes them
	maxBytes     int                           // the largest call, as EventBridge counts it
}

func newSink() *sink {
	return &sink{got: map[uuid.UUID]int{}, at: map[uuid.UUID]time.Time{}, reject: map[uuid.UUID]bool{},
		retryable: map[uuid.UUID]bool{}, details: map[uuid.UUID]rail.FactDetail{}}
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func (s *sink) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	now := time.Now()
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.maxSize = max(s.maxSize, len(entries))
	size := 0
	for _, e := range entries {
		size += rail.EntrySize(e.Name, e.Detail)
		if s.failCallWith[e.EventID] {
			return nil, fmt.Errorf("ValidationException: a request entry is invalid (failed by the test): %w", rail.ErrPermanentRefusal)
		}
	}
	s.maxBytes = max(s.maxBytes, size)
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i].EventID = e.EventID
		if d, err := rail.DecodeFactDetail(e.Detail); err == nil {
			s.details[e.EventID] = d
		}
		if s.reject[e.EventID] {
			out[i].Err = fmt.Errorf("MalformedDetail: refused by the test: %w", rail.ErrPermanentRefusal)
			continue
		}
		if s.retryable[e.EventID] {
			out[i].Err = errors.New([]string{"ThrottlingException", "InternalFailure"}[s.calls%2] + ": refused by the test, retryable")
			continue
		}
		s.got[e.EventID]++
		if _, ok := s.at[e.EventID]; !ok {
			s.at[e.EventID] = now
		}
	}
	return out, nil
}

func (s *sink) counts() (distinct, total, dup int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.got {
		distinct++
		total += n
		if n > 1 {
			dup += n - 1
		}
	}
	return
}

func recordN(t testing.TB, pool *pgxpool.Pool, n int) []uuid.UUID {
	t.Helper()
	ctx := context.Background()
	ids := make([]uuid.UUID, 0, n)
	batch := &pgx.Batch{}
	firm := uuid.New()
	for i := 0; i < n; i++ {
		id := uuid.New()
		ids = append(ids, id)
		batch.Queue(`INSERT INTO ops.domain_event_outbox (event_id, firm_id, event_name, payload) VALUES ($1, $2, 'document.uploaded', $3::jsonb)`,
			id, firm, `{"document_id": "`+uuid.NewString()+`"}`)
	}
	if err := pool.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func unpublished(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Two relays draining one backlog at once never publish a fact twice: one
// holds the relay lease at a time, the other's passes find it held and
// read nothing (LeaseBusy), and every fact is published once.
func TestTwoRelaysNeverPublishTwice(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ids := recordN(t, db.Pool, 500)
	s := newSink()
	s.delay = 3 * time.Millisecond // a PutEvents round trip, so the relays overlap
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	stats := make([]rail.RelayStats, 2)
	errs := make([]error, 2)
	for i := range 2 {
		r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, BatchSize: 20}
		wg.Go(func() {
			for ctx.Err() == nil {
				st, err := r.DrainOnce(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				stats[i].Published += st.Published
				stats[i].LeaseBusy += st.LeaseBusy
				if st.Backlog == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("relay %d: %v", i, err)
		}
	}
	distinct, total, dup := s.counts()
	t.Logf("relay A published %d (lease busy %d), relay B %d (lease busy %d); sink saw %d distinct, %d total, %d duplicates",
		stats[0].Published, stats[0].LeaseBusy, stats[1].Published, stats[1].LeaseBusy, distinct, total, dup)
	for _, id := range ids {
		if s.got[id] == 0 {
			t.Fatalf("event %s never published", id)
		}
	}
	if dup != 0 || stats[0].Published+stats[1].Published != 500 {
		t.Errorf("%d duplicates, %d marked; the relay lease should give 0 and 500", dup, stats[0].Published+stats[1].Published)
	}
	if stats[0].LeaseBusy+stats[1].LeaseBusy == 0 {
		t.Errorf("the relays never overlapped (no pass found the lease held): the test proved nothing")
	}
	if s.maxSize > rail.PutEventsMaxEntries {
		t.Errorf("a call carried %d entries", s.maxSize)
	}
	if n := unpublished(t, db.Pool); n != 0 {
		t.Errorf("%d rows left unpublished", n)
	}
}

// A relay that starts while another holds the relay lease (a second
// invocation, railctl relay during a scheduled one) publishes nothing, not
// even the rows the holder did not take, and says so (LeaseBusy); once the
// holder's run ends (it releases the lease) the second relay carries on.
// (Before issue 21 each pass leased its own rows, and a second relay
// published the rest of the backlog beside the first.)
func TestSecondRelayFindsTheLeaseHeld(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	ids := recordN(t, db.Pool, 20)
	frozen := &blockingPublisher{entered: make(chan struct{}), release: make(chan struct{})}
	first := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: frozen, BatchSize: 5}
	done := make(chan error, 1)
	go func() { _, err := first.DrainOnce(ctx); done <- err }()
	<-frozen.entered
	s := newSink()
	second := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s}
	st, err := second.DrainOnce(ctx)
	if err != nil || st.Published != 0 || st.LeaseBusy != 1 || s.count() != 0 {
		t.Fatalf("second relay while the first holds the lease: %+v %v, %d on its bus; want nothing published, LeaseBusy 1", st, err, s.count())
	}
	var holder uuid.NullUUID
	if err := db.Pool.QueryRow(ctx, `SELECT holder FROM ops.relay_lease`).Scan(&holder); err != nil || !holder.Valid {
		t.Fatalf("lease holder %v (%v): the first relay should hold it", holder, err)
	}
	close(frozen.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := unpublished(t, db.Pool); n != 15 {
		t.Fatalf("%d unpublished after the first relay's pass of 5, want 15", n)
	}
	st, err = second.DrainOnce(ctx)
	if err != nil || st.Published != 15 || st.LeaseBusy != 0 {
		t.Fatalf("second relay after the first released the lease: %+v %v; want the 15 others", st, err)
	}
	for _, id := range ids[5:] {
		if s.got[id] != 1 {
			t.Errorf("fact %s published %d times by the second relay", id, s.got[id])
		}
	}
}

// Each relayed fact is written at most once: the claim reads rows without
// writing them, and the mark, when there is one, is the fact's only new
// row version. Counted by a row
// trigger (every UPDATE of an outbox row, by event_id) over a backlog
// drained by Relay.Run. (Before issue 21: two per fact, the lease and the
// mark.)
func TestRelayWritesEachFactOnce(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `CREATE TABLE public.outbox_writes (event_id uuid, published boolean);
        CREATE FUNCTION public.count_outbox_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO public.outbox_writes VALUES (NEW.event_id, NEW.published_at IS NOT NULL); RETURN NEW; END $$;
        CREATE TRIGGER count_outbox_write AFTER UPDATE ON ops.domain_event_outbox FOR EACH ROW EXECUTE FUNCTION public.count_outbox_write()`); err != nil {
		t.Fatal(err)
	}
	const facts = 250
	recordN(t, db.Pool, facts)
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for s.count() < facts && rctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	st, err := r.Run(rctx, time.Minute, 10*time.Millisecond)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if st.Published != facts || unpublished(t, db.Pool) != 0 {
		t.Fatalf("published %d of %d (%d left unpublished)", st.Published, facts, unpublished(t, db.Pool))
	}
	var writes, facts1, unpublishedWrites int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT event_id), count(*) FILTER (WHERE NOT published)
        FROM public.outbox_writes`).Scan(&writes, &facts1, &unpublishedWrites); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d facts relayed in %d passes: %d row writes (%d before the mark)", facts, st.Passes, writes, unpublishedWrites)
	// At most the mark: none for a row the cursor passed (migration 027;
	// TestRelayCursorIsTheMark), one for a row it could not pass (a
	// transaction open elsewhere on the server holds the cursor back).
	if writes != facts1 || writes > facts || unpublishedWrites != 0 {
		t.Fatalf("%d row writes for %d facts (%d not the mark); want at most one per fact, the mark", writes, facts1, unpublishedWrites)
	}
}

// A relay whose lease was taken over while it was frozen in PutEvents
// (past its lease) cannot record failures or park: the new holder's token
// fences it. Its published marks are still written; its failure records
// are refused (FencedOut; the new holder tries those rows afresh, so the
// pass does not fail).
func TestTakenOverRelayCannotRecordFailures(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	ids := recordN(t, db.Pool, 6)
	frozen := &refusingPublisher{entered: make(chan struct{}), release: make(chan struct{}), refuse: map[uuid.UUID]bool{ids[4]: true, ids[5]: true}}
	stuck := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: frozen, MaxAttempts: 1,
		Lease: 300 * time.Millisecond, PublishTimeout: time.Minute}
	type result struct {
		st  rail.RelayStats
		err error
	}
	done := make(chan result, 1)
	go func() { st, err := stuck.DrainOnce(ctx); done <- result{st, err} }()
	<-frozen.entered
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET lease_until = clock_timestamp() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	s := newSink()
	other := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, BatchSize: 4}
	st, err := other.DrainOnce(ctx)
	if err != nil || st.Takeovers != 1 || st.Published != 4 {
		t.Fatalf("the other relay after the lease ended: %+v %v; want a takeover and 4 published", st, err)
	}
	// The other relay took the first 4 rows; the frozen one had read all 6
	// and the bus refused the last 2: its failure records for those are
	// what the fence must stop.
	close(frozen.release)
	res := <-done
	t.Logf("the frozen relay woke to %+v, %v", res.st, res.err)
	if res.err != nil || res.st.FencedOut != 2 {
		t.Fatalf("the frozen relay woke to %+v, %v; want no error and its 2 failure records fenced out", res.st, res.err)
	}
	if res.st.Failed != 0 || res.st.Parked != 0 || res.st.Published != 0 {
		t.Fatalf("the frozen relay's stats %+v; want no failure recorded and nothing to mark (the other relay marked its 4)", res.st)
	}
	var attempts, parked int
	if err := db.Pool.QueryRow(ctx, `SELECT coalesce(sum(publish_attempts), 0), count(*) FILTER (WHERE parked_at IS NOT NULL)
        FROM ops.domain_event_outbox`).Scan(&attempts, &parked); err != nil || attempts != 0 || parked != 0 {
		t.Fatalf("attempts %d, parked %d (%v): the fenced-out relay recorded its failures", attempts, parked, err)
	}
}

// refusingPublisher blocks its first call until released, then refuses
// the entries in refuse permanently and accepts the rest.
type refusingPublisher struct {
	entered, release chan struct{}
	once             sync.Once
	refuse           map[uuid.UUID]bool
}

func (b *refusingPublisher) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i].EventID = e.EventID
		if b.refuse[e.EventID] {
			out[i].Err = fmt.Errorf("MalformedDetail: refused by the test: %w", rail.ErrPermanentRefusal)
		}
	}
	return out, nil
}

// A row the bus refuses permanently is parked after MaxAttempts such
// refusals while new facts keep flowing; a row the bus refuses with a
// retryable code (ThrottlingException, InternalFailure) backs off and is
// never parked, however often it is refused, and publishes once the bus
// takes it. (Before, every per-entry error counted toward parking: the
// throttled row was parked like the poison one.)
func TestRelayParksPoisonAndKeepsFlowing(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	ids := recordN(t, db.Pool, 5)
	poison, throttled := ids[1], ids[3]
	s := newSink()
	s.reject[poison] = true
	s.retryable[throttled] = true
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, MaxAttempts: 3, Backoff: time.Millisecond, BackoffMax: 2 * time.Millisecond}
	parked := 0
	for i := 0; i < 12; i++ {
		st, err := r.DrainOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		parked += st.Parked
		recordN(t, db.Pool, 1) // new facts keep arriving and must keep flowing
		time.Sleep(3 * time.Millisecond)
	}
	if parked != 1 {
		t.Fatalf("%d rows parked, want only the poison one", parked)
	}
	type rowState struct {
		attempts, refusals int
		lastErr            string
		parked             bool
	}
	state := func(id uuid.UUID) rowState {
		var r rowState
		if err := db.Pool.QueryRow(ctx, `SELECT publish_attempts, publish_refusals, last_error, parked_at IS NOT NULL FROM ops.domain_event_outbox WHERE event_id = $1`, id).
			Scan(&r.attempts, &r.refusals, &r.lastErr, &r.parked); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if p := state(poison); p.attempts != 3 || p.refusals != 3 || !p.parked || !strings.Contains(p.lastErr, "MalformedDetail") {
		t.Fatalf("poison row: %+v; want parked after 3 permanent refusals", p)
	}
	if th := state(throttled); th.parked || th.attempts < 6 || th.refusals != 0 {
		t.Fatalf("throttled row: %+v; want refused many times, never counted toward parking, not parked", th)
	}
	// The retryable refusal ends: the row publishes.
	s.mu.Lock()
	delete(s.retryable, throttled)
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	st, err := r.DrainOnce(ctx)
	if err != nil || st.Backlog != 0 || st.ParkedTotal != 1 || s.got[throttled] != 1 {
		t.Fatalf("after the throttling ended: %+v %v (throttled row published %d times); want backlog 0, 1 parked", st, err, s.got[throttled])
	}
	if n := unpublished(t, db.Pool); n != 1 {
		t.Fatalf("%d unpublished rows, want only the parked one", n)
	}
	delete(s.reject, poison)
	if n, err := postgres.UnparkFacts(ctx, db.Pool, []uuid.UUID{poison}); err != nil || n != 1 {
		t.Fatalf("unpark: %d %v", n, err)
	}
	if p := state(poison); p.refusals != 0 || p.attempts != 0 {
		t.Fatalf("unparked row keeps its count: %+v", p)
	}
	if st, err := r.DrainOnce(ctx); err != nil || st.Published != 1 || s.got[poison] != 1 {
		t.Fatalf("after unpark: %+v %v", st, err)
	}
}

func TestPruneOutbox(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	recordN(t, db.Pool, 250)
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: newSink(), BatchSize: 1000}
	if _, err := r.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// Age 230 published rows by two days; 20 stay recent; 7 more are unpublished
	// (and old), 3 parked (and old).
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET published_at = published_at - interval '2 days',
        occurred_at = occurred_at - interval '2 days' WHERE event_id IN (SELECT event_id FROM ops.domain_event_outbox ORDER BY event_id LIMIT 230)`); err != nil {
		t.Fatal(err)
	}
	pending := recordN(t, db.Pool, 10)
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET occurred_at = occurred_at - interval '3 days',
        parked_at = CASE WHEN event_id = ANY($2::uuid[]) THEN clock_timestamp() END WHERE event_id = ANY($1::uuid[])`, strs(pending), strs(pending[:3])); err != nil {
		t.Fatal(err)
	}
	var stmts []string
	var mu sync.Mutex
	q := &countingQuerier{Querier: db.Pool, onExec: func(sql string) {
		if strings.Contains(sql, "DELETE FROM ops.domain_event_outbox") { // not the cursor's moves
			mu.Lock()
			stmts = append(stmts, sql)
			mu.Unlock()
		}
	}}
	// Bounded: at most 150 rows this call (100 + 50), and it says what is left.
	res, err := postgres.PruneOutbox(ctx, q, 24*time.Hour, postgres.PruneLimits{Batch: 100, MaxRows: 150})
	if err != nil || res.Deleted != 150 || res.Left != 80 || res.LeftCapped {
		t.Fatalf("first call: %+v (%v), want 150 deleted, 80 left", res, err)
	}
	if len(stmts) != 2 {
		t.Errorf("%d delete statements, want 2 (100 + 50)", len(stmts))
	}
	// The next call finishes: 80 in one statement that comes back short.
	stmts = nil
	res, err = postgres.PruneOutbox(ctx, q, 24*time.Hour, postgres.PruneLimits{Batch: 100, MaxRows: 150})
	if err != nil || res.Deleted != 80 || res.Left != 0 {
		t.Fatalf("second call: %+v (%v), want 80 deleted, 0 left", res, err)
	}
	if len(stmts) != 1 {
		t.Errorf("%d delete statements, want 1", len(stmts))
	}
	var left, unpub, parkedN int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE published_at IS NULL), count(*) FILTER (WHERE parked_at IS NOT NULL) FROM ops.outbox_facts`).
		Scan(&left, &unpub, &parkedN); err != nil {
		t.Fatal(err)
	}
	if left != 30 || unpub != 10 || parkedN != 3 {
		t.Fatalf("left %d rows (%d unpublished, %d parked); want 30, 10, 3", left, unpub, parkedN)
	}
}

type countingQuerier struct {
	postgres.Querier
	onExec func(string)
}

func (c *countingQuerier) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.onExec(sql)
	return c.Querier.Exec(ctx, sql, args...)
}

// explainAnalyze runs EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) on one of
// the relay's own statements (exported for tests from relay.go) inside a
// transaction it rolls back (ANALYZE executes it, locks included) and
// returns the plan's nodes flattened.
func explainAnalyze(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) (nodes []map[string]any, text string) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var raw []byte
	if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+sql, args...).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 1 {
		t.Fatalf("plan %s: %v", raw, err)
	}
	var walk func(n map[string]any, depth int)
	var b strings.Builder
	walk = func(n map[string]any, depth int) {
		nodes = append(nodes, n)
		fmt.Fprintf(&b, "%s%v on %v (index %v): rows %v, removed by filter %v, shared hit %v read %v\n",
			strings.Repeat("  ", depth), n["Node Type"], n["Relation Name"], n["Index Name"], n["Actual Rows"],
			n["Rows Removed by Filter"], n["Shared Hit Blocks"], n["Shared Read Blocks"])
		if kids, ok := n["Plans"].([]any); ok {
			for _, k := range kids {
				walk(k.(map[string]any), depth+1)
			}
		}
	}
	walk(doc[0].Plan, 0)
	return nodes, b.String()
}

func num(v any) float64 { f, _ := v.(float64); return f }

// pre005DrainSQL is the relay's select before migration 005, kept only as
// the negative control of TestDrainReadsOnlyDueRows.
const pre005DrainSQL = `SELECT event_id FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND (next_attempt_at IS NULL OR next_attempt_at <= clock_timestamp())
        ORDER BY occurred_at, event_id LIMIT $1 FOR UPDATE SKIP LOCKED`

// The drain reads only what is due: with 100k published rows and 20k rows
// backing off (a bus outage), each of the relay's two selects scans its
// own partial index, and the blocks and rows it touches follow the 50 due
// rows, not the backlog. The statements are the relay's constants, not a
// copy. (Before migration 005 the one pending index also held the rows
// backing off, and the same poll read all 20k of them and filtered them
// out: docs/relay.md has that run.)
func TestDrainReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, published_at)
        SELECT gen_random_uuid(), 'document.uploaded', clock_timestamp() FROM generate_series(1, 100000)`); err != nil {
		t.Fatal(err)
	}
	// The published history is behind the relay's cursor, as a relay that
	// published it leaves it: a claim that finds published rows at its
	// cursor moves it past them (after this, the scans start there).
	ob := postgres.NewOutbox(db.Pool)
	relayID := uuid.New()
	for range 2 { // the first takes the lease and reads nothing
		if _, err := ob.Claim(ctx, rail.OutboxClaimRequest{Holder: relayID, Limit: rail.DefaultRelayBatch, Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ob.Settle(ctx, rail.OutboxSettlement{Holder: relayID, Release: true}); err != nil {
		t.Fatal(err)
	}
	const backingOff, unsent, due = 20000, 30, 20
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, publish_attempts, last_error, next_attempt_at)
        SELECT gen_random_uuid(), 'document.uploaded', 3, 'PutEvents call failed', clock_timestamp() + interval '5 minutes'
        FROM generate_series(1, $1)`, backingOff); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, publish_attempts, last_error, next_attempt_at)
        SELECT gen_random_uuid(), 'document.uploaded', 1, 'PutEvents call failed', clock_timestamp() - interval '1 second'
        FROM generate_series(1, $1)`, due); err != nil {
		t.Fatal(err)
	}
	recordN(t, db.Pool, unsent)
	if _, err := db.Pool.Exec(ctx, `ANALYZE ops.domain_event_outbox`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, sql, index string
		want             int
	}{
		{"retry", postgres.RelayRetrySQL, "domain_event_outbox_backoff_idx", due},
		{"unsent", postgres.RelayUnsentSQL, "domain_event_outbox_due_idx", unsent},
	} {
		nodes, plan := explainAnalyze(t, db.Pool, c.sql, rail.DefaultRelayBatch, []string{})
		t.Logf("%s select over %d published, %d backing off, %d due, %d unsent:\n%s", c.name, 100000, backingOff, due, unsent, plan)
		usesIndex, blocks := false, 0.0
		for _, n := range nodes {
			if n["Node Type"] == "Seq Scan" || n["Node Type"] == "Sort" {
				t.Errorf("%s: %v in the plan", c.name, n["Node Type"])
			}
			if n["Index Name"] == c.index {
				usesIndex = true
				if got := num(n["Actual Rows"]); int(got) != c.want {
					t.Errorf("%s: the index scan returned %v rows, want exactly the %d due", c.name, got, c.want)
				}
				if f := num(n["Rows Removed by Filter"]); f > 0 {
					t.Errorf("%s: %v rows read and filtered out (rows backing off were scanned)", c.name, f)
				}
			}
		}
		blocks = num(nodes[0]["Shared Hit Blocks"]) + num(nodes[0]["Shared Read Blocks"])
		if !usesIndex {
			t.Errorf("%s: the plan does not use %s", c.name, c.index)
		}
		// 20k rows backing off occupy hundreds of heap pages; the due rows a handful.
		if blocks > 100 {
			t.Errorf("%s: touched %v buffers; the due rows need a few dozen", c.name, blocks)
		}
	}
	// Negative control: the schema and statement before migration 005 (one
	// pending index that also holds the rows backing off; next_attempt_at a
	// filter) read every row backing off on each poll.
	if _, err := db.Pool.Exec(ctx, `CREATE INDEX domain_event_outbox_pending_idx ON ops.domain_event_outbox (occurred_at, event_id)
        WHERE published_at IS NULL AND parked_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `DROP INDEX ops.domain_event_outbox_backoff_idx; DROP INDEX ops.domain_event_outbox_due_idx`); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+pre005DrainSQL, rail.DefaultRelayBatch).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	if !strings.Contains(string(raw), `"Rows Removed by Filter": `+fmt.Sprint(backingOff)) {
		t.Errorf("negative control: the pre-005 drain did not read the %d rows backing off:\n%s", backingOff, raw)
	}
	if _, err := db.Pool.Exec(ctx, `DROP INDEX ops.domain_event_outbox_pending_idx`); err != nil {
		t.Fatal(err)
	}

	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s}
	st, err := r.DrainOnce(ctx)
	if err != nil || st.Published != due+unsent || st.Backlog != backingOff || !st.Measured {
		t.Fatalf("%+v %v; want %d published, %d left backing off", st, err, due+unsent, backingOff)
	}
}

func strs(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// Every row the outbox's CHECKs accept either reaches the bus with its
// payload as stored, or is parked alone, with its reason, in the same pass;
// the good rows around it publish. (On the relay before this, the first
// row with a number in its payload failed every pass at the scan.)
func TestRelayCarriesEveryAcceptedRowOrParksIt(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	firm := uuid.New()
	insert := func(payload string, extra string) uuid.UUID {
		t.Helper()
		id := uuid.New()
		cols, vals := "", ""
		if extra != "" {
			c, v, _ := strings.Cut(extra, "=")
			cols, vals = ", "+c, ", "+v
		}
		if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, event_name, payload`+cols+`)
            VALUES ($1, $2, 'document.uploaded', $3::jsonb`+vals+`)`, id, firm, payload); err != nil {
			t.Fatalf("insert %s %s: %v", payload, extra, err)
		}
		return id
	}
	// The nil-matter row below must name a matter that exists (the outbox's
	// key to app.matters): the relay still refuses to send it.
	if _, err := postgres.AddMatter(ctx, db.Pool, rail.MatterRef{FirmID: firm, MatterID: uuid.Nil}, ""); err != nil {
		t.Fatal(err)
	}
	big := `{"n": [` + strings.Repeat("1234567890, ", 250) + `0]}`    // about 3,000 bytes
	bigger := `{"n": [` + strings.Repeat("1234567890, ", 330) + `0]}` // about 4,000 bytes, under the 4 KB CHECK
	legal := map[uuid.UUID]string{}
	for _, p := range []string{`{"n": 1}`, `{"document_id": "x", "page": 3, "ok": true, "none": null}`,
		`{"o": {"a": [1, 2.50, {"deep": {"deeper": "<&>"}}]}}`, `{"big": 12345678901234567890.000000000000000001}`,
		`{"s": "é \u2028 \"quoted\" \\ back"}`, `{}`, big} {
		legal[insert(p, "")] = p
	}
	good := recordN(t, db.Pool, 5)
	undeliverable := map[uuid.UUID]string{
		insert(`{"document_id": "x"}`, "occurred_at='infinity'"):                           "occurred_at is not a finite time",
		insert(`{"document_id": "x"}`, "occurred_at='12026-01-01T00:00:00Z'"):              "would not decode",
		insert(`{"document_id": "x"}`, "matter_id='00000000-0000-0000-0000-000000000000'"): "matter_id is the nil uuid",
	}
	nilFirm := uuid.New()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, event_name)
        VALUES ($1, '00000000-0000-0000-0000-000000000000', 'document.uploaded')`, nilFirm); err != nil {
		t.Fatal(err)
	}
	undeliverable[nilFirm] = "firm_id is the nil uuid"
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, MaxEntryBytes: 4000}
	// An entry the bus could not take: with a 4,000-byte limit the big
	// payload's entry is too large (EventBridge's real limit is 256 KB).
	oversized := insert(bigger, "")
	undeliverable[oversized] = "the PutEvents entry would be"

	st, err := r.DrainOnce(ctx)
	if err != nil {
		t.Fatalf("one pass over odd rows: %v", err)
	}
	if st.Published != len(legal)+len(good) || st.Parked != len(undeliverable) || st.ParkedTotal != int64(len(undeliverable)) || st.Backlog != 0 {
		t.Fatalf("%+v; want %d published, %d parked in the same pass, backlog 0", st, len(legal)+len(good), len(undeliverable))
	}
	for _, id := range good {
		if s.got[id] != 1 {
			t.Errorf("good fact %s published %d times", id, s.got[id])
		}
	}
	for id, p := range legal {
		d, ok := s.details[id]
		if !ok {
			t.Errorf("payload %.40s… never reached the bus", p)
			continue
		}
		var same bool // the bus payload is the row's object (jsonb equality: same values, numbers exact)
		if err := db.Pool.QueryRow(ctx, `SELECT payload = $2::jsonb FROM ops.domain_event_outbox WHERE event_id = $1`, id, string(d.Payload)).Scan(&same); err != nil || !same {
			t.Errorf("payload %.60s… arrived as %.60s… (%v)", p, d.Payload, err)
		}
	}
	for id, want := range undeliverable {
		var reason string
		var parked bool
		if err := db.Pool.QueryRow(ctx, `SELECT parked_reason, parked_at IS NOT NULL FROM ops.domain_event_outbox WHERE event_id = $1`, id).Scan(&reason, &parked); err != nil {
			t.Fatal(err)
		}
		if !parked || !strings.Contains(reason, want) || s.got[id] != 0 {
			t.Errorf("row %s: parked %v, reason %q (want it to say %q), published %d times", id, parked, reason, want, s.got[id])
		}
	}
	if s.maxBytes > r.MaxEntryBytes {
		t.Errorf("a call carried %d bytes, over the %d limit", s.maxBytes, r.MaxEntryBytes)
	}
	parked, err := postgres.ParkedFacts(ctx, db.Pool, 0)
	if err != nil || len(parked) != len(undeliverable) {
		t.Fatalf("ParkedFacts: %d rows (%v), want %d", len(parked), err, len(undeliverable))
	}
	for _, p := range parked {
		if p.Reason == "" || p.OccurredAt == "" {
			t.Errorf("parked row listed without its reason or time: %+v", p)
		}
	}
}

// A row that makes a whole PutEvents call fail (EventBridge answers an
// over-large request with a ValidationException for the call) backs off
// with the rows it was sent with; retried rows then go in calls of their
// own, so the others publish and the culprit is parked, alone.
func TestACallFailingRowIsIsolatedAndParked(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	ids := recordN(t, db.Pool, 8)
	poison := ids[3]
	s := newSink()
	s.failCallWith = map[uuid.UUID]bool{poison: true}
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, MaxAttempts: 3}
	dueNow := func() {
		if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET next_attempt_at = clock_timestamp() - interval '1 second'
            WHERE next_attempt_at IS NOT NULL AND published_at IS NULL AND parked_at IS NULL`); err != nil {
			t.Fatal(err)
		}
	}
	st, err := r.DrainOnce(ctx)
	if err == nil || st.Published != 0 || st.Failed != 8 || st.Parked != 0 {
		t.Fatalf("first pass: %+v %v; want the call to fail, 8 backing off, none parked", st, err)
	}
	// New facts keep arriving: a call of the pass succeeds, so the culprit's
	// own failing call is held against it. (Alone on a quiet bus it would
	// look like an outage: it backs off and is never parked.)
	for pass := 0; pass < 10 && st.ParkedTotal == 0; pass++ {
		dueNow()
		ids = append(ids, recordN(t, db.Pool, 1)...)
		if st, err = r.DrainOnce(ctx); err != nil && !strings.Contains(err.Error(), "ValidationException") {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if id != poison && s.got[id] != 1 {
			t.Errorf("good fact %s published %d times", id, s.got[id])
		}
	}
	var reason string
	if err := db.Pool.QueryRow(ctx, `SELECT parked_reason FROM ops.domain_event_outbox WHERE event_id = $1 AND parked_at IS NOT NULL`, poison).Scan(&reason); err != nil {
		t.Fatalf("the culprit was not parked: %v", err)
	}
	if !strings.Contains(reason, "alone failed while other calls succeeded") || st.Backlog != 0 || st.ParkedTotal != 1 {
		t.Fatalf("culprit parked with %q; stats %+v", reason, st)
	}
}

// A relay that freezes while holding its rows (a Lambda sandbox frozen in
// PutEvents, a process stopped) holds no transaction and loses them to the
// next relay when its lease ends. When it wakes, its settlement changes
// nothing the other relay did.
func TestFrozenRelayReleasesItsRows(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	ids := recordN(t, db.Pool, 5)
	frozen := &blockingPublisher{entered: make(chan struct{}), release: make(chan struct{})}
	stuck := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: frozen, Lease: 300 * time.Millisecond, PublishTimeout: time.Minute}
	type result struct {
		st  rail.RelayStats
		err error
	}
	done := make(chan result, 1)
	go func() { st, err := stuck.DrainOnce(ctx); done <- result{st, err} }()
	<-frozen.entered
	var inTx int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
        AND state LIKE 'idle in transaction%'`).Scan(&inTx); err != nil || inTx != 0 {
		t.Fatalf("%d sessions idle in a transaction while the relay publishes (%v); want none", inTx, err)
	}
	s := newSink()
	other := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s}
	deadline := time.Now().Add(30 * time.Second)
	for s.count() < len(ids) && time.Now().Before(deadline) {
		if _, err := other.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // polling for the condition, no assertion on time
	}
	for _, id := range ids {
		if s.got[id] != 1 {
			t.Fatalf("fact %s published %d times by the other relay after the frozen one's lease", id, s.got[id])
		}
	}
	close(frozen.release)
	res := <-done
	if res.err != nil || res.st.Published != 0 || res.st.Failed != 0 {
		t.Fatalf("the frozen relay woke to %+v %v; want its settlement to change nothing", res.st, res.err)
	}
	if n := unpublished(t, db.Pool); n != 0 {
		t.Fatalf("%d rows unpublished", n)
	}
}

type blockingPublisher struct {
	entered, release chan struct{}
	once             sync.Once
}

func (b *blockingPublisher) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i].EventID = e.EventID
	}
	return out, nil
}

func TestValidEventName(t *testing.T) {
	t.Parallel()
	for _, n := range goodNames {
		if err := rail.ValidEventName(n); err != nil {
			t.Errorf("ValidEventName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range badNames {
		err := rail.ValidEventName(n)
		if !errors.Is(err, rail.ErrBadEventName) {
			t.Errorf("ValidEventName(%q) = %v, want ErrBadEventName", n, err)
		}
	}
	err := rail.ValidEventName("brief.rebuild")
	if err == nil || !strings.Contains(err.Error(), `"rebuild" is not a past participle`) {
		t.Errorf("error does not say why: %v", err)
	}
}

// An idle relay polls every RAIL_RELAY_POLL for its whole window: while
// more than half of its lease is left, a poll neither locks nor renews the
// lease row (no row version, no transaction id), and it renews once half
// or less is left, keeping its token.
func TestIdleRelayPollsWriteNothing(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	out := postgres.NewOutbox(db.Pool)
	holder := uuid.New()
	xmin := func() (x string, token int64) {
		t.Helper()
		if err := db.Pool.QueryRow(ctx, `SELECT xmin::text, token FROM ops.relay_lease WHERE lease = 'outbox'`).Scan(&x, &token); err != nil {
			t.Fatal(err)
		}
		return x, token
	}
	claim := func(lease time.Duration) rail.OutboxClaim {
		t.Helper()
		c, err := out.Claim(ctx, rail.OutboxClaimRequest{Holder: holder, Limit: 10, Lease: lease})
		if err != nil || c.Busy {
			t.Fatalf("claim: %+v %v", c, err)
		}
		return c
	}
	claim(time.Minute) // takes the lease
	x0, tok0 := xmin()
	for range 20 {
		if c := claim(time.Minute); c.Token != tok0 {
			t.Fatalf("an idle poll got token %d, want the lease's %d", c.Token, tok0)
		}
	}
	if x, _ := xmin(); x != x0 {
		t.Fatalf("20 idle polls with most of the lease left rewrote the lease row (xmin %s -> %s)", x0, x)
	}
	// Less than half of the lease left: the next poll renews it.
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET lease_until = clock_timestamp() + interval '10 seconds'`); err != nil {
		t.Fatal(err)
	}
	x1, _ := xmin()
	c := claim(time.Minute)
	var left float64
	if err := db.Pool.QueryRow(ctx, `SELECT extract(epoch FROM lease_until - clock_timestamp())::float8 FROM ops.relay_lease`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if x, tok := xmin(); x == x1 || tok != tok0 || c.Token != tok0 || left < 50 {
		t.Fatalf("a poll with 10 s of a 1 min lease left: xmin %s -> %s, token %d (claim %d), %.0f s left; want a renewal to 1 min keeping token %d",
			x1, x, tok, c.Token, left, tok0)
	}
}

// The outbox's write check compares the rail's own fact names before its
// grammar's regular expression (migration 030). Each name on that list
// must be one the grammar accepts, in the database and in Go, or the list
// would let through a name the check refuses; and the list is exactly
// pkg/rail's Fact constants. The control: a name the grammar refuses is
// refused by the same test of the list.
func TestOutboxFastPathNamesPassTheGrammar(t *testing.T) {
	b := setup(t, rail.Config{})
	src := opsFunctionSource(t, b, "check_outbox_fact")
	list := regexp.MustCompile(`NEW\.event_name NOT IN \(([^)]*)\)`).FindStringSubmatch(src)
	pattern := regexp.MustCompile(`NEW\.event_name ~ '([^']*)'`).FindStringSubmatch(src)
	notVerb := regexp.MustCompile(`NEW\.event_name !~ '([^']*)'`).FindStringSubmatch(src)
	if list == nil || pattern == nil || notVerb == nil {
		t.Fatalf("ops.check_outbox_fact has no fast-path list, grammar or exclusion:\n%s", src)
	}
	var names []string
	for _, q := range strings.Split(list[1], ",") {
		names = append(names, strings.Trim(strings.TrimSpace(q), "'"))
	}
	want := []string{rail.FactFrameBuilt, rail.FactDocumentUploaded, rail.FactDocumentRemoved, rail.FactMatterCreated,
		rail.FactRegenerationRequested}
	if !slices.Equal(names, want) {
		t.Errorf("fast-path names %q, want pkg/rail's fact names %q", names, want)
	}
	accepted := func(name string) bool {
		var ok bool
		if err := b.pool.QueryRow(b.ctx, `SELECT length($1) <= 128 AND $1 ~ $2 AND $1 !~ $3`, name, pattern[1], notVerb[1]).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok && rail.ValidEventName(name) == nil
	}
	for _, n := range names {
		if !accepted(n) {
			t.Errorf("fast-path name %q is refused by the grammar: the list would admit a name the check refuses", n)
		}
	}
	if accepted("document.upload") {
		t.Fatal("control: the grammar accepted document.upload; this test checks nothing")
	}
}
