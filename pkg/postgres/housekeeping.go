package postgres

import (
	"context"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Housekeeping is the sweeper's pruning and outbox gauges
// (rail.Housekeeping) over the pool, with the retentions it prunes by.
type Housekeeping struct {
	Q               Querier
	OutboxRetention time.Duration
	OutboxLimits    PruneLimits // zero: the defaults
	InboxRetention  time.Duration
	// RecordRetention: served demand records and nudge records; zero:
	// InboxRetention (RAIL_INBOX_RETENTION covers both).
	RecordRetention time.Duration
	Frames          FrameRetention // zero fields: the defaults
}

var _ rail.Housekeeping = (*Housekeeping)(nil)

// PruneOutbox deletes published facts past OutboxRetention.
func (h *Housekeeping) PruneOutbox(ctx context.Context) (deleted, left int64, err error) {
	pr, err := PruneOutbox(ctx, h.Q, h.OutboxRetention, h.OutboxLimits)
	return pr.Deleted, pr.Left, err
}

// PruneInbox deletes trigger inbox rows past InboxRetention.
func (h *Housekeeping) PruneInbox(ctx context.Context) (int64, error) {
	return PruneInbox(ctx, h.Q, h.InboxRetention, 0)
}

// PruneRecords deletes served demand records and nudge records past their
// retention.
func (h *Housekeeping) PruneRecords(ctx context.Context) (int64, error) {
	r := h.RecordRetention
	if r <= 0 {
		r = h.InboxRetention
	}
	return PruneOnCallRecord(ctx, h.Q, r, 0)
}

// PruneFrames deletes one bounded pass of frame history.
func (h *Housekeeping) PruneFrames(ctx context.Context) (rail.FramesPruned, error) {
	fp, err := PruneFrames(ctx, h.Q, h.Frames)
	return rail.FramesPruned{Frames: fp.Frames, Runs: fp.Runs, Bodies: fp.Bodies}, err
}

// OutboxGauges reads the outbox's gauges.
func (h *Housekeeping) OutboxGauges(ctx context.Context) (rail.OutboxGauges, error) {
	return ReadOutboxGauges(ctx, h.Q)
}

// RecordBuilders fills built_by on up to DefaultFillBuiltBy ledger rows
// (FillBuiltBy).
func (h *Housekeeping) RecordBuilders(ctx context.Context) (int64, error) {
	return FillBuiltBy(ctx, h.Q, 0)
}

var _ rail.SweepLedger = (*Ledger)(nil)
