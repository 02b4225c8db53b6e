package rail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// The sweeper: once a minute (EventBridge Scheduler in AWS, a
// localbus.Schedule in the local rail) it quarantines poison matters, marks
// expired leases, re-nudges unserved demand whose nudge was lost, reads the
// ledger's gauges, admits the backfill and does the housekeeping (pruning,
// the outbox's gauges). Every step runs, whatever an earlier one did, each
// within its own bound (StepTimeout, and the pass's deadline), so one slow
// or failing statement never costs the pass its other work or its gauges:
// the errors are joined and returned with everything the pass measured.

// SweepLedger is the sweeper's port on the ledger; each method is one
// statement. *postgres.Ledger implements it.
type SweepLedger interface {
	// QuarantineExpired quarantines running rows whose lease expired on
	// their last allowed attempt and returns them, and releases (idle,
	// attempts reset) those that demand arriving during that attempt spares.
	QuarantineExpired(ctx context.Context) (quarantined, released []MatterRef, err error)
	// MarkExpiredLeases marks the runs of the other expired leases
	// (the rows are left alone: a late commit with no reclaim still lands)
	// and returns how many it marked.
	MarkExpiredLeases(ctx context.Context) (int, error)
	// Unserved lists up to limit open matters with claimable demand whose
	// own nudge had the grace to arrive (the trigger's, the follow-up, the
	// nudge at the end of a failure's backoff), live demand first, oldest
	// first, each saying whether its unserved demand is the backfill's only.
	Unserved(ctx context.Context, limit int) ([]UnservedMatter, error)
	// LedgerGauges reads the on-call gauges off the ledger.
	LedgerGauges(ctx context.Context) (LedgerGauges, error)
}

// UnservedMatter is a matter the sweeper re-nudges.
type UnservedMatter struct {
	MatterRef
	// BackfillOnly: every unserved demand on the row is the backfill's, so
	// its re-nudge goes to the backfill queue, never the live one.
	BackfillOnly bool
}

// LedgerGauges are what on-call watches, read off the ledger in one query.
// The first three count open matters only: a closed matter gets no builds,
// so its demand is held, not late (MattersClosedWithDemand counts it; when
// the matter is re-opened its demand counts again, aged from the
// re-opening).
type LedgerGauges struct {
	MattersBehind               int     // open, requested > built, not quarantined
	MattersQuarantined          int     // open, quarantined
	OldestUnservedDemandSeconds float64 // open, not quarantined: age of the oldest unbuilt demand (0 when none)
	MattersClosedWithDemand     int     // closed with requested > built: demand held until re-opened
}

// Housekeeping is the sweeper's port on what it prunes and the outbox
// gauges it reports beside the relay's. Each method is bounded by its own
// limits (the retentions and per-pass caps are the implementation's).
type Housekeeping interface {
	// PruneOutbox deletes published facts past their retention; left is
	// what remains prunable for the next pass.
	PruneOutbox(ctx context.Context) (deleted, left int64, err error)
	// PruneInbox deletes trigger inbox rows past their retention.
	PruneInbox(ctx context.Context) (int64, error)
	// PruneRecords deletes served demand records and nudge records past
	// their retention.
	PruneRecords(ctx context.Context) (int64, error)
	// PruneFrames deletes one bounded pass of frame history.
	PruneFrames(ctx context.Context) (FramesPruned, error)
	// OutboxGauges reads the outbox's backlog, oldest age and parked rows.
	OutboxGauges(ctx context.Context) (OutboxGauges, error)
	// RecordBuilders records, on up to a bounded number of ledger rows,
	// the identity of the builder of their newest frame where the row does
	// not hold it yet (frames landed before rows recorded it), so the
	// backfill reads it off the row.
	RecordBuilders(ctx context.Context) (int64, error)
}

// FramesPruned is what one frame-pruning pass deleted.
type FramesPruned struct {
	Frames int64 `json:"frames"`
	Runs   int64 `json:"runs"`
	Bodies int64 `json:"bodies"`
}

// Reverts switch fixes off one at a time, so the simulation's negative
// controls can show that the oracle catches each defect when its fix is
// reverted (internal/verify/sim). The zero value, which production code
// always uses, has every fix on. pkg/app hands Deps.Reverts to the
// sweeper, the backfill and the builder.
type Reverts struct {
	// BackfillOnLiveQueue: the sweeper re-nudges backfill-only demand onto
	// the live build queue (issue 18, defect 4).
	BackfillOnLiveQueue bool
	// UnboundedBackfill: admission ignores the backfill in flight and is
	// bounded by the rate alone (defect 4).
	UnboundedBackfill bool
	// NoRetryNudge: the builder sends no nudge for the end of a failed
	// build's backoff; only the sweeper's grace brings it back (defect 8).
	NoRetryNudge bool
	// MinuteCappedCredit: the backfill's bucket holds at most one minute's
	// worth, so a rate below one a minute admits nothing (defect 9).
	MinuteCappedCredit bool
	// StopAtFirstError: a sweep pass stops at its first failing step.
	StopAtFirstError bool
}

// Sweeper defaults.
const (
	// DefaultSweepLimit is how many matters one pass re-nudges at most.
	DefaultSweepLimit = 500
	// DefaultSweepStepTimeout bounds each step of a pass.
	DefaultSweepStepTimeout = 15 * time.Second
)

// Sweeper runs sweep passes. Safe for concurrent use (the deployed
// function runs one pass at a time: ReservedConcurrentExecutions 1).
type Sweeper struct {
	Ledger SweepLedger
	// Housekeeping: pruning and the outbox gauges; nil: none.
	Housekeeping Housekeeping
	// Nudger is the live build queue's; BackfillNudger the backfill
	// queue's (nil: backfill-only demand is re-nudged on the live queue,
	// since nothing else would build it).
	Nudger, BackfillNudger Nudger
	// Backfill admits outdated matters (when its Nudger is set) or counts
	// them (MattersOutdated); nil: neither.
	Backfill *Backfill
	// Limit: matters re-nudged per pass; zero: DefaultSweepLimit.
	Limit int
	// StepTimeout bounds each step; zero: DefaultSweepStepTimeout.
	StepTimeout time.Duration
	// TraceHeader returns the pass's trace header for the re-nudges; nil:
	// none (pkg/tracing's TraceHeader in the function).
	TraceHeader func(context.Context) string
	Reverts     Reverts
	Log         *slog.Logger
}

// SweepPass is what one pass did and measured. A part that failed or was
// not run is nil (its gauges are missing, never a false zero).
type SweepPass struct {
	Quarantined      []MatterRef   // expired leases out of attempts, now quarantined
	Released         []MatterRef   // expired leases out of attempts that demand during the attempt released (idle, re-nudged below)
	LeaseExpiries    int           // other expired leases whose runs were marked
	Renudged         []MatterRef   // re-nudged on the live build queue
	RenudgedBackfill []MatterRef   // backfill-only demand re-nudged on the backfill queue
	Gauges           *LedgerGauges // the ledger's gauges
	Backfill         *BackfillPass // the admission pass (or the count alone)
	Outbox           *OutboxGauges
	OutboxPruned     int64
	OutboxPruneLeft  int64
	InboxPruned      int64
	RecordsPruned    int64
	FramesPruned     FramesPruned
	BuildersRecorded int64 // ledger rows given their newest frame's builder identity
	// Failed names each step that failed (its error is in the pass's).
	Failed []string
	// Took is each step's duration, by step.
	Took map[string]time.Duration
}

// The steps of a pass, in order (SweepPass.Failed names them).
const (
	StepQuarantine    = "quarantine"
	StepExpiredLeases = "expired leases"
	StepRenudge       = "re-nudge"
	StepGauges        = "gauges"
	StepBackfill      = "backfill"
	StepOutboxGauges  = "outbox gauges"
	StepPruneOutbox   = "prune outbox"
	StepPruneInbox    = "prune inbox"
	StepPruneRecords  = "prune records"
	StepPruneFrames   = "prune frames"
	StepBuilders      = "record builders"
)

// StepFailed reports whether the pass's step failed.
func (p SweepPass) StepFailed(step string) bool { return slices.Contains(p.Failed, step) }

func (s *Sweeper) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Pass runs one sweep. Every step runs even if an earlier one failed
// (unless Reverts.StopAtFirstError); the steps' errors are joined. The
// order puts what on-call needs first: quarantine and expiries, the
// re-nudges, the gauges, the backfill, the outbox gauges, then pruning.
func (s *Sweeper) Pass(ctx context.Context) (SweepPass, error) {
	pass := SweepPass{Took: map[string]time.Duration{}}
	var errs []error
	step := func(name string, f func(ctx context.Context) error) {
		if s.Reverts.StopAtFirstError && len(errs) > 0 {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, cmp.Or(s.StepTimeout, DefaultSweepStepTimeout))
		defer cancel()
		start := time.Now()
		err := f(sctx)
		pass.Took[name] = time.Since(start)
		if err != nil {
			pass.Failed = append(pass.Failed, name)
			errs = append(errs, fmt.Errorf("sweep %s: %w", name, err))
		}
	}
	step(StepQuarantine, func(ctx context.Context) (err error) {
		pass.Quarantined, pass.Released, err = s.Ledger.QuarantineExpired(ctx)
		for _, q := range pass.Quarantined {
			s.log().ErrorContext(ctx, "matter quarantined: its lease expired on the last allowed attempt",
				"firm_id", q.FirmID, "matter_id", q.MatterID)
		}
		for _, q := range pass.Released {
			s.log().WarnContext(ctx, "matter released, not quarantined: its lease expired on the last allowed attempt, but demand arrived during it",
				"firm_id", q.FirmID, "matter_id", q.MatterID)
		}
		return err
	})
	step(StepExpiredLeases, func(ctx context.Context) (err error) {
		pass.LeaseExpiries, err = s.Ledger.MarkExpiredLeases(ctx)
		return err
	})
	step(StepRenudge, func(ctx context.Context) error { return s.renudge(ctx, &pass) })
	step(StepGauges, func(ctx context.Context) error {
		g, err := s.Ledger.LedgerGauges(ctx)
		if err == nil {
			pass.Gauges = &g
		}
		return err
	})
	if s.Backfill != nil {
		step(StepBackfill, func(ctx context.Context) error {
			bp, err := s.backfill(ctx)
			if err == nil {
				pass.Backfill = &bp
			}
			return err
		})
	}
	if h := s.Housekeeping; h != nil {
		step(StepOutboxGauges, func(ctx context.Context) error {
			g, err := h.OutboxGauges(ctx)
			if err == nil {
				pass.Outbox = &g
			}
			return err
		})
		step(StepPruneOutbox, func(ctx context.Context) (err error) {
			pass.OutboxPruned, pass.OutboxPruneLeft, err = h.PruneOutbox(ctx)
			return err
		})
		step(StepPruneInbox, func(ctx context.Context) (err error) {
			pass.InboxPruned, err = h.PruneInbox(ctx)
			return err
		})
		step(StepPruneRecords, func(ctx context.Context) (err error) {
			pass.RecordsPruned, err = h.PruneRecords(ctx)
			return err
		})
		step(StepPruneFrames, func(ctx context.Context) (err error) {
			pass.FramesPruned, err = h.PruneFrames(ctx)
			return err
		})
		step(StepBuilders, func(ctx context.Context) (err error) {
			pass.BuildersRecorded, err = h.RecordBuilders(ctx)
			return err
		})
	}
	return pass, errors.Join(errs...)
}

// renudge lists unserved demand whose nudge was lost and nudges it: live
// demand on the build queue, backfill-only demand on the backfill queue (a
// backfill never moves ahead of live demand).
func (s *Sweeper) renudge(ctx context.Context, pass *SweepPass) error {
	found, err := s.Ledger.Unserved(ctx, cmp.Or(s.Limit, DefaultSweepLimit))
	if err != nil {
		return err
	}
	var live, backfill []MatterRef
	for _, u := range found {
		if u.BackfillOnly && s.BackfillNudger != nil && !s.Reverts.BackfillOnLiveQueue {
			backfill = append(backfill, u.MatterRef)
		} else {
			live = append(live, u.MatterRef)
		}
	}
	th := ""
	if s.TraceHeader != nil {
		th = s.TraceHeader(ctx)
	}
	send := func(n Nudger, refs []MatterRef, reason string) error {
		if len(refs) == 0 {
			return nil
		}
		nudges := make([]Nudge, len(refs))
		for i, ref := range refs {
			nudges[i] = Nudge{V: 1, FirmID: ref.FirmID, MatterID: ref.MatterID, Reason: reason, TraceHeader: th}
			s.log().InfoContext(ctx, "re-nudging unserved demand", "firm_id", ref.FirmID, "matter_id", ref.MatterID, "reason", reason)
		}
		return n.Nudge(ctx, nudges, 0)
	}
	var errs []error
	if err := send(s.Nudger, live, ReasonSweep); err != nil {
		errs = append(errs, fmt.Errorf("build queue: %w", err))
	} else {
		pass.Renudged = live
	}
	if err := send(s.BackfillNudger, backfill, ReasonBackfill); err != nil {
		errs = append(errs, fmt.Errorf("backfill queue: %w", err))
	} else {
		pass.RenudgedBackfill = backfill
	}
	return errors.Join(errs...)
}

// backfill admits (when the backfill has a queue) or only counts.
func (s *Sweeper) backfill(ctx context.Context) (BackfillPass, error) {
	if s.Backfill.Nudger == nil {
		n, _, err := s.Backfill.Count(ctx)
		return BackfillPass{Outdated: n, CountOnly: true}, err
	}
	return s.Backfill.Admit(ctx)
}
