// Package promise is the rail's promise as an oracle (issue 18): a seeded
// simulation that drives the functions' own handlers — relay, trigger,
// builder (live and backfill queues), sweeper with its backfill — as
// pkg/app assembles them (app.Assemble, one assembly per function over its
// own database role), over the local transport (app.LocalWiring and
// app.LocalTransport: the template's bus rule and queues, with their
// visibility, delays and redrive), with the host application's workflows
// (pkg/record) interleaved and faults at every hop, and checks after
// quiescence that every document filed on an open matter reached its
// Brief, or that an alarm says why.
//
// The ledger simulation (internal/verify/sim) drives the ledger's
// statements phase by phase; this one drives the path a fact travels.
//
// # What runs
//
// A run (Run) is one seed. A math/rand/v2 PCG seeded with it picks 2–4
// matters and then, one step at a time, what happens next: an upload of
// one or several documents (one transaction, each with its
// document.uploaded fact), closing or re-opening a matter, Regenerate, a
// builder identity change (the builder and the sweeper reassembled with a
// new model id, so the backfill admits the outdated matters), a relay
// invocation, a trigger or builder poll, a sweeper invocation, or a tick:
// time passes (5–20 s) and what runs by itself runs — the relay, the
// trigger and both builders drain their queues, the sweeper runs on its
// minute. Everything is invoked from the scheduler's goroutine, one
// invocation at a time (the handlers' own goroutines, the builder's
// heartbeat, run inside an invocation). The queues are polled as the
// event source mappings poll them: batches of 10 (the template's
// BatchSize) for the trigger and both builder queues, so a builder batch
// of several matters goes through the batch path (Ledger.ClaimBatch,
// Ledger.LoadBuilds, one goroutine per claim). Those goroutines act
// through the oracle's stand-ins (the builder's ledger port, the Brief
// builder, the nudgers) one at a time, in the order the claim statement
// returned the claims (turns.go), so the seed still decides the faults.
//
// Each function's handler has its own pool logged in as the function's
// role (brief_relay, brief_trigger, brief_builder, brief_sweeper), so the
// grants and the role's session settings apply. The settings are the
// deployed ones, read from pg_db_role_setting as migration 008 wrote them,
// multiplied by Env.Scale (DefaultScale, 0.1: 10 s becomes 1 s) and written
// for the lane's database; the relay's publish budget (Relay.PublishTimeout
// as assembled, or rail's default) is scaled by the same factor and the
// slow bus's latency is set against the relay role's scaled idle timeout,
// so the ratio that decides whether a slow bus stops the relay is the
// deployed one.
//
// Time: the queues run on a fake clock (localbus.Queue.SetClock); a tick
// advances it and moves every timestamp of the record and the ledger back
// by the same amount (promise_sim.travel), so leases, backoffs, the
// sweeper's grace, the relay's backoff and the backfill's token bucket
// pass as they would. The database clock is never replaced. The role
// timeouts and the bus's latency run in real time (scaled).
//
// # Faults and workflows
//
// Kinds (kinds.go) name each one. The bus: slow within the publish budget,
// slow past it (a pass's calls outlast the relay role's idle timeout),
// retryable per-entry errors (ThrottlingException, InternalFailure, as the
// EventBridge adapter's eventbridge.EntryError), ten minutes of
// throttling, a permanent per-entry refusal of one fact for good
// (MalformedDetail, InvalidArgument), a whole call failing, the relay's
// session killed during PutEvents. The trigger queue: a message
// duplicated, a batch reordered, a message delayed, a processed message
// redelivered (partial batch failure), a statement cancelled by the role's
// lock timeout (the harness holds the ledger rows), the trigger's
// connections killed. The build and backfill queues: a nudge lost,
// duplicated, delayed, or its send failed. Builders: a build failing,
// timing out, throttled by the model, returning a body the database
// refuses (a "\u0000" that json.Valid accepts and jsonb does not), demand
// arriving during a build, the builder's connections killed during the
// build, the builder invoked with too little time left (handed back), live
// builders saturated (no poll for minutes), backfill builders saturated
// past the sweeper's grace.
//
// # The oracle
//
// After the fault phase, quiescence: faults off (a poison fact stays
// refused: that is what permanent means), ticks until nothing is left for
// a minute (outbox drained or parked, queues empty, no open matter behind
// unless quarantined, nothing outdated), at most 45 fake minutes. Closed
// matters stay closed; the checks run; then every closed matter is
// re-opened, quiescence again, and the checks again. For every seed:
//
//   - VPromise: every open, unquarantined matter's newest frame was built
//     from exactly the documents on record: the frame's body lists the
//     documents the build read (Inputs.Documents), compared with
//     app.documents. A document whose fact is parked or dead-lettered is
//     alarmed, not owed.
//   - VClosedNotHeld: a closed matter's unbuilt documents are held (its
//     row's requested > built, counted by MattersClosedWithDemand); after
//     re-opening they are built (VPromise again).
//   - VAckedWithoutEffect: every published demand fact has its demand
//     (ops.matter_demands lists its event id) unless it is in the trigger's
//     dead-letter queue.
//   - VParkedTransient: every parked fact was refused permanently at least
//     once (or is undeliverable); VGauges checks OutboxParked counts them.
//   - VGauges, at every sweep (a pass with a failed step: the steps that ran): MattersBehind, MattersQuarantined,
//     MattersClosedWithDemand, OutboxBacklog and OutboxParked as the
//     sweeper reported them equal the ledger read right after;
//     VMissingAlarm: an open matter's unbuilt document is accounted for by
//     a gauge (behind, quarantined, outbox backlog, trigger queue or DLQ).
//   - VBackfillOnLiveQueue, at every nudge: no nudge on the live build
//     queue for a matter whose only unserved demand is the backfill's.
//   - VRelayLivelock, at every relay invocation: when the bus accepted
//     entries, some were marked (a slow bus slows the relay, never stops it).
//   - VClosedClaimed, at every claim the builder wins (single or batch):
//     the matter is open.
//   - VStuckRow, after every builder invocation: no claim it made is left
//     running (unless its connection was killed: then the outcome is
//     honestly unknown and the lease decides).
//   - VRetryLate: a failed build's retry is claimed within its backoff plus
//     a sweep period, the settle delay and a tick (a backfill build's: its
//     backoff plus the sweeper's re-nudge grace, a sweep period and a tick,
//     since its retry is the sweeper's), unless a fault on its path (a
//     lost, delayed or unsent nudge, its queue's builders saturated, a
//     kill) excuses it.
//   - VQuarantineSwallowed: no quarantined row holds demand recorded after
//     its last attempt's claim.
//   - VOutdatedLeft: after the last quiescence no open matter's newest
//     frame is by another identity than the deployed builder's.
//   - VNotQuiescent: the rail settles within the bound.
//
// # Determinism
//
// The seed decides the matters, the document ids, the workflow and every
// fault decision (Config.Disabled does not shift the draws: chance draws
// for a disabled kind too), and the builds of a batch take turns in claim
// order (turns.go). What it does not decide: event ids and
// message ids (the database's and the queues' own uuids, so the outbox and
// the queues may order equal-time rows differently), real-time races
// (a role's idle or lock timeout against a slow bus or a held lock; the
// relay's publish budget), the database clock's drift during a step, and
// pgxpool's reconnects after a kill. A replay (-seed=N) reruns the same
// workflow and faults; its trace is the same in outline, not line for
// line, and a violation reproduces in the same seed in practice.
package promise
