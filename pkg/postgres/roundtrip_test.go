package postgres_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// wireConn counts round trips on a connection's socket: a write that
// follows a read starts a new one (pipelined writes are one).
type wireConn struct {
	net.Conn
	trips    *atomic.Int64
	readSome atomic.Bool
	started  atomic.Bool
}

func (c *wireConn) Write(b []byte) (int, error) {
	if !c.started.Swap(true) || c.readSome.Swap(false) {
		c.trips.Add(1)
	}
	return c.Conn.Write(b)
}

func (c *wireConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.readSome.Store(true)
	}
	return n, err
}

// countedPool is a one-connection pool on url whose round trips trips
// counts, warmed so the connection exists and its statements are prepared
// by the caller's own warm-up.
func countedPool(t *testing.T, url string, trips *atomic.Int64) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.MinConns = 1, 0
	d := &net.Dialer{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &wireConn{Conn: c, trips: trips}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// A relay pass that publishes everything it claimed costs the database two
// round trips: the claim (select the due rows and lease them) is one
// statement, and the settlement of a wholly published batch one more, with
// no BEGIN or COMMIT around either. (Before, the claim was a transaction
// of five round trips and the settlement one of three.)
func TestRelayPassRoundTrips(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	var trips atomic.Int64
	pool := countedPool(t, db.URL, &trips)
	ob := postgres.NewOutbox(pool)
	const passes = 5
	recordN(t, db.Pool, 20*(passes+1))
	pass := func() (claim, settle int64) {
		t0 := trips.Load()
		c, err := ob.Claim(ctx, 20, time.Minute)
		if err != nil || len(c.Rows) != 20 {
			t.Fatalf("claim: %d rows, %v", len(c.Rows), err)
		}
		t1 := trips.Load()
		ids := make([]uuid.UUID, len(c.Rows))
		for i, r := range c.Rows {
			ids[i] = r.EventID
		}
		s, err := ob.Settle(ctx, c, ids, nil, time.Second, time.Minute, 5)
		if err != nil || s.Published != 20 {
			t.Fatalf("settle: %+v %v", s, err)
		}
		return t1 - t0, trips.Load() - t1
	}
	pass() // warm-up: connect, prepare
	var claims, settles int64
	for range passes {
		c, s := pass()
		claims, settles = claims+c, settles+s
	}
	if got := float64(claims) / passes; got != 1 {
		t.Errorf("claim: %.2f round trips per pass, want 1.00", got)
	}
	if got := float64(settles) / passes; got != 1 {
		t.Errorf("settle (all published): %.2f round trips per pass, want 1.00", got)
	}
	var left int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox WHERE published_at IS NULL`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows left unpublished (%v)", left, err)
	}
}

// The one-statement claim reads only what is due, like its two selects
// (TestDrainReadsOnlyDueRows): each arm scans its own partial index, no
// sequential scan, a few dozen buffers with 20k rows backing off; retries
// come first and the batch is filled from the unsent rows.
func TestRelayClaimStatementReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, publish_attempts, last_error, next_attempt_at)
        SELECT gen_random_uuid(), 'document.uploaded', 3, 'PutEvents call failed', clock_timestamp() + interval '5 minutes'
        FROM generate_series(1, 20000)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, event_name, publish_attempts, last_error, next_attempt_at)
        SELECT gen_random_uuid(), 'document.uploaded', 1, 'PutEvents call failed', clock_timestamp() - interval '1 second'
        FROM generate_series(1, 20)`); err != nil {
		t.Fatal(err)
	}
	recordN(t, db.Pool, 200)
	if _, err := db.Pool.Exec(ctx, `ANALYZE ops.domain_event_outbox`); err != nil {
		t.Fatal(err)
	}
	nodes, plan := explainAnalyze(t, db.Pool, postgres.RelayClaimSQL, rail.DefaultRelayBatch, "00000000-0000-7000-8000-000000000001", 60.0)
	t.Logf("claim over 20k backing off, 20 due, 200 unsent:\n%s", plan)
	seen := map[string]bool{}
	for _, n := range nodes {
		if n["Node Type"] == "Seq Scan" {
			t.Errorf("sequential scan on %v", n["Relation Name"])
		}
		if name, ok := n["Index Name"].(string); ok {
			seen[name] = true
		}
	}
	for _, ix := range []string{"domain_event_outbox_retry_idx", "domain_event_outbox_unsent_idx"} {
		if !seen[ix] {
			t.Errorf("the claim does not use %s", ix)
		}
	}
	if blocks := num(nodes[0]["Shared Hit Blocks"]) + num(nodes[0]["Shared Read Blocks"]); blocks > 1500 {
		t.Errorf("the claim touched %v buffers for a batch of %d", blocks, rail.DefaultRelayBatch)
	}
	c, err := postgres.NewOutbox(db.Pool).Claim(ctx, rail.DefaultRelayBatch, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != rail.DefaultRelayBatch {
		t.Fatalf("claimed %d rows, want %d", len(c.Rows), rail.DefaultRelayBatch)
	}
	for i, r := range c.Rows {
		if retry := r.Attempts > 0; retry != (i < 20) {
			t.Fatalf("row %d: attempts %d: the 20 due retries must come first, then unsent rows", i, r.Attempts)
		}
	}
	var leased int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox WHERE relay_claim = $1`, c.ID).Scan(&leased); err != nil || leased != rail.DefaultRelayBatch {
		t.Fatalf("%d rows leased to the claim, want %d (%v)", leased, rail.DefaultRelayBatch, err)
	}
}
