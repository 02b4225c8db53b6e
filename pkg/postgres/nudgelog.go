package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Nudge queues recorded in ops.matter_nudges.
const (
	QueueBuild    = "build"    // live demand: the trigger, follow-ups, the sweeper
	QueueBackfill = "backfill" // the backfill's own queue (its own concurrency)
)

// RecordingNudger hands nudges to Next and records each one in
// ops.matter_nudges (sent, or refused with the error), so `railctl why`
// can show the nudges a matter was sent. Recording is best effort: a
// failure to record is logged and never fails the nudge (the ledger row
// is the truth; the record is for people).
type RecordingNudger struct {
	Next  rail.Nudger
	DB    Querier
	Queue string // QueueBuild (default) or QueueBackfill
	Log   *slog.Logger
}

// Nudge implements Nudger.
func (r *RecordingNudger) Nudge(ctx context.Context, nudges []rail.Nudge, delay time.Duration) error {
	err := r.Next.Nudge(ctx, nudges, delay)
	if rerr := RecordNudges(ctx, r.DB, r.Queue, nudges, delay, err); rerr != nil && r.Log != nil {
		r.Log.WarnContext(ctx, "nudges not recorded", "err", rerr, "nudges", len(nudges))
	}
	return err
}

// RecordNudges writes one ops.matter_nudges row per nudge in one statement.
// sendErr is the Nudge call's error: each row records its own nudge's fate
// (rail.NudgeFailed), so a partly failed batch records the refused nudges
// as refused and the sent ones as sent.
func RecordNudges(ctx context.Context, q Querier, queue string, nudges []rail.Nudge, delay time.Duration, sendErr error) error {
	if len(nudges) == 0 {
		return nil
	}
	if queue == "" {
		queue = QueueBuild
	}
	firms, matters := make([]string, len(nudges)), make([]string, len(nudges))
	reasons, traces := make([]string, len(nudges)), make([]string, len(nudges))
	msgs := make([]string, len(nudges))
	for i, n := range nudges {
		firms[i], matters[i], reasons[i], traces[i] = n.FirmID.String(), n.MatterID.String(), n.Reason, n.TraceHeader
		if len(traces[i]) > rail.MaxTraceHeaderLen {
			traces[i] = ""
		}
		if err := rail.NudgeFailed(sendErr, i); err != nil {
			msgs[i] = err.Error()
		}
	}
	_, err := q.Exec(ctx, `INSERT INTO ops.matter_nudges
        (firm_id, matter_id, reason, queue, delay_seconds, trace_header, error)
        SELECT u.firm_id::uuid, u.matter_id::uuid, u.reason, $5, $6, u.trace_header, pg_catalog.left(u.error, 2000)
        FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::text[]), pg_catalog.unnest($7::text[])) AS u (firm_id, matter_id, reason, trace_header, error)`,
		firms, matters, reasons, traces, queue, delay.Seconds(), msgs)
	if err != nil {
		return fmt.Errorf("record %d nudges: %w", len(nudges), err)
	}
	return nil
}

// The on-call record's retention: $1 the retention in seconds, $2 the most
// rows to delete.
// The cutoff is a scalar subquery, evaluated once: written bare,
// clock_timestamp() - interval is volatile, so it is no index condition
// and the ordered scan reads every retained row to find none old enough
// (TestRetentionPassesCostNothingWhenNothingIsOld).
const (
	pruneDemandRecordsSQL = `DELETE FROM ops.matter_demands WHERE (firm_id, matter_id, generation) IN (
        SELECT firm_id, matter_id, generation FROM ops.matter_demands
        WHERE served_at < (SELECT clock_timestamp() - make_interval(secs => $1))
        ORDER BY served_at LIMIT $2)`
	pruneNudgeRecordsSQL = `DELETE FROM ops.matter_nudges WHERE nudge_id IN (
        SELECT nudge_id FROM ops.matter_nudges
        WHERE sent_at < (SELECT clock_timestamp() - make_interval(secs => $1))
        ORDER BY sent_at LIMIT $2)`
)

// PruneOnCallRecord deletes served demand records and nudge records older
// than retention (database clock), up to limit of each, and returns how
// many rows it deleted. Unserved demand records are never pruned: they
// are what `railctl stale` ages.
func PruneOnCallRecord(ctx context.Context, q Querier, retention time.Duration, limit int) (int64, error) {
	if retention <= 0 {
		return 0, fmt.Errorf("prune on-call record: retention must be positive, got %s", retention)
	}
	if limit <= 0 {
		limit = 10000
	}
	d, err := q.Exec(ctx, pruneDemandRecordsSQL, retention.Seconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("prune demand records: %w", err)
	}
	n, err := q.Exec(ctx, pruneNudgeRecordsSQL, retention.Seconds(), limit)
	if err != nil {
		return d.RowsAffected(), fmt.Errorf("prune nudge records: %w", err)
	}
	return d.RowsAffected() + n.RowsAffected(), nil
}
