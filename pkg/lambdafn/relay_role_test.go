package lambdafn_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// slowBus is a rail.Publisher whose every call takes delay (honouring the
// caller's context, as the SDK does: a call cut by its deadline accepts
// nothing). During each call it counts the relay role's sessions that sit
// idle in a transaction: a transaction held across the bus call.
type slowBus struct {
	delay   time.Duration
	admin   *pgxpool.Pool
	role    string
	during  func() // optional: runs inside the first call
	once    sync.Once
	mu      sync.Mutex
	got     map[uuid.UUID]int
	calls   int
	heldTx  int // the most such sessions seen during a call
	checkEr error
}

func (b *slowBus) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	if b.during != nil {
		b.once.Do(b.during)
	}
	var n int
	err := b.admin.QueryRow(context.WithoutCancel(ctx), `SELECT count(*) FROM pg_stat_activity
        WHERE usename = $1 AND datname = current_database() AND state LIKE 'idle in transaction%'`, b.role).Scan(&n)
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.heldTx = max(b.heldTx, n)
	if err != nil {
		b.checkEr = err
	}
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i].EventID = e.EventID
		b.got[e.EventID]++
	}
	return out, nil
}

// nopPublisher stands in until the test sets its bus.
type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, []rail.BusEntry) ([]rail.PublishResult, error) {
	return nil, errors.New("no bus set")
}

// relayAsItsRole returns the relay function's handler connected as
// brief_relay by login, so the role's deployed settings apply (migration
// 008: idle_in_transaction_session_timeout 10 s, statement_timeout 30 s),
// with facts pending facts recorded; the test sets h.Relay.Publisher.
func relayAsItsRole(t *testing.T, window time.Duration, facts int) (*railtest.DB, *lambdafn.RelayHandler) {
	t.Helper()
	db := railtest.NewDBWithRoleSettings(t)
	pool := railtest.Pool(t, db.URLAs(t, "brief_relay"), 2)
	var idle string
	if err := pool.QueryRow(context.Background(), `SHOW idle_in_transaction_session_timeout`).Scan(&idle); err != nil {
		t.Fatal(err)
	}
	if idle == "0" {
		t.Fatal("brief_relay has no idle_in_transaction_session_timeout: the deployed role settings were not applied")
	}
	t.Logf("brief_relay's idle_in_transaction_session_timeout: %s", idle)
	batch := &pgx.Batch{}
	// One matter (the outbox's key to app.matters): its facts are the backlog.
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(context.Background(), db.Pool, ref, ""); err != nil {
		t.Fatal(err)
	}
	for range facts {
		batch.Queue(`INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload)
            VALUES ($1, $2, 'document.uploaded', jsonb_build_object('document_id', gen_random_uuid()::text))`, ref.FirmID, ref.MatterID)
	}
	if err := db.Pool.SendBatch(context.Background(), batch).Close(); err != nil {
		t.Fatal(err)
	}
	cfg, err := lambdafn.LoadConfig(lambdafn.Relay, envOf(map[string]string{lambdafn.EnvRelayWindow: window.String()}))
	if err != nil {
		t.Fatal(err)
	}
	return db, lambdafn.NewRelay(cfg, lambdafn.Deps{Pool: pool, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics: emf.New(io.Discard), Publisher: nopPublisher{}})
}

// A slow bus slows the relay; it never stops it. As brief_relay with its
// deployed settings, 150 pending facts and a bus taking 1 s a call: every
// fact is published and marked within one invocation, no session sits idle
// in a transaction while a call is out, and the invocation reports what it
// did. (Before, a pass held its row locks across its ten 1 s calls, the
// role's 10 s idle timeout ended the session before the marks, and every
// pass re-sent the same facts while the handler reported success with
// Published 0.)
func TestRelayDrainsASlowBusUnderItsDeployedRole(t *testing.T) {
	t.Parallel()
	const facts = 150
	db, h := relayAsItsRole(t, 20*time.Second, facts)
	bus := &slowBus{delay: time.Second, admin: db.Pool, role: "brief_relay", got: map[uuid.UUID]int{}}
	h.Relay.Publisher = bus
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the template's relay timeout
	defer cancel()
	start := time.Now()
	res, err := h.Handle(ctx, lambdafn.ScheduleEvent{})
	t.Logf("one invocation in %s: %+v, %d calls, %d facts on the bus", time.Since(start).Round(time.Millisecond), res, bus.calls, len(bus.got))
	if err != nil {
		t.Fatalf("invocation failed: %v", err)
	}
	if bus.checkEr != nil {
		t.Fatal(bus.checkEr)
	}
	if bus.heldTx > 0 {
		t.Errorf("%d brief_relay sessions sat idle in a transaction while a PutEvents call was out", bus.heldTx)
	}
	if res.Published != facts || res.Backlog != 0 || res.Parked != 0 || len(bus.got) != facts {
		t.Fatalf("published %d, backlog %d, parked %d, %d distinct on the bus; want all %d published and marked",
			res.Published, res.Backlog, res.Parked, len(bus.got), facts)
	}
	var unmarked int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL`).Scan(&unmarked); err != nil || unmarked != 0 {
		t.Fatalf("%d rows unmarked (%v)", unmarked, err)
	}
}

// A window whose passes published but could not write their marks made no
// progress: the invocation fails (ErrRelayMarksLost) instead of reporting
// success with Published 0. Here the marks are refused by the database
// (brief_relay loses UPDATE on the outbox while the first call is out).
func TestRelayWindowWithLostMarksFails(t *testing.T) {
	t.Parallel()
	db, h := relayAsItsRole(t, 2*time.Second, 5)
	bus := &slowBus{delay: 10 * time.Millisecond, admin: db.Pool, role: "brief_relay", got: map[uuid.UUID]int{},
		during: func() {
			if _, err := db.Pool.Exec(context.Background(), `REVOKE UPDATE ON ops.domain_event_outbox FROM brief_relay`); err != nil {
				t.Error(err)
			}
		}}
	h.Relay.Publisher = bus
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.Handle(ctx, lambdafn.ScheduleEvent{})
	t.Logf("invocation: %+v, %v", res, err)
	if !errors.Is(err, rail.ErrRelayMarksLost) {
		t.Fatalf("invocation returned %v with %+v; want an error wrapping rail.ErrRelayMarksLost", err, res)
	}
	if len(bus.got) != 5 || res.Published != 0 {
		t.Fatalf("bus saw %d facts, %d marked; want 5 sent, none marked", len(bus.got), res.Published)
	}
	// Nothing is lost: with the grant back, the rows go out again at once
	// (the failed run released the relay lease by itself, with a statement
	// that writes no outbox row).
	if _, err := db.Pool.Exec(ctx, `GRANT UPDATE ON ops.domain_event_outbox TO brief_relay`); err != nil {
		t.Fatal(err)
	}
	st, err := h.Relay.DrainOnce(ctx)
	if err != nil || st.Published != 5 || st.Backlog != 0 {
		t.Fatalf("after the grant: %+v %v; want the 5 re-published and marked", st, err)
	}
}
