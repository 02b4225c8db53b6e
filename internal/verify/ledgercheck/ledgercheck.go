// Package ledgercheck holds the ledger's table invariants (protocol.md's,
// plus the run table's token bookkeeping, the demand clock, stored frame
// bodies, and that a quarantine never holds demand its last attempt did not
// cover: new demand releases a quarantine, also demand that arrived during
// that attempt) as one SQL query. The rail's tests and the seeded simulation
// (internal/verify/sim) both check exactly this definition.
package ledgercheck

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
)

// ViolationsSQL returns one text row per violated invariant, naming the
// matter. No rows: every invariant holds.
var ViolationsSQL = `
SELECT 'generations out of order: ' || matter_id FROM ops.matter_frame_jobs
 WHERE NOT (built_generation <= target_generation AND target_generation <= requested_generation)
UNION ALL SELECT 'running without claimed_at: ' || matter_id FROM ops.matter_frame_jobs
 WHERE run_status = 'running' AND claimed_at IS NULL
UNION ALL SELECT 'not running with target <> built: ' || matter_id FROM ops.matter_frame_jobs
 WHERE run_status <> 'running' AND target_generation <> built_generation
UNION ALL SELECT 'demand_since set iff requested > built broken: ' || j.matter_id FROM ops.matter_frame_jobs j
 WHERE ` + postgres.SQLDemandUnserved("j") + ` <> (j.demand_since IS NOT NULL)
UNION ALL SELECT 'uncovered_since set iff requested > target broken: ' || matter_id FROM ops.matter_frame_jobs
 WHERE (requested_generation > target_generation) <> (uncovered_since IS NOT NULL)
UNION ALL SELECT 'uncovered demand older than the oldest unbuilt: ' || matter_id FROM ops.matter_frame_jobs
 WHERE uncovered_since < demand_since
UNION ALL SELECT 'frame token above claimed: ' || f.matter_id FROM ops.matter_frames f
 JOIN ops.matter_frame_jobs j USING (firm_id, matter_id) WHERE f.token > j.claimed_generation
UNION ALL SELECT 'duplicate frame token: ' || matter_id FROM ops.matter_frames
 GROUP BY firm_id, matter_id, token HAVING count(*) > 1
UNION ALL SELECT 'newest frame target <> built: ' || j.matter_id FROM ops.matter_frame_jobs j
 JOIN LATERAL (SELECT target_generation FROM ops.matter_frames f
   WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id ORDER BY token DESC LIMIT 1) nf ON true
 WHERE nf.target_generation <> j.built_generation
UNION ALL SELECT 'built without a frame: ' || matter_id FROM ops.matter_frame_jobs j
 WHERE built_generation > 0 AND NOT EXISTS (SELECT 1 FROM ops.matter_frames f
   WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id)
UNION ALL SELECT 'frame body missing: ' || f.matter_id || ' token ' || f.token FROM ops.matter_frames f
 WHERE f.body IS NULL AND NOT EXISTS (SELECT 1 FROM ops.matter_frame_bodies b
   WHERE b.firm_id = f.firm_id AND b.matter_id = f.matter_id AND b.body_sha256 = f.body_sha256)
UNION ALL SELECT 'quarantined with demand its last attempt never covered: ' || j.matter_id
 FROM ops.matter_frame_jobs j JOIN ops.matter_frame_runs r
   ON r.firm_id = j.firm_id AND r.matter_id = j.matter_id AND r.token = j.claimed_generation
 WHERE j.run_status = 'quarantined' AND j.requested_generation > r.target_generation
UNION ALL SELECT 'runs are not tokens k..claimed_generation without gaps: ' || j.matter_id
 FROM ops.matter_frame_jobs j
 LEFT JOIN LATERAL (SELECT count(*) AS n, min(token) AS lo, max(token) AS hi FROM ops.matter_frame_runs r
   WHERE r.firm_id = j.firm_id AND r.matter_id = j.matter_id) r ON true
 WHERE coalesce(r.hi, 0) <> j.claimed_generation
    OR (r.n > 0 AND r.n <> r.hi - r.lo + 1)`

// Querier is what Violations runs on.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Violations runs ViolationsSQL and returns the violations found.
func Violations(ctx context.Context, q Querier) ([]string, error) {
	rows, err := q.Query(ctx, ViolationsSQL)
	if err != nil {
		return nil, fmt.Errorf("ledger invariants: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("ledger invariants: %w", err)
	}
	return out, nil
}
