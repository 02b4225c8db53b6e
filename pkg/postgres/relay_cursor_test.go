package postgres_test

import (
	"context"
	"strings"
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

// runRelay runs a relay window (Relay.Run, the function's loop: passes back
// to back while they come back full) until the sink holds want facts.
func runRelay(t *testing.T, pool *pgxpool.Pool, s *sink, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for s.count() < want && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	r := &rail.Relay{Outbox: postgres.NewOutbox(pool), Publisher: s, BatchSize: 100}
	if _, err := r.Run(ctx, time.Minute, 10*time.Millisecond); err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	if s.count() < want {
		t.Fatalf("the relay published %d facts, want %d", s.count(), want)
	}
}

// The relay's cursor is its published mark (migration 027): in a window of
// full passes, the facts a pass published are passed by the next pass's
// cursor and no row of theirs is written; only the window's last pass
// marks its rows (with the lease's release), and each move of the cursor
// is one row of ops.relay_published. Every fact still reads as published
// in ops.outbox_facts, at a time between its occurrence and now. (With the
// claim marking every row it was sent, as before 027, the outbox takes one
// row update per fact.)
func TestRelayCursorIsTheMark(t *testing.T) {
	// Not parallel: a transaction open anywhere on the server (another
	// test's) holds the cursor back, and the rows past it are marked one by
	// one, as they must be.
	db := railtest.NewDB(t)
	ctx := context.Background()
	const facts = 1000
	recordN(t, db.Pool, facts)
	pool, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	runRelay(t, pool, s, facts)
	pool.Close() // a backend's statistics are flushed when it exits
	if distinct, _, dup := s.counts(); distinct != facts || dup != 0 {
		t.Fatalf("published %d distinct facts (%d duplicates), want %d once", distinct, dup, facts)
	}
	var upd, moves, unmarked, unpublishedNow, misdated int64
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM ops.relay_published),
            (SELECT count(*) FROM ops.domain_event_outbox WHERE published_at IS NULL),
            (SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL),
            (SELECT count(*) FROM ops.outbox_facts WHERE published_at < occurred_at OR published_at > clock_timestamp())`).
		Scan(&moves, &unmarked, &unpublishedNow, &misdated); err != nil {
		t.Fatal(err)
	}
	// The relay's backends flushed their statistics when they exited: wait
	// until the cursor's moves they inserted are counted.
	for deadline := time.Now().Add(20 * time.Second); ; {
		var ins int64
		if err := db.Pool.QueryRow(ctx, `SELECT pg_stat_clear_snapshot(), o.n_tup_upd, p.n_tup_ins
            FROM pg_stat_user_tables o, pg_stat_user_tables p
            WHERE o.relid = 'ops.domain_event_outbox'::regclass AND p.relid = 'ops.relay_published'::regclass`).Scan(nil, &upd, &ins); err != nil {
			t.Fatal(err)
		}
		if ins >= moves || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d facts: %d outbox row updates, %d rows never written (published by the cursor), %d cursor moves recorded",
		facts, upd, unmarked, moves)
	if upd > 100 {
		t.Errorf("%d outbox row updates for %d facts relayed in passes of 100; want at most the last pass's 100", upd, facts)
	}
	if unpublishedNow != 0 || misdated != 0 {
		t.Errorf("ops.outbox_facts: %d facts unpublished, %d dated before they occurred or after now; want none", unpublishedNow, misdated)
	}
	if moves < facts/100-2 {
		t.Errorf("%d cursor moves recorded for %d passes of 100", moves, facts/100)
	}
}

// Retention prunes a fact the cursor passed by when the cursor passed it
// (ops.relay_published), not by when it occurred: a backlog that occurred
// days ago and was published just now is kept; facts the cursor passed
// before the cutoff go, and the cursor's recorded moves before the cutoff
// go too, but the newest of them. (Without the cursor's arm in the prune,
// the old facts the cursor passed are never pruned.)
func TestPruneOutboxByTheCursor(t *testing.T) {
	// Not parallel: a transaction open anywhere on the server (another
	// test's) holds the cursor back, and the rows past it are marked one by
	// one, as they must be.
	db := railtest.NewDB(t)
	ctx := context.Background()
	s := newSink()
	old := recordN(t, db.Pool, 300)
	runRelay(t, db.Pool, s, 300)
	// Two days pass.
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET occurred_at = occurred_at - interval '2 days',
        published_at = published_at - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_published SET published_at = published_at - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	// A backlog that occurred three days ago, published now.
	backlog := recordN(t, db.Pool, 250)
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET occurred_at = occurred_at - interval '3 days'
        WHERE event_id = ANY($1::uuid[])`, strs(backlog)); err != nil {
		t.Fatal(err)
	}
	runRelay(t, db.Pool, s, 550)
	var passedOld int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox
        WHERE event_id = ANY($1::uuid[]) AND published_at IS NULL`, strs(old)).Scan(&passedOld); err != nil || passedOld < 150 {
		t.Fatalf("%d old facts published by the cursor alone (%v); the test needs most of them", passedOld, err)
	}
	// As the sweeper prunes: with its own role's grants.
	sweeper := railtest.Pool(t, db.URLAs(t, "brief_sweeper"), 2)
	res, err := postgres.PruneOutbox(ctx, sweeper, 24*time.Hour, postgres.PruneLimits{})
	if err != nil {
		t.Fatal(err)
	}
	var oldLeft, backlogLeft, movesOld, movesNew int
	if err := db.Pool.QueryRow(ctx, `SELECT
            (SELECT count(*) FROM ops.domain_event_outbox WHERE event_id = ANY($1::uuid[])),
            (SELECT count(*) FROM ops.outbox_facts WHERE event_id = ANY($2::uuid[]) AND published_at IS NOT NULL),
            (SELECT count(*) FROM ops.relay_published WHERE published_at < clock_timestamp() - interval '1 day'),
            (SELECT count(*) FROM ops.relay_published WHERE published_at >= clock_timestamp() - interval '1 day')`,
		strs(old), strs(backlog)).Scan(&oldLeft, &backlogLeft, &movesOld, &movesNew); err != nil {
		t.Fatal(err)
	}
	t.Logf("pruned %d (%+v); old facts left %d, backlog left %d, cursor moves before the cutoff %d, after %d",
		res.Deleted, res, oldLeft, backlogLeft, movesOld, movesNew)
	if res.Deleted != 300 || oldLeft != 0 || res.Left != 0 {
		t.Errorf("pruned %d, %d of the 300 old facts left (%d prunable left); want all 300 gone", res.Deleted, oldLeft, res.Left)
	}
	if backlogLeft != 250 {
		t.Errorf("%d of the 250 facts published just now (occurred days ago) kept and published; want all", backlogLeft)
	}
	if movesOld != 1 || movesNew == 0 {
		t.Errorf("cursor moves kept: %d before the cutoff (want the newest only), %d after (want all)", movesOld, movesNew)
	}
}

// A cursor moved back by hand (on-call re-sending a range) re-reads what
// lies past it and moves forward again through positions already
// recorded in ops.relay_published: the relay goes on (the facts are sent
// again, deduped downstream on event_id). (Without ON CONFLICT DO NOTHING
// on the record, every claim fails on its primary key.)
func TestRelayCursorMovedBackGoesOn(t *testing.T) {
	// Not parallel: see TestRelayCursorIsTheMark.
	db := railtest.NewDB(t)
	ctx := context.Background()
	recordN(t, db.Pool, 300)
	runRelay(t, db.Pool, newSink(), 300)
	var moves int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.relay_published`).Scan(&moves); err != nil || moves == 0 {
		t.Fatalf("%d cursor moves recorded (%v)", moves, err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.relay_lease SET cursor_xid = '0', cursor_at = '-infinity',
        cursor_id = '00000000-0000-0000-0000-000000000000' WHERE lease = 'outbox'`); err != nil {
		t.Fatal(err)
	}
	again := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: again, BatchSize: 100}
	for pass := 0; pass < 20 && unpublished(t, db.Pool) > 0; pass++ {
		if _, err := r.DrainOnce(ctx); err != nil {
			t.Fatalf("pass %d after the cursor was moved back: %v", pass, err)
		}
	}
	if n := unpublished(t, db.Pool); n != 0 {
		t.Errorf("%d facts unpublished after the cursor was moved back and the relay ran", n)
	}
	t.Logf("%d cursor moves recorded before; %d facts sent again", moves, again.count())
}

// On-call's `why` tells a fact the cursor passed (its published_at column
// null) as published, with the time of the cursor's move, never as
// pending. (Reading the table's column, as before migration 027, it tells
// nearly every relayed fact as "pending: not yet on the bus".)
func TestWhyTellsACursorPassedFactPublished(t *testing.T) {
	// Not parallel: see TestRelayCursorIsTheMark.
	db := railtest.NewDB(t)
	b := &bundle{db: db, pool: db.Pool, ledger: postgres.NewLedger(db.Pool, rail.Config{}), ctx: context.Background()}
	b.ref = b.newMatter(t, "Harlow Logistics v. Penmark Freight")
	const facts = 250
	for range facts {
		recordedFact(t, b, b.ref, rail.FactDocumentUploaded)
	}
	runRelay(t, db.Pool, newSink(), facts)
	var passed int
	if err := db.Pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.domain_event_outbox
        WHERE matter_id = $1 AND published_at IS NULL`, b.ref.MatterID).Scan(&passed); err != nil || passed < 100 {
		t.Fatalf("%d facts published by the cursor alone (%v); the test needs at least a pass of them", passed, err)
	}
	rep, err := b.ledger.Why(b.ctx, b.ref, oc(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	published, pending := 0, 0
	for _, e := range rep.Entries {
		if e.Kind != postgres.EntryFact {
			continue
		}
		switch {
		case strings.Contains(e.Text, "pending"):
			pending++
		case strings.Contains(e.Text, "published "):
			published++
		}
	}
	t.Logf("%d facts (%d passed by the cursor, no mark): why tells %d published, %d pending", facts, passed, published, pending)
	if published != facts || pending != 0 {
		t.Errorf("why tells %d of %d facts published and %d pending; want all published", published, facts, pending)
	}
}
