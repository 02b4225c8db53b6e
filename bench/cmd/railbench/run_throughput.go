package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// ThroughputResults: served rebuilds (rail) and worked jobs (River) per
// second, and pgbench's transactions per second, each repeated.
type ThroughputResults struct {
	Workers  int `json:"workers"`
	Rebuilds int `json:"rebuilds_per_rep"`
	Batch    int `json:"batch"`

	// End to end: the trigger's path (facts delivered in batches of Batch;
	// River: InsertMany of Batch jobs). The controls in the same
	// repetitions: the trigger recording matter by matter, and one Demand
	// statement a matter against River's one Insert a job (this figure's
	// definition before the trigger's batch call).
	RailE2E               Series `json:"rail_e2e_rebuilds_per_s"`
	RailE2ETriggerEach    Series `json:"rail_e2e_trigger_matter_by_matter_rebuilds_per_s"`
	RailE2EOneDemandEach  Series `json:"rail_e2e_one_demand_each_rebuilds_per_s"`
	RiverE2EOneInsertEach Series `json:"river_e2e_one_insert_each_jobs_per_s"`
	RailDrain             Series `json:"rail_drain_rebuilds_per_s"`
	RiverE2E              Series `json:"river_e2e_jobs_per_s"`
	RiverDrain            Series `json:"river_drain_jobs_per_s"`
	RiverDrainCopy        Series `json:"river_drain_insert_ms"`
	RiverDefaultE2E       Series `json:"river_default_e2e_jobs_per_s"`
	PgbenchSingle         Series `json:"pgbench_single_update_tps"`
	PgbenchN              Series `json:"pgbench_N_tps"`

	RailE2ERoundTrips   Series `json:"rail_e2e_round_trips_per_rebuild"`
	RailDrainRoundTrips Series `json:"rail_drain_round_trips_per_rebuild"`
	RiverE2ERoundTrips  Series `json:"river_e2e_round_trips_per_job"`
	RiverDrainRoundTrip Series `json:"river_drain_round_trips_per_job"`
	RailDrainEmpty      Series `json:"rail_drain_empty_claims"`
	// CPU per served item in the end-to-end run: the server's processes
	// (/proc, as section day measures it) and this process (getrusage:
	// the rail's or River's client side, the producers included), over
	// the timed part alone. Where the rail's time goes when the machine,
	// not a wait, sets the pace.
	RailE2EServerCPU  Series `json:"rail_e2e_server_cpu_ms_per_rebuild"`
	RailE2EClientCPU  Series `json:"rail_e2e_client_cpu_ms_per_rebuild"`
	RiverE2EServerCPU Series `json:"river_e2e_server_cpu_ms_per_job"`
	RiverE2EClientCPU Series `json:"river_e2e_client_cpu_ms_per_job"`

	RiverTuned   riverTuning `json:"river_tuned"`
	RiverDefault riverTuning `json:"river_default"`

	// Sampled pg_stat_activity of the measured backends while each system
	// ran (drain runs): wait_event_type:wait_event -> samples.
	WaitEvents map[string]map[string]int `json:"wait_events"`
	// Updates and heap-only (HOT) updates per table over the whole
	// throughput section (pg_stat_user_tables).
	TableUpdates map[string][2]int64 `json:"table_updates_total_hot"`
	Notes        []string            `json:"notes"`
}

var (
	// River's own benchmark (cmd/river/riverbench) uses these: far faster
	// than the defaults for short jobs.
	riverTuned = riverTuning{Name: "riverbench settings", FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond}
	// River's defaults (FetchCooldown 100ms, FetchPollInterval 1s).
	riverDefault = riverTuning{Name: "river defaults", FetchCooldown: 100 * time.Millisecond, FetchPollInterval: time.Second}
)

func runThroughput(ctx context.Context, e *env, o options) (*ThroughputResults, error) {
	tr := &ThroughputResults{Workers: o.Workers, Rebuilds: o.Rebuilds, Batch: o.Batch,
		RiverTuned: riverTuned, RiverDefault: riverDefault, WaitEvents: map[string]map[string]int{}}
	var pgb *pgbenchRunner
	if o.want("pgbench") {
		var err error
		logf("pgbench: initialising (scale %d)", o.PgbenchScale)
		if pgb, err = newPgbench(ctx, e, o.PgbenchBin, o.PgbenchScale); err != nil {
			return nil, err
		}
		defer pgb.close()
	}
	var (
		railE2E, railDrain, rvE2E, rvDrain, rvCopy, rvDef, pgS, pgN []float64
		railE2EEach, railE2E1, rvE2E1                               []float64
		railE2ERT, railDrainRT, rvE2ERT, rvDrainRT, railEmpty       []float64
		railSrvCPU, railCliCPU, rvSrvCPU, rvCliCPU                  []float64
	)
	doThroughput := o.want("throughput")
	if doThroughput {
		railW, riverW := &wireCounter{}, &wireCounter{}
		railPool, err := e.pool(ctx, int32(2*o.Workers), railW)
		if err != nil {
			return nil, err
		}
		defer railPool.Close()
		riverPool, err := e.pool(ctx, int32(2*o.Workers), riverW)
		if err != nil {
			return nil, err
		}
		defer riverPool.Close()
		led := postgres.NewLedger(railPool, rail.Config{})
		refs, err := createMatters(ctx, railPool, o.Rebuilds, "throughput ")
		if err != nil {
			return nil, err
		}
		cpuConn, err := railPool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		serverCPU, err := newPgCPU(ctx, cpuConn.Conn())
		cpuConn.Release()
		if err != nil {
			logf("throughput: no CPU split (%v)", err)
		}
		// cpuSpan reads the server's and this process's CPU seconds.
		cpuSpan := func() (server, client float64) {
			if serverCPU != nil {
				server = serverCPU.seconds()
			}
			return server, processCPU()
		}
		sampler, err := newWaitSampler(ctx, e)
		if err != nil {
			return nil, err
		}
		defer sampler.close()

		var riverCPU [2]float64 // the last riverOnce's timed part: server, client seconds
		riverOnce := func(tune riverTuning, n, insertBatch int, e2e bool, sample string) (riverRun, error) {
			rb, err := startRiverBench(ctx, riverPool, o.Workers, tune)
			if err != nil {
				return riverRun{}, err
			}
			defer rb.stop(ctx)
			time.Sleep(300 * time.Millisecond) // let the client settle (leader election, first fetch)
			stopS := sampler.start(sample)
			s0, c0 := cpuSpan()
			r, err := rb.serve(ctx, riverW, n, o.Workers, insertBatch, e2e)
			s1, c1 := cpuSpan()
			stopS()
			riverCPU = [2]float64{s1 - s0, c1 - c0}
			return r, err
		}

		logf("throughput: warm-up (rail and River, %d each)", o.Rebuilds)
		if _, err := railServe(ctx, led, railW, refs, o.Workers, o.Batch, feedTrigger); err != nil {
			return nil, err
		}
		if _, err := riverOnce(riverTuned, o.Rebuilds, o.Batch, true, ""); err != nil {
			return nil, err
		}
		for rep := 1; rep <= o.Reps; rep++ {
			s0, c0 := cpuSpan()
			r, err := railServe(ctx, led, railW, refs, o.Workers, o.Batch, feedTrigger)
			if err != nil {
				return nil, err
			}
			s1, c1 := cpuSpan()
			if serverCPU != nil {
				railSrvCPU = append(railSrvCPU, 1000*(s1-s0)/float64(r.Landed))
			}
			railCliCPU = append(railCliCPU, 1000*(c1-c0)/float64(r.Landed))
			railE2E = append(railE2E, float64(r.Landed)/r.Elapsed.Seconds())
			railE2ERT = append(railE2ERT, float64(r.RoundTrips)/float64(r.Landed))

			v, err := riverOnce(riverTuned, o.Rebuilds, o.Batch, true, "")
			if err != nil {
				return nil, err
			}
			rvE2E = append(rvE2E, float64(v.Jobs)/v.Elapsed.Seconds())
			if serverCPU != nil {
				rvSrvCPU = append(rvSrvCPU, 1000*riverCPU[0]/float64(v.Jobs))
			}
			rvCliCPU = append(rvCliCPU, 1000*riverCPU[1]/float64(v.Jobs))
			rvE2ERT = append(rvE2ERT, float64(v.RoundTrips)/float64(v.Jobs))

			stopS := sampler.start("rail")
			r, err = railServe(ctx, led, railW, refs, o.Workers, o.Batch, feedBefore)
			stopS()
			if err != nil {
				return nil, err
			}
			railDrain = append(railDrain, float64(r.Landed)/r.Elapsed.Seconds())
			railDrainRT = append(railDrainRT, float64(r.RoundTrips)/float64(r.Landed))
			railEmpty = append(railEmpty, float64(r.Empty))

			v, err = riverOnce(riverTuned, o.Rebuilds, 1, false, "river")
			if err != nil {
				return nil, err
			}
			rvDrain = append(rvDrain, float64(v.Jobs)/v.Elapsed.Seconds())
			rvCopy = append(rvCopy, ms(v.Insert))
			rvDrainRT = append(rvDrainRT, float64(v.RoundTrips)/float64(v.Jobs))

			// The controls: the trigger matter by matter; one statement a
			// demand or a job.
			if r, err = railServe(ctx, led, railW, refs, o.Workers, o.Batch, feedTriggerMatterByMatter); err != nil {
				return nil, err
			}
			railE2EEach = append(railE2EEach, float64(r.Landed)/r.Elapsed.Seconds())
			if r, err = railServe(ctx, led, railW, refs, o.Workers, o.Batch, feedDemands); err != nil {
				return nil, err
			}
			railE2E1 = append(railE2E1, float64(r.Landed)/r.Elapsed.Seconds())
			if v, err = riverOnce(riverTuned, o.Rebuilds, 1, true, ""); err != nil {
				return nil, err
			}
			rvE2E1 = append(rvE2E1, float64(v.Jobs)/v.Elapsed.Seconds())

			logf("throughput rep %d/%d: rail e2e %.0f/s drain %.0f/s; river e2e %.0f/s drain %.0f/s; controls: rail trigger matter by matter %.0f/s, one demand each %.0f/s, river one insert each %.0f/s",
				rep, o.Reps, railE2E[rep-1], railDrain[rep-1], rvE2E[rep-1], rvDrain[rep-1], railE2EEach[rep-1], railE2E1[rep-1], rvE2E1[rep-1])

			if pgb != nil {
				if err := pgbenchRep(ctx, pgb, o, &pgS, &pgN); err != nil {
					return nil, err
				}
			}
		}
		if o.RiverDefaultN > 0 {
			for rep := 1; rep <= o.Reps; rep++ {
				v, err := riverOnce(riverDefault, o.RiverDefaultN, 1, true, "")
				if err != nil {
					return nil, err
				}
				rvDef = append(rvDef, float64(v.Jobs)/v.Elapsed.Seconds())
			}
			logf("throughput: river with default fetch settings: median %.0f jobs/s", median(rvDef))
		}
		tr.WaitEvents = sampler.result()
		time.Sleep(600 * time.Millisecond) // let backends flush their table statistics
		tr.TableUpdates = map[string][2]int64{}
		rows, err := railPool.Query(ctx, `SELECT schemaname || '.' || relname, n_tup_upd, n_tup_hot_upd
            FROM pg_stat_user_tables WHERE schemaname IN ('ops', 'public') AND n_tup_upd > 0`)
		if err == nil {
			for rows.Next() {
				var name string
				var upd, hot int64
				if rows.Scan(&name, &upd, &hot) == nil {
					tr.TableUpdates[name] = [2]int64{upd, hot}
				}
			}
			rows.Close()
		}
	} else if pgb != nil {
		for rep := 1; rep <= o.Reps; rep++ {
			if err := pgbenchRep(ctx, pgb, o, &pgS, &pgN); err != nil {
				return nil, err
			}
		}
	}
	tr.RailE2E, tr.RailDrain = series("rebuilds/s", railE2E), series("rebuilds/s", railDrain)
	tr.RiverE2E, tr.RiverDrain = series("jobs/s", rvE2E), series("jobs/s", rvDrain)
	tr.RailE2ETriggerEach, tr.RailE2EOneDemandEach = series("rebuilds/s", railE2EEach), series("rebuilds/s", railE2E1)
	tr.RiverE2EOneInsertEach = series("jobs/s", rvE2E1)
	tr.RiverDrainCopy = series("ms", rvCopy)
	tr.RiverDefaultE2E = series("jobs/s", rvDef)
	tr.PgbenchSingle, tr.PgbenchN = series("tps", pgS), series("tps", pgN)
	tr.RailE2ERoundTrips, tr.RailDrainRoundTrips = series("round trips", railE2ERT), series("round trips", railDrainRT)
	tr.RiverE2ERoundTrips, tr.RiverDrainRoundTrip = series("round trips", rvE2ERT), series("round trips", rvDrainRT)
	tr.RailDrainEmpty = series("claims", railEmpty)
	tr.RailE2EServerCPU, tr.RailE2EClientCPU = series("ms", railSrvCPU), series("ms", railCliCPU)
	tr.RiverE2EServerCPU, tr.RiverE2EClientCPU = series("ms", rvSrvCPU), series("ms", rvCliCPU)
	tr.Notes = []string{
		"e2e: one document.uploaded fact a matter is in the outbox before the clock starts; inside the timed part W producers hand them to rail.Trigger.Handle in batches of Batch (an SQS batch: one ops.receive_facts call verifies and records the batch's facts and demands, then the nudges), and River's W producers insert the same batches with InsertMany; the controls: the trigger recording matter by matter (BEGIN, inbox, demand, COMMIT a matter), and one Demand statement a matter against one River Insert a job; drain: rail demands recorded before the clock starts, River jobs bulk-inserted with one InsertManyFast (COPY) inside the timed part (river_drain_insert_ms)",
		"rail no-op build: rail.Worker.BuildBatch per received batch, as the builder function runs it: one claim statement (Ledger.ClaimBatch; Claim for one), one read statement (Ledger.LoadBuilds), a '{}' frame per claim, and the builds that finish together landed by one Ledger.CommitGroup statement",
		"River runs with FetchCooldown 2ms / FetchPollInterval 20ms (River's own benchmark settings); river_default uses River's defaults",
		"all pools: MaxConns 2W, same pgx exec mode; River's client is started before and stopped after each timed part",
	}
	return tr, nil
}

func pgbenchRep(ctx context.Context, pgb *pgbenchRunner, o options, single, n *[]float64) error {
	t, _, err := pgb.tps(ctx, "single_update.sql", o.Workers, o.PgbenchTime)
	if err != nil {
		return err
	}
	*single = append(*single, t)
	t2, _, err := pgb.tps(ctx, "", o.Workers, o.PgbenchTime)
	if err != nil {
		return err
	}
	*n = append(*n, t2)
	logf("pgbench: single-row UPDATE %.0f tps; -N %.0f tps", t, t2)
	return nil
}

// waitSampler samples pg_stat_activity for active backends of the bench
// database (other than itself) and tallies their wait events per label.
type waitSampler struct {
	conn   *pgx.Conn
	mu     sync.Mutex
	counts map[string]map[string]int
}

func newWaitSampler(ctx context.Context, e *env) (*waitSampler, error) {
	conn, err := pgx.Connect(ctx, e.url(e.benchDB))
	if err != nil {
		return nil, err
	}
	return &waitSampler{conn: conn, counts: map[string]map[string]int{}}, nil
}

func (s *waitSampler) close() { _ = s.conn.Close(context.Background()) }

// start samples every 10ms under label until the returned stop is called.
// An empty label samples nothing.
func (s *waitSampler) start(label string) (stop func()) {
	if label == "" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			rows, err := s.conn.Query(context.Background(), `
SELECT coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, 'running')
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`)
			if err != nil {
				continue
			}
			evs, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				continue
			}
			s.mu.Lock()
			m := s.counts[label]
			if m == nil {
				m = map[string]int{}
				s.counts[label] = m
			}
			m["samples"]++
			for _, ev := range evs {
				m[ev]++
			}
			s.mu.Unlock()
		}
	}()
	return func() { close(done); <-finished }
}

func (s *waitSampler) result() map[string]map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// topWaits formats the most frequent wait events of a label.
func topWaits(m map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var xs []kv
	for k, v := range m {
		if k != "samples" {
			xs = append(xs, kv{k, v})
		}
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].v > xs[j].v })
	out := ""
	for i, x := range xs {
		if i == n {
			break
		}
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", x.k, x.v)
	}
	return out
}

// processCPU is this process's user and system CPU seconds so far.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
