// Package postgres is the rail's PostgreSQL room: every statement of the
// ledger, the outbox, the trigger's inbox, the record the Brief is built
// from and the on-call read models, composed from the ledger's rules
// (rules.go). It implements the ports of pkg/rail (rail.Ledger,
// rail.Inbox, rail.BackfillLedger, rail.Outbox); the protocol's
// orchestration never sees pgx.
package postgres

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Querier is what a ledger statement runs on: a pool, a connection or a
// transaction. Statements that must share a caller's transaction (demand
// with the trigger's inbox insert, a fact with its record) take one.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The ports this package implements.
var (
	_ rail.Ledger         = (*Ledger)(nil)
	_ rail.Inbox          = (*Ledger)(nil)
	_ rail.BackfillLedger = (*Ledger)(nil)
	_ rail.Outbox         = (*Outbox)(nil)
)

func seconds(d time.Duration) float64 { return d.Seconds() }

// Ledger runs the job-ledger statements against Postgres. Each method is one
// statement (one round trip) on one ledger row unless its comment says
// otherwise. Safe for concurrent use.
type Ledger struct {
	pool *pgxpool.Pool
	q    Querier // where the statements run: the pool, or a caller's transaction (On)
	cfg  rail.Config
	// swallowUncovered: SwallowingUncovered's negative control.
	swallowUncovered bool
}

// NewLedger returns a ledger over pool with cfg (zero fields take defaults).
func NewLedger(pool *pgxpool.Pool, cfg rail.Config) *Ledger {
	return &Ledger{pool: pool, q: pool, cfg: cfg.WithDefaults()}
}

// On returns the ledger running its statements on q, a caller's
// transaction or connection, so they commit (or roll back) with the
// caller's other writes: the trigger's inbox rows with their demand, or a
// test's commit on a connection it kills. It is the one transaction seam:
// every method, on either ledger, is the same statement. Inside a
// transaction a statement's row lock is held until the caller commits:
// keep that transaction short.
func (l *Ledger) On(q Querier) *Ledger {
	c := *l
	c.q = q
	return &c
}

// SwallowingUncovered returns the ledger with the quarantine decision it
// had before demand arriving during a last attempt released it: Fail and
// Sweep then quarantine a row on its last failed or expired attempt even
// when demand arrived during it, and that demand waits for an operator. A
// seam for the simulation's negative controls; the rail never uses it.
func (l *Ledger) SwallowingUncovered() *Ledger {
	c := *l
	c.swallowUncovered = true
	return &c
}

// Config returns the ledger's effective configuration.
func (l *Ledger) Config() rail.Config { return l.cfg }

// Pool returns the underlying pool.
func (l *Ledger) Pool() *pgxpool.Pool { return l.pool }

// LoadInputs reads a claim's inputs (LoadClaimedInputs) on the pool: the
// manifest and, one statement each as the build reaches them, the
// documents, each read checking c's token in the database.
func (l *Ledger) LoadInputs(ctx context.Context, c rail.Claim) (rail.Inputs, error) {
	return LoadClaimedInputs(ctx, l.pool, c)
}

// demandSQL records a demand: one call of ops.record_demand (migration
// 023), whose statement (the matter's lookup, the job row's upsert and
// on-call's ops.matter_demands record) the server plans once per session
// and keeps, whatever the pool's exec mode: sent from here, it was planned
// anew on every call, the largest single cost of a demand
// (docs/benchmarks.md). The function runs with the caller's grants.
const demandSQL = `SELECT r_firm_id, r_status, r_requested_generation, r_run_status
FROM ops.record_demand($1, $2, $3, $4, $5, $6)`

// Demand records n demands for a matter (what the trigger does on hearing a
// fact). It always takes the row lock, so a claim that reads
// requested_generation afterwards sees only demands whose facts have
// committed. A quarantined row is released by new demand. Run it in the
// caller's transaction when the demand must commit with something else
// (the trigger's inbox insert).
//
// A closed matter's demand is recorded too, and reported Held: a fact
// committed while the matter was open (an upload in flight when it
// closed) must be built once it is re-opened, never dropped. Held demand
// is not claimed or re-nudged while the matter stays closed and is counted
// by MattersClosedWithDemand, not as unserved. An unknown matter is
// rail.ErrUnknownMatter and one filed under another firm
// rail.ErrFirmMismatch; nothing is written then.
func (l *Ledger) Demand(ctx context.Context, ref rail.MatterRef, n int) (rail.DemandResult, error) {
	return l.DemandFrom(ctx, ref, n, rail.DemandOrigin{})
}

// DemandFrom is Demand with its origin recorded on ops.matter_demands (in the
// same statement).
func (l *Ledger) DemandFrom(ctx context.Context, ref rail.MatterRef, n int, o rail.DemandOrigin) (rail.DemandResult, error) {
	if o.Source == "" {
		o.Source = rail.DemandFromOperator
	}
	ids := make([]string, len(o.EventIDs)) // exec mode has no uuid[] encode plan
	for i, id := range o.EventIDs {
		ids[i] = id.String()
	}
	if n < 1 {
		return rail.DemandResult{}, fmt.Errorf("demand: n must be at least 1, got %d", n)
	}
	var (
		firm      *uuid.UUID
		status    *string
		requested *int64
		runStatus *string
	)
	err := l.q.QueryRow(ctx, demandSQL, ref.FirmID, ref.MatterID, n, o.Source, ids, o.TraceHeader).
		Scan(&firm, &status, &requested, &runStatus)
	if err != nil {
		return rail.DemandResult{}, fmt.Errorf("demand %s: %w", ref, err)
	}
	switch {
	case firm == nil:
		return rail.DemandResult{}, fmt.Errorf("demand %s: %w", ref, rail.ErrUnknownMatter)
	case *firm != ref.FirmID:
		return rail.DemandResult{}, fmt.Errorf("demand %s: %w", ref, rail.ErrFirmMismatch)
	case requested == nil:
		return rail.DemandResult{}, fmt.Errorf("demand %s: no row written", ref)
	}
	return rail.DemandResult{Requested: *requested, Status: *runStatus, Held: status != nil && *status != "open"}, nil
}

// claimSet is what a claim writes: the next token, the target, a fresh
// lease by the database clock, and the lease and attempt limit the claim
// is granted with ($4, $5). $3 is the worker id. The target covers every
// demand recorded, so none is uncovered (demand_since keeps the arrival of
// the oldest, still unbuilt).
const claimSet = `SET
        run_status         = 'running',
        claimed_generation = j.claimed_generation + 1,
        target_generation  = j.requested_generation,
        claimed_at         = clock_timestamp(),
        claimed_by         = $3,
        attempts           = j.attempts + 1,
        not_before         = NULL,
        uncovered_since    = NULL,
        lease_seconds      = $4,
        max_attempts       = $5`

// claimOpen: the claimed matter is open (a closed matter's demand is held).
// A scalar subquery, not EXISTS: the planner cannot turn it into a join,
// so each candidate row costs one index probe of app.matters whatever the
// table's statistics say (as an EXISTS semi-join over a freshly loaded,
// unanalysed table, the batch claim sorted every matter on each call).
const claimOpen = `(SELECT m.status FROM app.matters m
                  WHERE m.firm_id = j.firm_id AND m.matter_id = j.matter_id) = 'open'`

// claimRecord is what every claim records beside the job row, over the
// claimed rows c (firm_id, matter_id, claimed_generation, target_generation):
// earlier runs of the matter whose lease lapsed are marked expired, and the
// claim's own run is inserted. One text for the single claim and the batch.
const claimRecord = `expired AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = 'lease_expired', finished_at = clock_timestamp()
    FROM c
    WHERE r.firm_id = c.firm_id AND r.matter_id = c.matter_id
      AND r.token < c.claimed_generation AND r.outcome = 'claimed' -- matter_frame_runs_open_idx
    RETURNING r.firm_id, r.matter_id
), run AS (
    INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
    SELECT firm_id, matter_id, claimed_generation, target_generation, $3 FROM c
)`

var claimSQL = `
WITH c AS (
    UPDATE ops.matter_frame_jobs AS j ` + claimSet + `
    WHERE j.firm_id = $1 AND j.matter_id = $2
      AND ` + SQLClaimable("j", "$4", "$5") + `
      AND ` + claimOpen + `
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation,
              j.built_generation, j.attempts, j.claimed_at
), ` + claimRecord + `
SELECT claimed_generation, target_generation, built_generation, attempts, claimed_at,
       (SELECT count(*) FROM expired) > 0
FROM c`

// claimBatchSQL is claimSQL for a batch of matters ($1, $2: parallel text
// arrays of firm and matter ids; uuids go as text, which every pgx exec
// mode can encode). Each row is conditioned exactly as claimSQL conditions
// it (SQLClaimable and claimOpen, again in the UPDATE: READ COMMITTED
// re-reads a row whose lock it waited for, and the predicate is checked on
// that newest version). The rows are locked FOR NO KEY UPDATE (the lock
// the UPDATE itself takes) in (firm_id, matter_id) order first, so two
// batches over overlapping matters queue behind each other rather than
// deadlock. A matter given twice is claimed at most once.
//
// The builder does not send it: it calls ops.claim_matters (claimCallSQL,
// migration 025), which runs this text word for word with a plan the
// server session keeps (TestClaimFunctionRunsTheClaimStatement). A change
// here needs a migration that replaces the function.
var claimBatchSQL = `
WITH want AS (
    SELECT DISTINCT u.firm_id, u.matter_id
    FROM ROWS FROM (pg_catalog.unnest($1::text[]::uuid[]), pg_catalog.unnest($2::text[]::uuid[])) AS u(firm_id, matter_id)
), locked AS (
    SELECT j.firm_id, j.matter_id
    FROM ops.matter_frame_jobs AS j JOIN want USING (firm_id, matter_id)
    WHERE ` + SQLClaimable("j", "$4", "$5") + `
      AND ` + claimOpen + `
    ORDER BY j.firm_id, j.matter_id
    FOR NO KEY UPDATE OF j
), c AS (
    UPDATE ops.matter_frame_jobs AS j ` + claimSet + `
    FROM locked
    WHERE j.firm_id = locked.firm_id AND j.matter_id = locked.matter_id
      AND ` + SQLClaimable("j", "$4", "$5") + `
      AND ` + claimOpen + `
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation,
              j.built_generation, j.attempts, j.claimed_at
), ` + claimRecord + `
SELECT c.firm_id, c.matter_id, c.claimed_generation, c.target_generation, c.built_generation,
       c.attempts, c.claimed_at,
       EXISTS (SELECT 1 FROM expired e WHERE e.firm_id = c.firm_id AND e.matter_id = c.matter_id)
FROM c
ORDER BY c.firm_id, c.matter_id`

// claimCallSQL is the batch claim the builder makes: claimBatchSQL inside
// ops.claim_matters (migration 025), the same parameters, the rows in
// (firm, matter) order.
const claimCallSQL = `SELECT r_firm_id, r_matter_id, r_claimed_generation, r_target_generation, r_built_generation,
       r_attempts, r_claimed_at, r_took_over
FROM ops.claim_matters($1, $2, $3, $4, $5)
ORDER BY r_firm_id, r_matter_id`

// Claim tries to take the matter's job. It succeeds only when there is
// recorded, unserved demand (requested > built) and the row is idle past
// its backoff, or running on a lease older than the configured lease by the
// database clock. ok is false when there is nothing to do: no unserved
// demand (a stale or duplicate nudge), a live claim (whose completion will
// follow up), backoff, quarantine or a closed matter. One statement.
//
// If Claim returns an error the claim may or may not have committed; the
// caller must not claim again blindly. The lease recovers an ambiguous claim.
// The lease is stamped with clock_timestamp(), not the transaction's start,
// so a claim made late in a long transaction (On) still gets a full lease.
func (l *Ledger) Claim(ctx context.Context, ref rail.MatterRef, workerID string) (c rail.Claim, ok bool, err error) {
	c.MatterRef = ref
	err = l.q.QueryRow(ctx, claimSQL, ref.FirmID, ref.MatterID, workerID,
		seconds(l.cfg.Lease), l.cfg.MaxAttempts).
		Scan(&c.Token, &c.Target, &c.Built, &c.Attempt, &c.ClaimedAt, &c.TookOverExpiry)
	if errors.Is(err, pgx.ErrNoRows) {
		return rail.Claim{}, false, nil
	}
	if err != nil {
		return rail.Claim{}, false, fmt.Errorf("claim %s: %w", ref, err)
	}
	return c, true, nil
}

// ClaimBatch is Claim for the matters of one batch (an SQS batch of
// nudges), in one statement: it returns the claims it won, in (firm,
// matter) order; a matter with nothing to claim (no unserved demand, a
// live claim, backoff, quarantine, closed) is absent, and a matter given
// twice is claimed at most once. Each row is conditioned exactly as Claim
// conditions it, and each claim is its own: its own token, its lease
// stamped when the statement claims it, its own run.
//
// If ClaimBatch returns an error the claims may or may not have committed
// (one statement: all or none); the leases recover them, as for Claim.
func (l *Ledger) ClaimBatch(ctx context.Context, refs []rail.MatterRef, workerID string) ([]rail.Claim, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	firms, matters := make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		firms[i], matters[i] = r.FirmID.String(), r.MatterID.String()
	}
	rows, err := l.q.Query(ctx, claimCallSQL, firms, matters, workerID, seconds(l.cfg.Lease), l.cfg.MaxAttempts)
	if err != nil {
		return nil, fmt.Errorf("claim a batch of %d: %w", len(refs), err)
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.Claim, error) {
		var c rail.Claim
		err := r.Scan(&c.FirmID, &c.MatterID, &c.Token, &c.Target, &c.Built, &c.Attempt, &c.ClaimedAt, &c.TookOverExpiry)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim a batch of %d: %w", len(refs), err)
	}
	return claims, nil
}

var heartbeatSQL = `
UPDATE ops.matter_frame_jobs AS j SET claimed_at = clock_timestamp()
WHERE j.firm_id = $1 AND j.matter_id = $2 AND ` + SQLHoldsToken("j", "$3")

// Heartbeat refreshes the lease while the token is current. ErrFenced means
// the claim was superseded: stop building and do not commit.
func (l *Ledger) Heartbeat(ctx context.Context, c rail.Claim) error {
	tag, err := l.q.Exec(ctx, heartbeatSQL, c.FirmID, c.MatterID, c.Token)
	if err != nil {
		return fmt.Errorf("heartbeat %s token %d: %w", c.MatterRef, c.Token, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("heartbeat %s token %d: %w", c.MatterRef, c.Token, rail.ErrFenced)
	}
	return nil
}

// commitDemandSince is demand_since after a commit: the arrival of the
// oldest demand the landed frame did not cover (the follow-up's), which
// uncovered_since has kept since the first such demand; NULL when nothing
// is left unbuilt. (uncovered_since is left as is: after a commit target =
// built, so uncovered and unbuilt are the same demand.) The fallbacks only
// matter for a row written before migration 006.
const commitDemandSince = `CASE WHEN requested_generation > target_generation
                                THEN coalesce(uncovered_since, demand_since, clock_timestamp()) END`

// bodySHA256 content-addresses a frame body (body, the member's text):
// the hash of its jsonb text, so equal documents share one stored body
// (ops.matter_frame_bodies) whatever their key order or spacing was.
// Schema-qualified: an overloadable catalog function called with a literal
// is where a function planted in a schema on the caller's search_path
// could match better.
const bodySHA256 = `pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(fence.body::jsonb::text, 'UTF8')), 'hex')`

// commitSQL lands a group of frames in one statement. The members come
// as parallel arrays ($1..$11: firm, matter, token, fingerprint, builder
// name, model invoked, body, trace header, builder version, model id,
// prompt hash; uuids as text, which every pgx exec mode encodes), one
// element each, no matter twice. Every member is fenced on its own: the
// job row's compare-and-swap on its token (SQLHoldsToken) is the fence,
// and every other write of the member joins to its fenced row, so a stale
// member writes nothing while the others land. CommitGroup gives the
// members in (firm_id, matter_id) order, the order the batch claim locks
// its rows in, and the fence's UPDATE (members driving index probes of
// the job rows) locks them in that order; were a plan ever to lock them
// otherwise, a group and a batch claim taking over the same expired
// leases could deadlock: the database ends one of them and nothing is
// lost (a refused group is committed again member by member, a failed
// claim's nudges are redelivered). One row per landed member and demand it served (a member
// that served none: one row, the demand's columns NULL), with the
// member's ordinal (1-based), in no particular order (CommitGroup orders
// each member's served demands).
//
// The builder does not send it: it calls ops.commit_frames (commitCallSQL,
// migration 024), which runs this text word for word with a plan the
// server session keeps (TestCommitFunctionRunsTheCommitStatement): sent
// from the client in exec mode, it was planned anew on every commit. A
// change here needs a migration that replaces the function.
var commitSQL = `
WITH members AS (
    SELECT * FROM ROWS FROM (
        pg_catalog.unnest($1::text[]::uuid[]), pg_catalog.unnest($2::text[]::uuid[]), pg_catalog.unnest($3::int8[]),
        pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::text[]), pg_catalog.unnest($6::bool[]),
        pg_catalog.unnest($7::text[]), pg_catalog.unnest($8::text[]), pg_catalog.unnest($9::text[]),
        pg_catalog.unnest($10::text[]), pg_catalog.unnest($11::text[]))
        WITH ORDINALITY AS u(firm_id, matter_id, tok, fp, bname, invoked, body, trace, bver, bmodel, bprompt, ord)
), fence AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status       = 'idle',
        built_generation = target_generation,
        attempts         = 0,
        not_before       = NULL,
        last_error       = '',
        demand_since     = ` + commitDemandSince + `,
        built_by         = ` + SQLIdentityKey("u.bname", "u.bver", "u.bmodel", "u.bprompt") + `
    FROM members AS u
    WHERE u.firm_id = j.firm_id AND u.matter_id = j.matter_id AND ` + SQLHoldsToken("j", "u.tok") + `
    RETURNING j.firm_id, j.matter_id, j.target_generation, j.requested_generation,
              u.ord, u.tok, u.fp, u.bname, u.invoked, u.body, u.trace, u.bver, u.bmodel, u.bprompt
), body AS (
    INSERT INTO ops.matter_frame_bodies AS b (firm_id, matter_id, body_sha256, body)
    SELECT fence.firm_id, fence.matter_id, ` + bodySHA256 + `, fence.body::jsonb FROM fence
    ON CONFLICT (firm_id, matter_id, body_sha256) DO UPDATE SET used_at = clock_timestamp()
    RETURNING b.firm_id, b.matter_id, b.body_sha256 -- the hash is computed once, here; the frame takes it from the body row
), frame AS (
    INSERT INTO ops.matter_frames AS f
        (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body_sha256,
         builder_version, model_id, prompt_hash)
    SELECT fence.firm_id, fence.matter_id, fence.tok, fence.target_generation, fence.fp, fence.bname, fence.invoked,
           body.body_sha256, fence.bver, fence.bmodel, fence.bprompt
    FROM fence JOIN body ON body.firm_id = fence.firm_id AND body.matter_id = fence.matter_id
    RETURNING f.firm_id, f.matter_id, f.frame_id
), served AS (
    -- The demands each frame serves: every unserved one it covers.
    UPDATE ops.matter_demands AS d SET served_token = fence.tok, served_at = clock_timestamp()
    FROM fence
    WHERE d.firm_id = fence.firm_id AND d.matter_id = fence.matter_id
      AND d.served_at IS NULL AND d.generation <= fence.target_generation -- matter_demands_unserved_idx
    RETURNING d.firm_id, d.matter_id, d.generation, d.n, d.source,
              extract(epoch FROM d.served_at - d.occurred_at)::float8 AS age
), run AS (
    UPDATE ops.matter_frame_runs AS r SET outcome = 'landed', finished_at = clock_timestamp(), error = ''
    FROM fence WHERE r.firm_id = fence.firm_id AND r.matter_id = fence.matter_id AND r.token = fence.tok
), fact AS (
    -- The rail's own fact, in the same statement: a frame landed. The
    -- trigger hears it and creates no demand.
    INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, trace_header)
    SELECT fence.firm_id, fence.matter_id, 'frame.built',
           pg_catalog.jsonb_build_object('frame_id', frame.frame_id::text, 'token', fence.tok::text,
                              'target_generation', fence.target_generation::text),
           fence.trace
    FROM fence JOIN frame ON frame.firm_id = fence.firm_id AND frame.matter_id = fence.matter_id
)
SELECT fence.ord, frame.frame_id, fence.target_generation, fence.requested_generation,
       served.generation, served.n, served.source, served.age
FROM fence JOIN frame ON frame.firm_id = fence.firm_id AND frame.matter_id = fence.matter_id
LEFT JOIN served ON served.firm_id = fence.firm_id AND served.matter_id = fence.matter_id`

// commitCallSQL is the call the builder makes: commitSQL inside
// ops.commit_frames (migration 024), the same parameters.
const commitCallSQL = `SELECT r_ord, r_frame_id, r_target_generation, r_requested_generation, r_generation, r_n, r_source, r_age
FROM ops.commit_frames($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`

// ErrGroupRepeatsMatter: a commit group named a matter twice (a builder
// holds one claim per matter; nothing was written).
var ErrGroupRepeatsMatter = errors.New("commit group names a matter twice")

// Commit lands one frame: CommitGroup with a group of one (the same
// statement), its member's fence or refusal as the error.
func (l *Ledger) Commit(ctx context.Context, c rail.Claim, f rail.Frame) (rail.CommitResult, error) {
	res, errs, err := l.CommitGroup(ctx, []rail.FrameCommit{{Claim: c, Frame: f}})
	if err != nil {
		return rail.CommitResult{}, err
	}
	return res[0], errs[0]
}

// CommitGroup lands each frame of the group iff its claim's token is
// still current, all in one statement (one round trip for the group):
// for each member the frame insert, the token compare-and-swap, the
// demands it served, the run's outcome and the frame.built fact are that
// statement, so a stale build cannot half-land, and a stale member
// (errs[i] is ErrFenced; nothing of it written) does not stop the others
// landing. err is for the whole statement: rail.ErrCommitRefused (the
// database answered with an error, wrapped with it) means nothing of any
// member was written; any other error is ambiguous (FrameLanded says, per
// member). A group naming a matter twice is ErrGroupRepeatsMatter, with
// nothing written.
func (l *Ledger) CommitGroup(ctx context.Context, group []rail.FrameCommit) ([]rail.CommitResult, []error, error) {
	n := len(group)
	if n == 0 {
		return nil, nil, nil
	}
	var (
		firms, matters, fps, names, bodies, traces, vers, models, prompts = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		tokens  = make([]int64, n)
		invoked = make([]bool, n)
		seen    = make(map[rail.MatterRef]bool, n)
	)
	// The members go in (firm, matter) order (the fence locks their rows
	// in it); at[k] is the group index of the k-th.
	at := make([]int, n)
	for i := range at {
		at[i] = i
	}
	sort.Slice(at, func(a, b int) bool {
		x, y := group[at[a]].Claim.MatterRef, group[at[b]].Claim.MatterRef
		if c := bytes.Compare(x.FirmID[:], y.FirmID[:]); c != 0 {
			return c < 0
		}
		return bytes.Compare(x.MatterID[:], y.MatterID[:]) < 0
	})
	for i, gi := range at {
		m := group[gi]
		c, f := m.Claim, m.Frame
		if seen[c.MatterRef] {
			return nil, nil, fmt.Errorf("commit %s token %d: %w", c.MatterRef, c.Token, ErrGroupRepeatsMatter)
		}
		seen[c.MatterRef] = true
		id := f.Identity
		if id.Name == "" {
			id.Name = f.Builder
		}
		firms[i], matters[i], tokens[i] = c.FirmID.String(), c.MatterID.String(), c.Token
		fps[i], names[i], invoked[i], bodies[i], traces[i] = f.Fingerprint, id.Name, f.ModelInvoked, string(f.Body), f.TraceHeader
		vers[i], models[i], prompts[i] = id.Version, id.ModelID, id.PromptHash
	}
	what := fmt.Sprintf("commit %s token %d", group[0].Claim.MatterRef, group[0].Claim.Token)
	if n > 1 {
		what = fmt.Sprintf("commit a group of %d", n)
	}
	res, errs := make([]rail.CommitResult, n), make([]error, n)
	landed := make([]bool, n)
	rows, err := l.q.Query(ctx, commitCallSQL, firms, matters, tokens, fps, names, invoked, bodies, traces, vers, models, prompts)
	if err == nil {
		for rows.Next() {
			var (
				ord    int64
				r      rail.CommitResult
				gen    *int64
				dn     *int32
				source *string
				age    *float64
			)
			if err = rows.Scan(&ord, &r.FrameID, &r.Target, &r.Requested, &gen, &dn, &source, &age); err != nil {
				break
			}
			if ord < 1 || ord > int64(n) {
				err = fmt.Errorf("row for member %d of %d", ord, n)
				break
			}
			gi := at[ord-1]
			if !landed[gi] { // the member's first row: its frame
				r.FollowUpDue = r.Requested > r.Target
				res[gi], landed[gi] = r, true
			}
			if gen != nil && dn != nil && source != nil && age != nil { // one row per demand it served
				res[gi].Served = append(res[gi].Served, rail.ServedDemand{Generation: *gen, N: int(*dn), Source: *source, AgeSeconds: *age})
			}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if refused(err) {
		return nil, nil, commitRefused{fmt.Errorf("%s: %w: %w", what, rail.ErrCommitRefused, err)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	for i, m := range group {
		if sv := res[i].Served; len(sv) > 1 { // oldest first
			sort.Slice(sv, func(a, b int) bool { return sv[a].Generation < sv[b].Generation })
		}
		if !landed[i] {
			errs[i] = fmt.Errorf("commit %s token %d: %w", m.Claim.MatterRef, m.Claim.Token, rail.ErrFenced)
		}
	}
	return res, errs, nil
}

// refused reports whether err is the server's answer that the statement
// failed: an ErrorResponse of severity ERROR (a constraint, a value jsonb
// refuses, a statement timeout or cancel), after which the statement's
// transaction is rolled back: provably nothing committed. A FATAL or PANIC
// response ends the session (the server terminating it, a shutdown) and,
// like a lost connection or a client-side timeout, says nothing certain
// about whether the commit landed.
// commitRefused is a commit the database refused. Its safe text (what
// last_error, the run and the logs keep) names the refusal's SQLSTATE and
// constraint, never the server's message, which may quote the body.
type commitRefused struct{ err error }

func (e commitRefused) Error() string { return e.err.Error() }
func (e commitRefused) Unwrap() error { return e.err }
func (e commitRefused) SafeMessage() string {
	var pe *pgconn.PgError
	errors.As(e.err, &pe)
	s := rail.ErrCommitRefused.Error() + " (SQLSTATE " + pe.Code
	if pe.ConstraintName != "" {
		s += ", constraint " + pe.ConstraintName
	}
	return s + ")"
}

func refused(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return cmp.Or(pe.SeverityUnlocalized, pe.Severity) == "ERROR"
}

// FrameLanded reports whether a frame with c's token exists. A worker whose
// commit failed ambiguously (connection lost after COMMIT was sent) asks
// this instead of guessing.
func (l *Ledger) FrameLanded(ctx context.Context, c rail.Claim) (bool, error) {
	var ok bool
	err := l.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ops.matter_frames
        WHERE firm_id = $1 AND matter_id = $2 AND token = $3)`, c.FirmID, c.MatterID, c.Token).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("frame landed %s token %d: %w", c.MatterRef, c.Token, err)
	}
	return ok, nil
}

// MarkRun records how an attempt ended when the ledger row was not changed
// by it (fenced at commit, superseded at heartbeat). Best effort: the run
// table is for people, the job row is the truth.
func (l *Ledger) MarkRun(ctx context.Context, c rail.Claim, outcome, msg string) error {
	_, err := l.q.Exec(ctx, `UPDATE ops.matter_frame_runs SET outcome = $4,
        finished_at = coalesce(finished_at, clock_timestamp()), error = $5
        WHERE firm_id = $1 AND matter_id = $2 AND token = $3 AND outcome IN ('claimed', 'lease_expired')`,
		c.FirmID, c.MatterID, c.Token, outcome, msg)
	if err != nil {
		return fmt.Errorf("mark run %s token %d: %w", c.MatterRef, c.Token, err)
	}
	return nil
}

// failSQLWith is the Fail statement with quarantine as its quarantine
// decision (SQLQuarantines; the negative control's is the old one).
func failSQLWith(quarantine string) string {
	return `
WITH f AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status        = CASE WHEN ` + quarantine + ` THEN 'quarantined' ELSE 'idle' END,
        -- The last attempt failed, but demand arrived during it: that demand
        -- releases the row (attempts reset), as it would a quarantine.
        attempts          = CASE WHEN NOT ` + SQLAttemptsLeft("j", "$4::int") + ` AND NOT ` + quarantine + `
                                 THEN 0 ELSE j.attempts END,
        target_generation = built_generation,
        uncovered_since   = demand_since, -- the target is handed back: all unbuilt demand is uncovered
        not_before        = clock_timestamp()
                            + make_interval(secs => least($6::float8, $5::float8 * pg_catalog.power(2, greatest(attempts - 1, 0)))),
        last_error        = left($7, 2000)
    WHERE j.firm_id = $1 AND j.matter_id = $2 AND ` + SQLHoldsToken("j", "$3") + `
    RETURNING firm_id, matter_id, run_status, attempts
), run AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = CASE f.run_status WHEN 'quarantined' THEN 'quarantined' ELSE 'failed' END,
        finished_at = clock_timestamp(), error = left($7, 2000)
    FROM f WHERE r.firm_id = f.firm_id AND r.matter_id = f.matter_id AND r.token = $3
)
SELECT run_status, attempts FROM f`
}

var (
	failSQL = failSQLWith(SQLQuarantines("j", "$4::int"))
	// failSwallowingSQL quarantines on the last attempt whatever arrived
	// during it (SwallowingUncovered).
	failSwallowingSQL = failSQLWith("NOT " + SQLAttemptsLeft("j", "$4::int"))
)

// Fail records a failed attempt while c's token is current: the row goes
// back to idle with exponential backoff (its target handed back, so the
// demand stays visibly unserved), or to quarantined after MaxAttempts,
// unless demand arrived during that last attempt: then the row goes back
// to idle with its attempts reset (new demand releases a quarantine, also
// when it arrives during the attempt that would have caused it).
// ErrFenced means a newer claim owns the row and nothing was written.
func (l *Ledger) Fail(ctx context.Context, c rail.Claim, cause error) (rail.FailResult, error) {
	msg := "unknown error"
	if cause != nil {
		msg = cause.Error()
	}
	var r rail.FailResult
	stmt := failSQL
	if l.swallowUncovered {
		stmt = failSwallowingSQL
	}
	err := l.q.QueryRow(ctx, stmt, c.FirmID, c.MatterID, c.Token, l.cfg.MaxAttempts,
		seconds(l.cfg.BackoffBase), seconds(l.cfg.BackoffMax), msg).Scan(&r.Status, &r.Attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return rail.FailResult{}, fmt.Errorf("fail %s token %d: %w", c.MatterRef, c.Token, rail.ErrFenced)
	}
	if err != nil {
		return rail.FailResult{}, fmt.Errorf("fail %s token %d: %w", c.MatterRef, c.Token, err)
	}
	return r, nil
}

// Release returns a quarantined row to idle with its attempts reset, for an
// operator who has fixed the cause. It reports whether a row was released.
func (l *Ledger) Release(ctx context.Context, ref rail.MatterRef) (bool, error) {
	tag, err := l.q.Exec(ctx, `UPDATE ops.matter_frame_jobs
        SET run_status = 'idle', attempts = 0, not_before = NULL
        WHERE firm_id = $1 AND matter_id = $2 AND run_status = 'quarantined'`, ref.FirmID, ref.MatterID)
	if err != nil {
		return false, fmt.Errorf("release %s: %w", ref, err)
	}
	return tag.RowsAffected() == 1, nil
}
