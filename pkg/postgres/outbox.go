package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The outbox's statements: the fact insert (RecordFact, on the caller's
// transaction), the relay's pass (rail.Outbox: take, mark, record
// failures), its gauges, parking and pruning.

// Outbox is rail.Outbox over a pool: a relay pass's claim and its
// settlement are each one short transaction; none is open while the relay
// publishes.
type Outbox struct {
	pool *pgxpool.Pool
}

// NewOutbox returns the relay's outbox over pool.
func NewOutbox(pool *pgxpool.Pool) *Outbox { return &Outbox{pool: pool} }

// Claim takes the due rows and leases them in one statement
// (relayClaimSQL: relayRetrySQL's rows first, then relayUnsentSQL's, each
// FOR UPDATE SKIP LOCKED, and leased): until the lease
// ends they are in neither select, so another relay skips them without any
// lock being held. One round trip, no transaction around it.
func (o *Outbox) Claim(ctx context.Context, limit int, lease time.Duration) (rail.OutboxClaim, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return rail.OutboxClaim{}, fmt.Errorf("claim id: %w", err)
	}
	c := rail.OutboxClaim{ID: id}
	if c.Rows, err = take(ctx, o.pool, relayClaimSQL, limit, id.String(), lease.Seconds()); err != nil {
		return rail.OutboxClaim{}, fmt.Errorf("claim due rows: %w", err)
	}
	return c, nil
}

// Settle records a pass's outcome in one transaction: the published marks
// (relayMarkSQL), the failures (recordFailuresSQL) and the release of the
// rest of the claim (relayReleaseSQL). Failures and releases are fenced by
// the claim's id; a published mark is not (the bus has the fact, whoever
// holds the row now).
func (o *Outbox) Settle(ctx context.Context, c rail.OutboxClaim, published []uuid.UUID, failures []rail.PublishFailure,
	base, limit time.Duration, maxAttempts int) (rail.Settled, error) {
	var s rail.Settled
	done := make(map[uuid.UUID]bool, len(published)+len(failures))
	for _, id := range published {
		done[id] = true
	}
	ids := make([]uuid.UUID, len(failures))
	msgs := make([]string, len(failures))
	kinds := make([]int32, len(failures))
	for i, f := range failures {
		ids[i], msgs[i], kinds[i] = f.EventID, f.Msg, int32(f.Kind)
		done[f.EventID] = true
	}
	var rest []uuid.UUID
	for _, r := range c.Rows {
		if !done[r.EventID] {
			rest = append(rest, r.EventID)
		}
	}
	// The usual pass settles with one statement (every row published): it
	// needs no transaction around it. Otherwise the statements share one.
	parts := 0
	for _, n := range []int{len(published), len(failures), len(rest)} {
		if n > 0 {
			parts++
		}
	}
	settle := func(q Querier) error {
		if len(published) > 0 {
			tag, err := q.Exec(ctx, relayMarkSQL, idStrings(published))
			if err != nil {
				return fmt.Errorf("mark published: %w", err)
			}
			s.Published = tag.RowsAffected()
		}
		if len(failures) > 0 {
			rs, err := q.Query(ctx, recordFailuresSQL,
				idStrings(ids), msgs, kinds, base.Seconds(), limit.Seconds(), maxAttempts, c.ID.String())
			if err != nil {
				return fmt.Errorf("record failures: %w", err)
			}
			s.Failures, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (rail.FailureRecord, error) {
				var f rail.FailureRecord
				err := r.Scan(&f.EventID, &f.Parked, &f.Attempts, &f.Reason)
				return f, err
			})
			if err != nil {
				return fmt.Errorf("record failures: %w", err)
			}
		}
		if len(rest) > 0 {
			if _, err := q.Exec(ctx, relayReleaseSQL, idStrings(rest), c.ID.String()); err != nil {
				return fmt.Errorf("release: %w", err)
			}
		}
		return nil
	}
	var err error
	switch parts {
	case 0:
	case 1:
		err = settle(o.pool)
	default:
		err = pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error { return settle(tx) })
	}
	if err != nil {
		return rail.Settled{}, err
	}
	return s, nil
}

// Gauges reads the outbox gauges (ReadOutboxGauges) on the pool.
func (o *Outbox) Gauges(ctx context.Context) (rail.OutboxGauges, error) {
	return ReadOutboxGauges(ctx, o.pool)
}

// The relay's lease and settlement. A lease is next_attempt_at (the row is
// not due until it ends, so it sits in the retry index like a row backing
// off) and relay_claim (whose pass holds it). The published mark keeps the
// first publication's time and leaves a parked row parked.
const (
	relayMarkSQL = `UPDATE ops.domain_event_outbox
        SET published_at = clock_timestamp(), next_attempt_at = NULL, relay_claim = NULL
        WHERE event_id = ANY($1::uuid[]) AND published_at IS NULL AND parked_at IS NULL`
	// A released row never tried goes back to the unsent index (commit
	// order); a retry is due at once, as it was when claimed.
	relayReleaseSQL = `UPDATE ops.domain_event_outbox
        SET relay_claim = NULL,
            next_attempt_at = CASE WHEN publish_attempts = 0 THEN NULL ELSE clock_timestamp() END
        WHERE event_id = ANY($1::uuid[]) AND relay_claim = $2::uuid AND published_at IS NULL`
)

// FactIDs lists the event ids of the facts named name recorded about a
// matter that are still in the outbox (published ones are pruned after
// RAIL_OUTBOX_RETENTION).
func FactIDs(ctx context.Context, q Querier, ref rail.MatterRef, name string) ([]uuid.UUID, error) {
	rows, err := q.Query(ctx, `SELECT event_id FROM ops.domain_event_outbox
        WHERE firm_id = $1 AND matter_id = $2 AND event_name = $3 ORDER BY occurred_at, event_id`,
		ref.FirmID, ref.MatterID, name)
	if err != nil {
		return nil, fmt.Errorf("fact ids %s %s: %w", ref, name, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("fact ids %s %s: %w", ref, name, err)
	}
	return ids, nil
}

// RecordFact inserts f into ops.domain_event_outbox on q, which should be
// the caller's transaction: the fact then commits with the record it
// describes, or not at all. It returns the fact's event id. The name and
// payload are checked first; the database's CHECK constraints are the
// authority and refuse what slips past.
func RecordFact(ctx context.Context, q Querier, f rail.Fact) (uuid.UUID, error) {
	if err := f.Validate(); err != nil {
		return uuid.Nil, err
	}
	if f.EventID == uuid.Nil {
		id, err := uuid.NewV7() // time-ordered: friendlier to the primary key's index
		if err != nil {
			return uuid.Nil, fmt.Errorf("fact: new event id: %w", err)
		}
		f.EventID = id
	}
	payload := []byte("{}")
	if len(f.Payload) > 0 {
		var err error
		if payload, err = json.Marshal(f.Payload); err != nil {
			return uuid.Nil, fmt.Errorf("fact: payload: %w", err)
		}
	}
	_, err := q.Exec(ctx, `INSERT INTO ops.domain_event_outbox
        (event_id, firm_id, matter_id, event_name, payload, trace_header)
        VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
		f.EventID, f.FirmID, f.MatterID, f.Name, string(payload), f.TraceHeader)
	if err != nil {
		return uuid.Nil, fmt.Errorf("record fact %s %s: %w", f.Name, f.EventID, err)
	}
	return f.EventID, nil
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
	relayRetrySQL = `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts, next_attempt_at
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND next_attempt_at <= (SELECT clock_timestamp())
        ORDER BY next_attempt_at, occurred_at, event_id
        LIMIT $1
        FOR UPDATE SKIP LOCKED`
	relayUnsentSQL = `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts, next_attempt_at
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
        ORDER BY occurred_at, event_id
        LIMIT $1
        FOR UPDATE SKIP LOCKED`
)

// relayClaimSQL is the claim: up to $1 due retries (relayRetrySQL), then
// unsent rows (relayUnsentSQL) to fill the batch, leased to claim $2 for $3
// seconds, returned in the order the selects give (retries first). The
// unsent arm may lock up to $1 rows the batch does not take (when retries
// are due): they are left as they were, unlocked when the statement ends.
var relayClaimSQL = `WITH retry AS (` + relayRetrySQL + `
), unsent AS (` + relayUnsentSQL + `
), picked AS (
    SELECT r.*, 0 AS arm FROM retry r
    UNION ALL
    SELECT u.*, 1 FROM unsent u
    ORDER BY arm, next_attempt_at, occurred_at, event_id
    LIMIT $1
), leased AS (
    -- By key (an array, like the marks): a primary-key lookup per row
    -- whatever the planner makes of the CTE's size.
    UPDATE ops.domain_event_outbox AS o
    SET relay_claim = $2::uuid, next_attempt_at = clock_timestamp() + make_interval(secs => $3)
    WHERE o.event_id = ANY ((SELECT pg_catalog.array_agg(event_id) FROM picked)::uuid[])
    RETURNING o.event_id
)
SELECT p.event_id, p.firm_id, p.matter_id, p.event_name, p.payload, p.occurred_at, p.trace_header, p.publish_attempts
FROM picked p JOIN leased l ON l.event_id = p.event_id
ORDER BY p.arm, p.next_attempt_at, p.occurred_at, p.event_id`

// take runs one of the relay's selects and reads its rows one by one: a
// column that cannot be read marks that row unreadable (it is parked
// alone) instead of failing the pass.
func take(ctx context.Context, q Querier, sql string, args ...any) ([]rail.OutboxRow, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tm := rows.Conn().TypeMap()
	var out []rail.OutboxRow
	for rows.Next() {
		var (
			o          rail.OutboxRow
			occurredAt pgtype.Timestamptz
			attempts   int32
		)
		fds, vals := rows.FieldDescriptions(), rows.RawValues()
		dst := []any{&o.EventID, &o.FirmID, &o.MatterID, &o.Name, &o.Payload, &occurredAt, &o.TraceHeader, &attempts}
		for i, d := range dst {
			if err := tm.Scan(fds[i].DataTypeOID, fds[i].Format, vals[i], d); err != nil {
				if i == 0 {
					return nil, fmt.Errorf("read event_id: %w", err) // the primary key: never expected
				}
				o.Unreadable = fmt.Sprintf("column %s cannot be read: %v", fds[i].Name, err)
				break
			}
		}
		o.OccurredAt, o.Attempts = occurredAt.Time, int(attempts)
		if o.Unreadable == "" && (!occurredAt.Valid || occurredAt.InfinityModifier != pgtype.Finite) {
			o.Unreadable = "occurred_at is not a finite time"
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// recordFailuresSQL: kind 0 = transient (the call failed or was cut, or
// the bus refused it with a retryable code), 1 = the bus refused it
// permanently, 2 = undeliverable (see rail.FailureKind). Every failure
// counts an attempt (the backoff's exponent); only permanent refusals
// count toward parking (publish_refusals). Only rows the claim $7 still
// holds are recorded.
const recordFailuresSQL = `UPDATE ops.domain_event_outbox o SET
        publish_attempts = o.publish_attempts + 1,
        publish_refusals = o.publish_refusals + (f.kind = 1)::int,
        last_error = f.err,
        relay_claim = NULL,
        next_attempt_at = clock_timestamp()
            + make_interval(secs => least($4::float8 * pg_catalog.power(2, least(o.publish_attempts, 40)), $5::float8)),
        parked_at = CASE WHEN f.kind = 2 OR (f.kind = 1 AND o.publish_refusals + 1 >= $6) THEN clock_timestamp() END,
        parked_reason = CASE
            WHEN f.kind = 2 THEN f.err
            WHEN f.kind = 1 AND o.publish_refusals + 1 >= $6
                THEN pg_catalog.format('the bus refused it permanently %s times; last: %s', o.publish_refusals + 1, f.err)
            ELSE '' END
    FROM ROWS FROM (pg_catalog.unnest($1::uuid[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::int4[])) AS f(id, err, kind)
    WHERE o.event_id = f.id AND o.relay_claim = $7::uuid AND o.published_at IS NULL
    RETURNING o.event_id, o.parked_at IS NOT NULL, o.publish_attempts, o.parked_reason`

// ReadOutboxGauges reads the outbox gauges: each arm of the backlog reads
// one of the relay's partial indexes, the parked count the parked index.
func ReadOutboxGauges(ctx context.Context, q Querier) (rail.OutboxGauges, error) {
	var g rail.OutboxGauges
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
		return rail.OutboxGauges{}, fmt.Errorf("outbox gauges: %w", err)
	}
	return g, nil
}

// UnparkFacts makes parked rows due again with a fresh attempt count (after
// the cause was fixed). It returns how many rows it released.
func UnparkFacts(ctx context.Context, q Querier, eventIDs []uuid.UUID) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE ops.domain_event_outbox
        SET parked_at = NULL, parked_reason = '', publish_attempts = 0, publish_refusals = 0,
            next_attempt_at = NULL, relay_claim = NULL
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

// idStrings renders ids for a uuid[] parameter (the exec query mode sends
// parameters as text without knowing their types).
func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
