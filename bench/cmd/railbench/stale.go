package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// StaleResults: a worker stalls past its lease, the job is taken over and
// re-run, and the stalled worker then tries to land its (now stale) result.
// Half the stalled workers finish while the re-run is still building
// ("during"), half after the re-run has landed ("after").
type StaleResults struct {
	Reps int `json:"reps"`

	RailAttempts    int `json:"rail_stalled_attempts"`
	RailStale       int `json:"rail_stale_writes"`
	RailRerunLanded int `json:"rail_rerun_landed"`

	RiverAttempts         int            `json:"river_stalled_attempts"`
	RiverStale            int            `json:"river_stale_writes"`
	RiverStaleDuringRerun int            `json:"river_stale_writes_during_rerun"`
	RiverStaleAfterRerun  int            `json:"river_stale_writes_after_rerun"`
	RiverRerunLost        int            `json:"river_rerun_results_rejected"`
	RiverCtxAttempts      int            `json:"river_ctx_stalled_attempts"`
	RiverCtxStale         int            `json:"river_ctx_stale_writes"`
	RiverCtxRerunLost     int            `json:"river_ctx_rerun_results_rejected"`
	RiverRequeued         int            `json:"river_jobs_requeued_over_rerun"`
	RiverCtxRequeued      int            `json:"river_ctx_jobs_requeued_over_rerun"`
	RiverFinalStates      map[string]int `json:"river_final_job_states"`
	RiverRescueSeconds    Series         `json:"river_stall_to_rerun_s"`
	Notes                 []string       `json:"notes"`
}

func runStale(ctx context.Context, e *env, o options) (*StaleResults, error) {
	sr := &StaleResults{Reps: o.StaleReps, RiverFinalStates: map[string]int{}, Notes: []string{
		"a 'write' is the attempt's result row: the rail's frame (inserted in the fenced commit statement), River's row in bench.results inserted in the same transaction as river.JobCompleteTx (River's documented way to make a job's effect atomic with its completion)",
		"stale write: a result landed by an attempt that had already been superseded (the rail: its token was re-claimed; River: the rescuer had rescued the job and a re-run had started)",
		"rail: lease 1s, the takeover is a second Claim after the lease lapsed by the database clock (what the sweep's re-nudge does); River: JobTimeout 1s, RescueStuckJobsAfter 1s; its rescuer runs on the leader every 30s, so each repetition starts a second client (the leader) once the jobs are stuck, and its rescuer's first pass rescues them at once",
		"river (detached): the stalled worker writes and completes with context.WithoutCancel(jobCtx), i.e. it finishes what it started after the job timeout; river_ctx: the worker uses the job context, which River cancelled at JobTimeout, so its own write fails and it returns the error",
		"River's JobCompleteTx (v0.51.2) runs JobSetStateIfRunningMany, whose UPDATE is guarded by state = 'running' but which returns the job row whether or not it updated it; JobCompleteTx errors only when no row comes back (job deleted), so the caller's transaction commits its write in both orders",
		"the stalled attempt's end as River's executor reports it (completion when Work returns nil, retry when it returns an error) is guarded only by state = 'running', which the re-run's row satisfies: river_*_jobs_requeued_over_rerun counts re-runs sent back for another attempt by the stalled attempt's error report",
	}}
	pool, err := e.pool(ctx, int32(4*o.StaleJobs+10), nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	var rescue []float64
	for rep := 1; rep <= o.StaleReps; rep++ {
		a, stale, rerun, err := railStaleRep(ctx, pool, o.StaleJobs)
		if err != nil {
			return nil, fmt.Errorf("rail: %w", err)
		}
		sr.RailAttempts += a
		sr.RailStale += stale
		sr.RailRerunLanded += rerun
		rr, err := riverStaleRep(ctx, pool, rep, o.StaleJobs)
		if err != nil {
			return nil, fmt.Errorf("river: %w", err)
		}
		sr.RiverAttempts += rr.attempts
		sr.RiverStale += rr.staleDuring + rr.staleAfter
		sr.RiverStaleDuringRerun += rr.staleDuring
		sr.RiverStaleAfterRerun += rr.staleAfter
		sr.RiverRerunLost += rr.rerunLost
		sr.RiverCtxAttempts += rr.ctxAttempts
		sr.RiverCtxStale += rr.ctxStale
		sr.RiverCtxRerunLost += rr.ctxRerunLost
		sr.RiverRequeued += rr.requeued
		sr.RiverCtxRequeued += rr.ctxRequeued
		for k, v := range rr.states {
			sr.RiverFinalStates[k] += v
		}
		rescue = append(rescue, rr.rescue.Seconds())
		logf("stale writes rep %d/%d: rail %d/%d; river %d/%d (ctx-honouring %d/%d)", rep, o.StaleReps,
			stale, a, rr.staleDuring+rr.staleAfter, rr.attempts, rr.ctxStale, rr.ctxAttempts)
	}
	sr.RiverRescueSeconds = series("s", rescue)
	return sr, nil
}

// railStaleRep: n matters; each is claimed by a worker that stalls; after
// the lease lapses a second worker claims it (token+1); the two commit in
// the chosen order.
func railStaleRep(ctx context.Context, pool *pgxpool.Pool, n int) (attempts, stale, rerunLanded int, err error) {
	led := postgres.NewLedger(pool, rail.Config{Lease: time.Second})
	refs, err := createMatters(ctx, pool, n, "stale ")
	if err != nil {
		return 0, 0, 0, err
	}
	stalled := make([]rail.Claim, n)
	for i, ref := range refs {
		if _, err := led.Demand(ctx, ref, 1); err != nil {
			return 0, 0, 0, err
		}
		c, ok, err := led.Claim(ctx, ref, "stalled")
		if err != nil || !ok {
			return 0, 0, 0, fmt.Errorf("first claim: ok=%v err=%v", ok, err)
		}
		stalled[i] = c
	}
	time.Sleep(1200 * time.Millisecond) // the stalled workers miss their lease (no heartbeat)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
			c2, ok, err := led.Claim(ctx, ref, "rerun")
			if err != nil || !ok || !c2.TookOverExpiry {
				fail(fmt.Errorf("takeover claim: ok=%v tookOver=%v err=%v", ok, c2.TookOverExpiry, err))
				return
			}
			commit := func(c rail.Claim) (bool, error) {
				_, err := led.Commit(context.WithoutCancel(ctx), c, noopFrame)
				if errors.Is(err, rail.ErrFenced) {
					return false, nil
				}
				return err == nil, err
			}
			var staleLanded, rerunOK bool
			if i%2 == 0 { // the stalled worker finishes while the re-run builds
				staleLanded, err = commit(stalled[i])
				if err == nil {
					rerunOK, err = commit(c2)
				}
			} else { // ... or after the re-run landed
				rerunOK, err = commit(c2)
				if err == nil {
					staleLanded, err = commit(stalled[i])
				}
			}
			if err != nil {
				fail(err)
				return
			}
			_ = staleLanded
			_ = rerunOK
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, 0, 0, firstErr
	}
	// The database is the witness: frames landed under the stalled tokens.
	var s, r int
	err = pool.QueryRow(ctx, `
SELECT count(*) FILTER (WHERE f.token = j.claimed_generation - 1),
       count(*) FILTER (WHERE f.token = j.claimed_generation)
FROM ops.matter_frames f JOIN ops.matter_frame_jobs j USING (firm_id, matter_id)
WHERE f.matter_id = ANY($1::uuid[])`, uuidsOf(refs)).Scan(&s, &r)
	return n, s, r, err
}

func uuidsOf(refs []rail.MatterRef) []uuid.UUID {
	out := make([]uuid.UUID, len(refs))
	for i, r := range refs {
		out[i] = r.MatterID
	}
	return out
}

// River side ---------------------------------------------------------------

type staleArgs struct {
	Rep    int  `json:"rep"`
	Key    int  `json:"key"`
	During bool `json:"during"` // the stalled attempt finishes while the re-run builds
	Honour bool `json:"honour"` // the stalled attempt's write uses the (cancelled) job context
}

func (staleArgs) Kind() string { return "bench_stale" }

func (a staleArgs) scenario() string {
	if a.Honour {
		return fmt.Sprintf("river-ctx-%d", a.Rep)
	}
	return fmt.Sprintf("river-%d", a.Rep)
}

type staleJob struct {
	stalledStarted, rerunStarted     chan struct{}
	releaseStalled, rerunGo          chan struct{}
	stalledDone, rerunDone           chan struct{}
	stalledLanded, rerunLanded       bool
	stalledOnce, rerunOnce           sync.Once
	extraRuns                        atomic.Int32
	stalledStartedAt, rerunStartedAt time.Time
}

type riverStaleOutcome struct {
	attempts, staleDuring, staleAfter, rerunLost int
	ctxAttempts, ctxStale, ctxRerunLost          int
	requeued, ctxRequeued                        int
	states                                       map[string]int
	rescue                                       time.Duration
}

func riverStaleRep(ctx context.Context, pool *pgxpool.Pool, rep, n int) (riverStaleOutcome, error) {
	out := riverStaleOutcome{states: map[string]int{}}
	jobs := map[int]*staleJob{}
	var args []staleArgs
	for k := range 2 * n { // n detached + n honouring
		jobs[k] = &staleJob{
			stalledStarted: make(chan struct{}), rerunStarted: make(chan struct{}),
			releaseStalled: make(chan struct{}), rerunGo: make(chan struct{}),
			stalledDone: make(chan struct{}), rerunDone: make(chan struct{}),
		}
		args = append(args, staleArgs{Rep: rep, Key: k, During: k%2 == 0, Honour: k >= n})
	}
	write := func(wctx context.Context, job *river.Job[staleArgs]) (bool, error) {
		tx, err := pool.Begin(wctx)
		if err != nil {
			return false, err
		}
		defer tx.Rollback(context.WithoutCancel(wctx))
		if _, err := tx.Exec(wctx, `INSERT INTO bench.results (scenario, key, attempt) VALUES ($1, $2, $3)`,
			job.Args.scenario(), itoa(job.Args.Key), job.Attempt); err != nil {
			return false, err
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](wctx, tx, job); err != nil {
			return false, err
		}
		return true, tx.Commit(wctx)
	}
	work := func(ctx context.Context, job *river.Job[staleArgs]) error {
		j := jobs[job.Args.Key]
		switch job.Attempt {
		case 1:
			j.stalledStartedAt = time.Now()
			close(j.stalledStarted)
			<-j.releaseStalled // stalled: paused, partitioned, or stuck in a call that ignores ctx
			wctx := context.WithoutCancel(ctx)
			if job.Args.Honour {
				wctx = ctx
			}
			landed, err := write(wctx, job)
			j.stalledLanded = landed
			close(j.stalledDone)
			return err
		case 2:
			j.rerunStartedAt = time.Now()
			close(j.rerunStarted)
			<-j.rerunGo
			landed, err := write(ctx, job)
			j.rerunLanded = landed
			close(j.rerunDone)
			return err
		default:
			j.extraRuns.Add(1)
			_, err := write(ctx, job)
			return err
		}
	}
	mk := func(queue string, leader bool) (*river.Client[pgx.Tx], error) {
		ws := river.NewWorkers()
		river.AddWorker(ws, river.WorkFunc(work))
		return river.NewClient(riverpgxv5.New(pool), &river.Config{
			FetchCooldown:          riverTuned.FetchCooldown,
			FetchPollInterval:      riverTuned.FetchPollInterval,
			JobTimeout:             time.Second,
			RescueStuckJobsAfter:   time.Second,
			LeaderElectionDisabled: !leader,
			Logger:                 riverLogger(),
			Queues:                 map[string]river.QueueConfig{queue: {MaxWorkers: 4*n + 4}},
			Workers:                ws,
		})
	}
	worker, err := mk(river.QueueDefault, false)
	if err != nil {
		return out, err
	}
	if err := worker.Start(ctx); err != nil {
		return out, err
	}
	stopped := false
	defer func() {
		if !stopped {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = worker.StopAndCancel(sctx)
		}
	}()
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i].Args = a
	}
	if _, err := worker.InsertMany(ctx, params); err != nil {
		return out, err
	}
	for _, j := range jobs {
		select {
		case <-j.stalledStarted:
		case <-time.After(20 * time.Second):
			return out, errors.New("stalled attempts did not start")
		}
	}
	stuckAt := time.Now()
	time.Sleep(1500 * time.Millisecond) // past JobTimeout and RescueStuckJobsAfter
	leader, err := mk("bench_leader", true)
	if err != nil {
		return out, err
	}
	if err := leader.Start(ctx); err != nil {
		return out, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = leader.Stop(sctx)
	}()
	var wg sync.WaitGroup
	for k, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-j.rerunStarted:
			case <-time.After(60 * time.Second):
				close(j.releaseStalled)
				return
			}
			if args[k].During {
				close(j.releaseStalled)
				<-j.stalledDone
				// Let River's executor report the stalled attempt's end
				// (its completer batches) before the re-run finishes.
				time.Sleep(300 * time.Millisecond)
				close(j.rerunGo)
				<-j.rerunDone
			} else {
				close(j.rerunGo)
				<-j.rerunDone
				close(j.releaseStalled)
				<-j.stalledDone
			}
		}()
	}
	wg.Wait()
	var lastRerun time.Time
	for _, j := range jobs {
		if j.rerunStartedAt.After(lastRerun) {
			lastRerun = j.rerunStartedAt
		}
	}
	out.rescue = lastRerun.Sub(stuckAt)
	time.Sleep(500 * time.Millisecond) // let the executors' own completions/error reports flush
	for k, j := range jobs {
		select {
		case <-j.rerunStarted:
		default:
			return out, fmt.Errorf("job %d was never re-run", k)
		}
	}

	// The database is the witness.
	rows, err := pool.Query(ctx, `SELECT key::int, attempt FROM bench.results WHERE scenario IN ($1, $2)`,
		fmt.Sprintf("river-%d", rep), fmt.Sprintf("river-ctx-%d", rep))
	if err != nil {
		return out, err
	}
	type kv struct{ key, attempt int }
	written, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kv, error) {
		var x kv
		return x, r.Scan(&x.key, &x.attempt)
	})
	if err != nil {
		return out, err
	}
	landed := map[int]map[int]bool{}
	for _, w := range written {
		if landed[w.key] == nil {
			landed[w.key] = map[int]bool{}
		}
		landed[w.key][w.attempt] = true
	}
	for k, a := range args {
		staleLanded, rerunLanded := landed[k][1], landed[k][2]
		if a.Honour {
			out.ctxAttempts++
			if staleLanded {
				out.ctxStale++
			}
			if !rerunLanded {
				out.ctxRerunLost++
			}
			continue
		}
		out.attempts++
		switch {
		case staleLanded && a.During:
			out.staleDuring++
		case staleLanded:
			out.staleAfter++
		}
		if !rerunLanded {
			out.rerunLost++
		}
	}
	srows, err := pool.Query(ctx, `SELECT (args->>'key')::int, state::text, attempt FROM river_job
        WHERE kind = 'bench_stale' AND (args->>'rep')::int = $1`, rep)
	if err != nil {
		return out, err
	}
	for srows.Next() {
		var key, attempt int
		var state string
		if err := srows.Scan(&key, &state, &attempt); err != nil {
			return out, err
		}
		out.states[state]++
		// The re-run's row was sent back for another run (or ran a third
		// time): the stalled attempt's end was written over it.
		if state != "completed" || attempt > 2 {
			if args[key].Honour {
				out.ctxRequeued++
			} else {
				out.requeued++
			}
		}
	}
	if err := srows.Err(); err != nil {
		return out, err
	}
	// Leftovers (a retryable job awaiting a third run) must not leak into
	// later sections.
	if _, err := pool.Exec(ctx, `DELETE FROM river_job WHERE kind = 'bench_stale' AND state <> 'completed'`); err != nil {
		return out, err
	}
	stopped = true
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = worker.StopAndCancel(sctx)
	return out, nil
}
