// Package modelcheck is an exhaustive explicit-state model check of the Brief
// rail's job ledger (ops.matter_frame_jobs) and the workers, nudges and sweep
// around it.
//
// Run explores, breadth first, every state reachable from the empty ledger
// under a Config (number of workers, number of demands, max_attempts, nudge
// bag size), keeping a visited set keyed by a canonical byte encoding of the
// state. It checks table invariants in every state, history invariants on
// every transition, and liveness on the finished graph, and returns a Report
// with the number of states, transitions, the maximum BFS depth, and for each
// violated invariant the shortest counterexample, printed step by step.
//
// # The abstraction
//
// A state is:
//
//   - the ledger row: requested, claimed (the fencing token), target, built,
//     run_status (idle, running, quarantined), attempts, claimed_at recorded,
//     a lease that is live or expired, and whether the failure backoff
//     (not_before) has passed. Time is abstract: "lease expires" and
//     "backoff passes" are environment steps that may happen at any moment,
//     a heartbeat makes the lease live again. The lease is meaningful only
//     on a running row and is normalised away otherwise.
//   - the environment: inputs committed (demand i commits input i before it
//     records the demand, in one step) and a bag of nudges. Nudges carry only
//     ids, so the bag is a count; delivery order is free (delay and reorder),
//     and "duplicated" and "dropped" are environment steps. A nudge sent into
//     a full bag (NudgeCap) is dropped, which the drop step allows anyway.
//   - each worker: idle; holding a claim (token t, target T) before reading
//     its inputs; built (it read the inputs: saw = inputs committed at that
//     moment) and about to commit; or, in the seed, a claim loser about to
//     write rebuild_needed. Workers are interchangeable, so the encoding sorts
//     them (symmetry reduction).
//   - ghost history: the set of landed frame tokens, the newest frame's
//     target, and counters for builds started since the last demand, claims
//     and quarantine releases since the last landing. The path to a state is
//     its history, so history invariants are checked on each transition.
//
// Worker steps: a worker claims only when a nudge is delivered to it (the
// claim is one atomic statement); it reads its inputs after the claim;
// heartbeat, fenced commit, fenced fail; crash at any point forgets
// everything and returns the worker to idle (a fresh process). A crash right
// after a claim is the "ambiguous claim": the claim committed but the worker
// never learned its token. Nothing retries it blindly; the lease and the
// sweep recover it.
//
// Environment steps: demand (at most Config.Demands in all, at any time,
// including during builds), lease expiry, backoff passing, sweep, and nudge
// duplication and drop.
//
// # The fixed protocol (Protocol Fixed)
//
//   - Demand: requested += 1; a quarantined row goes back to idle with
//     attempts = 0; sends one nudge.
//   - Claim: granted iff requested > built and attempts < max_attempts and
//     (idle past backoff, or running with an expired lease). Sets running,
//     claimed += 1, target = requested, lease live, attempts += 1. The
//     attempts guard is the model's reading of "retries are bounded": a
//     poison row with an expired lease waits for the sweep to quarantine it
//     instead of being claimed again (without it the token is unbounded).
//   - Heartbeat: token matches and running: lease live; otherwise the worker
//     learns it is superseded and stops.
//   - Commit: token matches and running: the frame (token, target) lands,
//     built = target, attempts = 0, idle; if requested > target one
//     follow-up nudge is sent. Otherwise fenced: nothing lands.
//   - Fail: token matches and running: target = built, then quarantined if
//     attempts >= max_attempts, else idle with a backoff pending.
//   - Sweep: quarantine a running row whose lease expired with attempts >=
//     max_attempts (target = built); otherwise, if requested > built and a
//     claim would be granted, send a nudge. The sweep re-nudges rather than
//     claiming itself, so every claim in the model comes from a worker.
//
// # The seed (Protocol Seed), and how it maps onto the same state
//
// The seed's statements, as the seed post gives them:
//
//   - Demand: the fact reaches the rail as a nudge; the row is not touched.
//   - Claim (the upsert): granted iff run_status <> 'running' or the lease
//     expired; sets running, requested_generation += 1, claimed_generation =
//     the new requested_generation, claimed_at. It does not look for unserved
//     demand. The loser of a claim writes rebuild_needed = true in a separate
//     step, later.
//   - Completion: idle where claimed_generation = token and running; if
//     rebuild_needed, clear it and requeue (one nudge). No built watermark,
//     no heartbeat, no fail statement, no attempts, no quarantine.
//   - Sweep: an expired running claim is failed (back to idle); "unserved
//     demand" is claimed_generation < requested_generation, re-nudged.
//
// The seed's row has no column for demands or for what was built, so the
// abstract fields the invariants read are ghosts for the seed:
//
//   - requested = demands made (the seed's own requested_generation counts
//     claims and is kept separately as SeedReqGen, used by its claim and
//     sweep);
//   - claimed = claimed_generation (the same column);
//   - target = demands made at the moment of the claim (what the claim
//     covers: the build reads everything committed so far);
//   - built = target of the newest landed frame;
//   - run_status and the lease as in the row; attempts stays 0;
//   - the "pending rebuild" flag is the written rebuild_needed (in the fixed
//     protocol it is the generated requested > target).
//
// With this mapping some table invariants hold by definition for the seed
// (the newest frame's target is built). The seed fails: wasted builds (a
// stale or duplicated nudge on an idle row claims with target == built), lost
// demand (a worker crashing after its claim leaves claimed == requested, the
// sweep fails the claim and sees no unserved demand; also any dropped nudge,
// because the seed's demand never reaches the row), lost wake-up (the loser
// writes rebuild_needed after the build completed), and unbounded retries.
//
// # Invariants
//
// Table, in every state: built <= target <= requested; running => claimed_at
// recorded; not running => target == built; every landed token <= claimed;
// the newest frame's target == built.
//
// History, on every transition: a claim raises the token by exactly 1 and
// nothing else changes it; a claim is granted only on an idle row past its
// backoff or an expired lease; a frame with token t lands only while claimed
// == t (so never after a higher token was claimed); at most one frame per
// token; a frame with target T saw at least T inputs; built never decreases;
// no wasted build (a claim whose target equals built); at most two builds
// start after the last demand (the one in flight and its follow-up; retries
// of a claim that did not land are not new builds); claims between two
// landings at most max_attempts per quarantine release.
//
// Liveness, on the finite graph: a quiescent state (no nudge in flight, no
// worker holding or about to write, no live lease on a running row, no
// backoff pending, nothing for the sweep to do) must not be behind
// (requested > built) unless quarantined: such a state is reported as a lost
// wake-up when the row's own pending flag says a rebuild is owed, as lost
// demand when it does not. And from every reachable state some path of
// steps other than demand must reach a quiescent state with built ==
// requested or a quarantined row (checked by backward reachability). This is
// "exists a path" (EF), not "every fair path" (AF under fairness): it finds
// deadlocks and forgotten demand, not livelocks that a fair scheduler would
// escape.
//
// # Not modelled
//
// One matter (one row); real time, clocks and clock skew (the lease is a
// boolean the environment flips, so "database clock only" is assumed, not
// checked); SQL isolation (each statement is one atomic step, which is what
// the row lock gives); the outbox, relay and trigger (a demand is one step
// that commits an input, records the demand and sends a nudge); the model
// panel's content (a frame is (token, target, inputs seen)); operator
// release of a quarantined row other than by a new demand. Bounds: at most
// Config.Demands demands, Config.NudgeCap nudges in flight, and tokens up to
// Config.MaxClaims (the fixed protocol never reaches it: Report.Truncated
// is 0, so its exploration is exhaustive for the configuration; the seed's
// claim is unbounded and is cut there, and truncated states count as good
// for the liveness check so the cut cannot invent a violation).
//
// Mutations (Config.Mutation) break one statement of the fixed protocol at a
// time so the tests can show each guarding invariant firing.
//
// Reproduce the numbers with:
//
//	go test -run TestFixedProtocol -v ./internal/verify/modelcheck/
package modelcheck
