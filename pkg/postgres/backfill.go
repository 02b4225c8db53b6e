package postgres

import (
	"context"
	"fmt"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The backfill's statements (rail.BackfillLedger, rail.BackfillTx): the
// control row's token bucket, the outdated matters, their counts.

func idArgs(id rail.BuilderIdentity) []any {
	return []any{id.Name, id.Version, id.ModelID, id.PromptHash}
}

// Control locks the control row for the pass and returns its state and the
// bucket's credit (at most one minute's worth).
func (t *ledgerTx) Control(ctx context.Context) (paused bool, credit float64, err error) {
	err = t.tx.QueryRow(ctx, `SELECT paused,
            least(60, greatest(0, extract(epoch FROM clock_timestamp() - allowance_at)))::float8
        FROM ops.backfill_control WHERE singleton FOR UPDATE`).Scan(&paused, &credit)
	return paused, credit, err
}

// Outdated lists up to limit outdated matters eligible for admission.
func (t *ledgerTx) Outdated(ctx context.Context, deployed rail.BuilderIdentity, limit int) ([]rail.MatterRef, error) {
	rows, err := t.tx.Query(ctx, outdatedSQL, append(idArgs(deployed), limit)...)
	if err != nil {
		return nil, err
	}
	return collectRefs(rows)
}

// Spend takes n admissions at rate per minute from the bucket; a bucket
// with nothing left to admit stays full (capped at one minute's worth).
func (t *ledgerTx) Spend(ctx context.Context, n int, rate float64) error {
	_, err := t.tx.Exec(ctx, `UPDATE ops.backfill_control SET
                allowance_at = greatest(allowance_at, clock_timestamp() - interval '60 seconds')
                               + make_interval(secs => $1::float8 * 60 / $2::float8),
                admitted = admitted + $1
            WHERE singleton`, n, rate)
	return err
}

// CountOutdated counts open matters whose newest frame deployed did not
// build, and those of them that are current and idle.
func (l *Ledger) CountOutdated(ctx context.Context, deployed rail.BuilderIdentity) (outdated, admissible int, err error) {
	err = l.pool.QueryRow(ctx, outdatedCountSQL, idArgs(deployed)...).Scan(&outdated, &admissible)
	return outdated, admissible, err
}

// BackfillControl reads the control row and the backfill's demand in flight.
func (l *Ledger) BackfillControl(ctx context.Context) (rail.BackfillStatus, error) {
	var st rail.BackfillStatus
	err := l.pool.QueryRow(ctx, `SELECT paused, changed_at, changed_by, admitted,
            (SELECT pg_catalog.count(DISTINCT (firm_id, matter_id)) FROM ops.matter_demands
             WHERE served_at IS NULL AND source = 'backfill')
        FROM ops.backfill_control WHERE singleton`).Scan(&st.Paused, &st.ChangedAt, &st.ChangedBy, &st.Admitted, &st.InFlight)
	return st, err
}

// outdatedSQL selects outdated matters eligible for admission ($1-$4: the
// deployed identity), oldest frame first, up to $5.
var outdatedSQL = `
SELECT j.firm_id, j.matter_id
FROM ops.matter_frame_jobs j
JOIN app.matters m USING (firm_id, matter_id)
JOIN LATERAL (
    SELECT f.builder, f.builder_version, f.model_id, f.prompt_hash, f.built_at
    FROM ops.matter_frames f WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id
    ORDER BY f.token DESC LIMIT 1
) f ON true
WHERE m.status = 'open' AND j.run_status = 'idle'
  AND NOT ` + SQLDemandUnserved("j") + `
  AND ` + SQLBuiltByOther("f", "$1", "$2", "$3", "$4") + `
ORDER BY f.built_at, j.firm_id, j.matter_id
LIMIT $5`

// outdatedCountSQL counts every matter whose newest frame is not the
// deployed identity's (open matters; behind or not).
var outdatedCountSQL = `
SELECT count(*) FILTER (WHERE m.status = 'open'),
       count(*) FILTER (WHERE m.status = 'open' AND NOT ` + SQLDemandUnserved("j") + `
                          AND j.run_status = 'idle')
FROM ops.matter_frame_jobs j
JOIN app.matters m USING (firm_id, matter_id)
JOIN LATERAL (
    SELECT f.builder, f.builder_version, f.model_id, f.prompt_hash
    FROM ops.matter_frames f WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id
    ORDER BY f.token DESC LIMIT 1
) f ON true
WHERE ` + SQLBuiltByOther("f", "$1", "$2", "$3", "$4")

// SetBackfillPaused pauses or resumes the backfill (by names who did it).
// It reports whether the state changed.
func SetBackfillPaused(ctx context.Context, q Querier, paused bool, by string) (bool, error) {
	tag, err := q.Exec(ctx, `UPDATE ops.backfill_control
        SET paused = $1, changed_at = clock_timestamp(), changed_by = $2,
            -- resuming starts a fresh bucket: no burst for the time paused
            allowance_at = CASE WHEN paused AND NOT $1 THEN clock_timestamp() ELSE allowance_at END
        WHERE singleton AND paused <> $1`, paused, by)
	if err != nil {
		return false, fmt.Errorf("backfill pause=%v: %w", paused, err)
	}
	return tag.RowsAffected() == 1, nil
}
