package postgres_test

import (
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// explainBlocks runs sql with args under EXPLAIN (ANALYZE, BUFFERS) in a
// transaction it rolls back, and returns the shared buffers the statement
// touched (planBlocks).
func explainBlocks(t *testing.T, b *bundle, sql string, args ...any) int {
	t.Helper()
	tx, err := b.pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.ctx)
	var out string
	if err := tx.QueryRow(b.ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+sql, args...).Scan(&out); err != nil {
		t.Fatalf("explain: %v", err)
	}
	return planBlocks(t, out)
}

// planBlocks reads the shared buffers an EXPLAIN (ANALYZE, BUFFERS,
// FORMAT JSON) result says its statement touched: the root's count (what
// it pulled, the CTE scans included) plus its top-level InitPlans' (the
// data-modifying CTEs no scan pulls run apart; an upper bound, since a
// pulled CTE counts twice).
func planBlocks(t *testing.T, explained string) int {
	t.Helper()
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(explained), &plan); err != nil || len(plan) == 0 {
		t.Fatalf("explain output %q: %v", explained, err)
	}
	blocks := func(n map[string]any) int {
		hit, _ := n["Shared Hit Blocks"].(float64)
		read, _ := n["Shared Read Blocks"].(float64)
		return int(hit + read)
	}
	total := blocks(plan[0].Plan)
	subs, _ := plan[0].Plan["Plans"].([]any)
	for _, s := range subs {
		if n, ok := s.(map[string]any); ok && n["Parent Relationship"] == "InitPlan" {
			total += blocks(n)
		}
	}
	return total
}

// The sweeper runs every retention statement on each pass, once a minute
// whatever the volume. When nothing is old enough they must cost next to
// nothing however many young rows the tables retain: a cutoff written as
// clock_timestamp() - interval is volatile, so it is no index condition,
// and an ordered index scan with it as a filter reads every retained row
// to find none (section day: the outbox's prune went 1.5 -> 11.2 ms a pass
// from 4,000 to 20,000 uploads, deleting nothing). Here each table holds
// 20,000 rows from the last minute, the retention is an hour, and every
// statement must read a handful of pages.
func TestRetentionPassesCostNothingWhenNothingIsOld(t *testing.T) {
	b := setup(t, rail.Config{})
	const rows = 20000
	for _, q := range []string{
		`INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name)
            SELECT gen_random_uuid(), $1, $2, 'document.uploaded' FROM generate_series(1, $3::int)`,
		`INSERT INTO ops.matter_demands (firm_id, matter_id, generation, n, source, occurred_at, served_token, served_at)
            SELECT $1, $2, g, 1, 'fact', clock_timestamp(), g, clock_timestamp() FROM generate_series(1, $3::int) g`,
		`INSERT INTO ops.matter_nudges (firm_id, matter_id, reason) SELECT $1, $2, 'demand' FROM generate_series(1, $3::int)`,
		`INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, published_at)
            SELECT $1, $2, 'document.uploaded', jsonb_build_object('document_id', gen_random_uuid()), clock_timestamp()
            FROM generate_series(1, $3::int)`,
	} {
		if _, err := b.pool.Exec(b.ctx, q, b.ref.FirmID, b.ref.MatterID, rows); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.pool.Exec(b.ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	const hour = 3600.0
	for _, c := range []struct {
		name string
		sql  string
		args []any
	}{
		{"inbox prune", postgres.PruneInboxSQL, []any{hour, 10000}},
		{"demand-record prune", postgres.PruneDemandRecordsSQL, []any{hour, 10000}},
		{"nudge-record prune", postgres.PruneNudgeRecordsSQL, []any{hour, 10000}},
		{"outbox prune", postgres.PruneOutboxSQL, []any{hour, 1000}},
		{"outbox prunable count", postgres.OutboxPrunableLeftSQL, []any{hour, 100000}},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement} {
			args := append([]any{mode}, c.args...)
			n := explainBlocks(t, b, c.sql, args...)
			t.Logf("%s (%v): %d pages with %d young rows", c.name, mode, n, rows)
			// An index probe that finds nothing old, plus the statement's
			// other fixed reads: well under a hundred pages. The tables'
			// indexes alone are 60-170 pages at this size.
			if n > 60 {
				t.Errorf("%s (%v) read %d pages to delete nothing among %d young rows: it reads what it retains", c.name, mode, n, rows)
			}
		}
	}
}
