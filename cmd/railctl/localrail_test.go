package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
)

// syncBuffer is a bytes.Buffer safe for the rail's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLocalRailRunsTheSweeperFunction: the local rail (make run, make serve)
// runs the sweeper function's handler, pruning included, not a loop of its
// own: an outbox row published and a trigger inbox row received longer ago
// than the retentions are pruned while the local rail runs. (Before the rail
// was assembled by pkg/app, the local sweeper only swept the ledger and this
// test timed out.)
func TestLocalRailRunsTheSweeperFunction(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Old enough for the default retentions (168 h, 360 h), by the database clock.
	var outboxID, inboxID string
	if err := pool.QueryRow(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, occurred_at, published_at)
        VALUES (gen_random_uuid(), 'matter.created', clock_timestamp() - interval '401 hours', clock_timestamp() - interval '400 hours')
        RETURNING event_id::text`).Scan(&outboxID); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `WITH f AS (INSERT INTO app.firms (firm_id) VALUES (gen_random_uuid()) RETURNING firm_id),
             m AS (INSERT INTO app.matters (firm_id, matter_id) SELECT firm_id, gen_random_uuid() FROM f RETURNING firm_id, matter_id)
        INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name, received_at)
        SELECT gen_random_uuid(), firm_id, matter_id, 'document.uploaded', clock_timestamp() - interval '400 hours' FROM m
        RETURNING event_id::text`).Scan(&inboxID); err != nil {
		t.Fatal(err)
	}

	var o railOptions
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addRailFlags(fs, &o, 0, time.Second)
	if err := fs.Parse([]string{"--sweep-every", "100ms"}); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	r, err := startRail(ctx, db.URL, o, newProgress(&out, slog.LevelInfo))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	deadline := time.Now().Add(60 * time.Second)
	for {
		var left int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM ops.domain_event_outbox WHERE event_id::text = $1)
                + (SELECT count(*) FROM ops.trigger_inbox WHERE event_id::text = $2)`, outboxID, inboxID).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old outbox and inbox rows were not pruned by the local rail's sweeper within 60 s\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
