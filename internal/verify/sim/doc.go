// Package sim is a seeded fault simulation of the Brief rail against a real
// PostgreSQL (issue 6, part 2).
//
// # What runs
//
// One run (Run) is one seed. A math/rand/v2 PCG seeded with it drives a
// scheduler that issues one step at a time: 2–3 matters, 3 workers (each
// with its own pgx pool, tagged with its application_name), a demand
// generator, a sweeper, two outbox relays, an in-memory nudge bag and an
// in-memory recording rail.Publisher (test doubles of ports; the database is
// never mocked). Workers call the real ledger statements split into their
// phases: claim on a delivered nudge, LoadInputs, build (the digest
// builder), heartbeat, fenced commit, Fail, FrameLanded and MarkRun.
//
// A step that could wait on a row lock (while some actor holds an open
// transaction on purpose) runs on a goroutine; the scheduler waits until it
// either finishes or appears in pg_stat_activity waiting on a Lock, and
// joins blocked steps, in the order they queued, when the holder's
// transaction ends. Nothing else runs concurrently, so a seed determines
// the whole interleaving: the same seed replays the same trace
// (TestReplayIsExact compares traces step by step).
//
// # Faults
//
// A worker stalls (takes no steps) before the fence, mid-build, or after
// the fence with its commit transaction open (holding the row lock); a
// worker leaves a claim transaction open and a zombie's commit waits on it;
// connections are killed with pg_terminate_backend before the fence, after
// the fence and after COMMIT (the worker then asks FrameLanded and never
// commits blindly); the server ends a stalled transaction; a worker crashes
// and forgets its claim; a claim's reply is lost; a build fails (Fail with
// backoff); nudges are duplicated, dropped, delayed and reordered; leases,
// backoffs and the sweeper's grace expire by time travel on the row
// (claimed_at, not_before, last_demanded_at moved back; the database clock
// is never replaced); the sweeper runs during an open commit; a demand
// arrives during one. Outbox: a relay crashes between PutEvents and marking,
// two relays run at once (one held inside PutEvents with its rows leased),
// a relay freezes inside PutEvents past its lease,
// PutEvents fails for some entries or the whole call, and two outbox rows
// commit out of order around a relay pass. Builds end at their deadline:
// the build's context is cancelled as it returns its frame, while its
// commit waits on a row lock, or mid-build (the model call returns the
// context's error); the worker records the outcome on rail.OutcomeContext,
// as rail.Worker does (deadline.go). Operators act with other settings: a
// sweep or a claim with another lease and attempt limit than the workers'
// (operator.go).
//
// After the fault phase a fair drain runs: stalled workers resume, every
// nudge is delivered, workers finish, time passes beyond the lease and the
// backoff and the sweeper re-nudges, until nothing is left; then the relays
// publish everything with a healthy bus.
//
// # Checks
//
// After every step: the table invariants (as SQL, plus runs numbered
// 1..claimed_generation) and monotone requested/claimed/built. On the
// history: each claim raises the token by exactly 1; no claim on a live
// lease or a quarantined row; no claim whose target is already built
// (wasted build); at most two builds start after a matter's last demand; a
// frame lands only while its token is the latest claimed (no stale frame),
// at most once per token, having seen every document whose demand its
// target covers, and never lowering built_generation; FrameLanded answers
// truthfully. At the end: every matter built == requested or quarantined
// (no demand lost); the frames table equals the landed history; by the
// database clock no frame was written after a later token's claim; every
// committed fact was published at least once, marked only when the bus
// accepted it, nothing published that never committed, exactly one
// frame.built per landed frame and none for a fenced one, a
// document.uploaded for every document; two relays never published the same
// row at once. A worker whose build ended at its deadline never leaves its
// row running under its own token (no stuck row). An operator pass with
// other settings quarantines or expires only what the row's own claim
// allows (the lease and attempt limit stored with it).
//
// Negative controls (TestNegativeControls in sim_test.go, one table row
// each) run the same simulation with one part broken and require the
// checker to catch it: an unfenced commit (stale frames), a claim without
// the unserved-demand test (wasted builds), a claim that does not store its
// lease and attempt limit on the row (operator passes acting on live
// builds), a sweeper whose nudges are lost (lost demand), a deadline build's
// outcome recorded on the build's own context (stuck rows), a build reading
// a lagging copy of the record (missed inputs), a relay polling by a
// high-water mark (lost facts), gauges counting a closed matter's demand
// (false alarms), the relay before issue 10 and a relay whose lease never
// ends (rows held back).
package sim
