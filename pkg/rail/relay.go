package rail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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
	// DefaultRelayMaxEntryBytes is EventBridge's PutEvents size limit
	// (256 KB, counted as EntrySize does) with a margin; the relay also
	// keeps each call's entries together under it.
	DefaultRelayMaxEntryBytes = 256_000
	markTimeout               = 5 * time.Second
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
	// MaxEntryBytes: a row whose PutEvents entry would be larger is parked
	// as undeliverable; a call's entries together stay under it too.
	// Default DefaultRelayMaxEntryBytes.
	MaxEntryBytes int
	// IdleTimeout, when positive, is set as the
	// idle_in_transaction_session_timeout of a pass's transaction
	// (set_config, transaction-local): a relay that freezes or dies while
	// holding its rows loses them to the next relay after this long. Zero
	// or negative: not set, and the session's own setting applies. In AWS
	// leave it zero: a set_config can pin an RDS Proxy session, and the
	// relay's database role carries the timeout instead (ALTER ROLE … SET
	// idle_in_transaction_session_timeout, docs/operations.md). Tests and
	// the local rail set it.
	IdleTimeout time.Duration
	Log         *slog.Logger

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
	Parked    int // rows parked by this run (undeliverable, or refused MaxAttempts times)
	// After the last pass: rows still unpublished and unparked (due or
	// backing off), the age of the oldest of them, and all parked rows.
	// Measured says these three were read; when it is false they are
	// unknown (the database could not be reached), not zero.
	Backlog          int64
	OldestAgeSeconds float64
	ParkedTotal      int64
	Measured         bool
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

func (r *Relay) maxEntryBytes() int {
	if r.MaxEntryBytes > 0 {
		return r.MaxEntryBytes
	}
	return DefaultRelayMaxEntryBytes
}

func (r *Relay) idleTimeout() time.Duration { return r.IdleTimeout }

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

// ErrRelayNoProgress is wrapped by Run's error when the outbox could not be
// read after the window (the database could not be reached): the stats
// then say nothing about the backlog (RelayStats.Measured is false).
var ErrRelayNoProgress = errors.New("relay: no pass succeeded")

// Run drains for window (default 50 s), passing again at once while passes
// come back full and otherwise every poll (default 150 ms). It polls rather
// than LISTENs: LISTEN pins an RDS Proxy session. When ctx has a deadline
// (a Lambda invocation), the window ends PublishTimeout+5 s before it so
// the last pass can finish; Run makes at least one pass. A failed pass is
// logged and retried at the next poll; the failed rows carry their own
// backoff (a bus outage shows in the backlog gauges, which stay true).
// Run returns nil when the window ends, ctx's error when ctx is done
// first, and an error wrapping ErrRelayNoProgress (with the last pass's
// error) when the backlog could not be read afterwards: a relay that
// cannot reach its database fails loudly instead of reporting an empty
// outbox.
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
	var lastErr error
	succeeded := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for first := true; first || time.Now().Before(end); first = false { // at least one pass
		st, claimed, err := r.pass(ctx)
		total.add(st)
		if err == nil {
			succeeded++
		} else if ctx.Err() == nil {
			lastErr = err
		}
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
		return total, fmt.Errorf("%w: %v", ErrRelayNoProgress, errors.Join(err, lastErr))
	}
	if succeeded == 0 && lastErr != nil {
		r.log().ErrorContext(ctx, "relay: no pass of the window succeeded", "passes", total.Passes, "err", lastErr)
	}
	return total, ctx.Err()
}

// The relay's two selects. A row that never failed is taken in commit
// order from domain_event_outbox_unsent_idx; a row that failed is taken
// only once its backoff has passed, earliest due first, from
// domain_event_outbox_retry_idx, whose range scan stops at the first row
// still backing off: during a bus outage a poll reads the due rows, not
// the whole backlog (sql/migrations/005_outbox_due_index.sql). The
// clock_timestamp() sits in a scalar subquery so it is evaluated once and
// can bound the index scan (a volatile function in the predicate itself
// would be a filter on every row). Each takes its rows FOR UPDATE SKIP
// LOCKED: no high-water mark, and a row another relay holds is skipped,
// not waited for.
const (
	relayRetrySQL = `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND next_attempt_at <= (SELECT clock_timestamp())
        ORDER BY next_attempt_at, occurred_at, event_id
        LIMIT $1
        FOR UPDATE SKIP LOCKED`
	relayUnsentSQL = `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
        ORDER BY occurred_at, event_id
        LIMIT $1
        FOR UPDATE SKIP LOCKED`
)

type outboxRow struct {
	id          uuid.UUID
	firm        uuid.UUID
	matter      uuid.NullUUID
	name        string
	payload     []byte
	occurredAt  pgtype.Timestamptz
	traceHeader string
	attempts    int32
	unreadable  string // why a column could not be read ("" if it could)
}

// failureKind says what a failed row's record does.
type failureKind int

const (
	callFailed    failureKind = iota // the call carrying it failed as a whole: back off, never park
	rejected                         // the bus refused it: back off, park after MaxAttempts
	undeliverable                    // it can never be sent as it is: park now
)

type entryFailure struct {
	id   uuid.UUID
	msg  string
	kind failureKind
}

// take runs one of the relay's selects and reads its rows one by one: a
// column that cannot be read marks that row unreadable (it is parked
// alone) instead of failing the pass.
func take(ctx context.Context, tx pgx.Tx, sql string, limit int) ([]outboxRow, error) {
	rows, err := tx.Query(ctx, sql, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tm := tx.Conn().TypeMap()
	var out []outboxRow
	for rows.Next() {
		var o outboxRow
		fds, vals := rows.FieldDescriptions(), rows.RawValues()
		dst := []any{&o.id, &o.firm, &o.matter, &o.name, &o.payload, &o.occurredAt, &o.traceHeader, &o.attempts}
		for i, d := range dst {
			if err := tm.Scan(fds[i].DataTypeOID, fds[i].Format, vals[i], d); err != nil {
				if i == 0 {
					return nil, fmt.Errorf("read event_id: %w", err) // the primary key: never expected
				}
				o.unreadable = fmt.Sprintf("column %s cannot be read: %v", fds[i].Name, err)
				break
			}
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// prepared is a row ready for PutEvents.
type prepared struct {
	entry BusEntry
	size  int
	retry bool // it failed before: sent in a call of its own
}

// prepare turns a row into a bus entry, or says why it can never be one.
// The detail is checked with the trigger's own decoder, so the relay
// publishes only what the consumer accepts.
func (r *Relay) prepare(o outboxRow) (prepared, string) {
	if o.unreadable != "" {
		return prepared{}, "undeliverable: " + o.unreadable
	}
	if !o.occurredAt.Valid || o.occurredAt.InfinityModifier != pgtype.Finite {
		return prepared{}, "undeliverable: occurred_at is not a finite time"
	}
	detail, err := EncodeFactDetail(FactDetail{
		EventID: o.id, EventName: o.name, FirmID: o.firm, MatterID: o.matter,
		OccurredAt: o.occurredAt.Time, Payload: o.payload,
	})
	if err != nil {
		return prepared{}, "undeliverable: " + err.Error()
	}
	if _, err := DecodeFactDetail(detail); err != nil {
		return prepared{}, "undeliverable: the bus detail would not decode: " + err.Error()
	}
	size := EntrySize(o.name, detail)
	if max := r.maxEntryBytes(); size > max {
		return prepared{}, fmt.Sprintf("undeliverable: the PutEvents entry would be %d bytes, at most %d", size, max)
	}
	return prepared{entry: BusEntry{EventID: o.id, Name: o.name, Detail: detail, TraceHeader: o.traceHeader},
		size: size, retry: o.attempts > 0}, ""
}

// EntrySize is how EventBridge counts a PutEvents entry toward its size
// limit (Source + DetailType + Detail, UTF-8 bytes), with the Source
// counted at its largest (256 bytes) since the publisher sets it.
func EntrySize(name string, detail []byte) int { return maxSourceBytes + len(name) + len(detail) }

const maxSourceBytes = 256

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

	batch, err := take(ctx, tx, relayRetrySQL, r.batch())
	if err != nil {
		return st, 0, fmt.Errorf("relay: select due retries: %w", err)
	}
	if n := r.batch() - len(batch); n > 0 {
		unsent, err := take(ctx, tx, relayUnsentSQL, n)
		if err != nil {
			return st, 0, fmt.Errorf("relay: select: %w", err)
		}
		batch = append(batch, unsent...)
	}
	if len(batch) == 0 {
		return st, 0, tx.Commit(ctx)
	}
	// The rows stay locked across PutEvents: if this process freezes or
	// dies without closing its connection, the server ends the session
	// after this long idle and the rows go to the next relay.
	if idle := r.idleTimeout(); idle > 0 {
		if _, err := tx.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, true)`,
			fmt.Sprint(idle.Milliseconds())); err != nil {
			return st, len(batch), fmt.Errorf("relay: set idle timeout: %w", err)
		}
	}

	var ready []prepared
	var failures []entryFailure
	for _, o := range batch {
		p, why := r.prepare(o)
		if why != "" {
			failures = append(failures, entryFailure{id: o.id, msg: why, kind: undeliverable})
			continue
		}
		ready = append(ready, p)
	}
	ok, pubFailures, callErr := r.publish(ctx, ready)
	failures = append(failures, pubFailures...)
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
		if err := r.recordFailures(ctx, mctx, tx, failures, &st); err != nil {
			return st, len(batch), err
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

// recordFailures counts each failed row's attempt, records its error and
// backs it off exponentially; it parks (with the reason on the row) an
// undeliverable row at once and a row the bus refused MaxAttempts times.
func (r *Relay) recordFailures(ctx, mctx context.Context, tx pgx.Tx, failures []entryFailure, st *RelayStats) error {
	ids := make([]uuid.UUID, len(failures))
	msgs := make([]string, len(failures))
	kinds := make([]int32, len(failures))
	for i, f := range failures {
		ids[i], msgs[i], kinds[i] = f.id, truncate(f.msg, 2000), int32(f.kind)
	}
	base, limit := r.backoff()
	rs, err := tx.Query(mctx, recordFailuresSQL,
		idStrings(ids), msgs, kinds, base.Seconds(), limit.Seconds(), r.maxAttempts())
	if err != nil {
		return fmt.Errorf("relay: record failures: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var id uuid.UUID
		var parked bool
		var attempts int
		var reason string
		if err := rs.Scan(&id, &parked, &attempts, &reason); err != nil {
			return fmt.Errorf("relay: record failures: %w", err)
		}
		st.Failed++
		if parked {
			st.Parked++
			r.log().ErrorContext(ctx, "relay parked a fact", "event_id", id, "attempts", attempts, "reason", reason)
		}
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("relay: record failures: %w", err)
	}
	return nil
}

// recordFailuresSQL: kind 0 = the call failed, 1 = the bus refused the
// entry, 2 = undeliverable (see failureKind).
const recordFailuresSQL = `UPDATE ops.domain_event_outbox o SET
        publish_attempts = o.publish_attempts + 1,
        last_error = f.err,
        next_attempt_at = clock_timestamp()
            + make_interval(secs => least($4::float8 * power(2, least(o.publish_attempts, 40)), $5::float8)),
        parked_at = CASE WHEN f.kind = 2 OR (f.kind = 1 AND o.publish_attempts + 1 >= $6) THEN clock_timestamp() END,
        parked_reason = CASE
            WHEN f.kind = 2 THEN f.err
            WHEN f.kind = 1 AND o.publish_attempts + 1 >= $6
                THEN format('the bus refused it %s times; last: %s', o.publish_attempts + 1, f.err)
            ELSE '' END
    FROM unnest($1::uuid[], $2::text[], $3::int4[]) AS f(id, err, kind)
    WHERE o.event_id = f.id
    RETURNING o.event_id, o.parked_at IS NOT NULL, o.publish_attempts, o.parked_reason`

// publish sends the entries within PublishTimeout: rows that never failed
// in calls of up to PutEventsMaxEntries entries and MaxEntryBytes bytes,
// then rows that failed before in calls of their own, so a row that makes
// a whole call fail cannot keep failing the rows it was sent with. Until a
// call succeeds, a failed call ends the pass (the bus is presumed down; the
// rest is left as it was, due at the next pass). After a call of the pass
// succeeded, a failed call carrying one entry counts against that entry
// (it can be parked); a failed call carrying several backs them off.
func (r *Relay) publish(ctx context.Context, ready []prepared) (ok []uuid.UUID, failures []entryFailure, callErr error) {
	pctx, cancel := context.WithTimeout(ctx, r.publishTimeout())
	defer cancel()
	var calls [][]prepared
	var cur []prepared
	curSize := 0
	for _, p := range ready {
		if p.retry {
			continue
		}
		if len(cur) == PutEventsMaxEntries || (len(cur) > 0 && curSize+p.size > r.maxEntryBytes()) {
			calls, cur, curSize = append(calls, cur), nil, 0
		}
		cur, curSize = append(cur, p), curSize+p.size
	}
	if len(cur) > 0 {
		calls = append(calls, cur)
	}
	for _, p := range ready {
		if p.retry {
			calls = append(calls, []prepared{p})
		}
	}
	anyOK := false
	for _, call := range calls {
		entries := make([]BusEntry, len(call))
		for i, p := range call {
			entries[i] = p.entry
		}
		res, err := r.Publisher.Publish(pctx, entries)
		if err == nil && len(res) != len(entries) {
			err = fmt.Errorf("publisher returned %d results for %d entries", len(res), len(entries))
		}
		if err != nil {
			kind := callFailed
			msg := "PutEvents call failed: " + err.Error()
			if anyOK && len(entries) == 1 {
				kind = rejected
				msg = "PutEvents call carrying this entry alone failed while other calls succeeded: " + err.Error()
			}
			for _, e := range entries {
				failures = append(failures, entryFailure{id: e.EventID, msg: msg, kind: kind})
			}
			if !anyOK {
				return ok, failures, err
			}
			callErr = err
			continue
		}
		anyOK = true
		for i, res := range res {
			switch {
			case res.EventID != entries[i].EventID:
				failures = append(failures, entryFailure{id: entries[i].EventID,
					msg: fmt.Sprintf("publisher result %d names %s, not %s", i, res.EventID, entries[i].EventID)})
			case res.Err != nil:
				failures = append(failures, entryFailure{id: entries[i].EventID, msg: res.Err.Error(), kind: rejected})
			default:
				ok = append(ok, entries[i].EventID)
			}
		}
	}
	return ok, failures, callErr
}

// OutboxGauges is the outbox's state as the gauges report it.
type OutboxGauges struct {
	Backlog          int64   // unpublished, unparked rows (due or backing off)
	OldestAgeSeconds float64 // age of the oldest of them by the database clock; 0 when none
	Parked           int64   // parked rows
}

// ReadOutboxGauges reads the outbox gauges: each arm of the backlog reads
// one of the relay's partial indexes, the parked count the parked index.
func ReadOutboxGauges(ctx context.Context, q Querier) (OutboxGauges, error) {
	var g OutboxGauges
	// The age skips non-finite occurred_at (the CHECKs accept 'infinity';
	// the relay parks such a row when it reaches it): one odd row must not
	// break the gauges.
	err := q.QueryRow(ctx, `SELECT count(*),
            coalesce(extract(epoch FROM clock_timestamp() - min(occurred_at) FILTER (WHERE isfinite(occurred_at)))::float8, 0),
            (SELECT count(*) FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL)
        FROM (SELECT occurred_at FROM ops.domain_event_outbox
                WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
              UNION ALL
              SELECT occurred_at FROM ops.domain_event_outbox
                WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NOT NULL) AS pending`).
		Scan(&g.Backlog, &g.OldestAgeSeconds, &g.Parked)
	if err != nil {
		return OutboxGauges{}, fmt.Errorf("outbox gauges: %w", err)
	}
	return g, nil
}

func (r *Relay) fillBacklog(ctx context.Context, st *RelayStats) error {
	g, err := ReadOutboxGauges(ctx, r.Pool)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	st.Backlog, st.OldestAgeSeconds, st.ParkedTotal, st.Measured = g.Backlog, g.OldestAgeSeconds, g.Parked, true
	return nil
}

// UnparkFacts makes parked rows due again with a fresh attempt count (after
// the cause was fixed). It returns how many rows it released.
func UnparkFacts(ctx context.Context, q Querier, eventIDs []uuid.UUID) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE ops.domain_event_outbox
        SET parked_at = NULL, parked_reason = '', publish_attempts = 0, next_attempt_at = NULL
        WHERE event_id = ANY($1::uuid[]) AND parked_at IS NOT NULL`, idStrings(eventIDs))
	if err != nil {
		return 0, fmt.Errorf("unpark facts: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ParkedFact is a parked outbox row as on-call sees it.
type ParkedFact struct {
	EventID    uuid.UUID
	FirmID     uuid.UUID
	MatterID   uuid.NullUUID
	Name       string
	Attempts   int
	Reason     string // why it was parked
	LastError  string
	OccurredAt string // as the database prints it: a parked row may hold a time Go cannot represent (infinity)
	ParkedAt   time.Time
	Payload    string // the row's payload as stored (jsonb text)
}

// ParkedFacts lists parked rows, oldest parked first, at most limit
// (default 100).
func ParkedFacts(ctx context.Context, q Querier, limit int) ([]ParkedFact, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := q.Query(ctx, `SELECT event_id, firm_id, matter_id, event_name, publish_attempts, parked_reason,
            last_error, occurred_at::text, parked_at, payload::text
        FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL
        ORDER BY parked_at, event_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("parked facts: %w", err)
	}
	defer rows.Close()
	var out []ParkedFact
	for rows.Next() {
		var p ParkedFact
		if err := rows.Scan(&p.EventID, &p.FirmID, &p.MatterID, &p.Name, &p.Attempts, &p.Reason,
			&p.LastError, &p.OccurredAt, &p.ParkedAt, &p.Payload); err != nil {
			return nil, fmt.Errorf("parked facts: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Outbox pruning defaults (one sweeper run).
const (
	DefaultPruneBatch   = 1000
	DefaultPruneMaxRows = 50_000
	DefaultPruneBudget  = 10 * time.Second
	pruneLeftCap        = 1_000_000
)

// PruneLimits bounds one PruneOutbox call. Zero values take the defaults.
type PruneLimits struct {
	Batch   int           // rows per DELETE statement (each commits by itself on a pool); default 1000
	MaxRows int           // rows per call; default 50,000
	Budget  time.Duration // no new statement starts after this; default 10 s
}

// PruneResult is what one PruneOutbox call did and left.
type PruneResult struct {
	Deleted int64
	// Left is how many prunable rows remain (0 when the call finished);
	// counted up to 1,000,000 (LeftCapped then).
	Left       int64
	LeftCapped bool
}

// PruneOutbox deletes published rows older than olderThan (by published_at),
// Batch rows per statement, each committing by itself when q is a pool,
// until none are left or the call's bound (MaxRows, Budget) is reached;
// the next call continues. Unpublished and parked rows are never pruned.
func PruneOutbox(ctx context.Context, q Querier, olderThan time.Duration, lim PruneLimits) (PruneResult, error) {
	var res PruneResult
	if olderThan < 0 {
		return res, fmt.Errorf("prune outbox: negative age %s", olderThan)
	}
	if lim.Batch <= 0 {
		lim.Batch = DefaultPruneBatch
	}
	if lim.MaxRows <= 0 {
		lim.MaxRows = DefaultPruneMaxRows
	}
	if lim.Budget <= 0 {
		lim.Budget = DefaultPruneBudget
	}
	stop := time.Now().Add(lim.Budget)
	for {
		n := min(int64(lim.Batch), int64(lim.MaxRows)-res.Deleted)
		tag, err := q.Exec(ctx, `WITH doomed AS (
                SELECT event_id FROM ops.domain_event_outbox
                WHERE published_at < clock_timestamp() - make_interval(secs => $1)
                ORDER BY published_at
                LIMIT $2
                FOR UPDATE SKIP LOCKED)
            DELETE FROM ops.domain_event_outbox o USING doomed d WHERE o.event_id = d.event_id`,
			olderThan.Seconds(), n)
		if err != nil {
			return res, fmt.Errorf("prune outbox: %w", err)
		}
		res.Deleted += tag.RowsAffected()
		if tag.RowsAffected() < n {
			return res, nil // nothing more is prunable (or the rest is locked)
		}
		if res.Deleted >= int64(lim.MaxRows) || !time.Now().Before(stop) {
			break
		}
	}
	err := q.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM ops.domain_event_outbox
            WHERE published_at < clock_timestamp() - make_interval(secs => $1) LIMIT $2) AS left_over`,
		olderThan.Seconds(), pruneLeftCap).Scan(&res.Left)
	if err != nil {
		return res, fmt.Errorf("prune outbox: count left: %w", err)
	}
	res.LeftCapped = res.Left >= pruneLeftCap
	return res, nil
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
