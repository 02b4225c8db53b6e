package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The backfill's statements (rail.BackfillLedger, rail.BackfillTx): the
// control row's token bucket, the outdated matters, their counts.

func idArgs(id rail.BuilderIdentity) []any {
	return []any{id.Name, id.Version, id.ModelID, id.PromptHash}
}

// Control locks the control row for the pass and returns its state and the
// bucket's credit in seconds (at most capSeconds).
func (t *ledgerTx) Control(ctx context.Context, capSeconds float64) (paused bool, credit float64, err error) {
	err = t.tx.QueryRow(ctx, `SELECT paused,
            least($1::float8, greatest(0, extract(epoch FROM clock_timestamp() - allowance_at)))::float8
        FROM ops.backfill_control WHERE singleton FOR UPDATE`, capSeconds).Scan(&paused, &credit)
	return paused, credit, err
}

// Load reads the backfill's load (rail.BackfillLoad): the open,
// unquarantined matters holding unserved backfill demand and the age of
// the oldest such demand (from the unserved demand records' partial
// index, not the ledger), and the backfill demand served in the last
// rail.BackfillWindow (from the served records' index on served_at).
func (t *ledgerTx) Load(ctx context.Context) (rail.BackfillLoad, error) {
	return scanBackfillLoad(t.tx.QueryRow(ctx, backfillLoadSQL, rail.BackfillWindow.Seconds()))
}

func scanBackfillLoad(row pgx.Row) (rail.BackfillLoad, error) {
	var l rail.BackfillLoad
	err := row.Scan(&l.InFlight, &l.OldestSeconds, &l.Served)
	return l, err
}

// backfillLoadSQL: $1 the window in seconds. A matter's age is its
// oldest unserved backfill demand's.
var backfillLoadSQL = `
WITH u AS (
    SELECT d.since
    FROM (SELECT firm_id, matter_id, min(recorded_at) AS since FROM ops.matter_demands
          WHERE served_at IS NULL AND source = 'backfill' GROUP BY firm_id, matter_id) d
    JOIN ops.matter_frame_jobs j USING (firm_id, matter_id)
    JOIN app.matters m USING (firm_id, matter_id)
    WHERE m.status = 'open' AND j.run_status <> 'quarantined' AND ` + SQLDemandUnserved("j") + `
)
SELECT (SELECT count(*) FROM u)::int,
       coalesce((SELECT extract(epoch FROM clock_timestamp() - min(since)) FROM u), 0)::float8,
       (SELECT count(*) FROM ops.matter_demands
        WHERE served_at > clock_timestamp() - make_interval(secs => $1::float8) AND source = 'backfill')::int`

// Outdated lists up to limit outdated matters eligible for admission and
// counts the outdated ones, in one scan of the newest frames.
func (t *ledgerTx) Outdated(ctx context.Context, deployed rail.BuilderIdentity, limit int) (rail.OutdatedScan, error) {
	var scan rail.OutdatedScan
	rows, err := t.tx.Query(ctx, outdatedSQL, append(idArgs(deployed), limit)...)
	if err != nil {
		return scan, err
	}
	defer rows.Close()
	for rows.Next() {
		var firm, matter uuid.NullUUID
		var outdated, admissible *int
		if err := rows.Scan(&firm, &matter, &outdated, &admissible); err != nil {
			return scan, err
		}
		if outdated != nil && admissible != nil {
			scan.Outdated, scan.Admissible = *outdated, *admissible
			continue
		}
		scan.Eligible = append(scan.Eligible, rail.MatterRef{FirmID: firm.UUID, MatterID: matter.UUID})
	}
	return scan, rows.Err()
}

// Spend takes n admissions at rate per minute from the bucket; a bucket
// with nothing left to admit stays full (capped at capSeconds' worth).
func (t *ledgerTx) Spend(ctx context.Context, n int, rate, capSeconds float64) error {
	_, err := t.tx.Exec(ctx, `UPDATE ops.backfill_control SET
                allowance_at = greatest(allowance_at, clock_timestamp() - make_interval(secs => $3::float8))
                               + make_interval(secs => $1::float8 * 60 / $2::float8),
                admitted = admitted + $1
            WHERE singleton`, n, rate, capSeconds)
	return err
}

// CountOutdated counts open matters whose newest frame deployed did not
// build, and those of them that are current and idle.
func (l *Ledger) CountOutdated(ctx context.Context, deployed rail.BuilderIdentity) (outdated, admissible int, err error) {
	err = l.pool.QueryRow(ctx, outdatedCountSQL, idArgs(deployed)...).Scan(&outdated, &admissible)
	return outdated, admissible, err
}

// BackfillControl reads the control row and the backfill's load.
func (l *Ledger) BackfillControl(ctx context.Context) (rail.BackfillStatus, error) {
	var st rail.BackfillStatus
	err := l.pool.QueryRow(ctx, `SELECT paused, changed_at, changed_by, admitted
        FROM ops.backfill_control WHERE singleton`).Scan(&st.Paused, &st.ChangedAt, &st.ChangedBy, &st.Admitted)
	if err != nil {
		return st, err
	}
	st.BackfillLoad, err = scanBackfillLoad(l.pool.QueryRow(ctx, backfillLoadSQL, rail.BackfillWindow.Seconds()))
	return st, err
}

// outdatedSQL reads every open matter's ledger row once ($1-$4: the
// deployed identity; SQLOutdated reads built_by, and the newest frame only
// for a row that predates it): the outdated ones, and of those the
// eligible for admission (current, idle), up to $5 round-robin across
// firms (each firm's longest unbuilt first, by the last claim's time; then
// every firm's second, ...: a firm with a thousand outdated matters takes
// one admission per round); then one row with the two counts
// (firm and matter NULL). One scan, not one for the list and one for the
// gauge (docs/benchmarks.md, "The sweeper at scale").
var outdatedSQL = `
WITH o AS MATERIALIZED (
    SELECT j.firm_id, j.matter_id, j.claimed_at,
           j.run_status = 'idle' AND NOT ` + SQLDemandUnserved("j") + ` AS eligible
    FROM ops.matter_frame_jobs j
    JOIN app.matters m USING (firm_id, matter_id)
    WHERE m.status = 'open' AND ` + SQLOutdated("j", "$1::text", "$2::text", "$3::text", "$4::text") + `
), pick AS (
    SELECT firm_id, matter_id FROM (
        SELECT firm_id, matter_id, claimed_at,
               row_number() OVER (PARTITION BY firm_id ORDER BY claimed_at NULLS FIRST, matter_id) AS firm_rank
        FROM o WHERE eligible) e
    WHERE firm_rank <= $5
    ORDER BY firm_rank, claimed_at NULLS FIRST, firm_id, matter_id LIMIT $5
)
SELECT firm_id, matter_id, NULL::int, NULL::int FROM pick
UNION ALL
SELECT NULL::uuid, NULL::uuid, (SELECT count(*) FROM o)::int, (SELECT count(*) FROM o WHERE eligible)::int`

// outdatedCountSQL counts every open matter whose newest frame is not the
// deployed identity's (behind or not), and those of them current and idle.
var outdatedCountSQL = `
SELECT count(*),
       count(*) FILTER (WHERE NOT ` + SQLDemandUnserved("j") + ` AND j.run_status = 'idle')
FROM ops.matter_frame_jobs j
JOIN app.matters m USING (firm_id, matter_id)
WHERE m.status = 'open' AND ` + SQLOutdated("j", "$1::text", "$2::text", "$3::text", "$4::text")

// fillBuiltBySQL records built_by on up to $1 rows whose newest frame
// landed before the column existed, from that frame. A commit racing it
// wins: the row is re-checked under its lock (built_by IS NULL).
var fillBuiltBySQL = `
UPDATE ops.matter_frame_jobs AS j SET built_by = (
    SELECT ` + SQLIdentityKey("f.builder", "f.builder_version", "f.model_id", "f.prompt_hash") + `
    FROM ops.matter_frames f WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id
    ORDER BY f.token DESC LIMIT 1)
FROM (SELECT firm_id, matter_id FROM ops.matter_frame_jobs
      WHERE built_by IS NULL AND built_generation > 0
      LIMIT $1 FOR UPDATE SKIP LOCKED) AS todo
WHERE j.firm_id = todo.firm_id AND j.matter_id = todo.matter_id AND j.built_by IS NULL
  AND EXISTS (SELECT 1 FROM ops.matter_frames f WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id)`

// FillBuiltBy records built_by on up to limit ledger rows whose newest
// frame landed before migration "ledger built_by" (a sweeper step, until
// none are left) and returns how many it filled.
func FillBuiltBy(ctx context.Context, q Querier, limit int) (int64, error) {
	if limit <= 0 {
		limit = DefaultFillBuiltBy
	}
	tag, err := q.Exec(ctx, fillBuiltBySQL, limit)
	if err != nil {
		return 0, fmt.Errorf("fill built_by: %w", err)
	}
	return tag.RowsAffected(), nil
}

// DefaultFillBuiltBy is how many rows one sweep fills.
const DefaultFillBuiltBy = 10_000

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
