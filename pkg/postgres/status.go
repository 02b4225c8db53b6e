package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// JobRow is a ledger row as stored, plus what can be read off it. The JSON
// keys are the column names.
type JobRow struct {
	FirmID              uuid.UUID  `json:"firm_id"`
	MatterID            uuid.UUID  `json:"matter_id"`
	RequestedGeneration int64      `json:"requested_generation"`
	ClaimedGeneration   int64      `json:"claimed_generation"`
	TargetGeneration    int64      `json:"target_generation"`
	BuiltGeneration     int64      `json:"built_generation"`
	RunStatus           string     `json:"run_status"`
	ClaimedAt           *time.Time `json:"claimed_at"`
	ClaimedBy           string     `json:"claimed_by"`
	Attempts            int        `json:"attempts"`
	NotBefore           *time.Time `json:"not_before"`
	LastError           string     `json:"last_error"`
	DemandSince         *time.Time `json:"demand_since"`    // arrival of the oldest demand not yet built
	UncoveredSince      *time.Time `json:"uncovered_since"` // arrival of the oldest demand above target_generation
	LastDemandedAt      *time.Time `json:"last_demanded_at"`
	RebuildNeeded       bool       `json:"rebuild_needed"`
	LeaseSeconds        *float64   `json:"lease_seconds"` // the lease the current or last claim was granted (007)
	MaxAttempts         *int       `json:"max_attempts"`  // the attempt limit it was granted with (007)

	// Read off the row with the database clock.
	LeaseAgeSeconds *float64 `json:"lease_age_seconds"` // age of claimed_at while running
	LeaseExpired    bool     `json:"lease_expired"`     // running on a lease older than the one its claim was granted
	Current         bool     `json:"current"`           // built_generation == requested_generation
	MatterStatus    string   `json:"matter_status"`
	// Age of the oldest demand not yet built (demand_since), while behind.
	UnservedAgeSeconds *float64 `json:"unserved_age_seconds"`
	// Demands held because the matter is closed (requested - built while
	// closed; 0 when open): built after the matter is re-opened.
	HeldDemands int64 `json:"held_demands"`
}

var jobColumns = `j.firm_id, j.matter_id, j.requested_generation, j.claimed_generation,
    j.target_generation, j.built_generation, j.run_status, j.claimed_at, j.claimed_by, j.attempts,
    j.not_before, j.last_error, j.demand_since, j.uncovered_since, j.last_demanded_at, j.rebuild_needed,
    j.lease_seconds, j.max_attempts,
    CASE WHEN j.run_status = 'running' THEN extract(epoch FROM clock_timestamp() - j.claimed_at)::float8 END,
    ` + SQLLeaseExpired("j", "$3") + `,
    m.status, extract(epoch FROM clock_timestamp() - j.demand_since)::float8`

func scanJob(row pgx.Row) (JobRow, error) {
	var j JobRow
	err := row.Scan(&j.FirmID, &j.MatterID, &j.RequestedGeneration, &j.ClaimedGeneration,
		&j.TargetGeneration, &j.BuiltGeneration, &j.RunStatus, &j.ClaimedAt, &j.ClaimedBy, &j.Attempts,
		&j.NotBefore, &j.LastError, &j.DemandSince, &j.UncoveredSince, &j.LastDemandedAt, &j.RebuildNeeded,
		&j.LeaseSeconds, &j.MaxAttempts,
		&j.LeaseAgeSeconds, &j.LeaseExpired, &j.MatterStatus, &j.UnservedAgeSeconds)
	j.Current = j.BuiltGeneration == j.RequestedGeneration
	if j.MatterStatus == "closed" {
		j.HeldDemands = j.RequestedGeneration - j.BuiltGeneration
	}
	return j, err
}

// Job reads a matter's ledger row. A matter that exists but has never had
// demand reads as a zero row (found true); an unknown matter, or one of
// another firm, is an error.
func (l *Ledger) Job(ctx context.Context, ref rail.MatterRef) (JobRow, error) {
	if err := l.checkMatter(ctx, ref); err != nil {
		return JobRow{}, err
	}
	j, err := scanJob(l.q.QueryRow(ctx, `SELECT `+jobColumns+`
        FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)
        WHERE j.firm_id = $1 AND j.matter_id = $2`, ref.FirmID, ref.MatterID, seconds(l.cfg.Lease)))
	if errors.Is(err, pgx.ErrNoRows) {
		var status string
		if err := l.q.QueryRow(ctx, `SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2`,
			ref.FirmID, ref.MatterID).Scan(&status); err != nil {
			return JobRow{}, fmt.Errorf("job %s: %w", ref, err)
		}
		return JobRow{FirmID: ref.FirmID, MatterID: ref.MatterID, RunStatus: rail.StatusIdle, Current: true, MatterStatus: status}, nil
	}
	if err != nil {
		return JobRow{}, fmt.Errorf("job %s: %w", ref, err)
	}
	return j, nil
}

// checkMatter turns a missing or misfiled matter into a typed error.
func (l *Ledger) checkMatter(ctx context.Context, ref rail.MatterRef) error {
	return CheckMatter(ctx, l.q, ref)
}

// CheckMatter returns nil when the matter exists under its firm, and
// otherwise ErrUnknownMatter or ErrFirmMismatch (wrapped, naming it).
func CheckMatter(ctx context.Context, q Querier, ref rail.MatterRef) error {
	var firm uuid.UUID
	err := q.QueryRow(ctx, `SELECT firm_id FROM app.matters WHERE matter_id = $1`, ref.MatterID).Scan(&firm)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("matter %s: %w", ref, rail.ErrUnknownMatter)
	}
	if err != nil {
		return fmt.Errorf("matter %s: %w", ref, err)
	}
	if firm != ref.FirmID {
		return fmt.Errorf("matter %s: %w", ref, rail.ErrFirmMismatch)
	}
	return nil
}

// RunRow is one attempt.
type RunRow struct {
	Token      int64      `json:"token"`
	Target     int64      `json:"target_generation"`
	WorkerID   string     `json:"worker_id"`
	Outcome    string     `json:"outcome"`
	ClaimedAt  time.Time  `json:"claimed_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Error      string     `json:"error"`
}

// Runs lists a matter's most recent attempts, newest first.
func (l *Ledger) Runs(ctx context.Context, ref rail.MatterRef, limit int) ([]RunRow, error) {
	if err := l.checkMatter(ctx, ref); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 20
	}
	rows, err := l.q.Query(ctx, `SELECT token, target_generation, worker_id, outcome, claimed_at, finished_at, error
        FROM ops.matter_frame_runs WHERE firm_id = $1 AND matter_id = $2 ORDER BY token DESC LIMIT $3`,
		ref.FirmID, ref.MatterID, limit)
	if err != nil {
		return nil, fmt.Errorf("runs %s: %w", ref, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunRow, error) {
		var x RunRow
		err := r.Scan(&x.Token, &x.Target, &x.WorkerID, &x.Outcome, &x.ClaimedAt, &x.FinishedAt, &x.Error)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("runs %s: %w", ref, err)
	}
	return out, nil
}

// LatestFrame returns the matter's current Brief frame (the newest), or
// found=false when none has landed.
func (l *Ledger) LatestFrame(ctx context.Context, ref rail.MatterRef) (f rail.StoredFrame, found bool, err error) {
	q := l.q
	err = q.QueryRow(ctx, `SELECT f.frame_id, f.token, f.target_generation, f.fingerprint, f.builder, f.model_invoked,
            f.built_at, coalesce(f.body, b.body)::text, f.builder_version, f.model_id, f.prompt_hash
        FROM ops.matter_frames f LEFT JOIN ops.matter_frame_bodies b
          ON b.firm_id = f.firm_id AND b.matter_id = f.matter_id AND b.body_sha256 = f.body_sha256
        WHERE f.firm_id = $1 AND f.matter_id = $2 ORDER BY f.token DESC LIMIT 1`,
		ref.FirmID, ref.MatterID).Scan(&f.FrameID, &f.Token, &f.Target, &f.Fingerprint, &f.Builder,
		&f.ModelInvoked, &f.BuiltAt, &f.Body, &f.Identity.Version, &f.Identity.ModelID, &f.Identity.PromptHash)
	f.Identity.Name = f.Builder
	if errors.Is(err, pgx.ErrNoRows) {
		return rail.StoredFrame{}, false, nil
	}
	if err != nil {
		return rail.StoredFrame{}, false, fmt.Errorf("latest frame %s: %w", ref, err)
	}
	return f, true, nil
}

// Lease is a running claim: its token and when its lease last started or
// was refreshed (claimed_at, database clock; each heartbeat moves it on).
type Lease struct {
	rail.MatterRef
	Token     int64
	ClaimedAt time.Time
}

// Leases lists the running claims (the local rail prints their heartbeats).
func (l *Ledger) Leases(ctx context.Context) ([]Lease, error) {
	rows, err := l.q.Query(ctx, `SELECT firm_id, matter_id, claimed_generation, claimed_at
        FROM ops.matter_frame_jobs WHERE run_status = 'running'`)
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	leases, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lease, error) {
		var ls Lease
		err := r.Scan(&ls.FirmID, &ls.MatterID, &ls.Token, &ls.ClaimedAt)
		return ls, err
	})
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	return leases, nil
}
