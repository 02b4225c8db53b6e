package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The relay's cursor (ops.relay_lease cursor_*) never passes a transaction
// that may still commit: a fact written by a transaction that began before
// facts the relay publishes meanwhile, and committed after the cursor moved
// on, is still published. (With the proposal's snapshot-xmin bound taken
// out of relayClaimSQL, the cursor passes it and it is never read.)
func TestRelayCursorNeverPassesAnOpenTransaction(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	firm := uuid.New()
	late := uuid.New()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The late fact's transaction takes its id first, and commits last.
	if _, err := tx.Exec(ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, event_name) VALUES ($1, $2, 'document.uploaded')`,
		late, firm); err != nil {
		t.Fatal(err)
	}
	early := recordN(t, db.Pool, 6)
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, BatchSize: 2}
	drain := func() {
		t.Helper()
		for range 5 {
			if _, err := r.DrainOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	drain()
	if got := s.count(); got != len(early) {
		t.Fatalf("published %d facts, want the %d committed", got, len(early))
	}
	var cursor, lateXid string
	var behind bool
	if err := tx.QueryRow(ctx, `SELECT l.cursor_xid::text, o.relay_xid::text, (l.cursor_xid, l.cursor_at, l.cursor_id) <= (o.relay_xid, o.occurred_at, o.event_id)
        FROM ops.relay_lease l, ops.domain_event_outbox o WHERE l.lease = 'outbox' AND o.event_id = $1`, late).Scan(&cursor, &lateXid, &behind); err != nil {
		t.Fatal(err)
	}
	t.Logf("cursor at transaction %s, the open transaction's fact at %s", cursor, lateXid)
	if !behind {
		t.Errorf("the cursor (transaction %s) passed the open transaction's fact (transaction %s)", cursor, lateXid)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	drain()
	distinct, total, dup := s.counts()
	if distinct != len(early)+1 || dup != 0 || unpublished(t, db.Pool) != 0 {
		t.Fatalf("published %d distinct facts (%d in all, %d duplicates), %d left unpublished; want all %d once",
			distinct, total, dup, unpublished(t, db.Pool), len(early)+1)
	}
}

// A published mark is a heap-only update: no index names published_at, and
// the outbox keeps room on each page for its rows' marks (fillfactor). On
// the schema before the migration that adds the cursor, none of them is.
func TestRelayMarksAreHeapOnly(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	const facts = 300
	recordN(t, db.Pool, facts)
	pool, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(pool), Publisher: s}
	for range 5 {
		if _, err := r.DrainOnce(ctx); err != nil {
			pool.Close()
			t.Fatal(err)
		}
	}
	pool.Close() // a backend's statistics are flushed when it exits
	if s.count() != facts || unpublished(t, db.Pool) != 0 {
		t.Fatalf("published %d of %d", s.count(), facts)
	}
	var upd, hot int64
	for deadline := time.Now().Add(20 * time.Second); ; {
		if err := db.Pool.QueryRow(ctx, `SELECT pg_stat_clear_snapshot(), n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
            WHERE relid = 'ops.domain_event_outbox'::regclass`).Scan(nil, &upd, &hot); err != nil {
			t.Fatal(err)
		}
		if upd >= facts || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d facts: %d row updates, %d heap-only", facts, upd, hot)
	if upd != facts || hot != upd {
		t.Fatalf("%d updates (%d heap-only) for %d marks; want every mark heap-only", upd, hot, facts)
	}
}

// A row that comes back to the unsent arm by an update after the cursor
// passed it (unparked; its backoff cleared by hand) is re-stamped with the
// updating transaction's id and read again, not skipped below the cursor.
func TestRowBackInTheUnsentArmIsRead(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	ids := recordN(t, db.Pool, 4)
	s := newSink()
	s.reject[ids[0]] = true // refused permanently until MaxAttempts: parked
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, MaxAttempts: 1}
	backOff := ids[1]
	s.retryable[backOff] = true
	for range 3 {
		if _, err := r.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	more := recordN(t, db.Pool, 6)
	for range 3 {
		if _, err := r.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The cursor past every row, as a relay leaves it once no transaction
	// older than them is open (the tests of this package share a server,
	// so another test's transaction may hold it back here).
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET cursor_xid = (SELECT max(relay_xid) FROM ops.domain_event_outbox),
        cursor_at = 'infinity', cursor_id = 'ffffffff-ffff-ffff-ffff-ffffffffffff'`); err != nil {
		t.Fatal(err)
	}
	var passed bool
	if err := db.Pool.QueryRow(ctx, `SELECT (l.cursor_xid, l.cursor_at, l.cursor_id) > (o.relay_xid, o.occurred_at, o.event_id)
        FROM ops.relay_lease l, ops.domain_event_outbox o WHERE l.lease = 'outbox' AND o.event_id = $1`, ids[0]).Scan(&passed); err != nil {
		t.Fatal(err)
	}
	if !passed {
		t.Fatal("setup: the cursor did not pass the parked row")
	}
	delete(s.reject, ids[0])
	delete(s.retryable, backOff)
	if n, err := postgres.UnparkFacts(ctx, db.Pool, []uuid.UUID{ids[0]}); err != nil || n != 1 {
		t.Fatalf("unpark: %d %v", n, err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET next_attempt_at = NULL WHERE event_id = $1`, backOff); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := r.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if distinct, _, _ := s.counts(); distinct != len(ids)+len(more) || unpublished(t, db.Pool) != 0 {
		t.Fatalf("published %d distinct facts, %d left unpublished; want all %d", distinct, unpublished(t, db.Pool), len(ids)+len(more))
	}
}

// A writer cannot place its fact below the relay's cursor by naming a
// relay_xid: the insert's own transaction id is stamped whatever the
// insert says, so the fact is relayed and counted in the backlog until it
// is. Without the stamp the fact is neither published nor counted.
func TestInsertCannotHideAFactBelowTheCursor(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	recordN(t, db.Pool, 4)
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s, BatchSize: 2}
	for range 4 {
		if _, err := r.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	hidden := uuid.New()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, event_name, relay_xid)
        VALUES ($1, $2, 'document.uploaded', '1')`, hidden, uuid.New()); err != nil {
		t.Fatal(err)
	}
	g, err := postgres.ReadOutboxGauges(ctx, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if g.Backlog != 1 {
		t.Errorf("backlog %d after a fact inserted with relay_xid 1: want it counted (1)", g.Backlog)
	}
	for range 4 {
		if _, err := r.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if distinct, _, dup := s.counts(); distinct != 5 || dup != 0 || unpublished(t, db.Pool) != 0 {
		t.Fatalf("published %d distinct facts (%d duplicates), %d unpublished: want all 5 once, the one that named relay_xid 1 too",
			distinct, dup, unpublished(t, db.Pool))
	}
}
