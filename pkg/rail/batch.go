package rail

import (
	"context"
	"fmt"
)

// Batched forms of Claim and Commit, for a worker holding several nudges at
// once (an SQS batch holds up to 10). Each is one statement: one round trip
// and one transaction for the whole batch instead of one per matter. Every
// row is still conditioned on its own, exactly as the single-row statement
// conditions it, so a batch grants, fences and lands exactly what the same
// single-row statements would have, one matter at a time.
//
// Lock order: both statements lock the ledger rows they will write with
// FOR NO KEY UPDATE (the lock an UPDATE of non-key columns takes) in
// (firm_id, matter_id) order before writing them, so two batches over
// overlapping matters queue behind each other instead of deadlocking. The
// row predicate is re-evaluated on the newest row version once the lock is
// held (READ COMMITTED's recheck), as it is for the single-row UPDATE.
//
// uuids travel as text arrays cast in SQL, which works in every pgx exec
// mode (RDS Proxy runs the pool in exec mode).

var claimManySQL = `
WITH want AS (
    SELECT DISTINCT u.firm_id, u.matter_id
    FROM unnest($1::uuid[], $2::uuid[]) AS u(firm_id, matter_id)
), locked AS (
    SELECT j.firm_id, j.matter_id
    FROM ops.matter_frame_jobs AS j JOIN want USING (firm_id, matter_id)
    WHERE ` + claimablePredicate + `
      AND EXISTS (SELECT 1 FROM app.matters m
                  WHERE m.firm_id = j.firm_id AND m.matter_id = j.matter_id AND m.status = 'open')
    ORDER BY j.firm_id, j.matter_id
    FOR NO KEY UPDATE OF j
), c AS (
    UPDATE ops.matter_frame_jobs AS j ` + claimSet + `
    FROM locked
    WHERE j.firm_id = locked.firm_id AND j.matter_id = locked.matter_id
      -- the claim predicate again: the rows are locked, so this is what the
      -- lock saw (time only moves forward past backoff and lease).
      AND ` + claimablePredicate + `
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation,
              j.built_generation, j.attempts, j.claimed_at
), expired AS (
    UPDATE ops.matter_frame_runs AS r SET
        outcome = 'lease_expired', finished_at = clock_timestamp()
    FROM c
    WHERE r.firm_id = c.firm_id AND r.matter_id = c.matter_id
      AND r.token < c.claimed_generation AND r.outcome = 'claimed' -- matter_frame_runs_open_idx
    RETURNING r.firm_id, r.matter_id
), run AS (
    INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
    SELECT firm_id, matter_id, claimed_generation, target_generation, $3 FROM c
)
SELECT c.firm_id, c.matter_id, c.claimed_generation, c.target_generation, c.built_generation,
       c.attempts, c.claimed_at,
       EXISTS (SELECT 1 FROM expired e WHERE e.firm_id = c.firm_id AND e.matter_id = c.matter_id)
FROM c
ORDER BY c.firm_id, c.matter_id`

// ClaimMany is Claim for several matters in one statement. It returns the
// claims granted (each row conditioned exactly as Claim conditions it:
// unserved demand; idle past its backoff, or running on an expired lease
// with attempts left; matter open), in no particular order relative to
// refs; a ref with nothing to claim is simply absent. A ref given twice is
// claimed at most once.
//
// If ClaimMany returns an error none, some or all of the claims may have
// committed (it is one statement, so in practice none or all); the leases
// recover them, as for Claim.
func (l *Ledger) ClaimMany(ctx context.Context, refs []MatterRef, workerID string) ([]Claim, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	firms, matters := make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		firms[i], matters[i] = r.FirmID.String(), r.MatterID.String()
	}
	rows, err := l.pool.Query(ctx, claimManySQL, firms, matters, workerID,
		seconds(l.cfg.Lease), l.cfg.MaxAttempts)
	if err != nil {
		return nil, fmt.Errorf("claim %d matters: %w", len(refs), err)
	}
	defer rows.Close()
	var out []Claim
	for rows.Next() {
		var c Claim
		if err := rows.Scan(&c.FirmID, &c.MatterID, &c.Token, &c.Target, &c.Built, &c.Attempt,
			&c.ClaimedAt, &c.TookOverExpiry); err != nil {
			return nil, fmt.Errorf("claim %d matters: %w", len(refs), err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim %d matters: %w", len(refs), err)
	}
	return out, nil
}

// CommitItem is one claim's finished frame in a CommitMany.
type CommitItem struct {
	Claim Claim
	Frame Frame
}

// CommitOutcome is one item's result in a CommitMany: Err is nil when the
// frame landed, ErrFenced (wrapped) when the item's token was stale and
// nothing of it was written.
type CommitOutcome struct {
	CommitResult
	Err error
}

const commitManySQL = `
WITH items AS (
    -- The same claim twice lands once (the first); the second is fenced,
    -- as a second Commit of the same claim would be.
    SELECT DISTINCT ON (u.firm_id, u.matter_id, u.token) u.*
    FROM unnest($1::uuid[], $2::uuid[], $3::int8[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[])
         WITH ORDINALITY AS u(firm_id, matter_id, token, fingerprint, builder, model_invoked, body, trace_header, ord)
    ORDER BY u.firm_id, u.matter_id, u.token, u.ord
), locked AS (
    SELECT i.ord, i.token, j.firm_id, j.matter_id
    FROM ops.matter_frame_jobs AS j JOIN items AS i USING (firm_id, matter_id)
    WHERE j.claimed_generation = i.token AND j.run_status = 'running'
    ORDER BY j.firm_id, j.matter_id
    FOR NO KEY UPDATE OF j
), fence AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status       = 'idle',
        built_generation = target_generation,
        attempts         = 0,
        not_before       = NULL,
        last_error       = '',
        demand_since     = ` + commitDemandSince + `
    FROM locked
    WHERE j.firm_id = locked.firm_id AND j.matter_id = locked.matter_id
      AND j.claimed_generation = locked.token AND j.run_status = 'running'
    RETURNING locked.ord, locked.token, j.firm_id, j.matter_id, j.target_generation, j.requested_generation
), hashed AS (
    SELECT fence.ord, fence.firm_id, fence.matter_id, i.body::jsonb AS body,
           encode(sha256(convert_to(i.body::jsonb::text, 'UTF8')), 'hex') AS body_sha256
    FROM fence JOIN items AS i ON i.ord = fence.ord
), body AS (
    -- One row per matter in this batch (a matter lands at most one frame
    -- per statement), so ON CONFLICT never meets the same key twice.
    INSERT INTO ops.matter_frame_bodies AS b (firm_id, matter_id, body_sha256, body)
    SELECT firm_id, matter_id, body_sha256, body FROM hashed
    ON CONFLICT (firm_id, matter_id, body_sha256) DO UPDATE SET used_at = clock_timestamp()
), frame AS (
    INSERT INTO ops.matter_frames
        (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body_sha256)
    SELECT fence.firm_id, fence.matter_id, fence.token, fence.target_generation,
           i.fingerprint, i.builder, i.model_invoked, h.body_sha256
    FROM fence JOIN items AS i ON i.ord = fence.ord JOIN hashed AS h ON h.ord = fence.ord
    RETURNING frame_id, firm_id, matter_id
), run AS (
    UPDATE ops.matter_frame_runs AS r SET outcome = 'landed', finished_at = clock_timestamp(), error = ''
    FROM fence WHERE r.firm_id = fence.firm_id AND r.matter_id = fence.matter_id AND r.token = fence.token
), fact AS (
    INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload, trace_header)
    SELECT fence.firm_id, fence.matter_id, 'frame.built',
           jsonb_build_object('frame_id', frame.frame_id::text, 'token', fence.token::text,
                              'target_generation', fence.target_generation::text),
           i.trace_header
    FROM fence JOIN frame USING (firm_id, matter_id) JOIN items AS i ON i.ord = fence.ord
)
SELECT fence.ord, frame.frame_id, fence.target_generation, fence.requested_generation
FROM fence JOIN frame USING (firm_id, matter_id)`

// CommitMany is Commit for several claims in one statement. Each item is
// fenced on its own token exactly as Commit fences it: its frame, its run's
// outcome and its frame.built fact land together if and only if its token
// is still current. The result has one outcome per item, in the order of
// items: landed (Err nil) or ErrFenced (nothing of that item written). The
// error is for the statement as a whole: then nothing in the batch was
// written, or, for an ambiguous failure (connection lost after the
// statement was sent), possibly all of it; ask FrameLanded per claim.
func (l *Ledger) CommitMany(ctx context.Context, items []CommitItem) ([]CommitOutcome, error) {
	if len(items) == 0 {
		return nil, nil
	}
	n := len(items)
	var (
		firms, matters = make([]string, n), make([]string, n)
		tokens         = make([]int64, n)
		fps, builders  = make([]string, n), make([]string, n)
		models         = make([]bool, n)
		bodies, traces = make([]string, n), make([]string, n)
	)
	for i, it := range items {
		firms[i], matters[i] = it.Claim.FirmID.String(), it.Claim.MatterID.String()
		tokens[i] = it.Claim.Token
		fps[i], builders[i], models[i] = it.Frame.Fingerprint, it.Frame.Builder, it.Frame.ModelInvoked
		bodies[i], traces[i] = string(it.Frame.Body), it.Frame.TraceHeader
	}
	rows, err := l.pool.Query(ctx, commitManySQL, firms, matters, tokens, fps, builders, models, bodies, traces)
	if err != nil {
		return nil, fmt.Errorf("commit %d frames: %w", n, err)
	}
	defer rows.Close()
	out := make([]CommitOutcome, n)
	landed := make([]bool, n)
	for rows.Next() {
		var (
			ord int64
			r   CommitResult
		)
		if err := rows.Scan(&ord, &r.FrameID, &r.Target, &r.Requested); err != nil {
			return nil, fmt.Errorf("commit %d frames: %w", n, err)
		}
		i := int(ord) - 1
		if i < 0 || i >= n {
			return nil, fmt.Errorf("commit %d frames: result for item %d", n, ord)
		}
		r.FollowUpDue = r.Requested > r.Target
		out[i].CommitResult, landed[i] = r, true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("commit %d frames: %w", n, err)
	}
	for i, it := range items {
		if !landed[i] {
			out[i].Err = fmt.Errorf("commit %s token %d: %w", it.Claim.MatterRef, it.Claim.Token, ErrFenced)
		}
	}
	return out, nil
}
