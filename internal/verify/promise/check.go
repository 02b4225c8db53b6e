package promise

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// NewEnv prepares a lane on database db (already migrated): the time
// machine (a function moving every timestamp of the record and the ledger
// back), the functions' role settings scaled by scale, and one pool per
// role opened by rolePool after the settings are in place.
func NewEnv(ctx context.Context, admin *pgxpool.Pool, db string, scale float64, rolePool func(role string) (*pgxpool.Pool, error)) (*Env, error) {
	if scale <= 0 {
		scale = DefaultScale
	}
	stmts, err := timeTravelStatements(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("time travel: %w", err)
	}
	body := strings.Join(stmts, ";\n    ")
	for _, q := range []string{`CREATE SCHEMA IF NOT EXISTS promise_sim`,
		`CREATE OR REPLACE FUNCTION promise_sim.travel(secs float8) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    ` + strings.ReplaceAll(body, "$1", "secs") + `;
END $f$`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("promise env: %w", err)
		}
	}
	envMu.Lock()
	deployed, err := DeployedRoleSettings(ctx, admin)
	var scaled map[string]map[string]time.Duration
	if err == nil {
		scaled, err = ScaleRoleSettings(ctx, admin, db, deployed, scale)
	}
	envMu.Unlock()
	if err != nil {
		return nil, err
	}
	e := &Env{DBName: db, Admin: admin, Pools: map[string]*pgxpool.Pool{}, Scale: scale, RoleSettings: scaled}
	for _, role := range Roles {
		p, err := rolePool(role)
		if err != nil {
			return nil, fmt.Errorf("pool for %s: %w", role, err)
		}
		var user string
		var ms float64
		if err := p.QueryRow(ctx, `SELECT current_user, extract(epoch FROM current_setting('idle_in_transaction_session_timeout')::interval) * 1000`).
			Scan(&user, &ms); err != nil {
			return nil, fmt.Errorf("pool for %s: %w", role, err)
		}
		if want := scaled[role]["idle_in_transaction_session_timeout"]; user != role || int64(ms) != want.Milliseconds() {
			return nil, fmt.Errorf("pool for %s runs as %s with idle_in_transaction_session_timeout %vms, want %s with %v (the role's settings must apply at login)",
				role, user, ms, role, want)
		}
		e.Pools[role] = p
	}
	return e, nil
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// ---------------------------------------------------------------- build bookkeeping

// afterBuild reads the runs the builder invocation left: a failure starts
// the clock on its retry, a new claim stops it, and a claim of this
// invocation must not be left running when the invocation has returned
// (unless its session was killed: then its outcome is honestly unknown).
func (r *run) afterBuild() {
	defer r.timed("afterBuild")()
	rows, err := r.env.Admin.Query(r.ctx, `SELECT ru.firm_id, ru.matter_id, ru.token, ru.outcome, j.run_status, j.claimed_generation,
            coalesce(extract(epoch FROM j.not_before - clock_timestamp()), 0)::float8, ru.error
        FROM ops.matter_frame_runs ru JOIN ops.matter_frame_jobs j USING (firm_id, matter_id) ORDER BY ru.token`)
	r.must(err, "runs")
	type runRow struct {
		ref               rail.MatterRef
		token, claimedGen int64
		outcome, status   string
		backoff           float64
		msg               string
	}
	var all []runRow
	for rows.Next() {
		var x runRow
		r.must(rows.Scan(&x.ref.FirmID, &x.ref.MatterID, &x.token, &x.outcome, &x.status, &x.claimedGen, &x.backoff, &x.msg), "scan runs")
		all = append(all, x)
	}
	r.must(rows.Err(), "runs")
	now := r.clock.Now()
	for _, x := range all {
		key := fmt.Sprintf("%s/%d", x.ref, x.token)
		if !r.seenRuns[key] {
			r.seenRuns[key] = true
			if f := r.failures[x.ref]; f != nil {
				late := now.Sub(f.at)
				bound := f.backoff + sweepEvery + r.settle + maxFaultTick
				if f.bySweeper {
					// The sweeper's re-nudge: the grace after the backoff, then
					// the first sweep after it, which runs at the first tick
					// past its minute, a minute the simulation restarts at any
					// unscheduled sweep (a random step), so up to two periods
					// and a tick later; its nudge is claimed at the next tick.
					bound = f.backoff + r.builder.Worker.Ledger.Config().RenudgeGrace() + 2*sweepEvery + 2*maxFaultTick
				}
				if !f.excused && late > bound {
					r.violate(VRetryLate, "%s: retry claimed %v after the failure; backoff %v, bound %v", short(x.ref), late, f.backoff, bound)
				}
				delete(r.failures, x.ref)
			}
			if x.outcome == "claimed" && x.status == rail.StatusRunning && x.claimedGen == x.token && !r.inv.killed {
				r.violate(VStuckRow, "%s: token %d still running after its invocation returned", short(x.ref), x.token)
			}
		}
		fkey := key + "/failed"
		if x.outcome == "failed" && !r.seenRuns[fkey] {
			r.seenRuns[fkey] = true
			if x.status != rail.StatusQuarantined && x.claimedGen == x.token && r.faulty() {
				r.failures[x.ref] = &failure{at: now, backoff: time.Duration(max(x.backoff, 0) * float64(time.Second)),
					bySweeper: r.inv.backfill, excused: slices.Contains(r.inv.unsent, x.ref)}
			}
		}
	}
}

// ---------------------------------------------------------------- the force scenarios

// force plays kind k's scenario once.
func (r *run) force(k Kind) {
	r.tracef("force %s", k)
	var open []rail.MatterRef
	for _, o := range r.matters {
		if !r.closed[o] {
			open = append(open, o)
		}
	}
	if len(open) == 0 {
		r.reopen(r.matters[0])
		open = append(open, r.matters[0])
	}
	m, _ := r.pick(open)
	delete(r.frozen, m)
	switch k {
	case WCloseInFlight:
		r.upload(m, 1)
		if r.rng.IntN(2) == 0 {
			r.invokeRelay() // the fact on the trigger queue, not yet heard
		}
		r.note(WCloseInFlight)
		r.closeMatter(m)
	case FBusSlowPastBudget:
		for _, o := range open {
			r.upload(o, 12/len(open)+1)
		}
		r.slowPast = 3
		for range 3 {
			r.invokeRelay()
		}
	case FBusThrottleStorm:
		r.stormUntil = r.clock.Now().Add(11 * time.Minute)
		r.upload(m, 1)
	case FBackfillSaturated, WBackfillSlowRate:
		r.settleBuilds()
		r.changeIdentity() // after the matters were built: every one is outdated now
		r.note(k)
		until := r.clock.Now().Add(6 * time.Minute)
		if k == FBackfillSaturated {
			r.bfStuck = r.clock.Now().Add(5 * time.Minute)
		} else {
			until = r.clock.Now().Add(24 * time.Hour) // the backfill alone must bring them up to date
		}
		for _, o := range r.matters {
			r.frozen[o] = until
		}
	case FBuildRefusedBody:
		r.refuseNext = m
		r.upload(m, 1)
	case FBuildFailed:
		// The matter's queue drained first, so the failed build's nudge is
		// its last: only the rail itself can bring the retry.
		r.tick(maxFaultTick)
		r.failNext = m
		r.frozen[m] = r.clock.Now().Add(5 * time.Minute) // no new demand rescues the retry
		r.upload(m, 1)
		for range 4 {
			if r.failNext != m {
				break
			}
			r.tick(r.settle)
		}
	case WDemandDuringLastAttempt:
		r.w6 = &m
		r.upload(m, 1)
	default:
		r.violate(VHarness, "no scenario for %s", k)
	}
}

// settleBuilds lets the rail deliver and build what it has (ticks until
// nothing is left, at most ten minutes), so that no late fact brings live
// demand to a matter the scenario leaves to the backfill.
func (r *run) settleBuilds() {
	for range 30 {
		r.tick(maxFaultTick)
		if r.leftover() == "" {
			return
		}
	}
}

// ---------------------------------------------------------------- quiescence

func (r *run) quiesce() {
	defer r.timed("quiesce")()
	end := r.clock.Now().Add(quiesceFor)
	var settledFor time.Duration
	for r.clock.Now().Before(end) {
		d := time.Minute
		if len(r.failures) > 0 {
			d = quietTick // a failed build's retry is timed to the tick
		}
		r.tick(d)
		if r.leftover() == "" {
			if settledFor += d; settledFor >= 2*sweepEvery {
				return
			}
		} else {
			settledFor = 0
		}
	}
	r.violate(VNotQuiescent, "after %v: %s", quiesceFor, r.leftover())
}

// leftover says what the rail still has to do ("" when nothing).
func (r *run) leftover() string {
	defer r.timed("leftover")()
	var backlog, running, behind int
	r.must(r.env.Admin.QueryRow(r.ctx, `SELECT
        (SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL AND parked_at IS NULL),
        (SELECT count(*) FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)
         WHERE j.run_status = 'running' AND m.status = 'open'), -- a closed matter's expired build waits for the re-opening
        (SELECT count(*) FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)
         WHERE m.status = 'open' AND j.run_status <> 'quarantined' AND j.requested_generation > j.built_generation)`).
		Scan(&backlog, &running, &behind), "leftover")
	var parts []string
	if backlog > 0 {
		parts = append(parts, fmt.Sprintf("outbox backlog %d", backlog))
	}
	if running > 0 {
		parts = append(parts, fmt.Sprintf("%d row(s) running", running))
	}
	if behind > 0 {
		parts = append(parts, fmt.Sprintf("%d open matter(s) behind", behind))
	}
	ts := r.triggerQ.Stats()
	if n := ts.Visible + ts.InFlight + ts.Delayed; n > 0 {
		parts = append(parts, fmt.Sprintf("trigger queue %d", n))
	}
	for _, q := range []struct {
		name string
		st   func() int
	}{{"build queue", func() int { s := r.buildQ.Stats(); return s.Visible + s.Delayed }},
		{"backfill queue", func() int { s := r.backfillQ.Stats(); return s.Visible + s.Delayed }}} {
		if n := q.st(); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", q.name, n))
		}
	}
	if n := len(r.outdated()); n > 0 {
		parts = append(parts, fmt.Sprintf("%d outdated matter(s)", n))
	}
	return strings.Join(parts, ", ")
}

// matterState is one matter as the oracle reads it.
type matterState struct {
	ref                  rail.MatterRef
	open                 bool
	docs                 map[uuid.UUID]bool // on record
	exempt               map[uuid.UUID]bool // alarmed: the fact is parked or dead-lettered
	pending              map[uuid.UUID]bool // the fact is still in the outbox backlog
	frame                *rail.StoredFrame
	frameDocs            map[uuid.UUID]bool
	requested, built     int64
	status               string
	lastTarget           int64
	hasRow, frameParseOK bool
}

func (r *run) readMatters() []*matterState {
	defer r.timed("readMatters")()
	ledger := postgres.NewLedger(r.env.Admin, rail.Config{})
	var out []*matterState
	for _, ref := range r.matters {
		s := &matterState{ref: ref, docs: map[uuid.UUID]bool{}, exempt: map[uuid.UUID]bool{}, pending: map[uuid.UUID]bool{},
			frameDocs: map[uuid.UUID]bool{}, frameParseOK: true}
		var status string
		r.must(r.env.Admin.QueryRow(r.ctx, `SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2`,
			ref.FirmID, ref.MatterID).Scan(&status), "matter")
		s.open = status == "open"
		rows, err := r.env.Admin.Query(r.ctx, `SELECT d.document_id,
                coalesce(bool_or(o.parked_at IS NOT NULL), false), coalesce(bool_or(o.published_at IS NULL AND o.parked_at IS NULL), false),
                coalesce(array_agg(o.event_id::text) FILTER (WHERE o.event_id IS NOT NULL), '{}')
            FROM app.documents d LEFT JOIN ops.outbox_facts o
              ON o.event_name = 'document.uploaded' AND o.payload->>'document_id' = d.document_id::text
            WHERE d.firm_id = $1 AND d.matter_id = $2 GROUP BY d.document_id`, ref.FirmID, ref.MatterID)
		r.must(err, "documents")
		for rows.Next() {
			var id uuid.UUID
			var parked, pending bool
			var events []string
			r.must(rows.Scan(&id, &parked, &pending, &events), "scan documents")
			s.docs[id] = true
			dead := false
			for _, e := range events {
				if ev, err := uuid.Parse(e); err == nil && r.dlq[ev] {
					dead = true
				}
			}
			if parked || dead {
				s.exempt[id] = true
			}
			if pending {
				s.pending[id] = true
			}
		}
		r.must(rows.Err(), "documents")
		err = r.env.Admin.QueryRow(r.ctx, `SELECT requested_generation, built_generation, run_status,
                coalesce((SELECT target_generation FROM ops.matter_frame_runs ru WHERE ru.firm_id = j.firm_id
                          AND ru.matter_id = j.matter_id ORDER BY token DESC LIMIT 1), 0)
            FROM ops.matter_frame_jobs j WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID).
			Scan(&s.requested, &s.built, &s.status, &s.lastTarget)
		s.hasRow = err == nil
		if err != nil && !strings.Contains(err.Error(), "no rows") {
			r.must(err, "job row")
		}
		f, found, err := ledger.LatestFrame(r.ctx, ref)
		r.must(err, "latest frame")
		if found {
			s.frame = &f
			var b Body
			if err := json.Unmarshal(f.Body, &b); err != nil || b.Schema != BodySchema {
				s.frameParseOK = false
			}
			for _, d := range b.Documents {
				if id, err := uuid.Parse(d); err == nil {
					s.frameDocs[id] = true
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// unbuilt: documents on record, not alarmed, that the newest frame lacks.
func (s *matterState) unbuilt() []uuid.UUID {
	var out []uuid.UUID
	for id := range s.docs {
		if !s.exempt[id] && !s.frameDocs[id] {
			out = append(out, id)
		}
	}
	return out
}

func (s *matterState) behind() bool { return s.hasRow && s.requested > s.built }

// outdated lists the open, unquarantined matters whose newest frame was
// built by another identity than the deployed builder's.
func (r *run) outdated() []rail.MatterRef {
	defer r.timed("outdated")()
	rows, err := r.env.Admin.Query(r.ctx, `SELECT f.firm_id, f.matter_id FROM app.matters m
        JOIN ops.matter_frame_jobs j USING (firm_id, matter_id)
        CROSS JOIN LATERAL (SELECT * FROM ops.matter_frames f WHERE f.firm_id = m.firm_id AND f.matter_id = m.matter_id
                            ORDER BY f.token DESC LIMIT 1) f
        WHERE m.status = 'open' AND j.run_status <> 'quarantined'
          AND (f.builder, f.builder_version, f.model_id, f.prompt_hash) IS DISTINCT FROM ($1, $2, $3, $4)`,
		r.identity.Name, r.identity.Version, r.identity.ModelID, r.identity.PromptHash)
	r.must(err, "outdated")
	var out []rail.MatterRef
	for rows.Next() {
		var m rail.MatterRef
		r.must(rows.Scan(&m.FirmID, &m.MatterID), "scan outdated")
		out = append(out, m)
	}
	r.must(rows.Err(), "outdated")
	return out
}

// ---------------------------------------------------------------- gauges

// checkGauges compares what the sweeper reported with the ledger, read
// independently right after it, and requires an alarm for every unbuilt
// document of an open matter.
func (r *run) checkGauges(res lambdafn.SweepResult) {
	defer r.timed("checkGauges")()
	var behind, quarantined, closedHeld int
	var backlog, parked int64
	r.must(r.env.Admin.QueryRow(r.ctx, `SELECT
        count(*) FILTER (WHERE m.status = 'open' AND j.run_status <> 'quarantined' AND j.requested_generation > j.built_generation),
        count(*) FILTER (WHERE m.status = 'open' AND j.run_status = 'quarantined'),
        count(*) FILTER (WHERE m.status = 'closed' AND j.requested_generation > j.built_generation),
        (SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL AND parked_at IS NULL),
        (SELECT count(*) FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL)
        FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)`).
		Scan(&behind, &quarantined, &closedHeld, &backlog, &parked), "oracle gauges")
	type cmp struct {
		name      string
		got, want int64
	}
	// A pass with a failed step still reports the gauges of the steps that
	// ran (rail.Sweeper runs every step): those are checked, the failed
	// steps' are not (they are missing, and the invocation's error alarms).
	failed := func(step string) bool { return slices.Contains(res.FailedSteps, step) }
	var checks []cmp
	if !failed(rail.StepGauges) {
		checks = append(checks, cmp{"MattersQuarantined", int64(res.QuarantinedNow), int64(quarantined)},
			cmp{"MattersClosedWithDemand", int64(res.MattersClosedWithDemand), int64(closedHeld)})
		if res.Backfilled == 0 { // admissions come after the sweep's gauges: they count next pass
			checks = append(checks, cmp{"MattersBehind", int64(res.MattersBehind), int64(behind)})
		}
	}
	if !failed(rail.StepOutboxGauges) {
		checks = append(checks, cmp{"OutboxBacklog", res.OutboxBacklog, backlog}, cmp{"OutboxParked", res.OutboxParked, parked})
	}
	for _, c := range checks {
		if c.got != c.want {
			r.violate(VGauges, "%s reported %d, the ledger says %d", c.name, c.got, c.want)
		}
	}
	ts, dlq := r.triggerQ.Stats(), r.triggerDLQ.Stats()
	queued := ts.Visible+ts.InFlight+ts.Delayed+dlq.Visible+dlq.InFlight+dlq.Delayed > 0
	for _, s := range r.readMatters() {
		if !s.open || s.status == rail.StatusQuarantined || s.behind() {
			continue
		}
		for _, id := range s.unbuilt() {
			if s.pending[id] || queued {
				continue
			}
			r.violate(VMissingAlarm, "%s: document %s is not in the Brief; the ledger says current and no fact of it is pending",
				short(s.ref), id.String()[:8])
		}
	}
}

// ---------------------------------------------------------------- the end checks

func (r *run) readDLQ() {
	if r.dlq == nil {
		r.dlq = map[uuid.UUID]bool{}
	}
	for range 50 {
		msgs, err := r.triggerDLQ.Receive(r.ctx, 10, 0)
		r.must(err, "receive trigger DLQ")
		if len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			if env, err := sqsq.DecodeEnvelope(m.Body); err == nil {
				r.dlq[env.Detail.EventID] = true
			}
		}
	}
}

// checkEnd runs the oracle after quiescence. final: every matter has been
// re-opened.
func (r *run) checkEnd(final bool) {
	defer r.timed("checkEnd")()
	r.readDLQ()
	for _, s := range r.readMatters() {
		if !s.frameParseOK {
			r.violate(VPromise, "%s: the newest frame is not the simulation builder's body", short(s.ref))
		}
		unbuilt := s.unbuilt()
		for id := range s.frameDocs {
			if !s.docs[id] {
				r.violate(VPromise, "%s: the Brief cites document %s, not on record", short(s.ref), id.String()[:8])
			}
		}
		switch {
		case !s.open:
			if len(unbuilt) > 0 && !s.behind() {
				r.violate(VClosedNotHeld, "%s (closed): %d document(s) not in the Brief, requested %d = built %d: nothing holds them",
					short(s.ref), len(unbuilt), s.requested, s.built)
			}
		case s.status == rail.StatusQuarantined:
			if s.requested > s.lastTarget {
				r.violate(VQuarantineSwallowed, "%s: quarantined with requested %d above its last attempt's target %d",
					short(s.ref), s.requested, s.lastTarget)
			}
		default:
			if len(unbuilt) > 0 {
				r.violate(VPromise, "%s: %d document(s) on record are not in the newest frame (requested %d, built %d, status %s)",
					short(s.ref), len(unbuilt), s.requested, s.built, s.status)
			}
			if final && s.frame != nil && s.frame.Identity != r.identity {
				r.violate(VOutdatedLeft, "%s: newest frame by %s, deployed %s", short(s.ref), s.frame.Identity, r.identity)
			}
		}
	}
	// Every demand fact the trigger acknowledged has its demand.
	rows, err := r.env.Admin.Query(r.ctx, `SELECT o.event_id, o.event_name, o.matter_id FROM ops.outbox_facts o
        WHERE o.event_name = ANY($1::text[]) AND o.published_at IS NOT NULL
          AND NOT EXISTS (SELECT FROM ops.matter_demands d WHERE o.event_id = ANY (d.event_ids))`, demandFacts)
	r.must(err, "acknowledged facts")
	for rows.Next() {
		var id, matter uuid.UUID
		var name string
		r.must(rows.Scan(&id, &name, &matter), "scan facts")
		if !r.dlq[id] {
			r.violate(VAckedWithoutEffect, "%s %s of %s: published and gone from the trigger queue, no demand recorded",
				name, id.String()[:8], matter.String()[:8])
		}
	}
	r.must(rows.Err(), "acknowledged facts")
	// Every parked fact has a permanent reason.
	rows, err = r.env.Admin.Query(r.ctx, `SELECT event_id, publish_attempts, last_error FROM ops.domain_event_outbox WHERE parked_at IS NOT NULL`)
	r.must(err, "parked")
	for rows.Next() {
		var id uuid.UUID
		var attempts int
		var msg string
		r.must(rows.Scan(&id, &attempts, &msg), "scan parked")
		permanent := strings.HasPrefix(msg, "undeliverable")
		for _, p := range r.refusals[id] {
			permanent = permanent || p
		}
		if !permanent {
			r.violate(VParkedTransient, "fact %s parked after %d attempts; the bus only ever gave it retryable errors (last: %s)",
				id.String()[:8], attempts, msg)
		}
	}
	r.must(rows.Err(), "parked")
}
