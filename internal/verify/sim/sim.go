package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

type phase int

const (
	idle    phase = iota
	claimed       // holds a claim; inputs not read yet
	built         // read its inputs; frame ready to commit
	inTx          // commit transaction open past the fence (the lock holder)
	unsure        // a commit failed ambiguously: must ask FrameLanded
	claimTx       // claim made in a transaction still open (the lock holder)
)

var phaseNames = [...]string{"idle", "claimed", "built", "in-tx", "unsure", "claim-tx"}

type worker struct {
	i      int
	name   string
	app    string
	pool   *pgxpool.Pool
	ledger *postgres.Ledger

	phase   phase
	m       int // matter of the claim
	claim   rail.Claim
	frame   rail.Frame
	saw     []uuid.UUID
	stalled bool
	busy    bool // a statement of this worker is blocked on a row lock

	conn *pgxpool.Conn // the open commit transaction (phase inTx)
	tx   pgx.Tx
	pid  uint32
	// pendingFollowUp: the fence in the open transaction reported demand
	// during the build; the follow-up nudge goes out after COMMIT.
	pendingFollowUp bool
	claimBefore     row // the row when the open claim transaction claimed
}

type nudge struct {
	m       int
	reason  string
	readyAt int // step from which it may be delivered
}

type pendingOp struct {
	who   string
	done  chan struct{}
	apply func()
}

// row is a snapshot of one ledger row.
type row struct {
	exists                               bool
	requested, claimed, target, built    int64
	status                               string
	leaseExpired, backoffSet, backoffDue bool
	attempts                             int
}

type docDemand struct {
	gen int64
	doc uuid.UUID
}

// matterHist is the recorded history of one matter.
type matterHist struct {
	lastToken  int64
	lastLanded bool
	frames     map[int64]bool
	demands    []docDemand // documents and the demand generation that covers them
	built      int64       // the highest built_generation observed
	fresh      int         // builds started since the last demand (the model checker's rule)
	requested  int64
}

type abort struct{ err error }

type run struct {
	ctx context.Context
	cfg Config
	env *Env
	rng *rand.Rand
	res *Result

	firm    uuid.UUID
	matters []rail.MatterRef
	byID    map[uuid.UUID]int
	workers []*worker
	sweeper *postgres.Ledger
	demand  *postgres.Ledger
	admin   *postgres.Ledger

	bag        []nudge
	holder     *worker
	pending    []*pendingOp
	demBusy    bool
	sweepBusy  bool
	demandsRun int
	step       int
	draining   bool

	bus    *bus
	hist   []matterHist
	snap   []row
	closed []bool // matters closed now (their demand held)
	odd    map[uuid.UUID]oddRow
}

// Run executes one seeded simulation on env and checks its history.
func Run(ctx context.Context, env *Env, cfg Config) *Result {
	cfg = cfg.withDefaults()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r := &run{
		ctx: ctx, cfg: cfg, env: env,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		res: &Result{Seed: cfg.Seed, Faults: map[string]int{}},
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				a, ok := p.(abort)
				if !ok {
					panic(p)
				}
				r.res.violate(VError, "step %d: %v", r.step, a.err)
			}
		}()
		defer r.cleanup()
		r.setup()
		for r.step = 1; r.step <= cfg.Steps; r.step++ {
			r.chaosStep()
			r.observe()
		}
		r.res.Steps = cfg.Steps
		r.drainAll()
		r.finalChecks()
	}()
	r.res.Elapsed = time.Since(start)
	return r.res
}

func (r *run) fail(format string, args ...any) {
	panic(abort{fmt.Errorf(format, args...)})
}

func (r *run) must(err error, what string) {
	if err != nil {
		r.fail("%s: %v", what, err)
	}
}

func (r *run) tracef(format string, args ...any) {
	r.res.Trace = append(r.res.Trace, fmt.Sprintf("%4d ", r.step)+fmt.Sprintf(format, args...))
}

func (r *run) fault(kind string) { r.res.Faults[kind]++ }

func (r *run) chance(p float64) bool { return r.rng.Float64() < p }

func (r *run) newUUID() uuid.UUID {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], r.rng.Uint64())
	binary.LittleEndian.PutUint64(u[8:], r.rng.Uint64())
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// setup empties the lane's tables and creates the seed's matters.
func (r *run) setup() {
	// DELETE, not TRUNCATE: the tables are small and TRUNCATE costs ~80ms.
	for _, t := range []string{"ops.domain_event_outbox", "ops.trigger_inbox", "ops.matter_demands", "ops.matter_nudges", "ops.matter_frame_runs", "ops.matter_frames", "ops.matter_frame_bodies", "ops.matter_frame_jobs",
		"app.documents", "app.matters", "app.firms"} {
		_, err := r.env.Admin.Exec(r.ctx, "DELETE FROM "+t)
		r.must(err, "clear "+t)
	}
	// The relay lease is one row: released, not deleted (its token only rises).
	_, err := r.env.Admin.Exec(r.ctx, `UPDATE ops.relay_lease SET holder = NULL, lease_until = NULL, taken_at = NULL, takeovers = 0`)
	r.must(err, "release the relay lease")
	n := 2 + r.rng.IntN(r.cfg.MaxMatters-1)
	r.res.Matters = n
	r.firm = r.newUUID()
	r.byID = map[uuid.UUID]int{}
	for i := range n {
		ref := rail.MatterRef{FirmID: r.firm, MatterID: r.newUUID()}
		_, err := postgres.AddMatter(r.ctx, r.env.Admin, ref, fmt.Sprintf("Sim matter %d (seed %d)", i, r.cfg.Seed))
		r.must(err, "add matter")
		r.matters = append(r.matters, ref)
		r.byID[ref.MatterID] = i
	}
	r.hist = make([]matterHist, n)
	for i := range r.hist {
		r.hist[i].frames = map[int64]bool{}
	}
	r.snap = make([]row, n)
	r.closed = make([]bool, n)
	for i := range r.cfg.Workers {
		name := WorkerActor(i)
		r.workers = append(r.workers, &worker{i: i, name: name, app: AppName(name), pool: r.env.Workers[i],
			ledger: postgres.NewLedger(r.env.Workers[i], r.cfg.Ledger)})
	}
	r.sweeper = postgres.NewLedger(r.env.Sweeper, r.cfg.Ledger)
	r.demand = postgres.NewLedger(r.env.Demander, r.cfg.Ledger)
	r.admin = postgres.NewLedger(r.env.Admin, r.cfg.Ledger)
	r.bus = &bus{accepted: map[uuid.UUID]int{}, details: map[uuid.UUID]rail.FactDetail{}}
	r.odd = map[uuid.UUID]oddRow{}
	r.tracef("seed %d: %d matters, %d workers", r.cfg.Seed, n, r.cfg.Workers)
}

// cleanup ends whatever a failed run left open, so the next run can
// truncate.
func (r *run) cleanup() {
	ctx := context.WithoutCancel(r.ctx)
	if r.holder != nil {
		w := r.holder
		_ = w.tx.Rollback(ctx)
		w.conn.Release()
		r.holder = nil
	}
	for _, p := range r.pending {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	}
	r.pending = nil
}

// ---- the scheduler ----------------------------------------------------------

type action struct {
	weight float64
	name   string
	do     func()
}

// chaosStep picks one enabled action, weighted, from the seeded stream.
func (r *run) chaosStep() {
	var acts []action
	add := func(w float64, name string, do func()) { acts = append(acts, action{w, name, do}) }
	// At most one statement waits on the holder at a time: two waiters on
	// one row are woken in an order Postgres does not promise (an upsert
	// waits on the holder's transaction without queueing for the tuple
	// lock), which would make the seed's outcome depend on timing. While
	// one waits, only steps that take no row locks are enabled.
	quiet := len(r.pending) > 0

	if r.demandsRun < r.cfg.Demands && !r.demBusy && !quiet && len(r.openMatters()) > 0 {
		add(3, "demand", r.doDemand)
		if r.holder == nil && r.demandsRun+1 < r.cfg.Demands && len(r.openMatters()) > 1 {
			add(0.3, "out-of-order-facts", r.doOutOfOrderFacts)
		}
	}
	add(0.8, "relay", r.doRelay)
	add(0.15, "two-relays", r.doTwoRelays)
	add(0.3, "odd-outbox-row", r.doOddRow)
	add(0.1, "relay-killed", r.doRelayKilled)
	if r.deliverable() >= 0 && r.freeWorker() && !quiet {
		add(6, "deliver", r.doDeliver)
	}
	if !r.sweepBusy && !quiet {
		add(0.8, "sweep", r.doSweep)
	}
	if r.operatorPossible() {
		// Mostly while a build runs: what an operator pass with other
		// settings could harm.
		if r.runningRow() {
			add(0.8, "operator", r.doOperator)
		} else {
			add(0.2, "operator", r.doOperator)
		}
	}
	// Time travel runs inline on the harness's connection: never while a
	// blocked statement may hold locks on other rows (a waiting sweep).
	if r.runningRow() && len(r.pending) == 0 {
		add(1.5, "expire-lease", r.doExpireLease)
	}
	if r.holder == nil {
		add(0.8, "tick", r.doTick)
		if r.backoffRow() {
			add(0.7, "expire-backoff", r.doExpireBackoff)
		}
	} else {
		add(1.5, "holder-commit", func() { r.resolveHolder(true) })
		add(0.8, "holder-killed", func() { r.resolveHolder(false) })
	}
	// Matters closed and re-opened, mid-build or not: inline statements
	// only while nothing holds or waits on a row lock.
	if r.holder == nil && len(r.pending) == 0 {
		if len(r.openMatters()) > 1 {
			add(0.3, "close-matter", r.doCloseMatter)
		}
		if len(r.openMatters()) < len(r.matters) {
			add(0.5, "reopen-matter", r.doReopenMatter)
		}
	}
	if len(r.bag) > 0 {
		add(0.4, "dup-nudge", r.doDupNudge)
		add(0.4, "drop-nudge", r.doDropNudge)
		add(0.4, "delay-nudge", r.doDelayNudge)
	}
	for _, w := range r.workers {
		if w.busy || w.phase == idle || w.phase == inTx || w.phase == claimTx {
			continue
		}
		if w.stalled {
			add(1.2, "unstall", func() {
				w.stalled = false
				r.tracef("%s resumes (%s, token %d)", w.name, phaseNames[w.phase], w.claim.Token)
			})
			add(0.3, "crash", func() { r.crash(w) })
			continue
		}
		switch w.phase {
		case claimed:
			add(4, "load", func() { r.load(w) })
			if !quiet {
				add(0.6, "build-fails", func() { r.buildFails(w) })
				add(0.3, "build-cut-at-deadline", func() { r.failAtDeadline(w) })
				add(0.8, "heartbeat", func() { r.heartbeat(w) })
			}
		case built:
			if !quiet {
				add(4, "commit", func() { r.commitPlain(w) })
				add(0.8, "heartbeat", func() { r.heartbeat(w) })
				add(0.5, "commit-at-deadline", func() { r.commitAtDeadline(w, false) })
				if r.holdsRowOf(w.m) {
					add(6, "deadline-during-commit", func() { r.commitAtDeadline(w, true) })
				}
			}
			add(1, "stall-before-fence", func() {
				w.stalled = true
				r.fault(FaultStallBeforeFence)
				r.tracef("%s stalls before the fence (token %d)", w.name, w.claim.Token)
			})
			if r.holder == nil {
				add(0.8, "stall-after-fence", func() { r.commitStallAfterFence(w) })
				add(0.5, "kill-before-fence", func() { r.commitKilled(w, FaultKillBeforeFence) })
				add(0.5, "kill-after-fence", func() { r.commitKilled(w, FaultKillAfterFence) })
				add(0.5, "kill-after-commit", func() { r.commitKilled(w, FaultKillAfterCommit) })
			}
		case unsure:
			add(4, "resolve", func() { r.resolve(w) })
		}
		if w.phase == claimed {
			add(0.5, "stall", func() {
				w.stalled = true
				r.tracef("%s stalls mid-build (token %d)", w.name, w.claim.Token)
			})
		}
		add(0.4, "crash", func() { r.crash(w) })
	}

	total := 0.0
	for _, a := range acts {
		total += a.weight
	}
	x := r.rng.Float64() * total
	for _, a := range acts {
		if x < a.weight {
			a.do()
			return
		}
		x -= a.weight
	}
	acts[len(acts)-1].do()
}

func (r *run) freeWorker() bool {
	for _, w := range r.workers {
		if w.phase == idle && !w.busy {
			return true
		}
	}
	return false
}

func (r *run) deliverable() int {
	for i, n := range r.bag {
		if n.readyAt <= r.step || r.draining {
			return i
		}
	}
	return -1
}

// runningRow: some running row whose lease can be moved without waiting on
// the lock holder's row.
func (r *run) runningRow() bool {
	for i, s := range r.snap {
		if s.status == rail.StatusRunning && (r.holder == nil || r.holder.m != i) {
			return true
		}
	}
	return false
}

func (r *run) backoffRow() bool {
	for _, s := range r.snap {
		if s.status == rail.StatusIdle && s.backoffSet && !s.backoffDue {
			return true
		}
	}
	return false
}

// exec runs io, a worker's or another actor's statements. With no open
// commit transaction nothing can block, so it runs inline. Otherwise it
// runs on a goroutine and the scheduler waits until it either finishes or
// shows in pg_stat_activity as waiting on a lock; a blocked op is joined,
// in the order it blocked, when the holder's transaction ends. apply runs
// on the scheduler goroutine, after io, in database order.
func (r *run) exec(app string, io func(), apply func()) (blocked bool) {
	if r.holder == nil {
		io()
		apply()
		return false
	}
	done := make(chan struct{})
	go func() { defer close(done); io() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-done:
			apply()
			return false
		default:
		}
		var n int
		err := r.env.Admin.QueryRow(r.ctx, `SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
		r.must(err, "poll pg_stat_activity")
		if n > 0 {
			r.pending = append(r.pending, &pendingOp{who: app, done: done, apply: apply})
			r.fault(FaultBlocked)
			r.tracef("%s blocks on the row lock held by %s", app, r.holder.name)
			return true
		}
		if time.Now().After(deadline) {
			r.fail("%s neither finished nor blocked", app)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// joinPending waits for the ops that were blocked behind the holder and
// applies them in the order they queued (Postgres grants the row lock in
// that order).
func (r *run) joinPending() {
	for _, p := range r.pending {
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			r.fail("%s still blocked after the holder's transaction ended", p.who)
		}
		p.apply()
	}
	r.pending = nil
}

// ---- the demand generator ---------------------------------------------------

func (r *run) doDemand() {
	open := r.openMatters()
	m := open[r.rng.IntN(len(open))]
	kind := r.rng.IntN(10) // 0-5: document, fact and demand in one tx; 6-7: demand right after the document commits; 8-9: regeneration
	doc := uuid.Nil
	if kind < 8 {
		doc = r.newUUID()
	}
	event := r.newUUID()
	if r.holder != nil && r.holder.m == m {
		r.fault(FaultDemandDuringCommit)
	}
	var (
		res rail.DemandResult
		err error
	)
	io := func() {
		if kind == 6 || kind == 7 {
			if err = pgxBegin(r, func(q postgres.Querier) error { return r.recordDocument(q, m, doc, event) }); err != nil {
				return
			}
			res, err = r.demand.Demand(r.ctx, r.matters[m], 1)
			return
		}
		err = pgxBegin(r, func(q postgres.Querier) error {
			var e error
			res, e = r.recordDemand(q, m, doc, event)
			return e
		})
	}
	r.demBusy = true
	r.exec(AppName("demand"), io, func() {
		r.demBusy = false
		r.must(err, "demand")
		r.applyDemand(m, doc, res, [...]string{"one tx", "one tx", "one tx", "one tx", "one tx", "one tx",
			"after the document", "after the document", "regeneration", "regeneration"}[kind])
	})
}

func pgxBegin(r *run, f func(q postgres.Querier) error) error {
	return pgx.BeginFunc(r.ctx, r.env.Demander, func(tx pgx.Tx) error { return f(tx) })
}

// recordDocument stores a document and its document.uploaded fact (or,
// with no document, a brief.regeneration_requested fact) on q.
func (r *run) recordDocument(q postgres.Querier, m int, doc, event uuid.UUID) error {
	ref := r.matters[m]
	fact := rail.Fact{EventID: event, FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: rail.FactRegenerationRequested}
	if doc != uuid.Nil {
		if _, err := postgres.AddDocument(r.ctx, q, ref, rail.NewDocument{ID: doc, Name: "doc",
			Pages: []string{"page of document " + doc.String()}}); err != nil {
			return err
		}
		fact.Name, fact.Payload = rail.FactDocumentUploaded, map[string]string{"document_id": doc.String()}
	}
	_, err := postgres.RecordFact(r.ctx, q, fact)
	return err
}

// recordDemand is the document, its fact and the demand in one transaction.
func (r *run) recordDemand(q postgres.Querier, m int, doc, event uuid.UUID) (rail.DemandResult, error) {
	if err := r.recordDocument(q, m, doc, event); err != nil {
		return rail.DemandResult{}, err
	}
	return r.demand.On(q).Demand(r.ctx, r.matters[m], 1)
}

// applyDemand records a committed demand in the history and nudges.
func (r *run) applyDemand(m int, doc uuid.UUID, res rail.DemandResult, how string) {
	r.demandsRun++
	h := &r.hist[m]
	h.requested = res.Requested
	if doc != uuid.Nil {
		h.demands = append(h.demands, docDemand{res.Requested, doc})
	}
	if res.Status == rail.StatusRunning {
		h.fresh = 1
	} else {
		h.fresh = 0
	}
	r.res.Demands++
	r.tracef("demand m%d -> requested %d (document %v, %s, %s)", m, res.Requested, doc != uuid.Nil, how, res.Status)
	r.send(m, rail.ReasonDemand)
}

// send puts a nudge in the bag, with the send-side faults.
func (r *run) send(m int, reason string) {
	if r.draining {
		r.bag = append(r.bag, nudge{m: m, reason: reason})
		return
	}
	switch x := r.rng.Float64(); {
	case x < 0.08:
		r.fault(FaultNudgeDropped)
		r.tracef("nudge m%d (%s) dropped on send", m, reason)
	case x < 0.16:
		k := 2 + r.rng.IntN(4)
		for range k {
			r.bag = append(r.bag, nudge{m: m, reason: reason, readyAt: r.step})
		}
		r.fault(FaultNudgeDuplicated)
		r.tracef("nudge m%d (%s) delivered %d times", m, reason, k)
	case x < 0.26:
		r.bag = append(r.bag, nudge{m: m, reason: reason, readyAt: r.step + 3 + r.rng.IntN(15)})
		r.fault(FaultNudgeDelayed)
	default:
		r.bag = append(r.bag, nudge{m: m, reason: reason, readyAt: r.step})
	}
}

func (r *run) doDupNudge() {
	i := r.rng.IntN(len(r.bag))
	r.bag = append(r.bag, r.bag[i])
	r.fault(FaultNudgeDuplicated)
	r.tracef("nudge m%d duplicated", r.bag[i].m)
}

func (r *run) doDropNudge() {
	i := r.rng.IntN(len(r.bag))
	r.tracef("nudge m%d dropped", r.bag[i].m)
	r.bag = slices.Delete(r.bag, i, i+1)
	r.fault(FaultNudgeDropped)
}

func (r *run) doDelayNudge() {
	i := r.rng.IntN(len(r.bag))
	r.bag[i].readyAt = r.step + 3 + r.rng.IntN(15)
	r.fault(FaultNudgeDelayed)
	r.tracef("nudge m%d delayed to step %d", r.bag[i].m, r.bag[i].readyAt)
}

// doDeliver hands one deliverable nudge (usually the oldest; sometimes a
// later one: reordering) to a free worker, which claims.
func (r *run) doDeliver() {
	var ready []int
	for i, n := range r.bag {
		if n.readyAt <= r.step || r.draining {
			ready = append(ready, i)
		}
	}
	pick := ready[0]
	if len(ready) > 1 && !r.draining && r.chance(0.3) {
		pick = ready[1+r.rng.IntN(len(ready)-1)]
		r.fault(FaultNudgeReordered)
	}
	n := r.bag[pick]
	r.bag = slices.Delete(r.bag, pick, pick+1)
	var free []*worker
	for _, w := range r.workers {
		if w.phase == idle && !w.busy {
			free = append(free, w)
		}
	}
	w := free[0]
	if !r.draining {
		w = free[r.rng.IntN(len(free))]
	}
	if r.holder == nil && !r.draining && r.chance(0.15) {
		r.claimInOpenTx(w, n)
		return
	}
	lost := !r.draining && r.chance(0.04)
	r.claimFor(w, n, lost)
}

func (r *run) claimFor(w *worker, n nudge, replyLost bool) { r.claimWith(w, w.ledger, n, replyLost) }

// claimWith is claimFor on ledger l (the worker's, or an operator's with
// other settings).
func (r *run) claimWith(w *worker, l *postgres.Ledger, n nudge, replyLost bool) {
	ref := r.matters[n.m]
	var (
		c   rail.Claim
		ok  bool
		err error
	)
	before := r.snap[n.m]
	w.busy = true
	var blocked bool
	blocked = r.exec(w.app, func() { c, ok, err = r.cfg.Claim(r.ctx, l, w.pool, ref, w.name) }, func() {
		w.busy = false
		r.must(err, w.name+" claim")
		if !ok {
			r.tracef("%s nudge m%d (%s): no claim", w.name, n.m, n.reason)
			return
		}
		r.recordClaim(w, n.m, c, before, blocked)
		if replyLost {
			r.fault(FaultClaimReplyLost)
			r.tracef("%s claim m%d token %d target %d committed but the reply was lost", w.name, n.m, c.Token, c.Target)
			return
		}
		w.phase, w.m, w.claim = claimed, n.m, c
		r.tracef("%s claims m%d (%s): token %d target %d built %d", w.name, n.m, n.reason, c.Token, c.Target, c.Built)
	})
}

func (r *run) recordClaim(w *worker, m int, c rail.Claim, before row, blocked bool) {
	h := &r.hist[m]
	if r.closed[m] {
		r.res.violate(VClaimClosed, "m%d: claim token %d by %s while the matter is closed", m, c.Token, w.name)
	}
	r.res.Claims++
	if r.draining {
		r.res.DrainClaims++
	}
	if c.Token != h.lastToken+1 {
		r.res.violate(VTokenReused, "m%d: claim by %s got token %d after token %d", m, w.name, c.Token, h.lastToken)
	}
	if c.Target <= c.Built {
		r.res.violate(VWastedBuild, "m%d: claim token %d target %d with built %d already", m, c.Token, c.Target, c.Built)
	}
	if !blocked && before.exists && (before.status == rail.StatusQuarantined ||
		(before.status == rail.StatusRunning && !before.leaseExpired)) {
		r.res.violate(VLiveLease, "m%d: claim token %d on a %s row (lease expired %v)", m, c.Token, before.status, before.leaseExpired)
	}
	if h.lastLanded {
		h.fresh++
		r.res.MaxFresh = max(r.res.MaxFresh, h.fresh)
		if h.fresh > 2 {
			r.res.violate(VFollowUps, "m%d: %d builds started since the last demand", m, h.fresh)
		}
	}
	h.lastToken = c.Token
	h.lastLanded = false
}

// ---- workers ----------------------------------------------------------------

func (r *run) load(w *worker) {
	var (
		in  rail.Inputs
		err error
	)
	r.exec(w.app, func() { in, err = r.cfg.Inputs(r.ctx, w.pool, w.claim.MatterRef) }, func() {
		r.must(err, w.name+" load inputs")
		body, err := rail.DigestBuilder{}.Build(r.ctx, in)
		r.must(err, "build")
		w.saw = w.saw[:0]
		for _, d := range in.Manifest {
			w.saw = append(w.saw, d.ID)
		}
		w.frame = rail.Frame{Body: body, Fingerprint: in.FingerprintFor(rail.BuilderIdentity{Name: "digest/v1"}), Builder: "digest/v1", ModelInvoked: true}
		w.phase = built
		r.tracef("%s built m%d token %d from %d documents", w.name, w.m, w.claim.Token, len(w.saw))
	})
}

func (r *run) buildFails(w *worker) {
	var (
		fr  rail.FailResult
		err error
	)
	r.fault(FaultBuildFailed)
	w.busy = true
	r.exec(w.app, func() { fr, err = w.ledger.Fail(r.ctx, w.claim, errors.New("simulated build failure")) }, func() {
		w.busy = false
		switch {
		case errors.Is(err, rail.ErrFenced):
			r.res.Fenced++
			r.tracef("%s build failed; Fail fenced (token %d)", w.name, w.claim.Token)
		case err != nil:
			r.fail("%s fail: %v", w.name, err)
		default:
			r.tracef("%s build failed m%d token %d -> %s after %d attempts", w.name, w.m, w.claim.Token, fr.Status, fr.Attempts)
		}
		w.phase = idle
	})
}

func (r *run) heartbeat(w *worker) {
	var err, markErr error
	w.busy = true
	// MarkRun runs inside the op: an open claim transaction may hold the
	// run row's lock.
	r.exec(w.app, func() {
		if err = w.ledger.Heartbeat(r.ctx, w.claim); errors.Is(err, rail.ErrFenced) {
			markErr = w.ledger.MarkRun(r.ctx, w.claim, "superseded", "sim: heartbeat fenced")
		}
	}, func() {
		w.busy = false
		switch {
		case errors.Is(err, rail.ErrFenced):
			r.res.Fenced++
			r.tracef("%s heartbeat m%d token %d: superseded, stops", w.name, w.m, w.claim.Token)
			r.must(markErr, "mark run")
			w.phase = idle
		case err != nil:
			r.fail("%s heartbeat: %v", w.name, err)
		default:
			r.tracef("%s heartbeat m%d token %d", w.name, w.m, w.claim.Token)
		}
	})
}

func (r *run) crash(w *worker) {
	r.fault(FaultCrash)
	r.tracef("%s crashes (%s, m%d token %d): claim forgotten", w.name, phaseNames[w.phase], w.m, w.claim.Token)
	w.phase, w.stalled = idle, false
}

// landed records a frame that landed, at the moment it landed.
func (r *run) landed(w *worker, how string) {
	m, c := w.m, w.claim
	h := &r.hist[m]
	r.res.FramesLanded++
	if c.Token != h.lastToken {
		r.res.violate(VStaleFrame, "m%d: frame token %d (%s, %s) landed while token %d was current", m, c.Token, w.name, how, h.lastToken)
	}
	if h.frames[c.Token] {
		r.res.violate(VDuplicateFrame, "m%d: second frame for token %d", m, c.Token)
	}
	h.frames[c.Token] = true
	for _, d := range h.demands {
		if d.gen <= c.Target && !slices.Contains(w.saw, d.doc) {
			r.res.violate(VInputsMissed, "m%d: frame token %d target %d did not see document of demand %d", m, c.Token, c.Target, d.gen)
		}
	}
	if c.Target < h.built {
		r.res.violate(VBuiltDecreased, "m%d: frame token %d sets built %d below %d", m, c.Token, c.Target, h.built)
	}
	h.built = max(h.built, c.Target)
	if c.Token == h.lastToken {
		h.lastLanded = true
	}
	r.tracef("%s frame m%d token %d target %d landed (%s)", w.name, m, c.Token, c.Target, how)
}

func (r *run) commitPlain(w *worker) {
	var (
		res rail.CommitResult
		err error
	)
	var markErr error
	w.busy = true
	var blocked bool
	blocked = r.exec(w.app, func() {
		res, err = r.cfg.Commit(r.ctx, w.ledger, w.pool, w.claim, w.frame)
		if errors.Is(err, rail.ErrFenced) {
			markErr = r.markFenced(w)
		}
	}, func() {
		w.busy = false
		if blocked && errors.Is(err, rail.ErrFenced) {
			r.fault(FaultFencedAfterWait)
		}
		r.afterCommit(w, res, err, markErr, "commit")
	})
}

// markIfFenced marks a fenced run; only for callers with no lock holder.
func (r *run) markIfFenced(w *worker, err error) error {
	if errors.Is(err, rail.ErrFenced) {
		return r.markFenced(w)
	}
	return nil
}

func (r *run) markFenced(w *worker) error {
	return w.ledger.MarkRun(r.ctx, w.claim, "fenced", "sim: token stale at commit")
}

// afterCommit applies a commit's outcome. markErr is the fenced run's
// MarkRun result (already run inside the op).
func (r *run) afterCommit(w *worker, res rail.CommitResult, err, markErr error, how string) {
	switch {
	case errors.Is(err, rail.ErrFenced):
		r.res.Fenced++
		r.tracef("%s commit m%d token %d fenced", w.name, w.m, w.claim.Token)
		r.must(markErr, "mark run")
		w.phase = idle
	case err != nil:
		r.fail("%s %s: %v", w.name, how, err)
	default:
		r.landed(w, how)
		w.phase = idle
		if res.FollowUpDue {
			r.send(w.m, rail.ReasonFollowUp)
		}
	}
}

// openCommitTx begins a commit transaction on a dedicated connection.
func (r *run) openCommitTx(w *worker) {
	conn, err := w.pool.Acquire(r.ctx)
	r.must(err, "acquire")
	tx, err := conn.Begin(r.ctx)
	if err != nil {
		conn.Release()
		r.fail("begin: %v", err)
	}
	w.conn, w.tx, w.pid = conn, tx, conn.Conn().PgConn().PID()
}

func (r *run) closeCommitTx(w *worker, dead bool) {
	if dead {
		_ = w.conn.Conn().Close(context.WithoutCancel(r.ctx))
	}
	w.conn.Release()
	w.conn, w.tx, w.pid = nil, nil, 0
}

// kill terminates a backend and waits until it is gone (its transaction
// rolled back and its locks released).
func (r *run) kill(pid uint32) {
	var ok bool
	r.must(r.env.Admin.QueryRow(r.ctx, `SELECT pg_terminate_backend($1)`, int64(pid)).Scan(&ok), "pg_terminate_backend")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		r.must(r.env.Admin.QueryRow(r.ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, int64(pid)).Scan(&n), "poll pid")
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.fail("backend %d did not exit", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// commitStallAfterFence runs the fence in an open transaction and stalls
// there, holding the row lock: others' statements on the row block.
func (r *run) commitStallAfterFence(w *worker) {
	r.openCommitTx(w)
	res, err := r.cfg.Commit(r.ctx, w.ledger, w.tx, w.claim, w.frame)
	if err != nil {
		_ = w.tx.Rollback(r.ctx)
		r.closeCommitTx(w, false)
		r.afterCommit(w, res, err, r.markIfFenced(w, err), "commit tx")
		return
	}
	r.fault(FaultStallAfterFence)
	r.holder = w
	w.phase, w.stalled = inTx, true
	r.tracef("%s fence passed m%d token %d; stalls with the commit tx open", w.name, w.m, w.claim.Token)
	w.pendingFollowUp = res.FollowUpDue
}

// claimInOpenTx claims in a transaction and stalls before COMMIT, holding
// the row lock: a zombie's commit on the row now waits for it.
func (r *run) claimInOpenTx(w *worker, n nudge) {
	r.openCommitTx(w)
	before := r.snap[n.m]
	c, ok, err := r.cfg.Claim(r.ctx, w.ledger, w.tx, r.matters[n.m], w.name)
	if err != nil || !ok {
		_ = w.tx.Rollback(r.ctx)
		r.closeCommitTx(w, false)
		r.must(err, w.name+" claim in tx")
		r.tracef("%s nudge m%d (%s): no claim (in tx)", w.name, n.m, n.reason)
		return
	}
	r.fault(FaultClaimTxOpen)
	r.holder = w
	w.phase, w.stalled, w.m, w.claim, w.claimBefore = claimTx, true, n.m, c, before
	r.tracef("%s claims m%d in an open transaction (token %d target %d) and stalls before COMMIT", w.name, n.m, c.Token, c.Target)
}

// resolveHolder ends the stalled transaction: the worker resumes and
// commits, or the server ends the session (idle-in-transaction timeout).
func (r *run) resolveHolder(commit bool) {
	w := r.holder
	if w.phase == claimTx {
		if commit {
			r.must(w.tx.Commit(r.ctx), "holder claim commit")
			r.closeCommitTx(w, false)
			r.holder = nil
			r.recordClaim(w, w.m, w.claim, w.claimBefore, false)
			r.tracef("%s commits its claim m%d token %d", w.name, w.m, w.claim.Token)
			w.phase, w.stalled = claimed, false
		} else {
			r.fault(FaultKillStalledTx)
			r.kill(w.pid)
			if w.tx.Commit(r.ctx) == nil {
				r.fail("COMMIT on a terminated session succeeded")
			}
			r.closeCommitTx(w, true)
			r.holder = nil
			r.tracef("%s claim tx m%d ended by the server; the claim never happened", w.name, w.m)
			w.phase, w.stalled = idle, false
		}
		r.joinPending()
		return
	}
	if commit {
		err := w.tx.Commit(r.ctx)
		r.must(err, "holder commit")
		r.closeCommitTx(w, false)
		r.holder = nil
		r.landed(w, "commit tx after stall")
		w.phase, w.stalled = idle, false
		r.joinPending()
		if w.pendingFollowUp {
			r.send(w.m, rail.ReasonFollowUp)
		}
		return
	}
	r.fault(FaultKillStalledTx)
	r.kill(w.pid)
	err := w.tx.Commit(r.ctx)
	if err == nil {
		r.fail("COMMIT on a terminated session succeeded")
	}
	r.closeCommitTx(w, true)
	r.holder = nil
	r.tracef("%s commit tx m%d token %d ended by the server; nothing landed", w.name, w.m, w.claim.Token)
	r.joinPending()
	w.phase, w.stalled = unsure, false
}

// commitKilled is one commit transaction whose connection dies at a chosen
// point. The worker then does not know whether its frame landed.
func (r *run) commitKilled(w *worker, when string) {
	r.fault(when)
	r.openCommitTx(w)
	landedNow := false
	var res rail.CommitResult
	var err error
	switch when {
	case FaultKillBeforeFence:
		r.kill(w.pid)
		_, err = r.cfg.Commit(r.ctx, w.ledger, w.tx, w.claim, w.frame)
		if err == nil {
			r.fail("commit on a killed connection succeeded")
		}
	case FaultKillAfterFence:
		res, err = r.cfg.Commit(r.ctx, w.ledger, w.tx, w.claim, w.frame)
		if err != nil {
			_ = w.tx.Rollback(r.ctx)
			r.closeCommitTx(w, false)
			r.afterCommit(w, res, err, r.markIfFenced(w, err), "commit tx")
			return
		}
		r.kill(w.pid)
		if w.tx.Commit(r.ctx) == nil {
			r.fail("COMMIT on a killed connection succeeded")
		}
	case FaultKillAfterCommit:
		res, err = r.cfg.Commit(r.ctx, w.ledger, w.tx, w.claim, w.frame)
		if err != nil {
			_ = w.tx.Rollback(r.ctx)
			r.closeCommitTx(w, false)
			r.afterCommit(w, res, err, r.markIfFenced(w, err), "commit tx")
			return
		}
		r.must(w.tx.Commit(r.ctx), "commit")
		landedNow = true
		r.kill(w.pid)
	}
	r.closeCommitTx(w, true)
	if landedNow {
		r.landed(w, "COMMIT, then the connection died")
	}
	r.tracef("%s connection killed (%s) m%d token %d; outcome unknown to the worker", w.name, when, w.m, w.claim.Token)
	w.phase = unsure
}

// resolve asks the ledger whether the frame landed; it never commits
// blindly a second time.
func (r *run) resolve(w *worker) {
	ok, err := w.ledger.FrameLanded(r.ctx, w.claim)
	r.must(err, "frame landed")
	truth := r.hist[w.m].frames[w.claim.Token]
	if ok != truth {
		r.res.violate(VLandedAnswer, "m%d token %d: FrameLanded %v, history %v", w.m, w.claim.Token, ok, truth)
	}
	if ok {
		r.tracef("%s FrameLanded m%d token %d: yes; done (follow-up left to the sweep)", w.name, w.m, w.claim.Token)
		w.phase = idle
		return
	}
	if r.draining || r.chance(0.5) {
		r.fault(FaultRecommitAfterCheck)
		r.tracef("%s FrameLanded m%d token %d: no; commits again", w.name, w.m, w.claim.Token)
		w.phase = built
		return
	}
	r.tracef("%s FrameLanded m%d token %d: no; gives up (the lease recovers it)", w.name, w.m, w.claim.Token)
	w.phase = idle
}

// ---- sweeper and time ------------------------------------------------------

func (r *run) doSweep() {
	if r.holder != nil {
		r.fault(FaultSweepDuringCommit)
	}
	var (
		rep postgres.SweepReport
		err error
	)
	r.sweepBusy = true
	r.exec(AppName("sweeper"), func() { rep, err = r.sweeper.Sweep(r.ctx, 0) }, func() {
		r.sweepBusy = false
		r.must(err, "sweep")
		var ms []int
		for _, ref := range rep.Renudge {
			m, ok := r.byID[ref.MatterID]
			if !ok {
				r.fail("sweep listed a matter of no run: %s", ref)
			}
			ms = append(ms, m)
		}
		r.tracef("sweep: %d quarantined, %d expiries, renudge %v", len(rep.Quarantined), rep.LeaseExpiries, ms)
		if r.cfg.NoSweepNudges {
			return
		}
		for _, m := range ms {
			r.send(m, rail.ReasonSweep)
		}
	})
}

// timeTravel moves every timestamp the ledger compares back by d, as if d
// had passed. The runs and frames tables keep real times.
func (r *run) timeTravel(d time.Duration) {
	_, err := r.env.Admin.Exec(r.ctx, `UPDATE ops.matter_frame_jobs SET
        claimed_at = claimed_at - make_interval(secs => $1),
        not_before = not_before - make_interval(secs => $1),
        last_demanded_at = last_demanded_at - make_interval(secs => $1),
        demand_since = demand_since - make_interval(secs => $1)`, d.Seconds())
	r.must(err, "time travel")
	_, err = r.env.Admin.Exec(r.ctx, `UPDATE ops.domain_event_outbox
        SET next_attempt_at = next_attempt_at - make_interval(secs => $1) WHERE next_attempt_at IS NOT NULL`, d.Seconds())
	r.must(err, "time travel (outbox)")
	_, err = r.env.Admin.Exec(r.ctx, `UPDATE ops.relay_lease
        SET lease_until = lease_until - make_interval(secs => $1) WHERE lease_until IS NOT NULL`, d.Seconds())
	r.must(err, "time travel (relay lease)")
}

func (r *run) doTick() {
	r.fault(FaultClockTick)
	r.timeTravel(tickStep)
	r.tracef("clock +%v", tickStep)
}

func (r *run) doExpireLease() {
	var ms []int
	for i, s := range r.snap {
		if s.status == rail.StatusRunning && (r.holder == nil || r.holder.m != i) {
			ms = append(ms, i)
		}
	}
	m := ms[r.rng.IntN(len(ms))]
	ref := r.matters[m]
	_, err := r.env.Admin.Exec(r.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - make_interval(secs => $3)
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID, (r.cfg.Ledger.Lease + 30*time.Second).Seconds())
	r.must(err, "expire lease")
	r.fault(FaultLeaseExpired)
	r.tracef("lease of m%d expires (token %d)", m, r.snap[m].claimed)
}

func (r *run) doExpireBackoff() {
	var ms []int
	for i, s := range r.snap {
		if s.status == rail.StatusIdle && s.backoffSet && !s.backoffDue {
			ms = append(ms, i)
		}
	}
	m := ms[r.rng.IntN(len(ms))]
	ref := r.matters[m]
	_, err := r.env.Admin.Exec(r.ctx, `UPDATE ops.matter_frame_jobs SET not_before = not_before - make_interval(secs => $3)
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID, (r.cfg.Ledger.BackoffMax + 30*time.Second).Seconds())
	r.must(err, "expire backoff")
	r.fault(FaultBackoffExpired)
	r.tracef("backoff of m%d passes", m)
}

// ---- closed matters ---------------------------------------------------------

func (r *run) openMatters() []int {
	var out []int
	for m, c := range r.closed {
		if !c {
			out = append(out, m)
		}
	}
	return out
}

// doCloseMatter closes an open matter, preferring one a worker holds a
// claim on (closed mid-build: that build may still land; the demand it
// does not cover is held until the matter is re-opened).
func (r *run) doCloseMatter() {
	open := r.openMatters()
	m := open[r.rng.IntN(len(open))]
	for _, w := range r.workers {
		if (w.phase == claimed || w.phase == built || w.phase == unsure) && !r.closed[w.m] && r.chance(0.7) {
			m = w.m
			r.fault(FaultClosedMidBuild)
			break
		}
	}
	r.must(postgres.SetMatterStatus(r.ctx, r.env.Admin, r.matters[m], "closed"), "close matter")
	r.closed[m] = true
	r.fault(FaultMatterClosed)
	r.tracef("m%d closed (%s)", m, r.describeRow(m))
}

func (r *run) doReopenMatter() {
	var closed []int
	for m, c := range r.closed {
		if c {
			closed = append(closed, m)
		}
	}
	r.reopen(closed[r.rng.IntN(len(closed))])
}

// reopen re-opens m: its held demand is served again (the sweeper's next
// pass re-nudges it), aged from now.
func (r *run) reopen(m int) {
	r.must(postgres.SetMatterStatus(r.ctx, r.env.Admin, r.matters[m], "open"), "re-open matter")
	r.closed[m] = false
	r.fault(FaultMatterReopened)
	r.tracef("m%d re-opened (%s)", m, r.describeRow(m))
}

func (r *run) describeRow(m int) string {
	x := r.snap[m]
	return fmt.Sprintf("req %d tgt %d built %d %s", x.requested, x.target, x.built, x.status)
}

// checkGauges compares the on-call gauges with the snapshot and the
// history of closures: a closed matter's demand is held (counted apart,
// never as unserved: no false alarm), an open matter's unbuilt demand is
// unserved (no missing alarm).
func (r *run) checkGauges() {
	g, err := r.cfg.Gauges(r.ctx, r.admin)
	r.must(err, "gauges")
	var behind, closedHeld, quarantined int
	for m, s := range r.snap {
		if !s.exists || s.requested == s.built && s.status != rail.StatusQuarantined {
			continue
		}
		switch {
		case r.closed[m]:
			closedHeld++
		case s.status == rail.StatusQuarantined:
			quarantined++
		default:
			behind++
		}
	}
	if g.MattersBehind != behind || g.MattersClosedWithDemand != closedHeld || g.MattersQuarantined != quarantined ||
		(g.OldestUnservedDemandSeconds > 0) != (behind > 0) {
		r.res.violate(VGauges, "step %d: gauges %+v; history: %d open behind, %d closed holding demand, %d quarantined",
			r.step, g, behind, closedHeld, quarantined)
	}
}
