package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// On-call's first question: how stale is each matter, and why. A
// Diagnosis is read off the ledger row, the matter, its unserved demand
// records (ops.matter_demands) and its newest frame in one statement, with
// the database clock; the state is decided in Go from those values.

// Matter states, in the order `railctl stale` ranks them (live demand
// first, oldest first).
const (
	StateCurrent      = "current"       // built = requested, built by the deployed builder
	StateOutdated     = "outdated"      // current, but its frame was built by another builder identity
	StateNoDemand     = "no_demand"     // no demand ever recorded: nothing to build yet
	StateSettling     = "settling"      // demand younger than the settle delay: its nudge is not due yet
	StateBuilding     = "building"      // a live claim is building it
	StateLeaseExpired = "lease_expired" // a claim's lease expired: the next nudge or the sweeper takes it over
	StateBackingOff   = "backing_off"   // the last build failed; the next claim waits for the backoff
	StateQuarantined  = "quarantined"   // out of attempts: waits for new demand or railctl release
	StateClosed       = "closed"        // the matter is closed: its demand is held until it is re-opened
	StateNudgeLost    = "nudge_lost"    // idle, due, nobody claimed it: the sweeper re-nudges
)

// OnCallConfig is what a diagnosis needs beyond the ledger's own config.
type OnCallConfig struct {
	// SettleDelay is the trigger's nudge delay (RAIL_SETTLE_DELAY).
	SettleDelay time.Duration
	// Deployed is the deployed builder's identity; zero: outdated frames
	// are not looked for.
	Deployed rail.BuilderIdentity
}

// Diagnosis is one matter's freshness, with the reason it is behind.
type Diagnosis struct {
	rail.MatterRef
	State        string  `json:"state"`
	Reason       string  `json:"reason"` // one line for people
	Behind       int64   `json:"behind"` // requested - built
	AgeSeconds   float64 `json:"age_seconds"`
	Requested    int64   `json:"requested_generation"`
	Built        int64   `json:"built_generation"`
	Token        int64   `json:"token"`
	RunStatus    string  `json:"run_status"`
	MatterStatus string  `json:"matter_status"`
	// Since: the oldest unserved demand's fact occurred (or, without a
	// demand record, the ledger's demand_since).
	Since           *time.Time `json:"since,omitempty"`
	Worker          string     `json:"worker,omitempty"`
	LeaseAgeSeconds *float64   `json:"lease_age_seconds,omitempty"`
	Attempts        int        `json:"attempts"`
	NotBefore       *time.Time `json:"not_before,omitempty"`
	LastError       string     `json:"last_error,omitempty"`
	// NextNudgeAt: when the settle delay ends (settling) or when the
	// sweeper may re-nudge (nudge_lost, lease_expired).
	NextNudgeAt *time.Time `json:"next_nudge_at,omitempty"`
	// BackfillOnly: every unserved demand is the backfill's (no live demand).
	BackfillOnly bool `json:"backfill_only"`
	// Outdated: the newest frame's builder identity is not the deployed one.
	Outdated bool                  `json:"outdated"`
	BuiltBy  *rail.BuilderIdentity `json:"built_by,omitempty"`
	BuiltAt  *time.Time            `json:"built_at,omitempty"`
	Deployed *rail.BuilderIdentity `json:"deployed,omitempty"`
	Now      time.Time             `json:"now"` // the database clock when read
}

// Live reports whether the matter is behind on demand other than the
// backfill's.
func (d Diagnosis) Live() bool { return d.Behind > 0 && !d.BackfillOnly }

// diagnosisSQL reads the rows a diagnosis needs. $1 lease seconds, $2-$5
// the deployed identity (name, version, model, prompt; name ” = none).
var diagnosisSQL = `
SELECT j.firm_id, j.matter_id, m.status, j.requested_generation, j.built_generation, j.claimed_generation,
       j.run_status, j.claimed_at, j.claimed_by, j.attempts, j.not_before, j.last_error, j.demand_since,
       j.last_demanded_at,
       ` + SQLLeaseExpired("j", "$1") + `,
       CASE WHEN j.run_status = 'running' THEN extract(epoch FROM clock_timestamp() - j.claimed_at)::float8 END,
       d.oldest, coalesce(d.live, 0), coalesce(d.backfill, 0),
       f.builder, f.builder_version, f.model_id, f.prompt_hash, f.built_at,
       ($2 <> '' AND f.builder IS NOT NULL
        AND ` + SQLBuiltByOther("f", "$2", "$3", "$4", "$5") + `),
       clock_timestamp(), coalesce(j.lease_seconds, $1)::float8
FROM ops.matter_frame_jobs j
JOIN app.matters m USING (firm_id, matter_id)
LEFT JOIN LATERAL (
    SELECT min(x.occurred_at) AS oldest,
           count(*) FILTER (WHERE x.source <> 'backfill') AS live,
           count(*) FILTER (WHERE x.source = 'backfill') AS backfill
    FROM ops.matter_demands x
    WHERE x.firm_id = j.firm_id AND x.matter_id = j.matter_id AND x.served_at IS NULL
) d ON true
LEFT JOIN LATERAL (
    SELECT y.builder, y.builder_version, y.model_id, y.prompt_hash, y.built_at
    FROM ops.matter_frames y WHERE y.firm_id = j.firm_id AND y.matter_id = j.matter_id
    ORDER BY y.token DESC LIMIT 1
) f ON true`

func scanDiagnosis(row pgx.Row, lease time.Duration, oc OnCallConfig, sweepGrace time.Duration) (Diagnosis, error) {
	var (
		d                             Diagnosis
		claimedAt, demandSince, lastD *time.Time
		leaseExpired                  bool
		oldest                        *time.Time
		live, backfill                int64
		fb, fv, fm, fp                *string
		builtAt                       *time.Time
		outdated                      bool
		leaseSeconds                  float64
	)
	err := row.Scan(&d.FirmID, &d.MatterID, &d.MatterStatus, &d.Requested, &d.Built, &d.Token,
		&d.RunStatus, &claimedAt, &d.Worker, &d.Attempts, &d.NotBefore, &d.LastError, &demandSince,
		&lastD, &leaseExpired, &d.LeaseAgeSeconds, &oldest, &live, &backfill,
		&fb, &fv, &fm, &fp, &builtAt, &outdated, &d.Now, &leaseSeconds)
	if err != nil {
		return d, err
	}
	d.Behind = d.Requested - d.Built
	if fb != nil {
		d.BuiltBy = &rail.BuilderIdentity{Name: *fb, Version: deref(fv), ModelID: deref(fm), PromptHash: deref(fp)}
		d.BuiltAt = builtAt
	}
	if oc.Deployed.Name != "" {
		dep := oc.Deployed
		d.Deployed = &dep
	}
	d.Outdated = outdated
	d.BackfillOnly = d.Behind > 0 && backfill > 0 && live == 0
	if d.Behind > 0 {
		d.Since = demandSince
		if oldest != nil && (d.Since == nil || oldest.Before(*d.Since)) {
			d.Since = oldest
		}
		if d.Since != nil {
			d.AgeSeconds = max(0, d.Now.Sub(*d.Since).Seconds())
		}
	}
	if leaseSeconds > 0 { // the lease the claim was granted (migration 007), else the caller's
		lease = time.Duration(leaseSeconds * float64(time.Second))
	}
	classify(&d, claimedAt, lastD, leaseExpired, lease, oc.SettleDelay, sweepGrace)
	return d, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func fmtClock(t time.Time) string { return t.UTC().Format("15:04:05") }

// classify decides the state and its one-line reason.
func classify(d *Diagnosis, claimedAt, lastDemanded *time.Time, leaseExpired bool, lease, settle, grace time.Duration) {
	by := ""
	if d.BackfillOnly {
		by = " (backfill demand only)"
	}
	switch {
	case d.Behind > 0 && d.MatterStatus != "open":
		d.State = StateClosed
		d.Reason = fmt.Sprintf("the matter is closed: %d demand(s) held until it is re-opened", d.Behind)
	case d.Behind > 0 && d.RunStatus == rail.StatusQuarantined:
		d.State = StateQuarantined
		d.Reason = fmt.Sprintf("quarantined after %d attempt(s): %s; new demand or `railctl release` frees it", d.Attempts, orNone(d.LastError))
	case d.Behind > 0 && d.RunStatus == rail.StatusRunning && !leaseExpired:
		d.State = StateBuilding
		d.Reason = fmt.Sprintf("building%s: token %d by %s, lease %s old (attempt %d)", by, d.Token, orNone(d.Worker),
			secs(d.LeaseAgeSeconds), d.Attempts)
	case d.Behind > 0 && d.RunStatus == rail.StatusRunning:
		d.State = StateLeaseExpired
		if claimedAt != nil {
			at := claimedAt.Add(lease + grace)
			if at.Before(d.Now) {
				at = d.Now
			}
			d.NextNudgeAt = &at
		}
		d.Reason = fmt.Sprintf("the lease of token %d (%s) expired %s ago: a nudge takes it over; the sweeper re-nudges at its first pass after %s",
			d.Token, orNone(d.Worker), secs(ptr(*d.LeaseAgeSeconds-lease.Seconds())), clockOrNow(d.NextNudgeAt))
	case d.Behind > 0 && d.NotBefore != nil && d.NotBefore.After(d.Now):
		d.State = StateBackingOff
		d.Reason = fmt.Sprintf("backing off%s until %s after attempt %d failed: %s", by, fmtClock(*d.NotBefore),
			d.Attempts, orNone(d.LastError))
	case d.Behind > 0 && lastDemanded != nil && lastDemanded.Add(settle).After(d.Now):
		d.State = StateSettling
		at := lastDemanded.Add(settle)
		d.NextNudgeAt = &at
		d.Reason = fmt.Sprintf("waiting for its settle delay%s: the nudge is due at %s", by, fmtClock(at))
	case d.Behind > 0:
		d.State = StateNudgeLost
		last := time.Time{}
		if lastDemanded != nil {
			last = *lastDemanded
		}
		if claimedAt != nil && claimedAt.After(last) {
			last = *claimedAt
		}
		if d.NotBefore != nil && d.NotBefore.After(last) { // the nudge sent for the end of a backoff
			last = *d.NotBefore
		}
		at := last.Add(grace)
		if at.Before(d.Now) {
			at = d.Now
		}
		d.NextNudgeAt = &at
		d.Reason = fmt.Sprintf("idle and due, but no build claimed it%s (nudge lost or still queued): the sweeper re-nudges at its first pass after %s",
			by, fmtClock(at))
	case d.Outdated:
		d.State = StateOutdated
		d.Reason = fmt.Sprintf("current, but built by %s; deployed is %s: the backfill rebuilds it", d.BuiltBy, d.Deployed)
	case d.Requested == 0:
		d.State = StateNoDemand
		d.Reason = "no demand recorded yet: nothing to build"
	default:
		d.State = StateCurrent
		d.Reason = fmt.Sprintf("current at generation %d", d.Built)
	}
}

func ptr[T any](v T) *T { return &v }

func orNone(s string) string {
	if s == "" {
		return "(none recorded)"
	}
	return s
}

func secs(v *float64) string {
	if v == nil {
		return "?"
	}
	return (time.Duration(*v * float64(time.Second))).Round(100 * time.Millisecond).String()
}

func clockOrNow(t *time.Time) string {
	if t == nil {
		return "now"
	}
	return fmtClock(*t)
}

// Verdict is the one line that ends `railctl why`.
func (d Diagnosis) Verdict() string {
	switch d.State {
	case StateCurrent:
		return fmt.Sprintf("current at generation %d", d.Built)
	case StateNoDemand:
		return "no demand recorded: nothing to build"
	case StateOutdated:
		return fmt.Sprintf("current at generation %d but outdated: built by %s, deployed %s", d.Built, d.BuiltBy, d.Deployed)
	}
	since := "?"
	if d.Since != nil {
		since = fmtClock(*d.Since)
	}
	return fmt.Sprintf("behind by %d since %s because %s", d.Behind, since, d.Reason)
}

// Diagnose reads one matter's freshness. An unknown matter, or one of
// another firm, is ErrUnknownMatter or ErrFirmMismatch; a matter that never
// had demand is StateNoDemand.
func (l *Ledger) Diagnose(ctx context.Context, ref rail.MatterRef, oc OnCallConfig) (Diagnosis, error) {
	if err := l.checkMatter(ctx, ref); err != nil {
		return Diagnosis{}, err
	}
	d, err := scanDiagnosis(l.pool.QueryRow(ctx, diagnosisSQL+`
        WHERE j.firm_id = $6 AND j.matter_id = $7`, l.diagArgs(oc, ref.FirmID, ref.MatterID)...),
		l.cfg.Lease, oc, l.cfg.RenudgeGrace())
	if errors.Is(err, pgx.ErrNoRows) {
		var status string
		var now time.Time
		if err := l.pool.QueryRow(ctx, `SELECT status, clock_timestamp() FROM app.matters WHERE firm_id = $1 AND matter_id = $2`,
			ref.FirmID, ref.MatterID).Scan(&status, &now); err != nil {
			return Diagnosis{}, fmt.Errorf("diagnose %s: %w", ref, err)
		}
		d = Diagnosis{MatterRef: ref, State: StateNoDemand, RunStatus: rail.StatusIdle, MatterStatus: status, Now: now,
			Reason: "no demand recorded yet: nothing to build"}
		return d, nil
	}
	if err != nil {
		return Diagnosis{}, fmt.Errorf("diagnose %s: %w", ref, err)
	}
	return d, nil
}

func (l *Ledger) diagArgs(oc OnCallConfig, extra ...any) []any {
	id := oc.Deployed
	return append([]any{seconds(l.cfg.Lease), id.Name, id.Version, id.ModelID, id.PromptHash}, extra...)
}

// Stale lists the stalest matters: every matter behind (live demand first,
// then backfill-only, each oldest first), then outdated ones (oldest frame
// first), up to limit (default 20).
func (l *Ledger) Stale(ctx context.Context, limit int, oc OnCallConfig) ([]Diagnosis, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := l.pool.Query(ctx, `SELECT * FROM (`+diagnosisSQL+`) AS s (firm_id, matter_id, status, requested, built,
            token, run_status, claimed_at, claimed_by, attempts, not_before, last_error, demand_since,
            last_demanded_at, lease_expired, lease_age, oldest, live, backfill, builder, builder_version, model_id,
            prompt_hash, built_at, outdated, now, lease)
        WHERE requested > built OR outdated
        ORDER BY requested > built AND NOT (backfill > 0 AND live = 0) DESC, requested > built DESC,
                 least(oldest, demand_since) NULLS LAST, built_at NULLS LAST, firm_id, matter_id
        LIMIT $6`, l.diagArgs(oc, limit)...)
	if err != nil {
		return nil, fmt.Errorf("stale: %w", err)
	}
	defer rows.Close()
	var out []Diagnosis
	for rows.Next() {
		d, err := scanDiagnosis(rows, l.cfg.Lease, oc, l.cfg.RenudgeGrace())
		if err != nil {
			return nil, fmt.Errorf("stale: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stale: %w", err)
	}
	return out, nil
}
