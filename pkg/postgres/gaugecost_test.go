package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// oldOutboxGaugesSQL is the gauge statement before it took the cursor as
// a value: the cursor read inside it by scalar subqueries.
const oldOutboxGaugesSQL = `SELECT count(*),
            coalesce(extract(epoch FROM clock_timestamp() - min(occurred_at) FILTER (WHERE isfinite(occurred_at)))::float8, 0),
            (SELECT count(*) FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL)
        FROM (SELECT occurred_at FROM ops.domain_event_outbox
                WHERE (relay_xid, occurred_at, event_id) >= (
                        coalesce((SELECT cursor_xid FROM ops.relay_lease WHERE lease = 'outbox'), '0'),
                        coalesce((SELECT cursor_at FROM ops.relay_lease WHERE lease = 'outbox'), '-infinity'),
                        coalesce((SELECT cursor_id FROM ops.relay_lease WHERE lease = 'outbox'), '00000000-0000-0000-0000-000000000000'))
                  AND published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
              UNION ALL
              SELECT occurred_at FROM ops.domain_event_outbox
                WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NOT NULL) AS pending`

// The outbox gauges are read on every relay run and every sweeper pass,
// once a minute each, while the outbox retains days of published facts.
// They must read the backlog, not what is retained: with the cursor read
// inside the statement the planner cannot know where it is, guesses a
// third of the table lies above it, and once the heap's order has drifted
// from the relay index's it scans the whole outbox. Here about 100,000
// published facts lie below the cursor and three unsent ones above it.
func TestOutboxGaugesCostNothingOverRetainedFacts(t *testing.T) {
	b := setup(t, rail.Config{})
	const retained = 100000
	// A day-old outbox: the relay marks facts as they come, the sweeper
	// prunes old ones and new facts fill the space freed, so the heap's
	// order is no longer the relay index's. Here: 100,000 facts written
	// and published, every other one pruned, 50,000 more written into the
	// freed space and published, the table analyzed.
	for _, q := range []string{
		`INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, published_at)
        SELECT $1, $2, 'document.uploaded', jsonb_build_object('document_id', gen_random_uuid()), clock_timestamp()
        FROM generate_series(1, $3::int)`,
		`DELETE FROM ops.domain_event_outbox WHERE ctid IN (SELECT ctid FROM ops.domain_event_outbox WHERE random() < 0.5)`,
		`VACUUM ops.domain_event_outbox`,
		`INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, published_at)
        SELECT $1, $2, 'document.uploaded', jsonb_build_object('document_id', gen_random_uuid()), clock_timestamp()
        FROM generate_series(1, $3::int / 2)`,
		`ANALYZE ops.domain_event_outbox`,
	} {
		var args []any
		if strings.Contains(q, "$3") {
			args = []any{b.ref.FirmID, b.ref.MatterID, retained}
		}
		if _, err := b.pool.Exec(b.ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// A relay pass moves the cursor past the published facts.
	r := &rail.Relay{Outbox: postgres.NewOutbox(b.pool), Publisher: newSink()}
	if _, err := r.DrainOnce(b.ctx); err != nil {
		t.Fatal(err)
	}
	recordN(t, b.pool, 3)
	g, err := postgres.ReadOutboxGauges(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	var oldBacklog int64
	var age float64
	var parked int64
	if err := b.pool.QueryRow(b.ctx, oldOutboxGaugesSQL).Scan(&oldBacklog, &age, &parked); err != nil {
		t.Fatal(err)
	}
	if g.Backlog != 3 || oldBacklog != 3 || g.Parked != 0 {
		t.Fatalf("backlog %d (the statement before: %d), parked %d; want the 3 unsent facts, none parked", g.Backlog, oldBacklog, g.Parked)
	}
	var cursor string
	if err := b.pool.QueryRow(b.ctx, postgres.OutboxCursorSQL).Scan(&cursor); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement} {
		n := explainBlocks(t, b, postgres.OutboxGaugesSQL, mode, cursor)
		t.Logf("gauges (%v): %d pages with about %d retained facts below the cursor", mode, n, retained)
		if n > 60 {
			t.Errorf("gauges (%v) read %d pages for a backlog of 3 among about %d retained facts: they read what the outbox retains", mode, n, retained)
		}
	}
	// The statement before, for the record (and as the negative control):
	// it reads the whole outbox.
	old := explainBlocks(t, b, oldOutboxGaugesSQL)
	t.Logf("the statement before: %d pages", old)
	if old < 10*60 {
		t.Errorf("the statement before read only %d pages: the test no longer tells the two apart", old)
	}
}
