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
//   - Admission is bounded by what the backfill's builders can serve
//     before the next sweep (BackfillRoom): the backfill admitted and not
//     yet served (queued or building) is at most what its builders served
//     in the last BackfillWindow plus their concurrency
//     (RAIL_BACKFILL_CONCURRENCY, the backfill queue's MaximumConcurrency).
//     Builders that keep up serve all of a pass's admissions before the
//     next pass, so the bound grows with what they serve until the rate
//     alone limits admission: the configured rate is what a deploy gets.
//     Builders slower than the rate hold the backfill at their own pace,
//     with at most about one window's service queued, so no queued nudge
//     waits past the sweeper's grace (whose re-nudge would double it on
//     the queue) or near the queue's retention.
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
	// Concurrency is the backfill builders' (the backfill queue's
	// MaximumConcurrency, RAIL_BACKFILL_CONCURRENCY); zero:
	// DefaultBackfillConcurrency. It is BackfillRoom's headroom over what
	// the builders served in the last window.
	Concurrency int
	Reverts     Reverts // the simulation's negative controls; zero in production
	Log         *slog.Logger
}

// DefaultBackfillConcurrency is the backfill builders' concurrency when
// Concurrency is zero: the template's BackfillConcurrency default.
const DefaultBackfillConcurrency = 2

// BackfillWindow is how far back BackfillLoad counts the backfill demand
// its builders served: one sweep interval at the template's schedule (one
// pass a minute).
const BackfillWindow = time.Minute

// BackfillLoad is the backfill's work admitted and not yet served, and
// what its builders served lately: what BackfillRoom bounds admission by.
type BackfillLoad struct {
	// InFlight: open, unquarantined matters holding unserved backfill
	// demand (admitted: queued, or building).
	InFlight int `json:"in_flight"`
	// Served: backfill demands served in the last BackfillWindow.
	Served int `json:"served_last_window"`
	// OldestSeconds: the age of the oldest of InFlight's unserved backfill
	// demands (0: none).
	OldestSeconds float64 `json:"oldest_in_flight_seconds"`
}

// Behind reports whether admitted backfill has waited longer than a
// window: the builders, not the rate, set the backfill's pace (what they
// served in the window is that pace).
func (l BackfillLoad) Behind() bool { return l.OldestSeconds > BackfillWindow.Seconds() }

// BackfillRoom is the admission rule's bound on capacity: how many more
// matters a pass may admit given the load and the builders' concurrency.
// The backfill admitted and not yet served may reach what the builders
// served in the last window (what they can serve before the next sweep)
// plus their concurrency (the headroom that lets the bound grow while they
// keep up, and covers builds longer than a window). Admit and Status (the
// ETA) both use it.
func BackfillRoom(concurrency int, l BackfillLoad) int {
	return max(0, cmp.Or(concurrency, DefaultBackfillConcurrency)+l.Served-l.InFlight)
}

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
	Served   int         `json:"served"`    // backfill demand served in the last BackfillWindow (before the pass)
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
		load, err := tx.Load(ctx)
		if err != nil {
			return pass, fmt.Errorf("backfill: load: %w", err)
		}
		pass.InFlight, pass.Served = load.InFlight, load.Served
		pass.Allowed = min(pass.Allowed, BackfillRoom(b.Concurrency, load))
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
	Paused      bool            `json:"paused"`
	ChangedAt   time.Time       `json:"changed_at"`
	ChangedBy   string          `json:"changed_by"`
	Rate        float64         `json:"rate_per_minute"`
	Concurrency int             `json:"concurrency"` // the backfill builders' (BackfillRoom's headroom)
	Deployed    BuilderIdentity `json:"deployed"`
	Outdated    int             `json:"outdated"`
	Admissible  int             `json:"admissible"`
	BackfillLoad
	Room     int   `json:"room"`     // what the next pass may admit by capacity (BackfillRoom), the rate aside
	Admitted int64 `json:"admitted"` // admissions since the control row was created
	// BuildersBehind: admitted backfill waited longer than a window, so
	// the builders' pace (Served a window), not the rate, sets the ETA.
	BuildersBehind bool `json:"builders_behind"`
	// PacePerMinute: the builds a minute the ETA assumes once admission
	// has ramped up: the rate, or the builders' pace when they are behind.
	PacePerMinute float64 `json:"pace_per_minute"`
	// ETASeconds: BackfillETA's projection; -1 when the builders are
	// behind and served nothing in the last window (no pace to project).
	ETASeconds float64 `json:"eta_seconds"`
	DryRun     bool    `json:"dry_run,omitempty"`
}

// Status reads the backfill's state (and is the dry run: how many matters,
// how long at the configured rate and the builders' pace).
func (b *Backfill) Status(ctx context.Context) (BackfillStatus, error) {
	if b.Rate <= 0 || math.IsNaN(b.Rate) || math.IsInf(b.Rate, 0) {
		return BackfillStatus{}, fmt.Errorf("backfill: %w (got %v)", ErrBadBackfillRate, b.Rate)
	}
	conc := cmp.Or(b.Concurrency, DefaultBackfillConcurrency)
	st, err := b.Ledger.BackfillControl(ctx)
	st.Rate, st.Deployed, st.Concurrency = b.Rate, b.Deployed, conc
	if err != nil {
		return st, fmt.Errorf("backfill status: %w", err)
	}
	if st.Outdated, st.Admissible, err = b.Count(ctx); err != nil {
		return st, err
	}
	st.Room = BackfillRoom(conc, st.BackfillLoad)
	st.BuildersBehind = st.Behind()
	st.ETASeconds, st.PacePerMinute = BackfillETA(st.Outdated, b.Rate, conc, st.BackfillLoad)
	return st, nil
}

// BackfillETA projects how long the backfill of outdated matters takes
// under the admission rule (Admit's: the rate's bucket and BackfillRoom),
// one sweep pass a minute (the template's schedule), from the load now.
// Builders that keep up (Behind false) serve each pass's
// admissions before the next pass, so admission ramps up by what they
// served until the rate limits it; builders that are behind serve Served a
// window, which is then the pace. It returns the seconds until the last
// admission is served (-1: the builders are behind and served nothing in
// the last window, so there is no pace to project) and the pace per minute
// the projection settles at.
func BackfillETA(outdated int, rate float64, concurrency int, l BackfillLoad) (seconds, pace float64) {
	if outdated <= 0 {
		return 0, rate
	}
	capacity := math.Inf(1) // a minute's builds the builders serve
	pace = rate
	if l.Behind() {
		capacity = float64(l.Served) * time.Minute.Seconds() / BackfillWindow.Seconds()
		pace = min(rate, capacity)
		if l.Served == 0 {
			return -1, 0
		}
	}
	bucket := max(rate, 1) // admissions the bucket holds (CreditCap); full after a quiet spell
	credit := bucket
	left, inFlight, served := outdated, min(l.InFlight, outdated), l.Served
	const maxPasses = 1 << 22 // eight years of passes: beyond, the pace alone
	for pass := 1; pass <= maxPasses; pass++ {
		room := BackfillRoom(concurrency, BackfillLoad{InFlight: inFlight, Served: served})
		a := min(int(math.Floor(credit)), room, left-inFlight)
		credit = min(credit-float64(a)+rate, bucket)
		inFlight += a
		s := inFlight
		if !math.IsInf(capacity, 1) {
			s = min(s, int(capacity))
		}
		inFlight -= s
		left -= s
		served = s
		if left <= 0 {
			return float64(pass) * time.Minute.Seconds(), pace
		}
	}
	return float64(maxPasses)*time.Minute.Seconds() + float64(left)*60/pace, pace
}
