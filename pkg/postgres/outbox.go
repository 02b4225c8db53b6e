package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The outbox's statements: the fact insert (RecordFact, on the caller's
// transaction), the relay's pass (rail.Outbox: take, mark, record
// failures), its gauges, parking and pruning.

// Outbox is rail.Outbox over a pool: a relay pass's claim and its
// settlement are each one statement; no transaction is open while the
// relay publishes.
type Outbox struct {
	pool *pgxpool.Pool
}

// NewOutbox returns the relay's outbox over pool.
func NewOutbox(pool *pgxpool.Pool) *Outbox { return &Outbox{pool: pool} }

// Claim is relayClaimSQL, run by ops.claim_facts (relayClaimCallSQL): the
// lease (ops.relay_lease) taken or renewed, the previous pass's marks
// written, and the due rows read, in one statement (one round trip, no
// transaction around it). The rows are not written: only the lease keeps
// another relay from them.
func (o *Outbox) Claim(ctx context.Context, q rail.OutboxClaimRequest) (rail.OutboxClaim, error) {
	c := rail.OutboxClaim{Holder: q.Holder}
	var token pgtype.Int8
	var present bool
	var took, tookOver pgtype.Bool
	rows, err := take(ctx, o.pool, func(head []any) error {
		return scanHead(head, &present, &token, &took, &tookOver, &c.Marked)
	}, relayClaimCallSQL, q.Limit, idStrings(q.Published), q.Holder.String(), q.Lease.Seconds())
	if err != nil {
		return rail.OutboxClaim{}, fmt.Errorf("claim due rows: %w", err)
	}
	if !present {
		// Nothing can hold a lease that does not exist: fail loudly
		// rather than wait for ever as if it were held.
		return rail.OutboxClaim{}, fmt.Errorf("claim due rows: %w", ErrNoRelayLease)
	}
	c.Rows = rows
	c.Busy, c.Token, c.Taken, c.TookOver = !token.Valid, token.Int64, took.Bool, tookOver.Bool
	return c, nil
}

// Settle is relaySettleSQL: the marks (unfenced), the failure records
// (fenced by the token: the lease row is taken FOR SHARE, so a takeover
// waits for them or they find the token gone) and the release, in one
// statement.
func (o *Outbox) Settle(ctx context.Context, st rail.OutboxSettlement) (rail.Settled, error) {
	var s rail.Settled
	if len(st.Published) == 0 && len(st.Failures) == 0 {
		if !st.Release {
			return s, nil
		}
		// A release alone touches no outbox row.
		tag, err := o.pool.Exec(ctx, relayReleaseSQL, st.Holder.String())
		if err != nil {
			return rail.Settled{}, fmt.Errorf("release the relay lease: %w", err)
		}
		s.Released = tag.RowsAffected() == 1
		return s, nil
	}
	ids := make([]uuid.UUID, len(st.Failures))
	msgs := make([]string, len(st.Failures))
	kinds := make([]int32, len(st.Failures))
	for i, f := range st.Failures {
		ids[i], msgs[i], kinds[i] = f.EventID, f.Msg, int32(f.Kind)
	}
	rows, err := o.pool.Query(ctx, relaySettleSQL, idStrings(st.Published), idStrings(ids), msgs, kinds,
		st.Base.Seconds(), st.Limit.Seconds(), st.MaxAttempts, st.Token, st.Holder.String(), st.Release)
	if err != nil {
		return rail.Settled{}, fmt.Errorf("settle: %w", err)
	}
	defer rows.Close()
	fenced := false
	for rows.Next() {
		var (
			id       pgtype.UUID
			parked   pgtype.Bool
			attempts pgtype.Int4
			reason   pgtype.Text
		)
		if err := rows.Scan(&s.Published, &fenced, &s.Released, &id, &parked, &attempts, &reason); err != nil {
			return rail.Settled{}, fmt.Errorf("settle: %w", err)
		}
		if id.Valid {
			s.Failures = append(s.Failures, rail.FailureRecord{EventID: id.Bytes, Parked: parked.Bool,
				Attempts: int(attempts.Int32), Reason: reason.String})
		}
	}
	if err := rows.Err(); err != nil {
		return rail.Settled{}, fmt.Errorf("settle: %w", err)
	}
	s.LeaseLost = len(st.Failures) > 0 && !fenced
	return s, nil
}

// Gauges reads the outbox gauges (ReadOutboxGauges) on the pool.
func (o *Outbox) Gauges(ctx context.Context) (rail.OutboxGauges, error) {
	return ReadOutboxGauges(ctx, o.pool)
}

// ErrNoRelayLease: the relay lease's row (ops.relay_lease, lease 'outbox',
// inserted by its migration) is missing; restore it with
// INSERT INTO ops.relay_lease (lease, token) SELECT 'outbox', 0 (the token
// must be higher than any a running relay holds: stop the relays first).
var ErrNoRelayLease = errors.New("the relay lease row ops.relay_lease 'outbox' is missing")

// RelayLease is the relay lease as on-call sees it.
type RelayLease struct {
	Holder     uuid.NullUUID // null: released
	Token      int64
	LeaseUntil pgtype.Timestamptz
	TakenAt    pgtype.Timestamptz
	Takeovers  int64 // leases taken from a holder that had not released it
	Running    bool  // held and not yet ended by the database clock
}

// ReadRelayLease reads the relay lease.
func ReadRelayLease(ctx context.Context, q Querier) (RelayLease, error) {
	var l RelayLease
	err := q.QueryRow(ctx, `SELECT holder, token, lease_until, taken_at, takeovers,
            holder IS NOT NULL AND lease_until > clock_timestamp()
        FROM ops.relay_lease WHERE lease = 'outbox'`).Scan(&l.Holder, &l.Token, &l.LeaseUntil, &l.TakenAt, &l.Takeovers, &l.Running)
	if err != nil {
		return RelayLease{}, fmt.Errorf("relay lease: %w", err)
	}
	return l, nil
}

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

// The relay's two selects. A row that never failed is taken from
// domain_event_outbox_due_idx by the transaction that wrote it (relay_xid,
// then occurred_at, event_id), starting at the relay's cursor
// (ops.relay_lease cursor_*): every row of that index below the cursor is
// published, so the scan skips the history. A row that failed is taken only
// once its backoff has passed, earliest due first, from
// domain_event_outbox_backoff_idx, whose range scan stops at the first row
// still backing off: during a bus outage a poll reads the due rows, not
// the whole backlog. No index names published_at, so the mark is a
// heap-only update (the migration that adds the cursor). The
// clock_timestamp() sits in a scalar subquery so it is evaluated once and
// can bound the index scan (a volatile function in the predicate itself
// would be a filter on every row); so do the cursor's columns. Neither
// locks or writes what it reads: the relay lease keeps other relays away.
// A row committed out of order is read by a later pass: the cursor never
// passes a transaction that may still commit (relayClaimSQL's proposal).
// $2 is the rows the same statement marks published: its selects see the
// statement's snapshot, from before those marks, so they are left out by
// id.
const (
	relayRetrySQL = `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts, next_attempt_at, relay_xid
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND next_attempt_at <= (SELECT clock_timestamp())
          AND event_id <> ALL ((SELECT $2::uuid[])::uuid[])
        ORDER BY next_attempt_at, occurred_at, event_id
        LIMIT $1`
	relayUnsentSQL = `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at, trace_header, publish_attempts, next_attempt_at, relay_xid
        FROM ops.domain_event_outbox
        WHERE (relay_xid, occurred_at, event_id) >= (
                (SELECT cursor_xid FROM ops.relay_lease WHERE lease = 'outbox'),
                (SELECT cursor_at FROM ops.relay_lease WHERE lease = 'outbox'),
                (SELECT cursor_id FROM ops.relay_lease WHERE lease = 'outbox'))
          AND published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
          AND event_id <> ALL ((SELECT $2::uuid[])::uuid[])
        ORDER BY relay_xid, occurred_at, event_id
        LIMIT $1`
)

// relayClaimSQL is the claim, one statement: the lease for holder $3 (taken
// when it is free or its lease ended, renewed for $4 seconds when $3 holds
// it with half of it or less left — with more left, the lease row is
// neither locked nor written; a new holder gets a higher token), the marks of $2 (unfenced, as a
// mark is true whoever makes it), and, only while $3 already held the
// lease before this statement, up to $1 due retries (relayRetrySQL), then
// unsent rows (relayUnsentSQL) to fill the batch. A statement that takes
// the lease reads nothing: its snapshot was taken before it waited for the
// lease row, so it could predate the last holder's final marks (released
// by the same statement that wrote them) or fenced records; the next
// statement's snapshot follows them. The first row carries the token
// (null: another relay holds the lease), whether this statement took the
// lease and took it over (from a holder that had not released it), and
// how many rows were marked; a statement that reads no row returns that
// row alone, its row columns null. Unless $3's lease is fresh, the lease
// row is locked (FOR UPDATE) first, so two claims queue on it and the
// second sees the first's lease.
//
// The relay does not send it: it calls ops.claim_facts (relayClaimCallSQL,
// migration 026), which runs this text word for word with a plan the
// server session keeps (TestRelayClaimFunctionRunsTheClaimStatement). A
// change here needs a migration that replaces the function.
var relayClaimSQL = `WITH cur AS (
    SELECT holder, token, lease_until, cursor_xid, cursor_at, cursor_id FROM ops.relay_lease WHERE lease = 'outbox'
), fresh AS (
    -- $3 holds the lease with more than half of it left: no other relay
    -- can take it before it ends, so it is neither locked nor renewed (an
    -- idle relay's polls write nothing).
    SELECT token FROM cur
    WHERE holder = $3::uuid AND lease_until > clock_timestamp() + make_interval(secs => $4::float8 / 2)
), prev AS (
    SELECT holder, lease_until FROM ops.relay_lease
    WHERE lease = 'outbox' AND NOT EXISTS (SELECT FROM fresh)
    FOR UPDATE
), lease AS (
    UPDATE ops.relay_lease AS l SET
        holder = $3::uuid,
        token = CASE WHEN p.holder IS NOT DISTINCT FROM $3::uuid THEN l.token ELSE l.token + 1 END,
        lease_until = clock_timestamp() + make_interval(secs => $4),
        taken_at = CASE WHEN p.holder IS NOT DISTINCT FROM $3::uuid THEN l.taken_at ELSE clock_timestamp() END,
        takeovers = l.takeovers + (p.holder IS NOT NULL AND p.holder <> $3::uuid)::int
    FROM prev p
    WHERE l.lease = 'outbox'
      AND (p.holder IS NULL OR p.holder = $3::uuid OR p.lease_until <= clock_timestamp())
    RETURNING l.token, p.holder IS DISTINCT FROM $3::uuid AS took, (p.holder IS NOT NULL AND p.holder <> $3::uuid) AS took_over
), reading AS (
    SELECT 1 FROM lease WHERE NOT took
    UNION ALL
    SELECT 1 FROM fresh
), retry AS (` + relayRetrySQL + `
), unsent AS (` + relayUnsentSQL + `
), picked AS (
    SELECT r.*, 0 AS arm FROM retry r WHERE EXISTS (SELECT FROM reading)
    UNION ALL
    SELECT u.*, 1 FROM unsent u WHERE EXISTS (SELECT FROM reading)
    ORDER BY arm, next_attempt_at, relay_xid, occurred_at, event_id
    LIMIT $1
), proposal AS (
    -- The furthest the cursor may go: not past the first unsent row read
    -- (it is unpublished; the rows marked here are excluded from the read),
    -- nor past a transaction that may still commit (below this
    -- snapshot's xmin every transaction has ended).
    SELECT x, t, i FROM (
        SELECT relay_xid AS x, occurred_at AS t, event_id AS i FROM unsent
        UNION ALL
        SELECT pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot()), '-infinity'::timestamptz,
            '00000000-0000-0000-0000-000000000000'::uuid
    ) c ORDER BY x, t, i LIMIT 1
), advanced AS (
    -- Only forward, only by the lease's holder in a statement that read,
    -- and only when the statement marks rows or published rows lie
    -- between the cursor and the proposal: an idle poll writes nothing.
    UPDATE ops.relay_lease AS l SET cursor_xid = p.x, cursor_at = p.t, cursor_id = p.i
    FROM proposal p
    WHERE l.lease = 'outbox' AND EXISTS (SELECT FROM fresh)
      AND (p.x, p.t, p.i) > (l.cursor_xid, l.cursor_at, l.cursor_id)
      AND (cardinality($2::uuid[]) > 0 OR EXISTS (
            SELECT FROM ops.domain_event_outbox o
            WHERE (o.relay_xid, o.occurred_at, o.event_id) >= (l.cursor_xid, l.cursor_at, l.cursor_id)
              AND (o.relay_xid, o.occurred_at, o.event_id) < (p.x, p.t, p.i)
              AND o.parked_at IS NULL AND o.next_attempt_at IS NULL AND o.published_at IS NOT NULL))
    RETURNING p.x, p.t, p.i
), logged AS (
    -- When the cursor passed what it passed (ops.relay_published): the
    -- publication time of the rows it covers. A position recorded before
    -- (a cursor moved back by hand) keeps its first time: never an error
    -- that would stop every pass.
    INSERT INTO ops.relay_published (cursor_xid, cursor_at, cursor_id, published_at)
    SELECT x, t, i, clock_timestamp() FROM advanced
    ON CONFLICT DO NOTHING
), sent AS (
    -- The previous pass's rows ($2) not yet published, as this statement's
    -- snapshot has them (a row of the due index below the cursor already
    -- is: its marks were sent before).
    SELECT event_id, relay_xid, occurred_at, next_attempt_at FROM ops.domain_event_outbox
    WHERE event_id = ANY ((SELECT $2::uuid[])::uuid[]) AND published_at IS NULL AND parked_at IS NULL
      AND (next_attempt_at IS NULL
           AND (relay_xid, occurred_at, event_id) < (SELECT cursor_xid, cursor_at, cursor_id FROM cur)) IS NOT TRUE
), covered AS (
    -- Those the cursor now lies beyond, still in the due index: published
    -- by the cursor (ops.outbox_facts), no row written. The rest (at or
    -- past the cursor's bound, backing off, or the lease not fresh: the
    -- cursor did not move) are marked one by one.
    SELECT s.event_id FROM sent s
    WHERE s.next_attempt_at IS NULL
      AND (s.relay_xid, s.occurred_at, s.event_id) < (SELECT x, t, i FROM advanced)
), uncovered AS (
    SELECT s.event_id FROM sent s
    WHERE (s.next_attempt_at IS NULL
           AND (s.relay_xid, s.occurred_at, s.event_id) < (SELECT x, t, i FROM advanced)) IS NOT TRUE
), marked AS (
    UPDATE ops.domain_event_outbox
    SET published_at = clock_timestamp(), next_attempt_at = NULL
    WHERE event_id IN (SELECT event_id FROM uncovered) AND published_at IS NULL AND parked_at IS NULL
    RETURNING 1
)
SELECT EXISTS (SELECT FROM cur), coalesce((SELECT token FROM lease), (SELECT token FROM fresh)),
    (SELECT took FROM lease), (SELECT took_over FROM lease),
    (SELECT count(*) FROM marked) + (SELECT count(*) FROM covered),
    p.event_id, p.firm_id, p.matter_id, p.event_name, p.payload, p.occurred_at, p.trace_header, p.publish_attempts
FROM (SELECT) AS head LEFT JOIN picked p ON true
ORDER BY p.arm, p.next_attempt_at, p.relay_xid, p.occurred_at, p.event_id`

// relayClaimCallSQL is the claim the relay makes: relayClaimSQL inside
// ops.claim_facts (migration 026), the same parameters, the rows in the
// statement's order.
const relayClaimCallSQL = `SELECT c.r_present, c.r_token, c.r_took, c.r_took_over, c.r_marked,
       c.r_event_id, c.r_firm_id, c.r_matter_id, c.r_event_name, c.r_payload, c.r_occurred_at,
       c.r_trace_header, c.r_publish_attempts
FROM ops.claim_facts($1, $2, $3, $4) WITH ORDINALITY AS c
ORDER BY c.ordinality`

// relayReleaseSQL gives holder $1's lease up (the end of a run with no
// marks left to write).
const relayReleaseSQL = `UPDATE ops.relay_lease SET holder = NULL, lease_until = clock_timestamp()
    WHERE lease = 'outbox' AND holder = $1::uuid`

// relaySettleSQL settles a pass in one statement: the marks of $1
// (unfenced; a mark keeps the first publication's time and leaves a parked
// row parked), the failures of $2/$3/$4 (recordFailures, only while token
// $8 is the lease's: the lease row is taken FOR SHARE, so a takeover
// queues behind this statement or this statement finds the token gone),
// and with $10 the release of holder $9's lease. It returns one row per
// failure recorded, or one row of nulls, each led by the marks' count,
// whether the fence held and whether the lease was released.
const relaySettleSQL = `WITH marked AS (
    UPDATE ops.domain_event_outbox
    SET published_at = clock_timestamp(), next_attempt_at = NULL
    WHERE event_id = ANY ($1::uuid[]) AND published_at IS NULL AND parked_at IS NULL
    RETURNING 1
), fence AS (
    SELECT token FROM ops.relay_lease WHERE lease = 'outbox' AND token = $8 AND cardinality($2::uuid[]) > 0 FOR SHARE
), failed AS (` + recordFailuresSQL + `
), released AS (
    UPDATE ops.relay_lease SET holder = NULL, lease_until = clock_timestamp()
    WHERE lease = 'outbox' AND holder = $9::uuid AND $10::bool
    RETURNING 1
)
SELECT (SELECT count(*) FROM marked), EXISTS (SELECT FROM fence), EXISTS (SELECT FROM released),
    f.event_id, f.parked, f.publish_attempts, f.parked_reason
FROM (SELECT) AS head LEFT JOIN failed f ON true`

// take runs the claim and reads its rows one by one: the leading columns
// go to head (from the first row), and a row column that cannot be read
// marks that row unreadable (it is parked alone) instead of failing the
// pass. A row whose event_id is null is the statement's header alone.
func take(ctx context.Context, q Querier, head func([]any) error, sql string, args ...any) ([]rail.OutboxRow, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tm := rows.Conn().TypeMap()
	var out []rail.OutboxRow
	first := true
	const lead = 5
	for rows.Next() {
		fds, vals := rows.FieldDescriptions(), rows.RawValues()
		if first {
			first = false
			hv := make([]any, lead)
			for i := range lead {
				hv[i] = scanned{tm: tm, fd: fds[i], raw: vals[i]}
			}
			if err := head(hv); err != nil {
				return nil, err
			}
		}
		if vals[lead] == nil {
			continue
		}
		var (
			o          rail.OutboxRow
			occurredAt pgtype.Timestamptz
			attempts   int32
		)
		dst := []any{&o.EventID, &o.FirmID, &o.MatterID, &o.Name, &o.Payload, &occurredAt, &o.TraceHeader, &attempts}
		for i, d := range dst {
			fd := fds[lead+i]
			if err := tm.Scan(fd.DataTypeOID, fd.Format, vals[lead+i], d); err != nil {
				if i == 0 {
					return nil, fmt.Errorf("read event_id: %w", err) // the primary key: never expected
				}
				o.Unreadable = fmt.Sprintf("column %s cannot be read: %v", strings.TrimPrefix(fd.Name, "r_"), err)
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

// scanned is one raw column value of a row, scanned on demand.
type scanned struct {
	tm  *pgtype.Map
	fd  pgconn.FieldDescription
	raw []byte
}

func scanHead(head []any, dst ...any) error {
	for i, d := range dst {
		c := head[i].(scanned)
		if err := c.tm.Scan(c.fd.DataTypeOID, c.fd.Format, c.raw, d); err != nil {
			return fmt.Errorf("read %s: %w", strings.TrimPrefix(c.fd.Name, "r_"), err)
		}
	}
	return nil
}

// recordFailuresSQL (a part of relaySettleSQL; fence is its CTE): kind 0
// = transient (the call failed or was cut, or the bus refused it with a
// retryable code), 1 = the bus refused it permanently, 2 = undeliverable
// (see rail.FailureKind). Every failure counts an attempt (the backoff's
// exponent); only permanent refusals count toward parking
// (publish_refusals). Nothing is recorded unless the fence holds.
const recordFailuresSQL = `UPDATE ops.domain_event_outbox o SET
        publish_attempts = o.publish_attempts + 1,
        publish_refusals = o.publish_refusals + (f.kind = 1)::int,
        last_error = f.err,
        next_attempt_at = clock_timestamp()
            + make_interval(secs => least($5::float8 * pg_catalog.power(2, least(o.publish_attempts, 40)), $6::float8)),
        parked_at = CASE WHEN f.kind = 2 OR (f.kind = 1 AND o.publish_refusals + 1 >= $7) THEN clock_timestamp() END,
        parked_reason = CASE
            WHEN f.kind = 2 THEN f.err
            WHEN f.kind = 1 AND o.publish_refusals + 1 >= $7
                THEN pg_catalog.format('the bus refused it permanently %s times; last: %s', o.publish_refusals + 1, f.err)
            ELSE '' END
    FROM ROWS FROM (pg_catalog.unnest($2::uuid[]), pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::int4[])) AS f(id, err, kind)
    WHERE o.event_id = f.id AND o.published_at IS NULL AND EXISTS (SELECT FROM fence)
    RETURNING o.event_id, o.parked_at IS NOT NULL AS parked, o.publish_attempts, o.parked_reason`

// outboxCursorSQL reads the relay's cursor (its transaction id; '0' when
// the lease row is missing), the first of ReadOutboxGauges' two
// statements.
const outboxCursorSQL = `SELECT coalesce((SELECT cursor_xid FROM ops.relay_lease WHERE lease = 'outbox'), '0')::text`

// outboxGaugesSQL counts the backlog from the cursor's transaction id
// ($1, given as a value): each arm reads one of the relay's partial
// indexes, the unsent arm from $1 (every row of that index below the
// cursor is published, so the rows of the cursor's own transaction below
// it are filtered out as published: the count is the same as from the
// cursor itself), the parked count the parked index. The cursor is a
// value, not a subquery, so the plan is made knowing it: with the cursor
// read inside the statement the planner had to guess how many rows lie
// above it, guessed a third of the table, and read every retained fact
// on every relay run and sweeper pass (TestOutboxGaugesCostNothingOverRetainedFacts).
// The age skips non-finite occurred_at (the CHECKs accept 'infinity';
// the relay parks such a row when it reaches it): one odd row must not
// break the gauges.
const outboxGaugesSQL = `SELECT count(*),
            coalesce(extract(epoch FROM clock_timestamp() - min(occurred_at) FILTER (WHERE isfinite(occurred_at)))::float8, 0),
            (SELECT count(*) FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL)
        FROM (SELECT occurred_at FROM ops.domain_event_outbox
                WHERE relay_xid >= $1::xid8
                  AND published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
              UNION ALL
              SELECT occurred_at FROM ops.domain_event_outbox
                WHERE published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NOT NULL) AS pending`

// ReadOutboxGauges reads the outbox gauges in two statements: the relay's
// cursor (outboxCursorSQL), then the backlog from it (outboxGaugesSQL).
func ReadOutboxGauges(ctx context.Context, q Querier) (rail.OutboxGauges, error) {
	var g rail.OutboxGauges
	var cursor string
	if err := q.QueryRow(ctx, outboxCursorSQL).Scan(&cursor); err != nil {
		return rail.OutboxGauges{}, fmt.Errorf("outbox gauges: the relay's cursor: %w", err)
	}
	if err := q.QueryRow(ctx, outboxGaugesSQL, cursor).Scan(&g.Backlog, &g.OldestAgeSeconds, &g.Parked); err != nil {
		return rail.OutboxGauges{}, fmt.Errorf("outbox gauges: %w", err)
	}
	return g, nil
}

// UnparkFacts makes parked rows due again with a fresh attempt count (after
// the cause was fixed). It returns how many rows it released.
func UnparkFacts(ctx context.Context, q Querier, eventIDs []uuid.UUID) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE ops.domain_event_outbox
        SET parked_at = NULL, parked_reason = '', publish_attempts = 0, publish_refusals = 0,
            next_attempt_at = NULL
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

// PruneOutbox deletes rows published longer than olderThan ago (by
// published_at, or for a row the relay's cursor passed by when it passed
// it, ops.relay_published; read by occurred_at,
// domain_event_outbox_occurred_idx, since a row is published after it
// occurred), then the cursor's recorded moves older than that but its
// newest, Batch rows per statement, each committing by itself when q is a pool,
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
		tag, err := q.Exec(ctx, pruneOutboxSQL, olderThan.Seconds(), n)
		if err != nil {
			return res, fmt.Errorf("prune outbox: %w", err)
		}
		res.Deleted += tag.RowsAffected()
		if tag.RowsAffected() < n {
			// nothing more is prunable (or the rest is locked)
			return res, pruneCursorLog(ctx, q, olderThan, lim)
		}
		if res.Deleted >= int64(lim.MaxRows) || !time.Now().Before(stop) {
			break
		}
	}
	if err := pruneCursorLog(ctx, q, olderThan, lim); err != nil {
		return res, err
	}
	err := q.QueryRow(ctx, outboxPrunableLeftSQL, olderThan.Seconds(), pruneLeftCap).Scan(&res.Left)
	if err != nil {
		return res, fmt.Errorf("prune outbox: count left: %w", err)
	}
	res.LeftCapped = res.Left >= pruneLeftCap
	return res, nil
}

// pruneCursorLog deletes the relay cursor's recorded moves older than the
// outbox's retention (pruneCursorLogSQL), at most lim.MaxRows of them.
func pruneCursorLog(ctx context.Context, q Querier, olderThan time.Duration, lim PruneLimits) error {
	if _, err := q.Exec(ctx, pruneCursorLogSQL, olderThan.Seconds(), lim.MaxRows); err != nil {
		return fmt.Errorf("prune outbox: the relay cursor's moves: %w", err)
	}
	return nil
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

// The outbox's retention: $1 the retention in seconds, $2 the most rows to
// delete (or to count, for what is left).
// The cutoff is a scalar subquery, evaluated once: written bare,
// clock_timestamp() - interval is volatile, so it is no index condition
// and the ordered scan reads every retained row to find none old enough
// (TestRetentionPassesCostNothingWhenNothingIsOld).
const (
	pruneOutboxSQL = `WITH passed AS (
                -- The furthest the cursor was before the cutoff: every row of
                -- the due index below it was published by then.
                SELECT cursor_xid, cursor_at, cursor_id FROM ops.relay_published
                WHERE published_at < (SELECT clock_timestamp() - make_interval(secs => $1))
                ORDER BY published_at DESC LIMIT 1
            ), doomed AS (
                SELECT event_id FROM ops.domain_event_outbox
                WHERE occurred_at < (SELECT clock_timestamp() - make_interval(secs => $1))
                  AND (published_at < (SELECT clock_timestamp() - make_interval(secs => $1))
                       OR (published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
                           AND (relay_xid, occurred_at, event_id) < (SELECT cursor_xid, cursor_at, cursor_id FROM passed)))
                ORDER BY occurred_at
                LIMIT $2
                FOR UPDATE SKIP LOCKED)
            DELETE FROM ops.domain_event_outbox o USING doomed d WHERE o.event_id = d.event_id`
	outboxPrunableLeftSQL = `WITH passed AS (
                SELECT cursor_xid, cursor_at, cursor_id FROM ops.relay_published
                WHERE published_at < (SELECT clock_timestamp() - make_interval(secs => $1))
                ORDER BY published_at DESC LIMIT 1)
            SELECT count(*) FROM (SELECT 1 FROM ops.domain_event_outbox
            WHERE occurred_at < (SELECT clock_timestamp() - make_interval(secs => $1))
              AND (published_at < (SELECT clock_timestamp() - make_interval(secs => $1))
                   OR (published_at IS NULL AND parked_at IS NULL AND next_attempt_at IS NULL
                       AND (relay_xid, occurred_at, event_id) < (SELECT cursor_xid, cursor_at, cursor_id FROM passed)))
            LIMIT $2) AS left_over`
	// pruneCursorLogSQL deletes up to $2 of the cursor's recorded moves
	// below the newest one older than the cutoff (that one stays: it is
	// what pruneOutboxSQL prunes the rows it passed by, and it still dates
	// them for ops.outbox_facts, no earlier than they were published).
	pruneCursorLogSQL = `DELETE FROM ops.relay_published WHERE (cursor_xid, cursor_at, cursor_id) IN (
                SELECT cursor_xid, cursor_at, cursor_id FROM ops.relay_published
                WHERE (cursor_xid, cursor_at, cursor_id) < (
                    SELECT cursor_xid, cursor_at, cursor_id FROM ops.relay_published
                    WHERE published_at < (SELECT clock_timestamp() - make_interval(secs => $1))
                    ORDER BY published_at DESC LIMIT 1)
                ORDER BY cursor_xid, cursor_at, cursor_id
                LIMIT $2)`
)
