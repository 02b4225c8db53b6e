package postgres_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The demand statement looks up when its facts occurred, by event id. Its
// cost must not grow with the outbox, whatever plan the server keeps for
// it: a pool of prepared statements keeps a generic plan made when the
// statement was first run, and on a young outbox the planner's cheapest
// generic plan for "min(occurred_at) WHERE event_id = ANY($5)" walked the
// occurred_at index from the oldest row, filtering by id: every later
// demand then read the whole outbox (the bench's end-to-end figure fell by
// half from one repetition to the next, and VACUUM or ANALYZE, which
// replans, brought it back). Here the plan is made on an empty outbox and
// kept (force_generic_plan, no autovacuum), the outbox grows to 20,000
// facts, and a demand naming the newest fact, and one naming none, must
// each read a handful of pages.
func TestDemandCostDoesNotGrowWithTheOutbox(t *testing.T) {
	b := setup(t, rail.Config{})
	if _, err := b.pool.Exec(b.ctx, `ALTER TABLE ops.domain_event_outbox SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(b.ctx, b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(b.ctx)
	if _, err := conn.Exec(b.ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prepare(b.ctx, "demand", postgres.DemandSQL); err != nil {
		t.Fatal(err)
	}
	// buffers runs the prepared demand under EXPLAIN ANALYZE (rolled back)
	// and returns the shared buffers its execution touched.
	buffers := func(ref rail.MatterRef, ids string) int {
		t.Helper()
		tx, err := conn.Begin(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(b.ctx)
		var out string
		q := fmt.Sprintf(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE demand('%s', '%s', 1, 'fact', '%s', '')`,
			ref.FirmID, ref.MatterID, ids)
		if err := tx.QueryRow(b.ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&out); err != nil {
			t.Fatal(err)
		}
		return planBlocks(t, out)
	}
	first := b.newMatter(t, "Calder Freight v. Ostrow Mills")
	young := buffers(first, "{}") // the generic plan is made here, on an empty outbox

	if _, err := b.pool.Exec(b.ctx, `INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload)
        SELECT $1, $2, 'document.uploaded', jsonb_build_object('document_id', gen_random_uuid())
        FROM generate_series(1, 20000)`, b.ref.FirmID, b.ref.MatterID); err != nil {
		t.Fatal(err)
	}
	newest, err := postgres.RecordFact(b.ctx, b.pool, rail.Fact{Name: "document.uploaded", FirmID: b.ref.FirmID,
		MatterID: uuid.NullUUID{UUID: b.ref.MatterID, Valid: true}, Payload: map[string]string{"document_id": "9b2f4c1e-2a57-4f5e-9d0b-3f7c1a2e8b44"}})
	if err != nil {
		t.Fatal(err)
	}
	named := buffers(b.newMatter(t, "Ilsley v. Marrow Port Authority"), "{"+newest.String()+"}")
	none := buffers(b.newMatter(t, "Pellam Cooperative v. Stroud"), "{}")
	t.Logf("shared buffers per demand: on the empty outbox %d; at 20,001 facts naming the newest %d, naming none %d", young, named, none)
	// A demand touches the matter, its job row and demand record with
	// their indexes and foreign keys, and one primary-key probe per fact:
	// a few dozen pages. The outbox's occurred_at index alone is over a
	// hundred pages at this size and its heap over a thousand.
	const limit = 120
	if named > limit || none > limit {
		t.Fatalf("a demand read %d pages naming the newest of 20,001 facts and %d naming none (limit %d): its cost grows with the outbox", named, none, limit)
	}
}
