package sim_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/internal/verify/sim"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

var (
	flagSeed      = flag.Int64("seed", -1, "run only this seed (replay)")
	flagSeeds     = flag.Int("seeds", 0, "number of seeds (default $RAIL_CHAOS_SEEDS, else 300; 60 with -short)")
	flagSeedStart = flag.Uint64("seed-start", 1, "first seed")
	flagLanes     = flag.Int("lanes", 0, "seeds run in parallel, one database each (default $RAIL_CHAOS_LANES, else 4)")
	flagSteps     = flag.Int("steps", 0, "fault-phase steps per seed (default sim.DefaultSteps)")
	flagTrace     = flag.Bool("sim-trace", false, "log every seed's full trace")
)

func TestMain(m *testing.M) { railtest.Main(m) }

// newEnv makes a lane: a fresh database and one pool per actor, each pool
// tagged with the actor's application_name.
func newEnv(t *testing.T, workers int) *sim.Env {
	t.Helper()
	db := railtest.NewDB(t)
	env, err := sim.NewEnv(context.Background(), workers, func(app string) *pgxpool.Pool {
		return railtest.Pool(t, withApp(t, db.URL, app), 4)
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func withApp(t *testing.T, conn, app string) string {
	if !strings.HasPrefix(conn, "postgres://") && !strings.HasPrefix(conn, "postgresql://") {
		return conn + " application_name=" + app
	}
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

func seedRange(t *testing.T) (start uint64, n int) {
	if *flagSeed >= 0 {
		return uint64(*flagSeed), 1
	}
	n = *flagSeeds
	if n == 0 {
		if s := os.Getenv("RAIL_CHAOS_SEEDS"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 {
				t.Fatalf("RAIL_CHAOS_SEEDS=%q: want a positive number", s)
			}
			n = v
		}
	}
	if n == 0 {
		n = 300
		if testing.Short() {
			n = 60
		}
	}
	return *flagSeedStart, n
}

func lanes() int {
	if *flagLanes > 0 {
		return *flagLanes
	}
	if s := os.Getenv("RAIL_CHAOS_LANES"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			return v
		}
	}
	return 4
}

// runSeeds runs seeds [start, start+n) across lanes (one database each,
// goroutines: independent of -parallel) and returns every result in seed
// order. Each seed is a subtest named seed=N.
func runSeeds(t *testing.T, start uint64, n int, mk func(seed uint64) sim.Config, report func(*testing.T, *sim.Result)) []*sim.Result {
	t.Helper()
	results := make([]*sim.Result, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	nl := min(lanes(), n)
	envs := make([]*sim.Env, nl)
	for l := range envs {
		envs[l] = newEnv(t, sim.DefaultWorkers)
	}
	var wg sync.WaitGroup
	for _, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				seed := start + uint64(i)
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					res := sim.Run(context.Background(), env, mk(seed))
					results[i] = res
					if report != nil {
						report(t, res)
					}
				})
			}
		}()
	}
	wg.Wait()
	return results
}

func simConfig(seed uint64) sim.Config {
	return sim.Config{Seed: seed, Steps: *flagSteps}
}

// TestSimulation runs the seeded fault simulation: a few hundred seeds in
// `go test`, as many as asked by `make chaos SEEDS=N`, one with -seed=N.
func TestSimulation(t *testing.T) {
	start, n := seedRange(t)
	began := time.Now()
	results := runSeeds(t, start, n, simConfig, func(t *testing.T, res *sim.Result) {
		if *flagTrace || *flagSeed >= 0 {
			t.Logf("seed %d trace %s:\n%s", res.Seed, res.TraceHash(), res.Report(0))
		}
		if res.Failed() {
			t.Errorf("seed %d failed:\n%s\nreplay: go test ./internal/verify/sim -run TestSimulation -seed=%d -v",
				res.Seed, res.Report(60), res.Seed)
		}
	})
	var tot sim.Totals
	for _, r := range results {
		if r != nil {
			tot.Add(r)
		}
	}
	t.Logf("%s wall=%v\nfaults injected by kind:\n%s", tot.Summary(), time.Since(began).Round(time.Millisecond), tot.FaultTable())
	if tot.FailedSeeds > 0 {
		var b strings.Builder
		for _, s := range tot.FirstFailed {
			fmt.Fprintf(&b, "\n  replay: go test ./internal/verify/sim -run TestSimulation -seed=%d -v", s)
		}
		t.Errorf("%d of %d seeds failed:%s", tot.FailedSeeds, tot.Seeds, b.String())
	}
	if n >= 50 {
		// The scheduler must actually reach the faults it claims to inject.
		for _, k := range []string{sim.FaultStallBeforeFence, sim.FaultStallAfterFence, sim.FaultKillBeforeFence,
			sim.FaultKillAfterFence, sim.FaultKillAfterCommit, sim.FaultKillStalledTx, sim.FaultBlocked,
			sim.FaultLeaseExpired, sim.FaultCrash, sim.FaultClaimReplyLost, sim.FaultBuildFailed,
			sim.FaultNudgeDuplicated, sim.FaultNudgeDropped, sim.FaultNudgeDelayed, sim.FaultNudgeReordered,
			sim.FaultSweepDuringCommit, sim.FaultDemandDuringCommit, sim.FaultRelayCrash, sim.FaultTwoRelaysLeaseBusy,
			sim.FaultPutEventsPartial, sim.FaultPutEventsFailed, sim.FaultOutOfOrderFacts, sim.FaultClaimTxOpen,
			sim.FaultDeadlineBeforeCommit, sim.FaultDeadlineBuildCut, sim.FaultOperatorSettings,
			sim.FaultOddRowLegal, sim.FaultOddRowUndeliverable, sim.FaultRelayTxKilled} {
			if tot.Faults[k] == 0 {
				t.Errorf("fault %q never injected in %d seeds", k, n)
			}
		}
		if tot.Fenced == 0 {
			t.Error("no commit was ever fenced: the zombie paths were not exercised")
		}
		// A deadline passing while the commit waits on a row lock needs a
		// zombie and a lock holder on one matter: a few per hundred seeds.
		if n >= 300 && tot.Faults[sim.FaultDeadlineDuringCommit] == 0 {
			t.Errorf("fault %q never injected in %d seeds", sim.FaultDeadlineDuringCommit, n)
		}
	}
}

// TestReplayIsExact runs a batch of seeds twice, each time across parallel
// lanes on other databases (so under load and in another order), and
// requires the same trace, step by step.
func TestReplayIsExact(t *testing.T) {
	if *flagSeed >= 0 {
		t.Skip("replaying one seed")
	}
	const first, n = 1000, 24
	a := runSeeds(t, first, n, simConfig, nil)
	b := runSeeds(t, first, n, simConfig, nil)
	for i := range n {
		x, y := a[i], b[i]
		if x.TraceHash() == y.TraceHash() {
			continue
		}
		for j := range min(len(x.Trace), len(y.Trace)) {
			if x.Trace[j] != y.Trace[j] {
				t.Errorf("seed %d diverges at trace line %d:\n  first:  %s\n  replay: %s", x.Seed, j, x.Trace[j], y.Trace[j])
				break
			}
		}
		if len(x.Trace) != len(y.Trace) {
			t.Errorf("seed %d: traces differ in length %d vs %d", x.Seed, len(x.Trace), len(y.Trace))
		}
	}
}

// ---- negative controls: checks that cannot fail are not checks -------------

// A negativeControl runs seeds 1..seeds with one part of the rail broken
// and fails unless at least one of its checks fires in at least minCaught
// of them.
type negativeControl struct {
	name      string // the subtest's and the log line's name
	why       string // what the checker must catch
	seeds     int
	minCaught int
	checks    []string          // the violations that count as a catch
	broken    func(*sim.Config) // switches the broken part on
}

// TestNegativeControls runs every control in turn (one subtest each, its
// seeds spread over the lanes like TestSimulation's). One control:
// -run 'TestNegativeControls/unfenced_commit'.
func TestNegativeControls(t *testing.T) {
	if *flagSeed >= 0 {
		t.Skip("replaying one seed")
	}
	controls := []negativeControl{{
		name: "unfenced commit", seeds: 8, minCaught: 1,
		why:    "a commit that does not compare the token lands stale frames",
		checks: []string{sim.VStaleFrame},
		broken: func(c *sim.Config) { c.Commit = unfencedCommit },
	}, {
		name: "claim without demand check", seeds: 8, minCaught: 1,
		why:    "a claim that does not require unserved demand wastes builds",
		checks: []string{sim.VWastedBuild},
		broken: func(c *sim.Config) { c.Claim = claimNoDemandCheck },
	}, {
		// Migration 007 reverted: operator passes with other settings (a
		// shorter lease, fewer attempts) quarantine or expire a live build,
		// or take over a live claim.
		name: "claim policy not stored on the row", seeds: 24, minCaught: 1,
		why:    "operator passes with other settings act on live builds when the row does not carry its claim's lease and attempt limit",
		checks: []string{sim.VOperatorTouchedLive, sim.VLiveLease},
		broken: func(c *sim.Config) { c.Claim = claimForgettingPolicy },
	}, {
		name: "sweep nudges lost", seeds: 8, minCaught: 1,
		why:    "a sweeper whose nudges are lost loses demand",
		checks: []string{sim.VDemandLost},
		broken: func(c *sim.Config) { c.NoSweepNudges = true },
	}, {
		name: "outcome on the build context", seeds: 8, minCaught: 1,
		why:    "builds that end at their deadline, with the outcome recorded on the build's own (cancelled) context as before the fix, leave their rows running until the lease expires",
		checks: []string{sim.VStuckRow},
		broken: func(c *sim.Config) { c.OutcomeOnBuildContext = true },
	}, {
		name: "lagging inputs", seeds: 8, minCaught: 1,
		why:    "a build that reads a lagging copy of the record (the newest document missing) misses inputs its target covers",
		checks: []string{sim.VInputsMissed},
		broken: func(c *sim.Config) { c.Inputs = laggingInputs },
	}, {
		name: "high-water-mark relay", seeds: 8, minCaught: 1,
		why:    "a relay that polls by a high-water mark loses facts",
		checks: []string{sim.VFactLost},
		broken: func(c *sim.Config) { c.Relay = newHWMRelay },
	}, {
		name: "gauges count closed matters", seeds: 8, minCaught: 1,
		why:    "gauges that count a closed matter's held demand as unserved (OldestUnservedDemandAlarm firing for ever) raise a false alarm",
		checks: []string{sim.VGauges},
		broken: func(c *sim.Config) { c.Gauges = gaugesCountingClosedMatters },
	}, {
		name: "batch relay and odd rows", seeds: 8, minCaught: 1,
		why:    "the relay before issue 10's fix holds facts back behind odd (legal or undeliverable) outbox rows",
		checks: []string{sim.VRelayHeldBack},
		broken: func(c *sim.Config) { c.Relay = newBatchRelay },
	}, {
		name: "relay lease that never ends", seeds: 8, minCaught: 1,
		why:    "a relay whose claim on its rows does not end holds them after it froze",
		checks: []string{sim.VRelayHeldBack},
		broken: func(c *sim.Config) {
			c.Relay = func(i int, pool *pgxpool.Pool, pub rail.Publisher, o sim.RelayOpts) sim.Drainer {
				o.Lease = 100 * 365 * 24 * time.Hour
				return sim.DefaultRelay(i, pool, pub, o)
			}
		},
	}}
	for _, nc := range controls {
		t.Run(nc.name, nc.run)
	}
}

// run runs the control's seeds and counts the seeds in which one of its
// checks fired.
func (nc negativeControl) run(t *testing.T) {
	results := runSeeds(t, 1, nc.seeds, func(seed uint64) sim.Config {
		c := simConfig(seed)
		nc.broken(&c)
		return c
	}, nil)
	caught, counts := 0, map[string]int{}
	first := uint64(0)
	var tot sim.Totals
	for _, r := range results {
		tot.Add(r)
		hit := false
		for _, k := range nc.checks {
			if n := r.Count(k); n > 0 {
				counts[k] += n
				hit = true
			}
		}
		if hit {
			caught++
			if first == 0 {
				first = r.Seed
			}
		}
	}
	t.Logf("negative control %s: caught in %d of %d seeds (first: seed %d); %v; all checks that fired: %v",
		nc.name, caught, nc.seeds, first, counts, tot.Violations)
	if caught < nc.minCaught {
		t.Fatalf("negative control %s: the checker caught it in %d of %d seeds, want at least %d: %s",
			nc.name, caught, nc.seeds, nc.minCaught, nc.why)
	}
}

// unfencedCommitSQL is a deliberately broken commit: it lands the frame and
// marks the row built without comparing the token.
const unfencedCommitSQL = `
WITH up AS (
    UPDATE ops.matter_frame_jobs SET
        run_status = 'idle', built_generation = $4, target_generation = $4,
        attempts = 0, not_before = NULL
    WHERE firm_id = $1 AND matter_id = $2
    RETURNING firm_id, matter_id, requested_generation
), frame AS (
    INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body)
    SELECT firm_id, matter_id, $3, $4, $5, $6, true, $7::jsonb FROM up
    RETURNING frame_id
)
SELECT frame.frame_id, up.requested_generation FROM up, frame`

func unfencedCommit(ctx context.Context, _ *postgres.Ledger, q postgres.Querier, c rail.Claim, f rail.Frame) (rail.CommitResult, error) {
	res := rail.CommitResult{Target: c.Target}
	err := q.QueryRow(ctx, unfencedCommitSQL, c.FirmID, c.MatterID, c.Token, c.Target, f.Fingerprint, f.Builder, string(f.Body)).
		Scan(&res.FrameID, &res.Requested)
	res.FollowUpDue = res.Requested > res.Target
	return res, err
}

// claimNoDemandCheckSQL is the seed's looser claim: it does not ask for
// unserved demand, so a stale nudge starts a build.
const claimNoDemandCheckSQL = `
WITH c AS (
    UPDATE ops.matter_frame_jobs AS j SET
        run_status = 'running', claimed_generation = j.claimed_generation + 1,
        target_generation = j.requested_generation, claimed_at = clock_timestamp(),
        claimed_by = $3, attempts = j.attempts + 1, not_before = NULL
    WHERE j.firm_id = $1 AND j.matter_id = $2
      AND (j.run_status = 'idle' OR (j.run_status = 'running' AND j.claimed_at < clock_timestamp() - make_interval(secs => $4)))
    RETURNING j.firm_id, j.matter_id, j.claimed_generation, j.target_generation, j.built_generation, j.attempts
), run AS (
    INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id)
    SELECT firm_id, matter_id, claimed_generation, target_generation, $3 FROM c
)
SELECT claimed_generation, target_generation, built_generation, attempts FROM c`

func claimNoDemandCheck(ctx context.Context, l *postgres.Ledger, q postgres.Querier, ref rail.MatterRef, worker string) (rail.Claim, bool, error) {
	c := rail.Claim{MatterRef: ref}
	err := q.QueryRow(ctx, claimNoDemandCheckSQL, ref.FirmID, ref.MatterID, worker, l.Config().Lease.Seconds()).
		Scan(&c.Token, &c.Target, &c.Built, &c.Attempt)
	if err != nil && strings.Contains(err.Error(), "no rows") {
		return rail.Claim{}, false, nil
	}
	return c, err == nil, err
}

// claimForgettingPolicy is the real claim followed, on the same querier
// (inside the claim's transaction when it has one; the claim holds the row
// lock), by clearing the lease and attempt limit it stored: the ledger then
// falls back to each caller's settings, as before migration 007.
func claimForgettingPolicy(ctx context.Context, l *postgres.Ledger, q postgres.Querier, ref rail.MatterRef, worker string) (rail.Claim, bool, error) {
	c, ok, err := l.On(q).Claim(ctx, ref, worker)
	if err != nil || !ok {
		return c, ok, err
	}
	_, err = q.Exec(ctx, `UPDATE ops.matter_frame_jobs SET lease_seconds = NULL, max_attempts = NULL
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID)
	return c, ok, err
}

// laggingInputs reads a lagging copy of the record: the newest document
// is missing.
func laggingInputs(ctx context.Context, q postgres.Querier, ref rail.MatterRef) (rail.Inputs, error) {
	in, err := postgres.LoadInputs(ctx, q, ref)
	if err == nil && len(in.Manifest) > 0 {
		newest := 0
		for i, d := range in.Manifest {
			if d.UploadedAt.After(in.Manifest[newest].UploadedAt) {
				newest = i
			}
		}
		in.Manifest = slices.Delete(in.Manifest, newest, newest+1)
	}
	return in, err
}

// gaugesCountingClosedMatters is the gauge query before closed matters had
// a story: a closed matter's held demand counts as unserved.
func gaugesCountingClosedMatters(ctx context.Context, l *postgres.Ledger) (postgres.Gauges, error) {
	var g postgres.Gauges
	err := l.Pool().QueryRow(ctx, `
SELECT count(*) FILTER (WHERE requested_generation > built_generation AND run_status <> 'quarantined'),
       count(*) FILTER (WHERE run_status = 'quarantined'),
       coalesce(extract(epoch FROM clock_timestamp() - min(demand_since)
           FILTER (WHERE requested_generation > built_generation AND run_status <> 'quarantined')), 0)::float8
FROM ops.matter_frame_jobs`).Scan(&g.MattersBehind, &g.MattersQuarantined, &g.OldestUnservedDemandSeconds)
	return g, err
}

// hwmRelay is a deliberately broken relay: it polls by a high-water mark
// (the newest occurred_at already published) instead of taking every
// unpublished row, so a fact whose transaction commits after a newer one
// was published is never sent.
type hwmRelay struct {
	pool         *pgxpool.Pool
	pub          rail.Publisher
	afterPublish func()
}

func newHWMRelay(_ int, pool *pgxpool.Pool, pub rail.Publisher, o sim.RelayOpts) sim.Drainer {
	return hwmRelay{pool: pool, pub: pub, afterPublish: o.AfterPublish}
}

func (h hwmRelay) DrainOnce(ctx context.Context) (rail.RelayStats, error) {
	st := rail.RelayStats{Passes: 1}
	rows, err := h.pool.Query(ctx, `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at
        FROM ops.domain_event_outbox
        WHERE occurred_at > (SELECT coalesce(max(occurred_at), '-infinity') FROM ops.domain_event_outbox
                             WHERE published_at IS NOT NULL)
        ORDER BY occurred_at LIMIT 4`)
	if err != nil {
		return st, err
	}
	var entries []rail.BusEntry
	for rows.Next() {
		var d rail.FactDetail
		var payload []byte
		if err := rows.Scan(&d.EventID, &d.FirmID, &d.MatterID, &d.EventName, &payload, &d.OccurredAt); err != nil {
			rows.Close()
			return st, err
		}
		d.Payload = payload
		detail, err := rail.EncodeFactDetail(d)
		if err != nil {
			rows.Close()
			return st, err
		}
		entries = append(entries, rail.BusEntry{EventID: d.EventID, Name: d.EventName, Detail: detail})
	}
	if err := rows.Err(); err != nil || len(entries) == 0 {
		return st, err
	}
	res, err := h.pub.Publish(ctx, entries)
	if err != nil {
		return st, nil // retried next pass
	}
	if h.afterPublish != nil {
		h.afterPublish()
	}
	var ok []string
	for _, r := range res {
		if r.Err == nil {
			ok = append(ok, r.EventID.String())
		}
	}
	tag, err := h.pool.Exec(ctx, `UPDATE ops.domain_event_outbox SET published_at = clock_timestamp()
        WHERE event_id = ANY($1::uuid[])`, ok)
	st.Published = int(tag.RowsAffected())
	return st, err
}

// batchRelay is the relay as it was before issue 10's fix, written out: a
// pass reads its rows into the old shape (payload values must be strings),
// builds every detail, and sends the batch in calls of 10 with no size
// check; any row it cannot read or encode fails the whole pass, and a call
// the bus refuses as a whole fails it too. One odd row then holds back
// every row behind it.
type batchRelay struct {
	pool         *pgxpool.Pool
	pub          rail.Publisher
	afterPublish func()
}

func newBatchRelay(_ int, pool *pgxpool.Pool, pub rail.Publisher, o sim.RelayOpts) sim.Drainer {
	return batchRelay{pool: pool, pub: pub, afterPublish: o.AfterPublish}
}

func (b batchRelay) DrainOnce(ctx context.Context) (rail.RelayStats, error) {
	st := rail.RelayStats{Passes: 1}
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return st, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, `SELECT event_id, firm_id, matter_id, event_name, payload, occurred_at
        FROM ops.domain_event_outbox
        WHERE published_at IS NULL AND parked_at IS NULL
          AND (next_attempt_at IS NULL OR next_attempt_at <= clock_timestamp())
        ORDER BY occurred_at, event_id LIMIT 4 FOR UPDATE SKIP LOCKED`)
	if err != nil {
		return st, err
	}
	var entries []rail.BusEntry
	for rows.Next() {
		var d rail.FactDetail
		var payload map[string]string
		if err := rows.Scan(&d.EventID, &d.FirmID, &d.MatterID, &d.EventName, &payload, &d.OccurredAt); err != nil {
			rows.Close()
			return st, fmt.Errorf("relay: scan: %w", err)
		}
		d.Payload, _ = json.Marshal(payload)
		detail, err := rail.EncodeFactDetail(d)
		if err != nil {
			rows.Close()
			return st, err
		}
		entries = append(entries, rail.BusEntry{EventID: d.EventID, Name: d.EventName, Detail: detail})
	}
	if err := rows.Err(); err != nil || len(entries) == 0 {
		return st, err
	}
	res, err := b.pub.Publish(ctx, entries)
	if err != nil {
		return st, fmt.Errorf("relay: publish: %w", err)
	}
	if b.afterPublish != nil {
		b.afterPublish()
	}
	var ok []string
	for _, r := range res {
		if r.Err == nil {
			ok = append(ok, r.EventID.String())
		}
	}
	tag, err := tx.Exec(ctx, `UPDATE ops.domain_event_outbox SET published_at = clock_timestamp()
        WHERE event_id = ANY($1::uuid[])`, ok)
	if err != nil {
		return st, err
	}
	st.Published = int(tag.RowsAffected())
	return st, tx.Commit(ctx)
}
