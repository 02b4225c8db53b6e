package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// ClaimBatchUnordered is ClaimBatch locking its rows in the order the
// batch gives them instead of (firm, matter) order: the negative control
// of the lock-order test.
func ClaimBatchUnordered(l *Ledger) func(ctx context.Context, refs []rail.MatterRef, workerID string) ([]rail.Claim, error) {
	stmt := claimBatchSQL
	for _, r := range [][2]string{
		{"SELECT DISTINCT u.firm_id, u.matter_id\n    FROM ROWS FROM (pg_catalog.unnest($1::text[]::uuid[]), pg_catalog.unnest($2::text[]::uuid[])) AS u(firm_id, matter_id)",
			"SELECT u.firm_id, u.matter_id, min(u.ord) AS ord\n    FROM ROWS FROM (pg_catalog.unnest($1::text[]::uuid[]), pg_catalog.unnest($2::text[]::uuid[])) WITH ORDINALITY AS u(firm_id, matter_id, ord)\n    GROUP BY u.firm_id, u.matter_id"},
		{"ORDER BY j.firm_id, j.matter_id\n    FOR NO KEY UPDATE OF j", "ORDER BY want.ord\n    FOR NO KEY UPDATE OF j"},
	} {
		if !strings.Contains(stmt, r[0]) {
			panic("claimBatchSQL changed shape: " + r[0])
		}
		stmt = strings.Replace(stmt, r[0], r[1], 1)
	}
	return func(ctx context.Context, refs []rail.MatterRef, workerID string) ([]rail.Claim, error) {
		firms, matters := make([]string, len(refs)), make([]string, len(refs))
		for i, r := range refs {
			firms[i], matters[i] = r.FirmID.String(), r.MatterID.String()
		}
		rows, err := l.q.Query(ctx, stmt, firms, matters, workerID, seconds(l.cfg.Lease), l.cfg.MaxAttempts)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.Claim, error) {
			var c rail.Claim
			err := r.Scan(&c.FirmID, &c.MatterID, &c.Token, &c.Target, &c.Built, &c.Attempt, &c.ClaimedAt, &c.TookOverExpiry)
			return c, err
		})
	}
}
