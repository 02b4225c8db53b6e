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

// A relay pass that publishes everything it claimed costs the database one
// round trip: the claim (take or renew the relay lease, mark the previous
// pass's rows, read the due rows) is one statement with no BEGIN or COMMIT
// around it. A settlement (a pass with a failure: marks, fenced failure
// records) is one more, and so is the run's last statement (its last marks
// and the release of the lease). (Before issue 21 a pass was a claim
// leasing each row and a settlement marking each, two statements and two
// row versions per fact; before that, transactions of five and three
// round trips.)
func TestRelayPassRoundTrips(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	var trips atomic.Int64
	pool := countedPool(t, db.URL, &trips)
	ob := postgres.NewOutbox(pool)
	const passes = 5
	recordN(t, db.Pool, 20*(passes+4))
	holder := uuid.New()
	// The run's first claim takes the lease and reads nothing.
	if c, err := ob.Claim(ctx, rail.OutboxClaimRequest{Holder: holder, Limit: 20, Lease: time.Minute}); err != nil || !c.Taken || len(c.Rows) != 0 {
		t.Fatalf("first claim: %+v %v; want the lease taken, nothing read", c, err)
	}
	var pending []uuid.UUID
	var token int64
	claim := func() (int64, rail.OutboxClaim) {
		t0 := trips.Load()
		c, err := ob.Claim(ctx, rail.OutboxClaimRequest{Holder: holder, Limit: 20, Lease: time.Minute, Published: pending})
		if err != nil || len(c.Rows) != 20 || c.Busy || c.Taken {
			t.Fatalf("claim: %d rows, %+v, %v", len(c.Rows), c, err)
		}
		if want := int64(len(pending)); c.Marked != want {
			t.Fatalf("claim marked %d of the previous pass's %d rows", c.Marked, want)
		}
		pending, token = pending[:0], c.Token
		for _, r := range c.Rows {
			pending = append(pending, r.EventID)
		}
		return trips.Load() - t0, c
	}
	claim() // warm-up: connect, prepare
	// and the settlement's statement (a failure record on one row)
	if _, err := ob.Settle(ctx, rail.OutboxSettlement{Holder: holder, Token: token, Published: pending[1:],
		Failures: []rail.PublishFailure{{EventID: pending[0], Msg: "warm-up", Kind: rail.FailureCall}},
		Base:     time.Minute, Limit: time.Hour, MaxAttempts: 5}); err != nil {
		t.Fatal(err)
	}
	pending = nil
	var claims int64
	for range passes {
		n, _ := claim()
		claims += n
	}
	if got := float64(claims) / passes; got != 1 {
		t.Errorf("claim (carrying the previous pass's marks): %.2f round trips per pass, want 1.00", got)
	}
	// A pass with a failure settles with one statement.
	_, c := claim()
	failed := pending[0]
	t0 := trips.Load()
	s, err := ob.Settle(ctx, rail.OutboxSettlement{Holder: holder, Token: token, Published: pending[1:],
		Failures: []rail.PublishFailure{{EventID: failed, Msg: "PutEvents call failed", Kind: rail.FailureCall}},
		Base:     time.Second, Limit: time.Minute, MaxAttempts: 5})
	if got := trips.Load() - t0; got != 1 {
		t.Errorf("settle (marks and a failure record): %d round trips, want 1", got)
	}
	if err != nil || s.Published != int64(len(c.Rows)-1) || len(s.Failures) != 1 || s.LeaseLost {
		t.Fatalf("settle: %+v %v", s, err)
	}
	pending = nil
	claim()
	t0 = trips.Load()
	s, err = ob.Settle(ctx, rail.OutboxSettlement{Holder: holder, Token: token, Published: pending, Release: true})
	if got := trips.Load() - t0; got != 1 {
		t.Errorf("the last statement (marks and the release): %d round trips, want 1", got)
	}
	if err != nil || s.Published != 20 || !s.Released {
		t.Fatalf("release: %+v %v", s, err)
	}
	var left int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL`).Scan(&left); err != nil || left != 22 {
		t.Fatalf("%d rows left unpublished (%v), want the 2 failed ones and the 20 never read", left, err)
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
	ob := postgres.NewOutbox(db.Pool)
	holder := uuid.MustParse("00000000-0000-7000-8000-000000000001")
	if c, err := ob.Claim(ctx, rail.OutboxClaimRequest{Holder: holder, Limit: 1, Lease: time.Minute}); err != nil || !c.Taken {
		t.Fatalf("take the lease: %+v %v", c, err)
	}
	nodes, plan := explainAnalyze(t, db.Pool, postgres.RelayClaimSQL, rail.DefaultRelayBatch, []string{}, holder.String(), 60.0)
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
	for _, ix := range []string{"domain_event_outbox_backoff_idx", "domain_event_outbox_due_idx"} {
		if !seen[ix] {
			t.Errorf("the claim does not use %s", ix)
		}
	}
	if blocks := num(nodes[0]["Shared Hit Blocks"]) + num(nodes[0]["Shared Read Blocks"]); blocks > 1500 {
		t.Errorf("the claim touched %v buffers for a batch of %d", blocks, rail.DefaultRelayBatch)
	}
	c, err := ob.Claim(ctx, rail.OutboxClaimRequest{Holder: holder, Limit: rail.DefaultRelayBatch, Lease: time.Minute})
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
	// The claim wrote none of the rows it read: the relay lease alone keeps
	// other relays away.
	var unchanged int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox
        WHERE publish_attempts = 0 AND next_attempt_at IS NULL AND published_at IS NULL`).Scan(&unchanged); err != nil || unchanged != 200 {
		t.Fatalf("%d of the 200 unsent rows unchanged after the claim (%v); a claim writes no row", unchanged, err)
	}
}
