package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// SweepReport is what one ledger sweep (Ledger.Sweep) found.
type SweepReport struct {
	Quarantined []rail.MatterRef // expired leases out of attempts: now quarantined
	// Released: expired leases out of attempts that demand arriving during
	// their last attempt released instead (idle, attempts reset).
	Released      []rail.MatterRef
	LeaseExpiries int              // running rows whose lease expired since the last pass
	Renudge       []rail.MatterRef // unserved live demand with no live claim: nudge these on the build queue
	// RenudgeBackfill: unserved demand that is the backfill's only: nudge
	// these on the backfill queue.
	RenudgeBackfill []rail.MatterRef
	Gauges
}

// Gauges are the on-call gauges (rail.LedgerGauges).
type Gauges = rail.LedgerGauges

// The sweep's statements are composed from the ledger's rules (rules.go):
// each running row's lease and attempt limit are read off the row, so a
// sweeper configured with a shorter lease or fewer attempts than the
// workers' claims were granted with can neither quarantine nor expire a
// live build. $1 and $2 (the sweeper's own settings) apply only to rows
// claimed before 007.

// sweepQuarantineSQLWith quarantines expired leases on their last allowed
// attempt, deciding with quarantine (SQLQuarantines): a row whose demand
// arrived during that attempt is released instead (idle, attempts reset,
// its target handed back; the unserved pass below re-nudges it).
func sweepQuarantineSQLWith(quarantine string) string {
	return `
WITH q AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status = CASE WHEN ` + quarantine + ` THEN 'quarantined' ELSE 'idle' END,
        attempts   = CASE WHEN ` + quarantine + ` THEN j.attempts ELSE 0 END,
        target_generation = j.built_generation, uncovered_since = j.demand_since,
        last_error = 'lease expired on attempt ' || j.attempts || ' of ' || coalesce(j.max_attempts, $2::int)
                     || CASE WHEN ` + quarantine + ` THEN '' ELSE '; demand that arrived during it released the quarantine' END
    WHERE ` + SQLLeaseExpired("j", "$1") + ` AND NOT ` + SQLAttemptsLeft("j", "$2::int") + `
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.run_status
), run AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = CASE q.run_status WHEN 'quarantined' THEN 'quarantined' ELSE 'lease_expired' END,
        finished_at = coalesce(r.finished_at, clock_timestamp()), error = 'lease expired'
    FROM q WHERE r.firm_id = q.firm_id AND r.matter_id = q.matter_id AND r.token = q.claimed_generation
)
SELECT firm_id, matter_id, run_status = 'quarantined' FROM q`
}

var (
	sweepQuarantineSQL = sweepQuarantineSQLWith(SQLQuarantines("j", "$2::int"))
	// sweepQuarantineSwallowingSQL: SwallowingUncovered's.
	sweepQuarantineSwallowingSQL = sweepQuarantineSQLWith("NOT " + SQLAttemptsLeft("j", "$2::int"))
)

// Marks runs whose lease expired without a reclaim. The job row is left
// alone: the sweep never touches the token, so a late commit with no
// reclaim in between still lands (and relabels its run 'landed').
var sweepExpiredRunsSQL = `
UPDATE ops.matter_frame_runs AS r SET outcome = 'lease_expired', finished_at = clock_timestamp()
FROM ops.matter_frame_jobs j
WHERE j.firm_id = r.firm_id AND j.matter_id = r.matter_id AND ` + SQLHoldsToken("j", "r.token") + `
  AND r.outcome = 'claimed' AND ` + SQLLeaseExpired("j", "$1")

// sweepUnservedSQL lists open matters with claimable demand whose own nudge
// had $2 seconds (the grace) to arrive: the trigger's (last_demanded_at,
// sent with the settle delay), a builder's follow-up (claimed_at: the last
// heartbeat before its commit) and the nudge a failed build is sent for the
// end of its backoff (not_before). Live demand comes first, then the
// backfill's; each row says whether its unserved demand is the backfill's
// only (such a re-nudge goes to the backfill queue).
//
// Fair among firms: within each of the two, matters are taken round-robin
// across firms (each firm's oldest unserved demand first, then every firm's
// second, ...), so a firm with a thousand unserved matters takes one slot
// per round, not the whole pass, and no firm takes more than $3. The
// window sorts the candidates once (the same rows the plain ORDER BY read;
// docs/benchmarks.md, "Fair among firms", has the plan at scale).
var sweepUnservedSQL = `
WITH u AS (
    SELECT j.firm_id, j.matter_id, j.demand_since,
           EXISTS (SELECT 1 FROM ops.matter_demands d
                   WHERE d.firm_id = j.firm_id AND d.matter_id = j.matter_id AND d.served_at IS NULL
                     AND d.source = 'backfill')
           AND NOT EXISTS (SELECT 1 FROM ops.matter_demands d
                   WHERE d.firm_id = j.firm_id AND d.matter_id = j.matter_id AND d.served_at IS NULL
                     AND d.source <> 'backfill') AS backfill_only
    FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)
    WHERE m.status = 'open' AND ` + SQLClaimable("j", "$1", "$4") + `
      AND coalesce(j.last_demanded_at, '-infinity') < clock_timestamp() - make_interval(secs => $2)
      AND coalesce(greatest(j.claimed_at, j.not_before), '-infinity') < clock_timestamp() - make_interval(secs => $2)
), ranked AS (
    SELECT u.*, row_number() OVER (PARTITION BY backfill_only, firm_id
                                   ORDER BY demand_since NULLS LAST, matter_id) AS firm_rank
    FROM u
)
SELECT firm_id, matter_id, backfill_only FROM ranked
WHERE firm_rank <= $3
ORDER BY backfill_only, firm_rank, demand_since NULLS LAST, firm_id
LIMIT $3`

var gaugesSQL = `
SELECT count(*) FILTER (WHERE behind AND open AND run_status <> 'quarantined'),
       count(*) FILTER (WHERE open AND run_status = 'quarantined'),
       coalesce(extract(epoch FROM clock_timestamp() - min(demand_since)
           FILTER (WHERE behind AND open AND run_status <> 'quarantined')), 0)::float8,
       count(*) FILTER (WHERE behind AND NOT open)
FROM (SELECT j.run_status, j.demand_since, ` + SQLDemandUnserved("j") + ` AS behind,
             m.status = 'open' AS open
      FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)) AS x`

// QuarantineExpired quarantines running rows whose lease expired on their
// last allowed attempt, and releases instead (idle, attempts reset) those
// that demand arriving during that attempt spares (rail.SweepLedger).
func (l *Ledger) QuarantineExpired(ctx context.Context) (quarantined, released []rail.MatterRef, err error) {
	quarantine := sweepQuarantineSQL
	if l.swallowUncovered {
		quarantine = sweepQuarantineSwallowingSQL
	}
	rows, err := l.q.Query(ctx, quarantine, seconds(l.cfg.Lease), l.cfg.MaxAttempts)
	if err != nil {
		return nil, nil, fmt.Errorf("quarantine: %w", err)
	}
	type touched struct {
		ref         rail.MatterRef
		quarantined bool
	}
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (touched, error) {
		var t touched
		err := r.Scan(&t.ref.FirmID, &t.ref.MatterID, &t.quarantined)
		return t, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("quarantine: %w", err)
	}
	for _, t := range ts {
		if t.quarantined {
			quarantined = append(quarantined, t.ref)
		} else {
			released = append(released, t.ref)
		}
	}
	return quarantined, released, nil
}

// MarkExpiredLeases marks the runs of expired leases that were not
// reclaimed (rail.SweepLedger).
func (l *Ledger) MarkExpiredLeases(ctx context.Context) (int, error) {
	tag, err := l.q.Exec(ctx, sweepExpiredRunsSQL, seconds(l.cfg.Lease))
	if err != nil {
		return 0, fmt.Errorf("expired leases: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Unserved lists up to limit matters to re-nudge (rail.SweepLedger), live
// demand first, each round-robin across firms. The grace is the configuration's RenudgeGrace (the sweep
// grace, outlasting the settle delay).
func (l *Ledger) Unserved(ctx context.Context, limit int) ([]rail.UnservedMatter, error) {
	if limit <= 0 {
		limit = rail.DefaultSweepLimit
	}
	rows, err := l.q.Query(ctx, sweepUnservedSQL, seconds(l.cfg.Lease), seconds(l.cfg.RenudgeGrace()), limit, l.cfg.MaxAttempts)
	if err != nil {
		return nil, fmt.Errorf("unserved: %w", err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.UnservedMatter, error) {
		var u rail.UnservedMatter
		err := r.Scan(&u.FirmID, &u.MatterID, &u.BackfillOnly)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("unserved: %w", err)
	}
	return found, nil
}

// LedgerGauges reads the on-call gauges (rail.SweepLedger).
func (l *Ledger) LedgerGauges(ctx context.Context) (rail.LedgerGauges, error) { return l.Gauges(ctx) }

// Sweep runs the ledger's part of a pass in one call (the tests' and the
// simulation's; the sweeper function runs rail.Sweeper, which calls the
// parts itself): quarantine expired leases that are out of attempts, note
// the other expiries, list up to limit matters whose demand has no live
// claim and whose own nudge had the grace to arrive, and read the gauges.
// Every part runs even if an earlier one failed; the errors are joined.
// The caller nudges the matters listed; a nudge only starts a build if the
// claim finds the demand still unserved, so a sweep racing a completion
// wastes nothing.
func (l *Ledger) Sweep(ctx context.Context, limit int) (SweepReport, error) {
	var rep SweepReport
	var errs []error
	var err error
	if rep.Quarantined, rep.Released, err = l.QuarantineExpired(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sweep %w", err))
	}
	if rep.LeaseExpiries, err = l.MarkExpiredLeases(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sweep %w", err))
	}
	found, err := l.Unserved(ctx, limit)
	if err != nil {
		errs = append(errs, fmt.Errorf("sweep %w", err))
	}
	for _, u := range found {
		if u.BackfillOnly {
			rep.RenudgeBackfill = append(rep.RenudgeBackfill, u.MatterRef)
		} else {
			rep.Renudge = append(rep.Renudge, u.MatterRef)
		}
	}
	if rep.Gauges, err = l.Gauges(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sweep %w", err))
	}
	return rep, errors.Join(errs...)
}

// Gauges reads the on-call gauges off the ledger.
func (l *Ledger) Gauges(ctx context.Context) (Gauges, error) {
	var g Gauges
	if err := l.q.QueryRow(ctx, gaugesSQL).Scan(&g.MattersBehind, &g.MattersQuarantined,
		&g.OldestUnservedDemandSeconds, &g.MattersClosedWithDemand); err != nil {
		return g, fmt.Errorf("gauges: %w", err)
	}
	return g, nil
}

func collectRefs(rows pgx.Rows) ([]rail.MatterRef, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.MatterRef, error) {
		var m rail.MatterRef
		err := r.Scan(&m.FirmID, &m.MatterID)
		return m, err
	})
}
