package promise_test

import (
	"context"
	"flag"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/internal/verify/promise"
)

var (
	flagSeed      = flag.Int64("seed", -1, "run only this seed (replay)")
	flagSeeds     = flag.Int("seeds", 0, "number of seeds (default $RAIL_PROMISE_SEEDS, else 200; 50 with -short)")
	flagSeedStart = flag.Uint64("seed-start", 1, "first seed")
	flagLanes     = flag.Int("lanes", 0, "seeds run in parallel, one database each (default $RAIL_CHAOS_LANES, else 4)")
	flagSteps     = flag.Int("steps", 0, "fault-phase steps per seed (default $RAIL_PROMISE_STEPS, else testSteps; the defect rows: promise.DefaultSteps)")
	flagTrace     = flag.Bool("sim-trace", false, "log every seed's full trace")
	flagAll       = flag.Bool("all-kinds", false, "inject the kinds pending a fix too (promise.PendingFixes)")
	flagForce     = flag.String("force", "", "play the scenario of the kind whose name contains this (with -seed: replay a defect row's seed)")
)

func TestMain(m *testing.M) { railtest.Main(m) }

const template = "../../../template.yaml"

// newEnv makes a lane: a fresh database, the harness's pool and one pool
// per function logged in as the function's own role (the test server
// trusts local connections; the roles have no password).
func newEnv(t *testing.T) *promise.Env {
	t.Helper()
	if os.Getenv("DATABASE_URL") != "" {
		t.Skip("the promise simulation logs in as the functions' roles, which needs the throwaway server (DATABASE_URL is set)")
	}
	db := railtest.NewDB(t)
	env, err := promise.NewEnv(context.Background(), db.Pool, db.Name, promise.DefaultScale, func(role string) (*pgxpool.Pool, error) {
		u, err := url.Parse(db.URL)
		if err != nil {
			return nil, err
		}
		u.User = url.User(role)
		q := u.Query()
		q.Set("application_name", "promise-"+role)
		u.RawQuery = q.Encode()
		return railtest.Pool(t, u.String(), 4), nil
	})
	if err != nil {
		if strings.Contains(err.Error(), "has no") && !ci.Enabled() {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return env
}

func seedRange(t *testing.T, def int) (start uint64, n int) {
	if *flagSeed >= 0 {
		return uint64(*flagSeed), 1
	}
	n = *flagSeeds
	if n == 0 {
		if s := os.Getenv("RAIL_PROMISE_SEEDS"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 {
				t.Fatalf("RAIL_PROMISE_SEEDS=%q: want a positive number", s)
			}
			n = v
		}
	}
	if n == 0 {
		n = def
		if testing.Short() {
			n = max(def/4, 1)
		}
	}
	return *flagSeedStart, n
}

// testSteps is the fault phase of the default run's seeds in make test:
// shorter than promise.DefaultSteps (70, what make chaos runs), so that a
// few hundred seeds fit the package's time under -race. A seed's fixed
// cost (its reset, two quiescences, the checks) is the same either way;
// the short phase draws fewer faults per seed, and more seeds draw the
// same number in all (200 x 20 steps against the 60 x 70 of before).
const testSteps = 20

// steps is the fault phase's length for the default run's seeds: -steps,
// else $RAIL_PROMISE_STEPS (make chaos sets promise.DefaultSteps), else
// testSteps.
func steps(t testing.TB) int {
	if *flagSteps > 0 {
		return *flagSteps
	}
	if s := os.Getenv("RAIL_PROMISE_STEPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("RAIL_PROMISE_STEPS=%q: want a positive number", s)
		}
		return v
	}
	return testSteps
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

// runSeeds runs seeds [start, start+n) across lanes and returns the
// results in seed order.
func runSeeds(t *testing.T, start uint64, n int, mk func(seed uint64) promise.Config) []*promise.Result {
	t.Helper()
	return runSeedsOn(t, newEnvs(t, n), start, n, mk)
}

// newEnvs makes the lanes for n seeds.
func newEnvs(t *testing.T, n int) []*promise.Env {
	envs := make([]*promise.Env, min(lanes(), n))
	for l := range envs {
		envs[l] = newEnv(t)
	}
	return envs
}

// runSeedsOn is runSeeds on lanes already made (each run empties its lane's tables).
func runSeedsOn(t *testing.T, envs []*promise.Env, start uint64, n int, mk func(seed uint64) promise.Config) []*promise.Result {
	t.Helper()
	results := make([]*promise.Result, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for _, env := range envs[:min(len(envs), n)] {
		wg.Go(func() {
			for i := range next {
				results[i] = promise.Run(context.Background(), env, mk(start+uint64(i)))
			}
		})
	}
	wg.Wait()
	return results
}

// defaultConfig is the default run's: every kind but those pending a fix.
func defaultConfig(seed uint64, steps int) promise.Config {
	c := promise.Config{Seed: seed, Steps: steps, Template: template, Trace: *flagTrace || *flagSeed >= 0,
		Disabled: map[promise.Kind]bool{}}
	if !*flagAll {
		for k := range promise.PendingFixes {
			c.Disabled[k] = true
		}
	}
	if *flagForce != "" {
		for _, k := range promise.AllKinds {
			if strings.Contains(string(k), *flagForce) {
				c.Force = append(c.Force, k)
				delete(c.Disabled, k)
			}
		}
	}
	return c
}

// TestPromise runs the promise simulation: the functions' own handlers, as
// pkg/app assembles them, over the local transport, with the host
// application's workflows and faults at every hop; after quiescence the
// oracle checks the promise for every seed. Kinds pending a fix
// (promise.PendingFixes) are off, and violations pending a fix
// (promise.PendingViolations) are reported by count, not failed: the lead
// removes both lists' entries as the fixes merge.
func TestPromise(t *testing.T) {
	start, n := seedRange(t, 200)
	st := steps(t)
	began := time.Now()
	results := runSeeds(t, start, n, func(seed uint64) promise.Config { return defaultConfig(seed, st) })
	faults := map[promise.Kind]int{}
	violations, known := map[string]int{}, map[string]int{}
	var failed []uint64
	frames, uploads, batches, batchClaims := 0, 0, 0, 0
	for _, r := range results {
		batches += r.Batches
		batchClaims += r.BatchClaims
		for k, c := range r.Faults {
			faults[k] += c
		}
		uploads += r.Uploads
		bad := false
		for k, c := range r.Kinds() {
			if _, ok := promise.PendingViolations[k]; ok {
				known[k] += c
				continue
			}
			violations[k] += c
			bad = true
		}
		if bad {
			failed = append(failed, r.Seed)
			if len(failed) <= 3 {
				t.Errorf("seed %d:\n%s\nreplay: go test ./internal/verify/promise -run 'TestPromise$' -seed=%d -steps=%d -v", r.Seed, r.Report(80), r.Seed, st)
			}
		}
		if *flagSeed >= 0 {
			t.Logf("seed %d:\n%s", r.Seed, r.Report(0))
		}
	}
	_ = frames
	t.Logf("promise summary: %d seeds (%d fault-phase steps each), %d failed, %d uploads, wall %v", n, st, len(failed), uploads, time.Since(began).Round(time.Millisecond))
	t.Logf("builder invocations on the batch path (two claims or more): %d, %d claims", batches, batchClaims)
	t.Logf("kinds injected: %s", promise.FormatCounts(faults))
	t.Logf("violations: %s", promise.FormatCounts(violations))
	t.Logf("known violations pending a fix (not failed): %s", promise.FormatCounts(known))
	for _, k := range slices.Sorted(maps.Keys(promise.PendingFixes)) {
		t.Logf("kind off pending its fix: %s — %s", k, promise.PendingFixes[k])
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d seeds broke the promise: %v", len(failed), n, failed[:min(len(failed), 20)])
	}
	if n >= 60 && *flagSeed < 0 {
		if batches == 0 {
			t.Errorf("no builder invocation claimed two matters or more in %d seeds: the batch path went unexercised", n)
		}
		for _, k := range promise.AllKinds {
			if _, pending := promise.PendingFixes[k]; pending && !*flagAll {
				continue
			}
			if slices.Contains(promise.Scenarios, k) && n < 200 {
				continue // a fifth of the seeds play one scenario each: too few to require every one
			}
			if faults[k] == 0 {
				t.Errorf("kind %q never injected in %d seeds", k, n)
			}
		}
	}
}

// A defect is one row of the promise's negative-control table: force the
// kind that reproduces it, run seeds, and require the oracle to catch it
// (one of checks fires) in at least minCaught seeds.
//
// A row whose fix has merged (revert set) switches the fix off through the
// seam its fixer left (promise.Reverts) and proves the oracle catches the
// revert; the default run (TestPromise) injects its kind with the fix on.
// A row whose fix is still on another branch (revert 0) runs today's code,
// where the defect is present; when that fix merges, its kind leaves
// promise.PendingFixes and the row gets its revert.
type defect struct {
	name      string
	force     promise.Kind
	checks    []string
	seeds     int
	minCaught int
	revert    int // the defect whose fix the row switches off (promise.Reverts); 0: not merged here, the defect is present
}

var defects = []defect{
	{name: "1 upload in flight when the matter closes", force: promise.WCloseInFlight,
		checks: []string{promise.VClosedNotHeld, promise.VPromise, promise.VAckedWithoutEffect, promise.VMissingAlarm}, seeds: 2, minCaught: 2,
		revert: 1},
	// i18-relay's fix (no transaction across PutEvents) is a structure, not
	// a switch: the revert is the oracle's own wrapper on the relay's outbox
	// port (heldOutbox), a transaction on the relay's role held across the
	// bus calls and carrying the marks, as before the fix. The default run
	// plays the scenario with the fix on (a fifth of its seeds play one).
	{name: "2 relay livelock under the role's idle timeout", force: promise.FBusSlowPastBudget,
		checks: []string{promise.VRelayLivelock}, seeds: 2, minCaught: 2, revert: 2},
	{name: "3 retryable EventBridge errors park facts", force: promise.FBusThrottleStorm,
		checks: []string{promise.VParkedTransient}, seeds: 2, minCaught: 1, revert: 3},
	{name: "4 backfill spills onto the live queue", force: promise.FBackfillSaturated,
		checks: []string{promise.VBackfillOnLiveQueue}, seeds: 3, minCaught: 1, revert: 4},
	{name: "5 refused commit treated as ambiguous", force: promise.FBuildRefusedBody,
		checks: []string{promise.VStuckRow}, seeds: 2, minCaught: 2, revert: 5},
	// Caught in about half the seeds (4 of 8 before issue 21's relay lease,
	// 3 of 8 after it, which shifts the seeds' schedules: seed 1 no longer
	// reaches it), so four seeds, not two.
	{name: "6 quarantine swallows demand from the last attempt", force: promise.WDemandDuringLastAttempt,
		checks: []string{promise.VQuarantineSwallowed}, seeds: 4, minCaught: 1, revert: 6},
	{name: "8 failed build waits for the sweep, not its backoff", force: promise.FBuildFailed,
		checks: []string{promise.VRetryLate}, seeds: 3, minCaught: 1, revert: 8},
	{name: "9 backfill rate below 1/min admits nothing", force: promise.WBackfillSlowRate,
		checks: []string{promise.VOutdatedLeft}, seeds: 1, minCaught: 1, revert: 9},
}

// defectSeedFactor multiplies each row's seeds and catches
// ($RAIL_PROMISE_DEFECT_FACTOR; make chaos sets it, for catch counts).
func defectSeedFactor() int {
	if v, err := strconv.Atoi(os.Getenv("RAIL_PROMISE_DEFECT_FACTOR")); err == nil && v > 0 {
		return v
	}
	return 1
}

// TestPromiseDefects runs the table: one subtest per defect
// (-run 'TestPromiseDefects/1_upload').
func TestPromiseDefects(t *testing.T) {
	if *flagSeed >= 0 {
		t.Skip("replaying one seed")
	}
	most := 0
	for _, d := range defects {
		most = max(most, d.seeds*defectSeedFactor())
	}
	envs := newEnvs(t, most)
	rowSteps := promise.DefaultSteps // the rows' catch counts are measured at make chaos's length
	if *flagSteps > 0 {
		rowSteps = *flagSteps
	}
	for _, d := range defects {
		t.Run(d.name, func(t *testing.T) {
			seeds := d.seeds * defectSeedFactor()
			results := runSeedsOn(t, envs, 1, seeds, func(seed uint64) promise.Config {
				c := defaultConfig(seed, rowSteps)
				delete(c.Disabled, d.force)
				c.Force = []promise.Kind{d.force}
				if d.revert != 0 {
					c.Revert = map[int]bool{d.revert: true}
				}
				return c
			})
			caught, counts, all := 0, map[string]int{}, map[string]int{}
			var first []uint64
			for _, r := range results {
				hit := false
				for k, c := range r.Kinds() {
					all[k] += c
					if slices.Contains(d.checks, k) {
						counts[k] += c
						hit = true
					}
				}
				if hit {
					caught++
					first = append(first, r.Seed)
				}
				if n := r.Count(promise.VHarness); n > 0 {
					t.Errorf("seed %d: harness error:\n%s", r.Seed, r.Report(40))
				}
			}
			t.Logf("defect %s: caught in %d of %d seeds %v; %s; all violations: %s", d.name, caught, seeds, first,
				promise.FormatCounts(counts), promise.FormatCounts(all))
			if caught < d.minCaught { // the factor adds seeds for catch counts, not a stricter floor
				for _, r := range results {
					t.Logf("%s", r.Report(60))
				}
				t.Fatalf("the oracle caught defect %s in %d of %d seeds, want at least %d", d.name, caught, seeds, d.minCaught)
			}
		})
	}
}

// TestReplaySameFaults runs a few seeds twice, on other lanes and under
// other load, and requires the same workflow and faults (the kinds
// injected, by count) and the same violations by kind: the part of a seed
// the handlers let it decide (doc.go, "Determinism"). The seeds are ones
// whose builder batches win several claims, with faults during their
// builds: without the stand-ins' turns (turns.go) seed 12 replays other
// faults (three runs of three), with them it replays alike.
func TestReplaySameFaults(t *testing.T) {
	if *flagSeed >= 0 {
		t.Skip("replaying one seed")
	}
	const first, n = 12, 6
	st := steps(t)
	mk := func(seed uint64) promise.Config { return defaultConfig(seed, st) }
	a := runSeeds(t, first, n, mk)
	b := runSeeds(t, first, n, mk)
	batches := 0
	for i := range n {
		batches += a[i].Batches
		if a[i].Batches != b[i].Batches || a[i].BatchClaims != b[i].BatchClaims {
			t.Errorf("seed %d served other batches on replay: %d invocations of %d claims, then %d of %d",
				a[i].Seed, a[i].Batches, a[i].BatchClaims, b[i].Batches, b[i].BatchClaims)
		}
		fa, fb := promise.FormatCounts(a[i].Faults), promise.FormatCounts(b[i].Faults)
		if fa != fb {
			t.Errorf("seed %d injected other faults on replay:\n  first:  %s\n  replay: %s", a[i].Seed, fa, fb)
		}
		va, vb := promise.FormatCounts(a[i].Kinds()), promise.FormatCounts(b[i].Kinds())
		if va != vb {
			t.Errorf("seed %d found other violations on replay:\n  first:  %s\n  replay: %s", a[i].Seed, va, vb)
		}
	}
	t.Logf("seeds %d–%d: %d builder invocations on the batch path, each replayed alike", first, first+n-1, batches)
	if batches == 0 {
		t.Errorf("seeds %d–%d served no batch of two claims or more: the replay does not cover the batch path", first, first+n-1)
	}
}
