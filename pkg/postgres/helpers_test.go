package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/internal/verify/ledgercheck"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func TestMain(m *testing.M) { railtest.Main(m) }

// bundle is what most tests need: a fresh database, a ledger, one open matter.
type bundle struct {
	db     *railtest.DB
	pool   *pgxpool.Pool
	ledger *postgres.Ledger
	ref    rail.MatterRef
	ctx    context.Context
}

func setup(t *testing.T, cfg rail.Config) *bundle {
	t.Helper()
	t.Parallel()
	db := railtest.NewDB(t)
	b := &bundle{db: db, pool: db.Pool, ledger: postgres.NewLedger(db.Pool, cfg), ctx: context.Background()}
	b.ref = b.newMatter(t, "Harlow Logistics v. Penmark Freight")
	t.Cleanup(func() { checkInvariants(t, b.pool) })
	return b
}

func (b *bundle) newMatter(t *testing.T, title string) rail.MatterRef {
	t.Helper()
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(b.ctx, b.pool, ref, title); err != nil {
		t.Fatal(err)
	}
	return ref
}

func (b *bundle) addDoc(t *testing.T, name string, pages ...string) uuid.UUID {
	t.Helper()
	id, err := postgres.AddDocument(b.ctx, b.pool, b.ref, rail.NewDocument{Name: name, Pages: pages})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (b *bundle) demand(t *testing.T) int64 {
	t.Helper()
	r, err := b.ledger.Demand(b.ctx, b.ref, 1)
	if err != nil {
		t.Fatal(err)
	}
	return r.Requested
}

func (b *bundle) claim(t *testing.T, worker string) (rail.Claim, bool) {
	t.Helper()
	c, ok, err := b.ledger.Claim(b.ctx, b.ref, worker)
	if err != nil {
		t.Fatal(err)
	}
	return c, ok
}

func (b *bundle) mustClaim(t *testing.T, worker string) rail.Claim {
	t.Helper()
	c, ok := b.claim(t, worker)
	if !ok {
		t.Fatalf("%s: expected a claim to be granted; row: %+v", worker, b.job(t))
	}
	return c
}

func (b *bundle) job(t *testing.T) postgres.JobRow {
	t.Helper()
	j, err := b.ledger.Job(b.ctx, b.ref)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func frameOf(s string) rail.Frame {
	body, _ := json.Marshal(map[string]string{"built_by": s})
	return rail.Frame{Body: body, Fingerprint: s, Builder: "test"}
}

// expireLease is the test's time machine: it moves the row's lease start
// back past the lease, as if the worker had been silent that long. The
// ledger itself only ever writes claimed_at from the database clock.
func (b *bundle) expireLease(t *testing.T) {
	t.Helper()
	lease := b.ledger.Config().Lease
	tag, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs
        SET claimed_at = claimed_at - make_interval(secs => $3)
        WHERE firm_id = $1 AND matter_id = $2 AND run_status = 'running'`,
		b.ref.FirmID, b.ref.MatterID, lease.Seconds()+1)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("expire lease: %v (rows %d)", err, tag.RowsAffected())
	}
}

// ageDemand moves demand and claim times back, as if the nudges had had
// time to arrive (for the sweeper's grace).
func (b *bundle) ageDemand(t *testing.T, d time.Duration) {
	t.Helper()
	_, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET
        last_demanded_at = last_demanded_at - make_interval(secs => $3),
        demand_since = demand_since - make_interval(secs => $3),
        uncovered_since = uncovered_since - make_interval(secs => $3),
        claimed_at = claimed_at - make_interval(secs => $3),
        not_before = not_before - make_interval(secs => $3)
        WHERE firm_id = $1 AND matter_id = $2`, b.ref.FirmID, b.ref.MatterID, d.Seconds())
	if err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) frames(t *testing.T) []frameRow {
	t.Helper()
	rows, err := b.pool.Query(b.ctx, `SELECT token, target_generation, fingerprint FROM ops.matter_frames
        WHERE firm_id = $1 AND matter_id = $2 ORDER BY token`, b.ref.FirmID, b.ref.MatterID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []frameRow
	for rows.Next() {
		var f frameRow
		if err := rows.Scan(&f.token, &f.target, &f.fingerprint); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

type frameRow struct {
	token, target int64
	fingerprint   string
}

// checkInvariants asserts protocol.md's table invariants on every row.
func checkInvariants(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if err := invariantViolations(context.Background(), pool); err != nil {
		t.Error(err)
	}
}

func invariantViolations(ctx context.Context, pool *pgxpool.Pool) error {
	bad, err := ledgercheck.Violations(ctx, pool)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("ledger invariants violated: %v", bad)
	}
	return nil
}

// countingBuilder counts model invocations; it can hold builds open until
// released, and records what each build saw.
type countingBuilder struct {
	calls   atomic.Int64
	mu      sync.Mutex
	hold    chan struct{} // when non-nil, Build waits for it to close (or ctx)
	started chan struct{} // when non-nil, receives one value per started build
	fail    error
	seen    [][]string
}

func (c *countingBuilder) Name() string { return "counting/v1" }

func (c *countingBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	c.calls.Add(1)
	names := make([]string, 0, len(in.Manifest))
	for d, err := range in.Documents(ctx) {
		if err != nil {
			return nil, err
		}
		names = append(names, d.Name)
	}
	c.mu.Lock()
	c.seen = append(c.seen, names)
	hold, started := c.hold, c.started
	c.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	if c.fail != nil {
		return nil, c.fail
	}
	return json.Marshal(map[string]any{"documents": names})
}

func newPool(t *testing.T, url string) *pgxpool.Pool {
	return railtest.Pool(t, url, 20)
}
