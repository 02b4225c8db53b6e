package rail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The relay: puts committed outbox rows on the bus, at least once.
//
// One pass is one short transaction:
//
//  1. SELECT the oldest due, unpublished, unparked rows ORDER BY
//     occurred_at, event_id FOR UPDATE SKIP LOCKED LIMIT BatchSize. A row
//     whose transaction has not committed yet is simply not visible; it is
//     still unpublished when it commits, so the next pass takes it: no
//     high-water mark, so no row is ever skipped for committing out of
//     order. A row another relay holds is skipped, not waited for.
//  2. PutEvents, 10 entries a call, while holding those row locks. This is
//     the trade-off: a second relay cannot take (and duplicate) rows in
//     flight, at the price of a transaction that stays open across network
//     calls. PublishTimeout bounds it (default 10 s for the whole pass);
//     if the session dies meanwhile, the marks roll back and the rows are
//     published again later: a duplicate, never a loss.
//  3. Mark the accepted entries published_at = clock_timestamp(); record
//     each rejected entry's error, count the attempt and back off
//     exponentially; park a row once it has failed MaxAttempts times and
//     the bus rejected it (parked rows are visible, never block others,
//     and wait for UnparkFacts). Then COMMIT.
//
// A crash after PutEvents and before COMMIT re-publishes those rows with
// the same event_id and a new envelope id; consumers dedupe on event_id.

// Relay defaults.
const (
	DefaultRelayBatch          = 100
	DefaultRelayMaxAttempts    = 10
	DefaultRelayBackoff        = time.Second
	DefaultRelayBackoffMax     = 5 * time.Minute
	DefaultRelayPublishTimeout = 10 * time.Second
	DefaultRelayWindow         = 50 * time.Second
	DefaultRelayPoll           = 150 * time.Millisecond
	PutEventsMaxEntries        = 10 // EventBridge's limit per PutEvents call
	markTimeout                = 5 * time.Second
)

// Relay drains ops.domain_event_outbox to a Publisher. The zero values of
// its tunables take the defaults above. Several relays may run at once.
type Relay struct {
	Pool      *pgxpool.Pool
	Publisher Publisher
	// BatchSize: rows claimed per pass (sent PutEventsMaxEntries a call).
	BatchSize int
	// MaxAttempts: failed attempts after which a row the bus rejects is parked.
	MaxAttempts int
	// Backoff doubles per failed attempt, up to BackoffMax.
	Backoff    time.Duration
	BackoffMax time.Duration
	// PublishTimeout bounds the PutEvents calls of one pass (and so how
	// long the pass holds its row locks).
	PublishTimeout time.Duration
	Log            *slog.Logger

	// AfterPublish, when set, runs after the PutEvents calls of a pass and
	// before the rows are marked: fault injection for tests (a panic here is
	// a relay dying between PutEvents and COMMIT). Leave it nil.
	AfterPublish func()
}

// RelayStats reports what a pass (or a Run) did and what is left.
type RelayStats struct {
	Passes    int // passes made
	Published int // entries the bus accepted and that were marked published
	Failed    int // entries not accepted (rejected or in a failed call), to be retried
	Parked    int // rows parked by this run
	// After the last pass: rows still unpublished and unparked (due or
	// backing off), the age of the oldest of them, and all parked rows.
	Backlog          int64
	OldestAgeSeconds float64
	ParkedTotal      int64
}

func (s *RelayStats) add(o RelayStats) {
	s.Passes += o.Passes
	s.Published += o.Published
	s.Failed += o.Failed
	s.Parked += o.Parked
}

func (r *Relay) batch() int {
	if r.BatchSize > 0 {
		return r.BatchSize
	}
	return DefaultRelayBatch
}

func (r *Relay) maxAttempts() int {
	if r.MaxAttempts > 0 {
		return r.MaxAttempts
	}
	return DefaultRelayMaxAttempts
}

func (r *Relay) backoff() (base, limit time.Duration) {
	base, limit = r.Backoff, r.BackoffMax
	if base <= 0 {
		base = DefaultRelayBackoff
	}
	if limit <= 0 {
		limit = DefaultRelayBackoffMax
	}
	return base, max(base, limit)
}

func (r *Relay) publishTimeout() time.Duration {
	if r.PublishTimeout > 0 {
		return r.PublishTimeout
	}
	return DefaultRelayPublishTimeout
}

func (r *Relay) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

// DrainOnce makes one pass (at most BatchSize rows) and reports it, with
// the backlog left behind.
func (r *Relay) DrainOnce(ctx context.Context) (RelayStats, error) {
	st, _, err := r.pass(ctx)
	if err != nil {
		return st, err
	}
	return st, r.fillBacklog(ctx, &st)
}

// Run drains for window (default 50 s), passing again at once while passes
// come back full and otherwise every poll (default 150 ms). It polls rather
// than LISTENs: LISTEN pins an RDS Proxy session. When ctx has a deadline
// (a Lambda invocation), the window ends PublishTimeout+5 s before it so
// the last pass can finish; Run makes at least one pass. Run returns when the window ends (nil error) or
// ctx is done (ctx's error). A failed pass is logged and retried at the
// next poll; the failed rows carry their own backoff.
func (r *Relay) Run(ctx context.Context, window, poll time.Duration) (RelayStats, error) {
	if window <= 0 {
		window = DefaultRelayWindow
	}
	if poll <= 0 {
		poll = DefaultRelayPoll
	}
	end := time.Now().Add(window)
	if dl, ok := ctx.Deadline(); ok {
		if safe := dl.Add(-(r.publishTimeout() + markTimeout)); safe.Before(end) {
			end = safe
		}
	}
	var total RelayStats
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for first := true; first || time.Now().Before(end); first = false { // at least one pass
		st, claimed, err := r.pass(ctx)
		total.add(st)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			r.log().WarnContext(ctx, "relay pass failed", "err", err)
		} else if claimed == r.batch() {
			continue // a full batch: there is probably more
		}
		timer.Reset(min(poll, max(time.Until(end), 0)))
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	if err := r.fillBacklog(bctx, &total); err != nil {
		r.log().WarnContext(ctx, "relay backlog", "err", err)
	}
	return total, ctx.Err()
}

type outboxRow struct {
	id          uuid.UUID
	firm        uuid.UUID
	matter      uuid.NullUUID
	name        string
	payload     map[string]string
	occurredAt  time.Time
	traceHeader string
}

type entryFailure struct {
	id       uuid.UUID
	msg      string
	rejected bool // the bus refused this entry (vs. the whole call failing)
}

// pass is one claim-publish-mark transaction. claimed is the number of
// rows it took.
func (r *Relay) pass(ctx context.Context) (st RelayStats, claimed int, err error) {
	if r.Pool == nil || r.Publisher == nil {
		return st, 0, errors.New("relay: Pool and Publisher are required")
	}
	st.Passes = 1
	tx, err := r.Pool.Begin(ctx)
	if err != nil {
		return st, 0, fmt.Errorf("relay: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // no-op after commit

	rows, err := tx.Query(ctx, `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND (next_attempt_at IS NULL OR next_attempt_at <= clock_timestamp())
        ORDER BY occurred_at, event_id
        LIMIT $1
        FOR UPDATE SKIP LOCKED`, r.batch())
	if err != nil {
		return st, 0, fmt.Errorf("relay: select: %w", err)
	}
	var batch []outboxRow
	for rows.Next() {
		var o outboxRow
		if err := rows.Scan(&o.id, &o.firm, &o.matter, &o.name, &o.payload, &o.occurredAt, &o.traceHeader); err != nil {
			rows.Close()
			return st, 0, fmt.Errorf("relay: scan: %w", err)
		}
		batch = append(batch, o)
	}
	if err := rows.Err(); err != nil {
		return st, 0, fmt.Errorf("relay: select: %w", err)
	}
	if len(batch) == 0 {
		return st, 0, tx.Commit(ctx)
	}

	ok, failures, callErr := r.publish(ctx, batch)
	if r.AfterPublish != nil {
		r.AfterPublish()
	}

	// Mark even if ctx was cancelled meanwhile: the bus has the events, and
	// an unmarked row is only re-published.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	if len(ok) > 0 {
		tag, err := tx.Exec(mctx, `UPDATE ops.domain_event_outbox
            SET published_at = clock_timestamp(), next_attempt_at = NULL
            WHERE event_id = ANY($1::uuid[])`, idStrings(ok))
		if err != nil {
			return st, len(batch), fmt.Errorf("relay: mark published: %w", err)
		}
		st.Published = int(tag.RowsAffected())
	}
	if len(failures) > 0 {
		ids := make([]uuid.UUID, len(failures))
		msgs := make([]string, len(failures))
		rejected := make([]bool, len(failures))
		for i, f := range failures {
			ids[i], msgs[i], rejected[i] = f.id, truncate(f.msg, 2000), f.rejected
		}
		base, limit := r.backoff()
		rs, err := tx.Query(mctx, `UPDATE ops.domain_event_outbox o SET
                publish_attempts = o.publish_attempts + 1,
                last_error = f.err,
                next_attempt_at = clock_timestamp()
                    + make_interval(secs => least($4::float8 * power(2, least(o.publish_attempts, 40)), $5::float8)),
                parked_at = CASE WHEN f.rejected AND o.publish_attempts + 1 >= $6 THEN clock_timestamp() END
            FROM unnest($1::uuid[], $2::text[], $3::bool[]) AS f(id, err, rejected)
            WHERE o.event_id = f.id
            RETURNING o.event_id, o.parked_at IS NOT NULL, o.publish_attempts`,
			idStrings(ids), msgs, rejected, base.Seconds(), limit.Seconds(), r.maxAttempts())
		if err != nil {
			return st, len(batch), fmt.Errorf("relay: record failures: %w", err)
		}
		for rs.Next() {
			var id uuid.UUID
			var parked bool
			var attempts int
			if err := rs.Scan(&id, &parked, &attempts); err != nil {
				rs.Close()
				return st, len(batch), fmt.Errorf("relay: record failures: %w", err)
			}
			st.Failed++
			if parked {
				st.Parked++
				r.log().ErrorContext(ctx, "relay parked a fact", "event_id", id, "attempts", attempts)
			}
		}
		if err := rs.Err(); err != nil {
			return st, len(batch), fmt.Errorf("relay: record failures: %w", err)
		}
	}
	if err := tx.Commit(mctx); err != nil {
		return RelayStats{Passes: 1}, len(batch), fmt.Errorf("relay: commit marks: %w", err)
	}
	if callErr != nil {
		return st, len(batch), fmt.Errorf("relay: publish: %w", callErr)
	}
	return st, len(batch), nil
}

// publish sends the batch PutEventsMaxEntries at a time, within
// PublishTimeout. After a failed call it stops: the rest of the batch is
// left as it was, due at the next pass.
func (r *Relay) publish(ctx context.Context, batch []outboxRow) (ok []uuid.UUID, failures []entryFailure, callErr error) {
	pctx, cancel := context.WithTimeout(ctx, r.publishTimeout())
	defer cancel()
	for start := 0; start < len(batch); start += PutEventsMaxEntries {
		chunk := batch[start:min(start+PutEventsMaxEntries, len(batch))]
		entries := make([]BusEntry, 0, len(chunk))
		rows := make([]outboxRow, 0, len(chunk))
		for _, o := range chunk {
			detail, err := EncodeFactDetail(FactDetail{
				EventID: o.id, EventName: o.name, FirmID: o.firm, MatterID: o.matter,
				OccurredAt: o.occurredAt, Payload: o.payload,
			})
			if err != nil {
				failures = append(failures, entryFailure{id: o.id, msg: "encode detail: " + err.Error(), rejected: true})
				continue
			}
			entries = append(entries, BusEntry{EventID: o.id, Name: o.name, Detail: detail, TraceHeader: o.traceHeader})
			rows = append(rows, o)
		}
		if len(entries) == 0 {
			continue
		}
		res, err := r.Publisher.Publish(pctx, entries)
		if err == nil && len(res) != len(entries) {
			err = fmt.Errorf("publisher returned %d results for %d entries", len(res), len(entries))
		}
		if err != nil {
			for _, o := range rows {
				failures = append(failures, entryFailure{id: o.id, msg: "PutEvents call failed: " + err.Error()})
			}
			return ok, failures, err
		}
		for i, res := range res {
			switch {
			case res.EventID != entries[i].EventID:
				failures = append(failures, entryFailure{id: entries[i].EventID,
					msg: fmt.Sprintf("publisher result %d names %s, not %s", i, res.EventID, entries[i].EventID)})
			case res.Err != nil:
				failures = append(failures, entryFailure{id: entries[i].EventID, msg: res.Err.Error(), rejected: true})
			default:
				ok = append(ok, entries[i].EventID)
			}
		}
	}
	return ok, failures, nil
}

func (r *Relay) fillBacklog(ctx context.Context, st *RelayStats) error {
	err := r.Pool.QueryRow(ctx, `SELECT count(*),
            coalesce(extract(epoch FROM clock_timestamp() - min(occurred_at))::float8, 0),
            (SELECT count(*) FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL)
        FROM ops.domain_event_outbox WHERE published_at IS NULL AND parked_at IS NULL`).
		Scan(&st.Backlog, &st.OldestAgeSeconds, &st.ParkedTotal)
	if err != nil {
		return fmt.Errorf("relay: backlog: %w", err)
	}
	return nil
}

// UnparkFacts makes parked rows due again with a fresh attempt count (after
// the cause was fixed). It returns how many rows it released.
func UnparkFacts(ctx context.Context, q Querier, eventIDs []uuid.UUID) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE ops.domain_event_outbox
        SET parked_at = NULL, publish_attempts = 0, next_attempt_at = NULL
        WHERE event_id = ANY($1::uuid[]) AND parked_at IS NOT NULL`, idStrings(eventIDs))
	if err != nil {
		return 0, fmt.Errorf("unpark facts: %w", err)
	}
	return tag.RowsAffected(), nil
}

// PruneOutbox deletes published rows older than olderThan (by published_at),
// batch rows per statement (default 1000), each batch committing by itself
// when q is a pool, until none are left. Unpublished and parked rows are
// never pruned. It returns the number of rows deleted.
func PruneOutbox(ctx context.Context, q Querier, olderThan time.Duration, batch int) (int64, error) {
	if olderThan < 0 {
		return 0, fmt.Errorf("prune outbox: negative age %s", olderThan)
	}
	if batch <= 0 {
		batch = 1000
	}
	var total int64
	for {
		tag, err := q.Exec(ctx, `WITH doomed AS (
                SELECT event_id FROM ops.domain_event_outbox
                WHERE published_at < clock_timestamp() - make_interval(secs => $1)
                ORDER BY published_at
                LIMIT $2
                FOR UPDATE SKIP LOCKED)
            DELETE FROM ops.domain_event_outbox o USING doomed d WHERE o.event_id = d.event_id`,
			olderThan.Seconds(), batch)
		if err != nil {
			return total, fmt.Errorf("prune outbox: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// idStrings renders ids for a uuid[] parameter (the exec query mode sends
// parameters as text without knowing their types).
func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
