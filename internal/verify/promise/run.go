package promise

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/aws/bedrock"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
)

// Config is one run (one seed).
type Config struct {
	Seed  uint64
	Steps int // steps of the fault phase; default DefaultSteps
	// Template is the SAM template the local wiring is read from.
	Template string
	// Disabled kinds are never injected.
	Disabled map[Kind]bool
	// Force: each of these kinds' scenario is played once in the fault
	// phase (a defect's negative-control row), besides the random ones.
	Force []Kind
	// Trace keeps every step's trace line (otherwise the last 200).
	Trace bool
	// Revert switches off the fix of each defect of issue 18 listed (by
	// number) through the seam its fixer left (Reverts): a negative control.
	Revert map[int]bool
}

// Reverts are the seams that switch a merged fix of issue 18 off in the
// assembled handlers, by defect number (defect 2's is the oracle's own
// wrapper, heldOutbox: its fix is a structure, not a switch). A defect
// whose fix has not merged has none (its kind is in PendingFixes instead).
var Reverts = map[int]string{
	1: "rail.Trigger.DropHeld: a closed matter's demand in flight acknowledged without demand",
	5: "rail.Worker.AmbiguousRefusals: no CheckStorable, a refused commit treated as a lost connection",
	2: "heldOutbox around rail.Relay.Outbox: a transaction on the relay's role open from the claim across PutEvents to the marks, which die with it",
	3: "rail.Relay.Permanent = every error: any refusal counts toward parking, as before the fix",
	6: "postgres.Ledger.SwallowingUncovered on the builder's and the sweeper's ledgers: quarantine swallows demand of the last attempt",
	4: "rail.Reverts.BackfillOnLiveQueue and UnboundedBackfill (app.Deps.Reverts): backfill-only demand re-nudged on the live queue, admission bounded by the rate alone",
	8: "rail.Reverts.NoRetryNudge (app.Deps.Reverts): no nudge at the end of a failed build's backoff",
	9: "rail.Reverts.MinuteCappedCredit (app.Deps.Reverts): the backfill's bucket holds one minute's worth, so a rate below 1/min admits nothing",
}

// railReverts is what Config.Revert asks of the seams pkg/app hands to the
// sweeper, the backfill and the builder (app.Deps.Reverts).
func (c Config) railReverts() rail.Reverts {
	return rail.Reverts{BackfillOnLiveQueue: c.Revert[4], UnboundedBackfill: c.Revert[4],
		NoRetryNudge: c.Revert[8], MinuteCappedCredit: c.Revert[9]}
}

// revert applies Config.Revert to the freshly assembled handlers.
func (r *run) revert() {
	if r.cfg.Revert[1] {
		r.trigger.Trigger.DropHeld = true
	}
	if r.cfg.Revert[2] {
		r.relay.Relay.Outbox = &heldOutbox{Outbox: r.relay.Relay.Outbox, pool: r.env.Pools[RoleRelay]}
		// Before the fix the pass published until its budget, equal to the
		// role's idle timeout, ran out; the fixed relay starts no call that
		// would outlast its budget, so the revert gives the pass twice the
		// idle timeout to publish in, as the old relay's calls ran past it.
		r.budget = 2 * r.env.RoleSettings[RoleRelay]["idle_in_transaction_session_timeout"]
		r.relay.Relay.PublishTimeout = r.budget
	}
	if r.cfg.Revert[3] {
		r.relay.Relay.Permanent = func(error) bool { return true }
	}
	if r.cfg.Revert[5] {
		r.builder.Worker.AmbiguousRefusals = true
	}
	if r.cfg.Revert[6] {
		l, ok := r.builder.Worker.Ledger.(*postgres.Ledger)
		if !ok {
			r.must(fmt.Errorf("the builder's ledger is a %T", r.builder.Worker.Ledger), "revert 6")
		}
		r.builder.Worker.Ledger = l.SwallowingUncovered()
		sl, ok := r.sweeper.Sweeper.Ledger.(*postgres.Ledger)
		if !ok {
			r.must(fmt.Errorf("the sweeper's ledger is a %T", r.sweeper.Sweeper.Ledger), "revert 6")
		}
		r.sweeper.Sweeper.Ledger = sl.SwallowingUncovered()
	}
	for d := range r.cfg.Revert {
		if _, ok := Reverts[d]; !ok {
			r.must(fmt.Errorf("no seam reverts defect %d's fix", d), "revert")
		}
	}
}

// DefaultSteps is the fault phase's length.
const DefaultSteps = 70

func (c Config) on(k Kind) bool { return !c.Disabled[k] }

// Timings of the simulated deployment (fake time, except where said).
const (
	sweepEvery   = time.Minute      // the sweeper's schedule
	maxFaultTick = 20 * time.Second // the longest tick of the fault phase
	quietTick    = 20 * time.Second // quiescence ticks
	quiesceFor   = 25 * time.Minute // the quiescence bound (a lease, the sweeper's grace, a relay backoff cap)
	triggerTO    = 30 * time.Second // the functions' timeouts (template.yaml)
	builderTO    = 600 * time.Second
	// builderBatch: nudges per builder invocation, the template's
	// BatchSize for the build and backfill queues' event source mappings.
	// A batch of more than one goes through the batch path
	// (Ledger.ClaimBatch, Ledger.LoadBuilds, one goroutine per claim); the
	// oracle's stand-ins (the Brief builder, the ledger port and the
	// nudgers in front of the handler) take turns, so the builds of one
	// invocation act one at a time in their claims' order and a seed still
	// replays (turns.go; doc.go, "Determinism").
	builderBatch = 10
	relayTO      = 60 * time.Second
	sweeperTO    = 60 * time.Second
)

// fakeClock is the queues' clock; advance moves the database's record of
// time back by the same amount (the database clock is never replaced).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// invocation is what the hops saw during the current function invocation.
type invocation struct {
	calls, accepted int
	busLatency      time.Duration
	killed          bool
	built           []rail.MatterRef
	// backfill: the builder invocation took its nudge off the backfill
	// queue.
	backfill bool
	// unsent: matters whose nudge this invocation failed to send (a
	// failed build's retry nudge among them, sent before afterBuild
	// records the failure).
	unsent []rail.MatterRef
}

// failure is a failed build waiting for its retry.
type failure struct {
	at      time.Time
	backoff time.Duration
	excused bool
	// bySweeper: a backfill build failed; its retry is the sweeper's
	// re-nudge onto the backfill queue (the builder nudges only the live
	// queue), due after the backoff and the sweeper's grace.
	bySweeper bool
}

type run struct {
	ctx   context.Context
	env   *Env
	cfg   Config
	rng   *rand.Rand
	res   *Result
	clock *fakeClock
	step  int
	quiet bool // faults off

	wiring                          *localbus.Wiring
	transport                       app.Transport
	relay                           *lambdafn.RelayHandler
	trigger                         *lambdafn.TriggerHandler
	builder                         *lambdafn.BuilderHandler
	sweeper                         *lambdafn.SweeperHandler
	triggerQ, buildQ, backfillQ, tq *localbus.Queue
	triggerDLQ                      *localbus.Queue

	model       string
	identity    rail.BuilderIdentity
	rate        string // RAIL_BACKFILL_RATE
	maxAttempts int
	settle      time.Duration
	budget      time.Duration // the relay's publish budget, scaled

	matters []rail.MatterRef
	closed  map[rail.MatterRef]bool
	docs    map[rail.MatterRef][]uuid.UUID
	poison  map[uuid.UUID]bool
	// refusals: per event, each refusal the bus gave (true: permanent).
	refusals  map[uuid.UUID][]bool
	published map[uuid.UUID]int

	inv        invocation
	lastSweep  time.Time
	stormUntil time.Time
	saturated  time.Time // live builders take no nudges until then
	bfStuck    time.Time // backfill builders take no nudges until then
	slowPast   int       // relay invocations left with the bus slower than the budget allows
	w6         *rail.MatterRef
	w6Done     bool
	refuseNext rail.MatterRef
	failNext   rail.MatterRef
	// frozen matters get no host workflow until the time given (the
	// backfill, not live demand, must bring them up to date).
	frozen     map[rail.MatterRef]time.Time
	dlq        map[uuid.UUID]bool
	identities int
	seenRuns   map[string]bool
	failures   map[rail.MatterRef]*failure
	// turns: the builds of one builder invocation act one at a time
	// (turns.go).
	turns *turns
}

// Run plays one seed on env and checks the promise.
func Run(ctx context.Context, env *Env, cfg Config) *Result {
	if cfg.Steps <= 0 {
		cfg.Steps = DefaultSteps
	}
	r := &run{ctx: ctx, env: env, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x70726f6d697365)),
		res:    &Result{Seed: cfg.Seed, Faults: map[Kind]int{}, Timing: map[string]time.Duration{}},
		clock:  &fakeClock{t: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)},
		closed: map[rail.MatterRef]bool{}, frozen: map[rail.MatterRef]time.Time{}, docs: map[rail.MatterRef][]uuid.UUID{}, poison: map[uuid.UUID]bool{},
		refusals: map[uuid.UUID][]bool{}, published: map[uuid.UUID]int{}, seenRuns: map[string]bool{},
		failures: map[rail.MatterRef]*failure{}, model: "sim-model-1", rate: "30"}
	r.turns = newTurns(r)
	defer func() {
		if x := recover(); x != nil {
			if _, ok := x.(harnessAbort); !ok {
				r.violate(VHarness, "panic: %v", x)
			}
		}
		r.res.Steps = r.step
	}()
	if len(cfg.Force) == 0 && r.rng.Float64() < ScenarioShare {
		// Some seeds of the default run play one scenario too, so the
		// scenarios' paths run with the fixes on.
		var on []Kind
		for _, k := range Scenarios {
			if cfg.on(k) {
				on = append(on, k)
			}
		}
		if len(on) > 0 {
			r.cfg.Force = []Kind{on[r.rng.IntN(len(on))]}
			cfg = r.cfg
		}
	}
	if slices.Contains(cfg.Force, WBackfillSlowRate) {
		r.rate = "0.5"
	}
	r.setup()
	forceAt := cfg.Steps / 3
	for r.step = 1; r.step <= cfg.Steps || r.clock.Now().Before(r.stormUntil) || r.clock.Now().Before(r.bfStuck) || r.w6pending(); r.step++ {
		if r.step == forceAt {
			for _, k := range cfg.Force {
				r.force(k)
			}
		}
		if r.step > cfg.Steps {
			r.tick(maxFaultTick) // a scenario still playing out: time passes
		} else {
			r.randomStep()
		}
		if r.step > cfg.Steps+300 {
			break
		}
	}
	// Quiescence: faults off (a poison fact stays refused: that is what
	// permanent means), schedules run until nothing is left.
	r.quiet = true
	r.stormUntil, r.saturated, r.bfStuck, r.slowPast, r.w6 = time.Time{}, time.Time{}, time.Time{}, 0, nil
	r.tracef("quiescence (closed matters stay closed)")
	r.quiesce()
	if len(r.closed) == 0 {
		r.checkEnd(true) // nothing to re-open
		return r.res
	}
	r.checkEnd(false)
	for _, m := range r.matters {
		if r.closed[m] {
			r.reopen(m)
		}
	}
	r.tracef("quiescence after re-opening every closed matter")
	r.quiesce()
	r.checkEnd(true)
	return r.res
}

// harnessAbort stops a run after a harness error.
type harnessAbort struct{}

func (r *run) must(err error, what string) {
	if err != nil {
		r.violate(VHarness, "%s: %v", what, err)
		panic(harnessAbort{})
	}
}

func (r *run) violate(kind, format string, args ...any) {
	v := Violation{Kind: kind, Step: r.step, Detail: fmt.Sprintf(format, args...)}
	r.res.Violations = append(r.res.Violations, v)
	r.tracef("VIOLATION %s: %s", kind, v.Detail)
}

func (r *run) tracef(format string, args ...any) {
	line := fmt.Sprintf("%4d %s %s", r.step, r.clock.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	r.res.Trace = append(r.res.Trace, line)
	if !r.cfg.Trace && len(r.res.Trace) > 400 {
		r.res.Trace = slices.Delete(r.res.Trace, 0, 200)
	}
}

func (r *run) note(k Kind) { r.res.Faults[k]++ }

// timed adds the time until the returned func is called to Result.Timing.
func (r *run) timed(what string) func() {
	start := time.Now()
	return func() { r.res.Timing[what] += time.Since(start) }
}

// faulty: the fault phase.
func (r *run) faulty() bool { return !r.quiet }

// chance draws one fault decision for k (never for a disabled kind; the
// draw is taken either way, so disabling a kind does not shift the rest of
// the seed's choices).
func (r *run) chance(k Kind, p float64) bool {
	hit := r.rng.Float64() < p
	if !hit || !r.cfg.on(k) {
		return false
	}
	r.note(k)
	return true
}

func short(ref rail.MatterRef) string { return ref.MatterID.String()[:8] }

func (r *run) newUUID() uuid.UUID {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b)
}

// ---------------------------------------------------------------- setup

func (r *run) setup() {
	defer r.timed("setup")()
	_, err := r.env.Admin.Exec(r.ctx, resetSQL)
	r.must(err, "reset tables")
	r.identity = bedrock.Identity(r.model)
	r.assemble()
	n := 2 + r.rng.IntN(3)
	firm := r.newUUID()
	for i := range n {
		ref := rail.MatterRef{FirmID: firm, MatterID: r.newUUID()}
		_, err := record.NewMatter(r.ctx, r.env.Admin, ref, "Matter "+strconv.Itoa(i+1))
		r.must(err, "create matter")
		r.matters = append(r.matters, ref)
	}
	r.lastSweep = r.clock.Now()
	r.tracef("setup: %d matters, model %s, backfill rate %s/min", n, r.model, r.rate)
}

// getenv is the functions' environment (template.yaml's, for the parts
// that matter here).
func (r *run) getenv(k string) string {
	return map[string]string{
		lambdafn.EnvBuildQueueURL: "local:" + app.BuildQueueID, lambdafn.EnvBackfillQueue: "local:" + app.BackfillQueueID,
		lambdafn.EnvBriefBuilder: "bedrock", lambdafn.EnvBedrockModelID: r.model, lambdafn.EnvBackfillRate: r.rate,
	}[k]
}

// assemble builds the four functions' handlers as pkg/app assembles them,
// each over its own role's pool, on the local transport (built once) with
// the fault points in front of the bus and the nudgers.
func (r *run) assemble() {
	defer r.timed("assemble")()
	if r.wiring == nil {
		cfg, err := lambdafn.LoadConfig(lambdafn.Relay, r.getenv)
		r.must(err, "relay config")
		w, err := app.LocalWiring(r.cfg.Template, cfg, 1, 0)
		r.must(err, "local wiring")
		for _, q := range w.Queues {
			q.SetClock(r.clock.Now)
		}
		r.wiring = w
		t := app.LocalTransport(w, r.onNudge)
		t.Publisher = &faultBus{r: r, next: t.Publisher}
		t.Nudger = &faultNudger{r: r, next: t.Nudger}
		t.BackfillNudger = &faultNudger{r: r, next: t.BackfillNudger}
		r.transport = t
		r.triggerQ, r.buildQ, r.backfillQ = w.Queue(app.TriggerQueueID), w.Queue(app.BuildQueueID), w.Queue(app.BackfillQueueID)
		r.triggerDLQ = w.Queue(r.triggerQ.Config().DLQ.Name())
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	one := func(fn, role string) *app.Rail {
		cfg, err := lambdafn.LoadConfig(fn, r.getenv)
		r.must(err, fn+" config")
		a, err := app.Assemble(cfg, app.Deps{Pool: r.env.Pools[role], Transport: r.transport, Builder: &simBuilder{r: r}, Log: log,
			Reverts: r.cfg.railReverts()})
		r.must(err, "assemble "+fn)
		if fn == lambdafn.Builder {
			r.maxAttempts, r.settle = cfg.MaxAttempts, cfg.SettleDelay
		}
		return a
	}
	r.relay = one(lambdafn.Relay, RoleRelay).Relay
	r.trigger = one(lambdafn.Trigger, RoleTrigger).Trigger
	r.builder = one(lambdafn.Builder, RoleBuilder).Builder
	r.sweeper = one(lambdafn.Sweeper, RoleSweeper).Sweeper
	// One relay pass per invocation (the scheduler decides how often the
	// relay runs), and the publish budget scaled like the role's timeouts.
	r.relay.Window = time.Nanosecond
	p := r.relay.Relay.PublishTimeout
	if p <= 0 {
		p = rail.DefaultRelayPublishTimeout
	}
	r.budget = time.Duration(float64(p) * r.env.Scale)
	r.relay.Relay.PublishTimeout = r.budget
	r.revert()
	r.builder.Worker.Ledger = &turnLedger{Ledger: r.builder.Worker.Ledger, t: r.turns}
	r.builder.Worker.BeforeCommit = r.turns.beforeCommit
}

// ---------------------------------------------------------------- steps

func (r *run) randomStep() {
	type act struct {
		w  float64
		fn func()
	}
	acts := []act{
		{0.20, func() { r.uploadSome(1, WUploadOne) }},
		{0.06, func() { r.uploadSome(2+r.rng.IntN(3), WUploadMany) }},
		{0.05, r.closeSome},
		{0.05, r.reopenSome},
		{0.05, r.regenerate},
		{0.015, func() {
			if r.identities == 0 {
				r.changeIdentity()
				for _, m := range r.matters { // some matters are left to the backfill
					if r.rng.IntN(2) == 0 {
						r.frozen[m] = r.clock.Now().Add(4 * time.Minute)
					}
				}
			}
		}},
		{0.30, func() { r.tick(time.Duration(1+r.rng.IntN(4)) * 5 * time.Second) }},
		{0.08, r.invokeRelay},
		{0.08, r.drainTrigger},
		{0.08, func() { r.pollBuilds(r.buildQ, builderBatch) }},
		{0.03, func() { r.pollBuilds(r.backfillQ, builderBatch) }},
		{0.02, r.invokeSweeper},
		{0.01, func() {
			if r.chance(FBuildersSaturated, 1) {
				r.saturated = r.clock.Now().Add(time.Duration(1+r.rng.IntN(3)) * time.Minute)
				for m := range r.failures {
					r.excuse(m)
				}
				r.tracef("live builders saturated until %s", r.saturated.Format("15:04:05"))
			}
		}},
	}
	total := 0.0
	for _, a := range acts {
		total += a.w
	}
	x := r.rng.Float64() * total
	for _, a := range acts {
		if x < a.w {
			a.fn()
			return
		}
		x -= a.w
	}
}

// tick lets d pass and runs what runs by itself in that time: the relay,
// the trigger and the builders on their queues, the sweeper on its minute.
func (r *run) tick(d time.Duration) {
	r.advance(d)
	r.invokeRelay()
	r.drainTrigger()
	r.drainBuilds()
	if r.clock.Now().Sub(r.lastSweep) >= sweepEvery {
		r.invokeSweeper()
	}
}

func (r *run) advance(d time.Duration) {
	defer r.timed("advance")()
	r.clock.add(d)
	_, err := r.env.Admin.Exec(r.ctx, `SELECT promise_sim.travel($1)`, d.Seconds())
	r.must(err, "time travel")
}

func (r *run) drainBuilds() {
	// A failed build whose retry waits on saturated builders is excused
	// (the live queue's for a live build, the backfill queue's for a
	// backfill build), whenever it failed: a poll outside the drain (a
	// random step) can fail a build while its queue's builders are
	// saturated.
	if r.clock.Now().After(r.saturated) {
		for range 20 {
			if r.pollBuilds(r.buildQ, builderBatch) == 0 {
				break
			}
		}
	} else {
		r.excuseFailures(false)
	}
	if r.clock.Now().After(r.bfStuck) {
		for range 20 {
			if r.pollBuilds(r.backfillQ, builderBatch) == 0 {
				break
			}
		}
	} else {
		r.excuseFailures(true)
	}
}

// excuseFailures excuses the pending failed builds of the backfill
// (bySweeper) or of live demand.
func (r *run) excuseFailures(bySweeper bool) {
	for _, f := range r.failures {
		if f.bySweeper == bySweeper {
			f.excused = true
		}
	}
}

// ---------------------------------------------------------------- the host application

// openMatters: the open matters the host application may touch now.
func (r *run) openMatters() []rail.MatterRef {
	var out []rail.MatterRef
	for _, m := range r.matters {
		if !r.closed[m] && !r.clock.Now().Before(r.frozen[m]) {
			out = append(out, m)
		}
	}
	return out
}

func (r *run) pick(ms []rail.MatterRef) (rail.MatterRef, bool) {
	if len(ms) == 0 {
		return rail.MatterRef{}, false
	}
	return ms[r.rng.IntN(len(ms))], true
}

func (r *run) uploadSome(n int, k Kind) {
	if m, ok := r.pick(r.openMatters()); ok {
		r.note(k)
		r.upload(m, n)
	}
}

// upload stores n documents on m in one transaction, each with its
// document.uploaded fact (pkg/record: what an upload does).
func (r *run) upload(m rail.MatterRef, n int) {
	var ids []uuid.UUID
	err := pgx.BeginFunc(r.ctx, r.env.Admin, func(tx pgx.Tx) error {
		for range n {
			id := r.newUUID()
			page := fmt.Sprintf("page text %d", len(r.docs[m])+len(ids)+1)
			if _, err := record.AddDocument(r.ctx, tx, m, rail.NewDocument{ID: id, Name: "doc-" + id.String()[:8] + ".pdf",
				Pages: []string{page}}); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	r.must(err, "upload")
	for _, id := range ids {
		if r.faulty() && r.chance(FBusPermanent, 0.03) {
			r.poison[id] = true
		}
	}
	r.docs[m] = append(r.docs[m], ids...)
	r.res.Uploads += n
	r.tracef("upload %d document(s) to %s", n, short(m))
}

// inFlight: a demand fact of m has not reached the trigger yet (no inbox
// row).
func (r *run) inFlight(m rail.MatterRef) bool {
	var n int
	err := r.env.Admin.QueryRow(r.ctx, `SELECT count(*) FROM ops.domain_event_outbox o
        WHERE o.firm_id = $1 AND o.matter_id = $2 AND o.event_name = ANY($3::text[]) AND o.parked_at IS NULL
          AND NOT EXISTS (SELECT FROM ops.trigger_inbox i WHERE i.event_id = o.event_id)`,
		m.FirmID, m.MatterID, demandFacts).Scan(&n)
	r.must(err, "in flight")
	return n > 0
}

var demandFacts = []string{rail.FactDocumentUploaded, rail.FactDocumentRemoved, rail.FactRegenerationRequested}

func (r *run) closeSome() {
	m, ok := r.pick(r.openMatters())
	if !ok {
		return
	}
	if r.inFlight(m) {
		if !r.cfg.on(WCloseInFlight) {
			return // the defect-1 workflow, switched off
		}
		r.note(WCloseInFlight)
	} else {
		r.note(WClose)
	}
	r.closeMatter(m)
}

func (r *run) closeMatter(m rail.MatterRef) {
	r.must(postgres.SetMatterStatus(r.ctx, r.env.Admin, m, "closed"), "close")
	r.closed[m] = true
	r.excuse(m)
	r.tracef("close %s", short(m))
}

func (r *run) reopenSome() {
	var closed []rail.MatterRef
	for _, m := range r.matters {
		if r.closed[m] && !r.clock.Now().Before(r.frozen[m]) {
			closed = append(closed, m)
		}
	}
	if m, ok := r.pick(closed); ok {
		r.note(WReopen)
		r.reopen(m)
	}
}

func (r *run) reopen(m rail.MatterRef) {
	r.must(postgres.SetMatterStatus(r.ctx, r.env.Admin, m, "open"), "re-open")
	delete(r.closed, m)
	r.tracef("re-open %s", short(m))
}

func (r *run) regenerate() {
	if m, ok := r.pick(r.openMatters()); ok {
		r.note(WRegenerate)
		_, err := record.Regenerate(r.ctx, r.env.Admin, m)
		r.must(err, "regenerate")
		r.tracef("Regenerate %s", short(m))
	}
}

// changeIdentity deploys another builder identity (a new model): the
// builder and the sweeper are reassembled with it.
func (r *run) changeIdentity() {
	r.note(WIdentityChange)
	r.identities++
	r.model = fmt.Sprintf("sim-model-%d", r.identities+1)
	r.identity = bedrock.Identity(r.model)
	r.assemble()
	r.tracef("builder identity -> %s", r.identity)
}

// ---------------------------------------------------------------- the functions

func (r *run) startInvocation() { r.inv = invocation{} }

// invokeRelay invokes the relay function once, as its schedule does.
func (r *run) invokeRelay() {
	defer r.timed("invokeRelay")()
	saved := r.inv
	defer func() { r.inv = saved }() // the relay may run inside a build (demand during a build)
	r.startInvocation()
	// The bus's latency is set against the relay role's idle timeout (not
	// the relay's own budget, which a fix may change): two calls at 0.6 of
	// it outlast it; a call at 1/40 of it never matters.
	idle := r.env.RoleSettings[RoleRelay]["idle_in_transaction_session_timeout"]
	if r.slowPast > 0 {
		r.slowPast--
		r.inv.busLatency = idle * 6 / 10
		r.note(FBusSlowPastBudget)
	} else if r.faulty() && r.chance(FBusSlow, 0.05) {
		r.inv.busLatency = idle / 40
	}
	ctx, cancel := context.WithTimeout(r.ctx, relayTO)
	defer cancel()
	res, err := r.relay.Handle(ctx, lambdafn.ScheduleEvent{Source: app.ScheduleSource, Task: lambdafn.Relay})
	r.res.RelayInvocations++
	if res.Published > 0 || res.Failed > 0 || err != nil || r.inv.calls > 0 {
		r.tracef("relay: published %d failed %d parked %d backlog %d (bus calls %d accepted %d latency %v) err=%v",
			res.Published, res.Failed, res.Parked, res.Backlog, r.inv.calls, r.inv.accepted, r.inv.busLatency, err)
	}
	if r.inv.accepted > 0 && res.Published == 0 && !r.inv.killed {
		r.violate(VRelayLivelock, "the bus accepted %d entries in %d calls (latency %v, budget %v), none marked; backlog %d",
			r.inv.accepted, r.inv.calls, r.inv.busLatency, r.budget, res.Backlog)
	}
}

// drainTrigger runs the trigger function on its queue until it is empty
// (at most 20 batches).
func (r *run) drainTrigger() {
	for range 20 {
		if r.pollTrigger() == 0 {
			return
		}
	}
}

func (r *run) pollTrigger() int {
	defer r.timed("pollTrigger")()
	msgs, err := r.triggerQ.Receive(r.ctx, 10, 0)
	r.must(err, "receive trigger queue")
	if len(msgs) == 0 {
		return 0
	}
	if r.faulty() {
		if r.chance(FTriggerDuplicate, 0.05) {
			m := msgs[r.rng.IntN(len(msgs))]
			_, err := r.triggerQ.Send(m.Body, 0, m.Attributes["AWSTraceHeader"])
			r.must(err, "duplicate")
		}
		if len(msgs) > 1 && r.chance(FTriggerReorder, 0.15) {
			r.rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
		}
		if r.chance(FTriggerDelay, 0.05) {
			i := r.rng.IntN(len(msgs))
			r.must(r.triggerQ.ChangeVisibility(msgs[i].ReceiptHandle, time.Duration(10+r.rng.IntN(50))*time.Second), "delay")
			msgs = slices.Delete(msgs, i, i+1)
			if len(msgs) == 0 {
				return 1
			}
		}
	}
	var unlock func()
	if r.faulty() && r.chance(FLockTimeout, 0.03) {
		unlock = r.holdJobRows()
	}
	if r.faulty() && r.chance(FTriggerConnsKilled, 0.02) {
		r.killRole(RoleTrigger)
	}
	ctx, cancel := context.WithTimeout(r.ctx, triggerTO)
	resp, err := r.trigger.Handle(ctx, events.SQSEvent{Records: msgs})
	cancel()
	if unlock != nil {
		unlock()
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	if err != nil {
		for _, m := range msgs {
			failed[m.MessageId] = true
		}
	}
	if r.faulty() && r.chance(FPartialBatch, 0.05) {
		failed[msgs[r.rng.IntN(len(msgs))].MessageId] = true // processed, but its delete is lost: redelivered
	}
	for _, m := range msgs {
		if !failed[m.MessageId] {
			_ = r.triggerQ.Delete(m.ReceiptHandle)
		}
	}
	r.tracef("trigger: %d message(s), %d to retry, err=%v", len(msgs), len(failed), err)
	return len(msgs)
}

// holdJobRows locks every ledger row from the harness's own transaction,
// so the next statement that needs one waits and is cancelled by its
// role's lock timeout. It returns the release.
func (r *run) holdJobRows() func() {
	tx, err := r.env.Admin.Begin(r.ctx)
	r.must(err, "lock rows")
	_, err = tx.Exec(r.ctx, `SELECT 1 FROM ops.matter_frame_jobs FOR UPDATE`)
	r.must(err, "lock rows")
	for _, m := range r.matters {
		r.excuse(m)
	}
	return func() { _ = tx.Rollback(r.ctx) }
}

// pollBuilds runs the builder function on one batch of up to batch nudges
// from q, as the event source mapping does (builderBatch). A nudge lost or
// delayed by a fault is taken out of the batch; the rest are handed to the
// invocation.
func (r *run) pollBuilds(q *localbus.Queue, batch int) int {
	defer r.timed("pollBuilds")()
	msgs, err := q.Receive(r.ctx, batch, 0)
	r.must(err, "receive "+q.Name())
	received := len(msgs)
	if received == 0 {
		return 0
	}
	refOf := func(m events.SQSMessage) rail.MatterRef {
		var nd rail.Nudge
		_ = jsonUnmarshal(m.Body, &nd)
		return nd.Ref()
	}
	if r.faulty() {
		switch {
		case r.chance(FNudgeLost, 0.04):
			r.excuse(refOf(msgs[0]))
			_ = q.Delete(msgs[0].ReceiptHandle)
			r.tracef("%s: nudge for %s lost", q.Name(), short(refOf(msgs[0])))
			msgs = msgs[1:]
		case r.chance(FNudgeDuplicate, 0.04):
			_, err := q.Send(msgs[0].Body, 0, "")
			r.must(err, "duplicate nudge")
		case r.chance(FNudgeDelay, 0.04):
			r.excuse(refOf(msgs[0]))
			r.must(q.ChangeVisibility(msgs[0].ReceiptHandle, time.Duration(10+r.rng.IntN(80))*time.Second), "delay nudge")
			msgs = msgs[1:]
		}
	}
	if len(msgs) == 0 {
		return received
	}
	timeout := builderTO
	if r.faulty() && r.chance(FBuildLate, 0.03) {
		timeout = triggerTO // less than the reserve and the least build: the batch is handed back
		for _, m := range msgs {
			r.excuse(refOf(m))
		}
	}
	saved := r.inv
	r.startInvocation()
	r.inv.backfill = q == r.backfillQ
	reasons := map[rail.MatterRef]string{}
	for _, m := range msgs {
		var nd rail.Nudge
		if jsonUnmarshal(m.Body, &nd) == nil {
			if _, ok := reasons[nd.Ref()]; !ok {
				reasons[nd.Ref()] = nd.Reason
			}
		}
	}
	r.turns.begin(reasons)
	ctx, cancel := context.WithTimeout(r.ctx, timeout)
	resp, err := r.builder.Handle(ctx, events.SQSEvent{Records: msgs})
	cancel()
	for _, e := range r.turns.end() {
		r.violate(VHarness, "%s", e)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range msgs {
		if err == nil && !failed[m.MessageId] {
			_ = q.Delete(m.ReceiptHandle)
		}
	}
	r.tracef("%s: %d nudge(s) (first for %s), %d handed back, err=%v", q.Name(), len(msgs), short(refOf(msgs[0])), len(failed), err)
	r.afterBuild()
	r.inv = saved
	return received
}

// invokeSweeper invokes the sweeper function once, as its schedule does,
// and checks its gauges against the ledger.
func (r *run) invokeSweeper() {
	defer r.timed("invokeSweeper")()
	r.lastSweep = r.clock.Now()
	if r.faulty() && r.chance(FSweeperConnKilled, 0.03) {
		r.killRole(RoleSweeper)
	}
	ctx, cancel := context.WithTimeout(r.ctx, sweeperTO)
	res, err := r.sweeper.Handle(ctx, lambdafn.ScheduleEvent{Source: app.ScheduleSource, Task: lambdafn.Sweeper})
	cancel()
	r.res.Sweeps++
	r.tracef("sweeper: renudged %d (backfill queue %d) quarantined %d behind %d closed-with-demand %d backfilled %d outdated %d err=%v",
		res.Renudged, res.RenudgedBackfill, res.Quarantined, res.MattersBehind, res.MattersClosedWithDemand, res.Backfilled, res.Outdated, err)
	if err != nil && len(res.FailedSteps) == 0 {
		return // the invocation failed before its pass (no step ran)
	}
	r.checkGauges(res)
}

// killRole ends every session of role in the lane's database (connection
// loss as the function sees it).
func (r *run) killRole(role string) {
	_, err := r.env.Admin.Exec(r.ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE usename = $1 AND datname = current_database() AND pid <> pg_backend_pid()`, role)
	r.must(err, "kill "+role)
	r.tracef("killed %s's sessions", role)
}

// excuse marks m's pending failed build as delayed by a fault on its path
// (its retry latency is not held to the backoff).
func (r *run) excuse(m rail.MatterRef) {
	if f := r.failures[m]; f != nil {
		f.excused = true
	}
}

func (r *run) w6pending() bool { return r.w6 != nil && !r.w6Done }

// onNudge hears every nudge the handlers send, with its queue: backfill
// work must never go on the live build queue.
func (r *run) onNudge(queue string, n rail.Nudge, _ time.Duration) {
	defer r.timed("onNudge")()
	if queue != postgres.QueueBuild {
		return
	}
	var live, backfill int
	err := r.env.Admin.QueryRow(r.ctx, `SELECT count(*) FILTER (WHERE d.source <> 'backfill'), count(*) FILTER (WHERE d.source = 'backfill')
        FROM ops.matter_demands d JOIN ops.matter_frame_jobs j USING (firm_id, matter_id)
        WHERE d.firm_id = $1 AND d.matter_id = $2 AND d.generation > j.built_generation`, n.FirmID, n.MatterID).Scan(&live, &backfill)
	if err != nil {
		r.violate(VHarness, "on nudge: %v", err)
		return
	}
	if backfill > 0 && live == 0 {
		r.violate(VBackfillOnLiveQueue, "%s nudge for %s on the live build queue; its unserved demand is the backfill's alone", n.Reason, short(n.Ref()))
	}
}
