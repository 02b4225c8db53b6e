package postgres_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// fillFirms gives one big firm `big` matters and each of `small` small
// firms one, every matter with a landed frame by another builder than the
// deployed one (outdated). behind: every matter has unserved demand whose
// nudge was lost (the sweeper's re-nudge), the big firm's older than any
// small firm's; otherwise every matter is current and idle (the backfill's
// admission), the big firm's last built longer ago. Either way the order
// the statements used before fairness (oldest first) puts the whole big
// firm ahead of every small one. It returns the big firm's id.
func (b *bundle) fillFirms(t *testing.T, big, small int, behind bool) uuid.UUID {
	t.Helper()
	requested, since := "1", "NULL::timestamptz"
	if behind {
		requested, since = "2", "clock_timestamp() - make_interval(mins => CASE WHEN f = 0 THEN 120 ELSE 60 END) + make_interval(secs => i)"
	}
	for _, q := range []string{
		`CREATE TEMP TABLE fair AS
            SELECT f, i, ('20000000-0000-4000-8000-' || lpad(to_hex(f), 12, '0'))::uuid AS firm_id,
                   ('30000000-0000-4000-8000-' || lpad(to_hex(f * 100000 + i), 12, '0'))::uuid AS matter_id
            FROM generate_series(0, $1::int) f, generate_series(1, $2::int) i
            WHERE f = 0 OR i = 1`,
		`INSERT INTO app.firms (firm_id) SELECT DISTINCT firm_id FROM fair`,
		`INSERT INTO app.matters (firm_id, matter_id, title) SELECT firm_id, matter_id, 'fair' FROM fair`,
		`INSERT INTO ops.matter_frame_jobs (firm_id, matter_id, requested_generation, claimed_generation,
                target_generation, built_generation, run_status, claimed_at, demand_since, uncovered_since,
                last_demanded_at, lease_seconds, max_attempts, built_by)
            SELECT firm_id, matter_id, ` + requested + `, 1, 1, 1, 'idle',
                clock_timestamp() - make_interval(hours => CASE WHEN f = 0 THEN 48 ELSE 24 END) + make_interval(secs => i),
                ` + since + `, ` + since + `,
                clock_timestamp() - interval '30 minutes', 900, 5, 'other' || chr(31) || chr(31) || chr(31)
            FROM fair`,
		`INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body)
            SELECT firm_id, matter_id, 1, 1, 'f', 'other', true, '{}' FROM fair`,
		`INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id, outcome)
            SELECT firm_id, matter_id, 1, 1, 'w', 'landed' FROM fair`,
		`ANALYZE`,
	} {
		var err error
		if q[:6] == "CREATE" {
			_, err = b.pool.Exec(b.ctx, q, small, big)
		} else {
			_, err = b.pool.Exec(b.ctx, q)
		}
		if err != nil {
			t.Fatalf("fill: %v\n%s", err, q)
		}
	}
	var firm uuid.UUID
	if err := b.pool.QueryRow(b.ctx, `SELECT DISTINCT firm_id FROM fair WHERE f = 0`).Scan(&firm); err != nil {
		t.Fatal(err)
	}
	return firm
}

// perFirm counts refs by firm.
func perFirm(refs []rail.MatterRef) map[uuid.UUID]int {
	n := map[uuid.UUID]int{}
	for _, r := range refs {
		n[r.FirmID]++
	}
	return n
}

// One firm with 1,000 unserved matters, ten small firms with one each,
// every small firm's demand younger than all of the big firm's: one pass
// with limit 50 re-nudges every small firm (round-robin across firms), and
// the big firm takes the rest.
func TestUnservedIsRoundRobinAcrossFirms(t *testing.T) {
	b := setup(t, rail.Config{})
	big := b.fillFirms(t, 1000, 10, true)
	found, err := b.ledger.Unserved(b.ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	refs := make([]rail.MatterRef, len(found))
	for i, u := range found {
		refs[i] = u.MatterRef
	}
	n := perFirm(refs)
	if len(found) != 50 || len(n) != 11 || n[big] != 40 {
		t.Fatalf("a pass of 50 re-nudged %d matters of %d firms, %d of them the big firm's: want all 10 small firms and 40 of the big one's",
			len(found), len(n), n[big])
	}
	// Live demand still comes before the backfill's: give one small firm's
	// matter backfill-only demand and it moves to the end.
	var bf rail.MatterRef
	if err := b.pool.QueryRow(b.ctx, `SELECT firm_id, matter_id FROM fair WHERE f = 3`).Scan(&bf.FirmID, &bf.MatterID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(b.ctx, `INSERT INTO ops.matter_demands (firm_id, matter_id, generation, n, source, occurred_at)
            VALUES ($1, $2, 2, 1, 'backfill', clock_timestamp())`, bf.FirmID, bf.MatterID); err != nil {
		t.Fatal(err)
	}
	found, err = b.ledger.Unserved(b.ctx, 1010)
	if err != nil || len(found) != 1010 {
		t.Fatalf("%d listed: %v", len(found), err)
	}
	if last := found[len(found)-1]; last.MatterRef != bf || !last.BackfillOnly {
		t.Fatalf("the backfill-only matter is listed as %+v, not last", last)
	}
}

// The backfill's admission: the big firm's 1,000 outdated matters were
// built longest ago, yet one admission of 50 takes every small firm's.
func TestBackfillAdmissionIsRoundRobinAcrossFirms(t *testing.T) {
	b := setup(t, rail.Config{})
	big := b.fillFirms(t, 1000, 10, false)
	tx, err := b.ledger.BeginBackfill(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(b.ctx)
	scan, err := tx.Outdated(b.ctx, deployedID, 50)
	if err != nil {
		t.Fatal(err)
	}
	n := perFirm(scan.Eligible)
	if len(scan.Eligible) != 50 || len(n) != 11 || n[big] != 40 || scan.Outdated != 1010 || scan.Admissible != 1010 {
		t.Fatalf("admission of 50: %d matters of %d firms, %d of the big firm's (%d outdated, %d admissible): want all 10 small firms",
			len(scan.Eligible), len(n), n[big], scan.Outdated, scan.Admissible)
	}
}
