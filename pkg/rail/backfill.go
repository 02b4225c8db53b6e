package rail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// On-call's third question: the builder changed (a new model, prompt or
// version) — rebuild everything, gently. A matter is outdated when its
// newest frame was built by another identity than the deployed builder's.
// The backfill brings outdated matters up to date at a bounded rate
// without delaying live demand:
//
//   - Admission is rate limited: each pass (the sweeper's, once a minute in
//     AWS) admits at most rate x the time since the last admission, through
//     a token bucket on ops.backfill_control (locked for the pass, so two
//     sweepers never double the rate) that holds one minute's worth, or one
//     admission's worth when the rate is below one a minute (CreditCap), so
//     a rate of 0.2 a minute admits one matter every five minutes.
//   - Admission is bounded by capacity: at most MaxInFlight matters (the
//     backfill builders' concurrency, RAIL_BACKFILL_CONCURRENCY) hold
//     unserved backfill demand at once, so the backfill queue never holds
//     more than its builders can take and the sweeper's re-nudges of
//     backfill-only demand (onto the backfill queue, never the live one)
//     find nothing waiting behind a busy builder.
//   - It admits only matters that are current, idle and open: a matter with
//     live demand is being rebuilt anyway (by the deployed builder), and a
//     quarantined or closed one waits for its own cause.
//   - An admission is an ordinary demand (source 'backfill') on the ledger,
//     so the build that serves it is claimed, fenced and committed like any
//     other; a live demand that arrives meanwhile is covered by the same
//     claim or by exactly one follow-up, and a racing build is fenced.
//   - Its nudges go to their own queue (BackfillQueue), consumed with their
//     own concurrency, never to the live build queue: live nudges never wait
//     behind backfill nudges.
//   - The fingerprint includes the builder's identity, so a backfilled
//     build calls the model; a rebuild with the same inputs and the same
//     identity still skips it.

// ErrBadBackfillRate: a backfill rate must be a positive number of builds
// per minute.
var ErrBadBackfillRate = errors.New("backfill rate must be a positive number of builds per minute")

// Backfill admits outdated matters at Rate builds per minute.
type Backfill struct {
	Ledger   BackfillLedger
	Deployed BuilderIdentity
	Rate     float64 // builds per minute, > 0
	// Nudger is the backfill queue's nudger (its own queue and concurrency).
	Nudger Nudger
	// MaxInFlight bounds the matters holding unserved backfill demand at
	// once (the backfill builders' concurrency); zero:
	// DefaultBackfillInFlight.
	MaxInFlight int
	Reverts     Reverts // the simulation's negative controls; zero in production
	Log         *slog.Logger
}

// DefaultBackfillInFlight is the backfill in flight when MaxInFlight is
// zero: the template's BackfillConcurrency default.
const DefaultBackfillInFlight = 2

// CreditCap is the most credit, in seconds, the bucket holds at rate builds
// per minute: one minute's worth, or one admission's worth when that is
// longer (a rate below one a minute).
func CreditCap(rate float64) float64 {
	return max(60, 60/rate)
}

// BackfillPass is what one admission pass did.
type BackfillPass struct {
	Paused   bool        `json:"paused"`
	Allowed  int         `json:"allowed"`   // admissions the rate and the capacity allowed this pass
	InFlight int         `json:"in_flight"` // matters holding unserved backfill demand before the pass
	Admitted []MatterRef `json:"admitted"`  // matters given backfill demand and nudged
	Outdated int         `json:"outdated"`  // outdated open matters (MattersOutdated; the admitted ones included)
	// CountOnly: no admission ran (no backfill queue); Outdated alone is set.
	CountOnly bool `json:"count_only,omitempty"`
}

func (b *Backfill) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Admit runs one admission pass: unless paused, it records backfill demand
// for as many outdated matters as the rate allows, in one transaction with
// the control row locked, and then nudges them on the backfill queue. A
// nudge that cannot be sent is logged: the demand is in the ledger and the
// sweeper re-nudges it.
func (b *Backfill) Admit(ctx context.Context) (BackfillPass, error) {
	var pass BackfillPass
	if b.Rate <= 0 || math.IsNaN(b.Rate) || math.IsInf(b.Rate, 0) {
		return pass, fmt.Errorf("backfill: %w (got %v)", ErrBadBackfillRate, b.Rate)
	}
	if b.Deployed.Name == "" {
		return pass, errors.New("backfill: no deployed builder identity configured")
	}
	tx, err := b.Ledger.BeginBackfill(ctx)
	if err != nil {
		return pass, fmt.Errorf("backfill: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// The bucket: at most CreditCap(rate) seconds of credit.
	capSeconds := CreditCap(b.Rate)
	if b.Reverts.MinuteCappedCredit {
		capSeconds = 60
	}
	var credit float64
	pass.Paused, credit, err = tx.Control(ctx, capSeconds)
	if err != nil {
		return pass, fmt.Errorf("backfill: control row: %w", err)
	}
	if !pass.Paused {
		pass.Allowed = int(math.Floor(b.Rate * credit / 60))
	}
	if pass.Allowed > 0 && !b.Reverts.UnboundedBackfill {
		if pass.InFlight, err = tx.InFlight(ctx); err != nil {
			return pass, fmt.Errorf("backfill: in flight: %w", err)
		}
		pass.Allowed = max(0, min(pass.Allowed, cmp.Or(b.MaxInFlight, DefaultBackfillInFlight)-pass.InFlight))
	}
	// One scan gives the matters to admit and the count (MattersOutdated:
	// an admitted matter stays outdated until its build lands).
	scan, err := tx.Outdated(ctx, b.Deployed, pass.Allowed)
	if err != nil {
		return pass, fmt.Errorf("backfill: outdated matters: %w", err)
	}
	pass.Outdated = scan.Outdated
	if pass.Allowed > 0 {
		refs := scan.Eligible
		for _, ref := range refs {
			if _, err := tx.DemandFrom(ctx, ref, 1, DemandOrigin{Source: DemandFromBackfill}); err != nil {
				return pass, fmt.Errorf("backfill: %w", err)
			}
		}
		pass.Admitted = refs
		// Spend what was admitted; a bucket with nothing left to admit
		// stays full (capped at CreditCap).
		if err := tx.Spend(ctx, len(refs), b.Rate, capSeconds); err != nil {
			return pass, fmt.Errorf("backfill: spend allowance: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return pass, fmt.Errorf("backfill: commit: %w", err)
	}
	if len(pass.Admitted) > 0 && b.Nudger != nil {
		nudges := make([]Nudge, len(pass.Admitted))
		for i, ref := range pass.Admitted {
			nudges[i] = Nudge{V: 1, FirmID: ref.FirmID, MatterID: ref.MatterID, Reason: ReasonBackfill}
		}
		if err := b.Nudger.Nudge(ctx, nudges, 0); err != nil {
			b.log().WarnContext(ctx, "backfill nudges not sent; the sweeper re-nudges the demand", "err", err, "matters", len(nudges))
		}
	}
	return pass, nil
}

// Count returns how many open matters are outdated, and how many of those
// are current and idle (what the backfill admits; the others are being
// rebuilt or wait for their own cause).
func (b *Backfill) Count(ctx context.Context) (outdated, admissible int, err error) {
	if b.Deployed.Name == "" {
		return 0, 0, nil
	}
	if outdated, admissible, err = b.Ledger.CountOutdated(ctx, b.Deployed); err != nil {
		return 0, 0, fmt.Errorf("backfill: count outdated: %w", err)
	}
	return outdated, admissible, nil
}

// BackfillStatus is what `railctl backfill status` prints.
type BackfillStatus struct {
	Paused     bool            `json:"paused"`
	ChangedAt  time.Time       `json:"changed_at"`
	ChangedBy  string          `json:"changed_by"`
	Rate       float64         `json:"rate_per_minute"`
	Deployed   BuilderIdentity `json:"deployed"`
	Outdated   int             `json:"outdated"`
	Admissible int             `json:"admissible"`
	InFlight   int             `json:"in_flight"`   // matters with unserved backfill demand
	Admitted   int64           `json:"admitted"`    // admissions since the control row was created
	ETASeconds float64         `json:"eta_seconds"` // outdated / rate
	DryRun     bool            `json:"dry_run,omitempty"`
}

// Status reads the backfill's state (and is the dry run: how many matters,
// how long at the configured rate).
func (b *Backfill) Status(ctx context.Context) (BackfillStatus, error) {
	if b.Rate <= 0 || math.IsNaN(b.Rate) || math.IsInf(b.Rate, 0) {
		return BackfillStatus{}, fmt.Errorf("backfill: %w (got %v)", ErrBadBackfillRate, b.Rate)
	}
	st, err := b.Ledger.BackfillControl(ctx)
	if err != nil {
		return BackfillStatus{Rate: b.Rate, Deployed: b.Deployed}, fmt.Errorf("backfill status: %w", err)
	}
	st.Rate, st.Deployed = b.Rate, b.Deployed
	if st.Outdated, st.Admissible, err = b.Count(ctx); err != nil {
		return st, err
	}
	st.ETASeconds = float64(st.Outdated) * 60 / b.Rate
	return st, nil
}
