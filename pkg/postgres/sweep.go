package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// SweepReport is what one sweep pass found and did.
type SweepReport struct {
	Quarantined []rail.MatterRef // expired leases out of attempts: now quarantined
	// Released: expired leases out of attempts that demand arriving during
	// their last attempt released instead (idle, attempts reset).
	Released      []rail.MatterRef
	LeaseExpiries int              // running rows whose lease expired since the last pass
	Renudge       []rail.MatterRef // unserved demand with no live claim: nudge these
	Gauges
}

// Gauges are what on-call watches, read off the ledger in one query. The
// first three count open matters only: a closed matter gets no builds, so
// its demand is held, not late (MattersClosedWithDemand counts it; when the
// matter is re-opened its demand counts again, aged from the re-opening).
type Gauges struct {
	MattersBehind               int     // open, requested > built, not quarantined
	MattersQuarantined          int     // open, quarantined
	OldestUnservedDemandSeconds float64 // open, not quarantined: age of the oldest unbuilt demand (0 when none)
	MattersClosedWithDemand     int     // closed with requested > built: demand held until re-opened
}

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

var sweepUnservedSQL = `
SELECT j.firm_id, j.matter_id
FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)
WHERE m.status = 'open' AND ` + SQLClaimable("j", "$1", "$4") + `
  AND coalesce(j.last_demanded_at, '-infinity') < clock_timestamp() - make_interval(secs => $2)
  AND coalesce(j.claimed_at, '-infinity') < clock_timestamp() - make_interval(secs => $2)
ORDER BY j.demand_since NULLS LAST
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

// Sweep runs one pass: quarantine expired leases that are out of attempts,
// note the other expiries, and list up to limit matters whose demand has no
// live claim and whose own nudge had SweepGrace to arrive. The caller nudges
// them; a nudge only starts a build if the claim finds the demand still
// unserved, so a sweep racing a completion wastes nothing.
func (l *Ledger) Sweep(ctx context.Context, limit int) (SweepReport, error) {
	if limit <= 0 {
		limit = 500
	}
	var rep SweepReport
	quarantine := sweepQuarantineSQL
	if l.swallowUncovered {
		quarantine = sweepQuarantineSwallowingSQL
	}
	rows, err := l.q.Query(ctx, quarantine, seconds(l.cfg.Lease), l.cfg.MaxAttempts)
	if err != nil {
		return rep, fmt.Errorf("sweep quarantine: %w", err)
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
		return rep, fmt.Errorf("sweep quarantine: %w", err)
	}
	for _, t := range ts {
		if t.quarantined {
			rep.Quarantined = append(rep.Quarantined, t.ref)
		} else {
			rep.Released = append(rep.Released, t.ref)
		}
	}
	tag, err := l.q.Exec(ctx, sweepExpiredRunsSQL, seconds(l.cfg.Lease))
	if err != nil {
		return rep, fmt.Errorf("sweep expired leases: %w", err)
	}
	rep.LeaseExpiries = int(tag.RowsAffected())
	rows, err = l.q.Query(ctx, sweepUnservedSQL, seconds(l.cfg.Lease), seconds(l.cfg.SweepGrace), limit, l.cfg.MaxAttempts)
	if err != nil {
		return rep, fmt.Errorf("sweep unserved: %w", err)
	}
	if rep.Renudge, err = collectRefs(rows); err != nil {
		return rep, fmt.Errorf("sweep unserved: %w", err)
	}
	if rep.Gauges, err = l.Gauges(ctx); err != nil {
		return rep, err
	}
	return rep, nil
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
