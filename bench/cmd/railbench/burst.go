package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// BurstResults: K demands arrive while one build of a matter is running.
// How many further builds follow, and does the last landed result cover
// every demand?
type BurstResults struct {
	K    int `json:"k"`
	Reps int `json:"reps"`

	Rail                 Series   `json:"rail_follow_up_builds"`
	RailStaleReps        int      `json:"rail_stale_final_reps"`
	RiverUnique          Series   `json:"river_unique_follow_up_builds"`
	RiverUniqueSkipped   Series   `json:"river_unique_inserts_skipped"`
	RiverUniqueStaleReps int      `json:"river_unique_stale_final_reps"`
	River                Series   `json:"river_follow_up_builds"`
	RiverMaxParallel     Series   `json:"river_max_concurrent_builds_per_matter"`
	RiverStaleReps       int      `json:"river_stale_final_reps"`
	Notes                []string `json:"notes"`
}

func runBurst(ctx context.Context, e *env, o options) (*BurstResults, error) {
	br := &BurstResults{K: o.Burst, Reps: o.BurstReps, Notes: []string{
		"follow-up builds: builds started after the first, caused by the K demands that arrived while the first was running (each demand is followed by its nudge/insert, delivered concurrently); the rail also gets K duplicate nudges after the follow-up",
		"stale final: the last landed result was built from inputs older than the last demand (the rail: built_generation < requested_generation; River: the build's snapshot of the matter's demand counter < the counter)",
		"River unique: UniqueOpts{ByArgs: true, ByState: available, pending, running, scheduled, retryable} (completed left out, the most permissive set River allows, so a demand after the build could still enqueue)",
	}}
	pool, err := e.pool(ctx, int32(2*o.Workers+4), nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	led := postgres.NewLedger(pool, rail.Config{})
	var railF, uniF, uniSkip, plainF, plainPar []float64
	rb, err := newRiverBurst(ctx, pool, o.Workers)
	if err != nil {
		return nil, err
	}
	defer rb.stop(ctx)
	for rep := 1; rep <= o.BurstReps; rep++ {
		f, stale, err := railBurst(ctx, led, pool, o.Burst)
		if err != nil {
			return nil, fmt.Errorf("rail: %w", err)
		}
		railF = append(railF, float64(f))
		if stale {
			br.RailStaleReps++
		}
		u, err := rb.burst(ctx, fmt.Sprintf("u%d", rep), o.Burst, true)
		if err != nil {
			return nil, fmt.Errorf("river unique: %w", err)
		}
		uniF, uniSkip = append(uniF, float64(u.followUps)), append(uniSkip, float64(u.skipped))
		if u.stale {
			br.RiverUniqueStaleReps++
		}
		p, err := rb.burst(ctx, fmt.Sprintf("p%d", rep), o.Burst, false)
		if err != nil {
			return nil, fmt.Errorf("river: %w", err)
		}
		plainF, plainPar = append(plainF, float64(p.followUps)), append(plainPar, float64(p.maxParallel))
		if p.stale {
			br.RiverStaleReps++
		}
		logf("builds per burst rep %d/%d (K=%d): rail %d, river unique %d (skipped %d), river %d (max parallel %d)",
			rep, o.BurstReps, o.Burst, f, u.followUps, u.skipped, p.followUps, p.maxParallel)
	}
	br.Rail, br.RiverUnique, br.RiverUniqueSkipped = series("builds", railF), series("builds", uniF), series("inserts", uniSkip)
	br.River, br.RiverMaxParallel = series("builds", plainF), series("builds", plainPar)
	return br, nil
}

// railBurst: one matter; a build is claimed; K demands (each with its
// nudge's claim attempt) arrive concurrently during it; it commits; the
// follow-up it reports is nudged; then K late duplicate nudges arrive.
func railBurst(ctx context.Context, led *postgres.Ledger, pool *pgxpool.Pool, k int) (followUps int, stale bool, err error) {
	refs, err := createMatters(ctx, pool, 1, "burst ")
	if err != nil {
		return 0, false, err
	}
	ref := refs[0]
	var builds atomic.Int64
	var pending []rail.Claim
	var mu sync.Mutex
	nudge := func() error {
		c, ok, err := led.Claim(ctx, ref, "burst")
		if err != nil || !ok {
			return err
		}
		builds.Add(1)
		mu.Lock()
		pending = append(pending, c)
		mu.Unlock()
		return nil
	}
	if _, err := led.Demand(ctx, ref, 1); err != nil {
		return 0, false, err
	}
	if err := nudge(); err != nil {
		return 0, false, err
	}
	if builds.Load() != 1 {
		return 0, false, errors.New("first claim not granted")
	}
	first := pending[0]
	pending = nil
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for range k { // K demands during the build, each with its nudge
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := led.Demand(ctx, ref, 1); err != nil {
				errs <- err
				return
			}
			if err := nudge(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, false, err
	}
	// The build finishes; every landed commit that reports a follow-up due
	// sends one nudge, which may start one more build.
	queue := []rail.Claim{first}
	queue = append(queue, pending...) // (none expected: the claim is live)
	pending = nil
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		res, err := led.Commit(ctx, c, noopFrame)
		if err != nil {
			return 0, false, err
		}
		if res.FollowUpDue {
			if err := nudge(); err != nil {
				return 0, false, err
			}
			queue = append(queue, pending...)
			pending = nil
		}
	}
	for range k { // late duplicate nudges
		if err := nudge(); err != nil {
			return 0, false, err
		}
	}
	for _, c := range pending {
		if _, err := led.Commit(ctx, c, noopFrame); err != nil {
			return 0, false, err
		}
	}
	job, err := led.Job(ctx, ref)
	if err != nil {
		return 0, false, err
	}
	return int(builds.Load()) - 1, job.BuiltGeneration < job.RequestedGeneration, nil
}

// River side ---------------------------------------------------------------

type burstArgs struct {
	Key string `json:"key"`
}

func (burstArgs) Kind() string { return "bench_burst" }

type burstState struct {
	builds, active, maxActive atomic.Int64
	firstStarted, release     chan struct{}
	done                      atomic.Int64
}

type riverBurst struct {
	pool   *pgxpool.Pool
	client interface {
		Stop(context.Context) error
	}
	insert func(ctx context.Context, key string, unique bool) (*rivertype.JobInsertResult, error)
	mu     sync.Mutex
	state  map[string]*burstState
}

type burstOutcome struct {
	followUps, skipped, maxParallel int
	stale                           bool
}

func newRiverBurst(ctx context.Context, pool *pgxpool.Pool, workers int) (*riverBurst, error) {
	rb := &riverBurst{pool: pool, state: map[string]*burstState{}}
	ws := river.NewWorkers()
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[burstArgs]) error {
		rb.mu.Lock()
		st := rb.state[job.Args.Key]
		rb.mu.Unlock()
		n := st.builds.Add(1)
		a := st.active.Add(1)
		defer st.active.Add(-1)
		for {
			m := st.maxActive.Load()
			if a <= m || st.maxActive.CompareAndSwap(m, a) {
				break
			}
		}
		// The build reads its inputs: the matter's demand counter now.
		var snapshot int
		if err := pool.QueryRow(ctx, `SELECT requested FROM bench.demands WHERE key = $1`, job.Args.Key).Scan(&snapshot); err != nil {
			return err
		}
		if n == 1 {
			close(st.firstStarted)
			<-st.release
		}
		// ... and lands a result built from that snapshot (last writer wins).
		_, err := pool.Exec(ctx, `UPDATE bench.demands SET built = $2 WHERE key = $1`, job.Args.Key, snapshot)
		st.done.Add(1)
		return err
	}))
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		FetchCooldown:     riverTuned.FetchCooldown,
		FetchPollInterval: riverTuned.FetchPollInterval,
		Logger:            riverLogger(),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:           ws,
	})
	if err != nil {
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	rb.client = client
	uniqueStates := []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
		rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}
	rb.insert = func(ctx context.Context, key string, unique bool) (*rivertype.JobInsertResult, error) {
		var opts *river.InsertOpts
		if unique {
			opts = &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates}}
		}
		return client.Insert(ctx, burstArgs{Key: key}, opts)
	}
	return rb, nil
}

func (rb *riverBurst) stop(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = rb.client.Stop(sctx)
}

func (rb *riverBurst) burst(ctx context.Context, key string, k int, unique bool) (burstOutcome, error) {
	var out burstOutcome
	st := &burstState{firstStarted: make(chan struct{}), release: make(chan struct{})}
	rb.mu.Lock()
	rb.state[key] = st
	rb.mu.Unlock()
	if _, err := rb.pool.Exec(ctx, `INSERT INTO bench.demands (key) VALUES ($1)`, key); err != nil {
		return out, err
	}
	var skipped atomic.Int64
	demand := func() error {
		if _, err := rb.pool.Exec(ctx, `UPDATE bench.demands SET requested = requested + 1 WHERE key = $1`, key); err != nil {
			return err
		}
		res, err := rb.insert(ctx, key, unique)
		if err != nil {
			return err
		}
		if res.UniqueSkippedAsDuplicate {
			skipped.Add(1)
		}
		return nil
	}
	if err := demand(); err != nil {
		return out, err
	}
	select {
	case <-st.firstStarted:
	case <-time.After(30 * time.Second):
		return out, errors.New("first build did not start")
	}
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := demand(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return out, err
	}
	close(st.release)
	// Wait for every enqueued build to finish, then a quiet period in which
	// nothing else starts (the fetch poll interval is 20ms).
	expected := int64(1 + k - int(skipped.Load()))
	deadline := time.Now().Add(60 * time.Second)
	for st.done.Load() < expected {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("%d of %d builds finished", st.done.Load(), expected)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	var requested, built int
	if err := rb.pool.QueryRow(ctx, `SELECT requested, built FROM bench.demands WHERE key = $1`, key).Scan(&requested, &built); err != nil {
		return out, err
	}
	out.followUps = int(st.builds.Load()) - 1
	out.skipped = int(skipped.Load())
	out.maxParallel = int(st.maxActive.Load())
	out.stale = built < requested
	return out, nil
}
