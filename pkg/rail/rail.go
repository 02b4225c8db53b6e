// Package rail is the Brief rail's protocol: its vocabulary (matters,
// claims, frames, facts, nudges), its ports (ports.go) and its
// orchestration: the worker (claim, build under heartbeats, fenced commit),
// the trigger's gates, the outbox relay's loop and the backfill's
// admission.
//
// Postgres is the one ledger; its statements live in pkg/postgres, which
// implements the ports. Every statement is short, touches one ledger row,
// and reads the database clock, so Postgres serialises racing workers on
// the row lock and no worker clock ever matters. The fencing token
// (claimed_generation) orders commits: a frame lands only in the same
// statement that proves its token is still current. Fencing does not stop
// a paused worker from running; it stops its stale frame from landing.
// This package imports no database driver and no AWS module.
package rail

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Errors returned by the ledger. Callers branch on them with errors.Is.
var (
	// ErrFenced: the caller's token is no longer current (another claim
	// superseded it, or the row left 'running'). Nothing was written.
	ErrFenced = errors.New("fenced: token is no longer current")
	// ErrUnknownMatter: no such matter.
	ErrUnknownMatter = errors.New("unknown matter")
	// ErrFirmMismatch: the matter exists but belongs to another firm.
	ErrFirmMismatch = errors.New("matter belongs to another firm")
	// ErrMatterClosed: the matter is closed: no document can be added to
	// it. (Demand for a closed matter is not refused: it is recorded and
	// held until the matter is re-opened, DemandResult.Held.)
	ErrMatterClosed = errors.New("matter is closed")
	// ErrUnknownFirm: no such firm.
	ErrUnknownFirm = errors.New("unknown firm")
)

// MatterRef names one matter. The ledger row's key.
type MatterRef struct {
	FirmID   uuid.UUID `json:"firm_id"`
	MatterID uuid.UUID `json:"matter_id"`
}

func (r MatterRef) String() string { return r.FirmID.String() + "/" + r.MatterID.String() }

// Run statuses of a ledger row.
const (
	StatusIdle        = "idle"
	StatusRunning     = "running"
	StatusQuarantined = "quarantined"
)

// Claim is a granted claim: the worker's ticket.
type Claim struct {
	MatterRef
	Token          int64     // the fencing token (claimed_generation)
	Target         int64     // the requested_generation this build covers
	Built          int64     // built_generation when claimed
	Attempt        int       // attempts since the last landed frame, this one included
	ClaimedAt      time.Time // database clock
	TookOverExpiry bool      // this claim superseded an expired lease
}

// Config holds the protocol's tunables. Zero values take the defaults.
type Config struct {
	Lease       time.Duration // a claim older than this may be taken over; default 15m
	MaxAttempts int           // failed or expired attempts before quarantine; default 5
	BackoffBase time.Duration // backoff after the first failure; default 5s
	BackoffMax  time.Duration // backoff cap; default 5m
	// SweepGrace: the sweeper leaves demand younger than this to its own
	// nudge (which may be waiting out the settle delay); default 2m.
	SweepGrace time.Duration
}

// Defaults used when a Config field is zero.
const (
	DefaultLease       = 15 * time.Minute
	DefaultMaxAttempts = 5
	DefaultBackoffBase = 5 * time.Second
	DefaultBackoffMax  = 5 * time.Minute
	DefaultSweepGrace  = 2 * time.Minute
)

// WithDefaults returns c with each zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = DefaultBackoffMax
	}
	if c.SweepGrace <= 0 {
		c.SweepGrace = DefaultSweepGrace
	}
	return c
}

// ParseMatterRef parses two uuid strings with clear errors.
func ParseMatterRef(firm, matter string) (MatterRef, error) {
	f, err := uuid.Parse(firm)
	if err != nil {
		return MatterRef{}, fmt.Errorf("firm id %q is not a uuid: %w", firm, err)
	}
	m, err := uuid.Parse(matter)
	if err != nil {
		return MatterRef{}, fmt.Errorf("matter id %q is not a uuid: %w", matter, err)
	}
	return MatterRef{FirmID: f, MatterID: m}, nil
}
