// Command railbench measures the Brief rail's job ledger against River (a
// Postgres job queue), watermill-sql's forwarder (when the relay exists) and
// the server's own single-row write ceiling (pgbench), all on one Postgres
// in one run. It prints one comparison per line (`name: value`) and writes
// the full results as JSON.
//
//	cd bench && go run ./cmd/railbench            # throwaway server via internal/testenv/localpg
//	DATABASE_URL=postgres://... go run ./cmd/railbench
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

type options struct {
	Workers               int           `json:"workers"`
	Rebuilds              int           `json:"rebuilds"`
	Batch                 int           `json:"batch"`
	Reps                  int           `json:"reps"`
	RiverDefaultN         int           `json:"river_default_jobs"`
	PgbenchBin            string        `json:"pgbench_bin"`
	PgbenchTime           time.Duration `json:"pgbench_time_ns"`
	PgbenchScale          int           `json:"pgbench_scale"`
	StaleJobs             int           `json:"stale_jobs"`
	StaleReps             int           `json:"stale_reps"`
	Burst                 int           `json:"burst"`
	BurstReps             int           `json:"burst_reps"`
	Growth                []int         `json:"growth_rows"`
	GrowthMatters         int           `json:"growth_matters"`
	GrowthCycles          int           `json:"growth_cycles"`
	GrowthIndexExperiment bool          `json:"growth_index_experiment"`
	ExecMode              string        `json:"exec_mode"`
	RelayFacts            int           `json:"relay_facts"`
	RelayBatch            int           `json:"relay_batch"`
	MemDocs               int           `json:"mem_documents"`
	MemPages              int           `json:"mem_pages"`
	MemPageBytes          int           `json:"mem_page_bytes"`
	MemReps               int           `json:"mem_reps"`
	MemModes              string        `json:"mem_modes,omitempty"`
	BackfillMatters       int           `json:"backfill_matters"`
	Only                  string        `json:"only,omitempty"`
	PruneSizes            []int         `json:"prune_sizes"`
	FairImport            int           `json:"fair_import_matters"`
	PerUploadMatters      int           `json:"per_upload_matters"`
	PerUploadBatch        int           `json:"per_upload_builder_batch"`
	Day                   dayOptions    `json:"day"`
	Out                   string        `json:"-"`
}

func main() {
	if what := os.Getenv(extractChildEnv); what != "" {
		extractChild(what)
	}
	if mode := os.Getenv(envMemChild); mode != "" {
		memChild(mode) // a child of the memory section; exits
	}
	var o options
	var growth, pruneSizes, dayScales string
	flag.IntVar(&o.Workers, "workers", 8, "workers (W) for the rail and River, and pgbench clients")
	flag.IntVar(&o.Rebuilds, "rebuilds", 2000, "rebuilds (rail) and jobs (River) per throughput repetition")
	flag.IntVar(&o.Batch, "batch", 10, "nudges a rail worker takes per receive (an SQS batch is up to 10)")
	flag.IntVar(&o.Reps, "reps", 5, "repetitions of each throughput and latency measurement (medians reported)")
	flag.IntVar(&o.RiverDefaultN, "river-default-jobs", 400, "jobs per repetition for River with its default fetch settings (slow: ~10 jobs per worker per second)")
	flag.StringVar(&o.PgbenchBin, "pgbench", "pgbench", "pgbench binary")
	flag.DurationVar(&o.PgbenchTime, "pgbench-time", 8*time.Second, "pgbench -T per repetition")
	flag.IntVar(&o.PgbenchScale, "pgbench-scale", 1, "pgbench -i -s")
	flag.IntVar(&o.StaleJobs, "stale-jobs", 20, "stalled jobs per stale-write repetition (half complete during the re-run, half after)")
	flag.IntVar(&o.StaleReps, "stale-reps", 3, "stale-write repetitions")
	flag.IntVar(&o.Burst, "burst", 10, "demands (K) arriving during one build")
	flag.IntVar(&o.BurstReps, "burst-reps", 5, "builds-per-burst repetitions")
	flag.StringVar(&growth, "growth", "0,100k,1M", "history sizes (rows each of frames and runs) for the growth test; e.g. 0,1M,10M")
	flag.IntVar(&o.GrowthMatters, "growth-matters", 100, "matters the growth history is spread over (and that are measured)")
	flag.IntVar(&o.GrowthCycles, "growth-cycles", 100, "demand/claim/commit cycles timed per growth repetition")
	flag.BoolVar(&o.GrowthIndexExperiment, "growth-index-experiment", true, "after the largest growth stage, re-measure with a partial index on open runs (then drop it)")
	flag.StringVar(&o.ExecMode, "exec-mode", "cache_statement", "pgx query exec mode for every pool: cache_statement, cache_describe, describe_exec, exec, simple_protocol")
	flag.IntVar(&o.RelayFacts, "relay-facts", 5000, "facts per relay repetition")
	flag.IntVar(&o.RelayBatch, "relay-batch", 0, "rows per relay pass (0: the relay's default, rail.DefaultRelayBatch)")
	flag.IntVar(&o.MemDocs, "mem-docs", 2000, "documents in the memory section's matter")
	flag.IntVar(&o.MemPages, "mem-pages", 100, "pages per document in the memory section")
	flag.IntVar(&o.MemPageBytes, "mem-page-bytes", 1000, "bytes of text per page in the memory section (about)")
	flag.IntVar(&o.MemReps, "mem-reps", 3, "repetitions of each memory mode (medians reported)")
	flag.StringVar(&o.MemModes, "mem-modes", "", "memory modes to run (all-in-memory,stream-digest,stream-extractive); default all")
	flag.IntVar(&o.BackfillMatters, "backfill-matters", 10000, "outdated matters in the backfill section (live latency with and without a backfill)")
	flag.IntVar(&o.PerUploadMatters, "per-upload-matters", 200, "matters in the per-served-upload burst (three uploads then a Regenerate on each)")
	flag.IntVar(&o.PerUploadBatch, "per-upload-builder-batch", 10, "nudges per builder invocation in the per-served-upload burst (template.yaml's BatchSize: 10)")
	flag.StringVar(&pruneSizes, "prune-frames", "10k,100k", "old frames kept (none prunable) for the frame-retention pass; e.g. 10k,100k,300k")
	flag.IntVar(&o.FairImport, "fair-import", 1000, "matters in the fairness section's bulk import (one document each)")
	flag.StringVar(&dayScales, "day-scale", "0.02,0.05,0.1", "section day: fractions of the day's volume to run, each on a fresh database; e.g. 0.1,0.5,1.0")
	flag.IntVar(&o.Day.Firms, "day-firms", 2000, "section day: firms (Zipf-distributed sizes)")
	flag.IntVar(&o.Day.Uploads, "day-uploads", 200000, "section day: uploads in the day at scale 1")
	flag.IntVar(&o.Day.Matters, "day-matters", 20000, "section day: matters at scale 1 (at least one per firm)")
	flag.DurationVar(&o.Day.Length, "day-length", 40*time.Minute, "section day: the 24 hours at scale 1 compressed into this long; each scale's day is this x its scale (the same upload rate) unless -day-fixed-length")
	flag.BoolVar(&o.Day.FixedLength, "day-fixed-length", false, "section day: every scale's day is -day-length long (the rate grows with the scale)")
	flag.DurationVar(&o.Day.BuildReal, "day-build-time", 30*time.Second, "section day: the build (model call) time in real time; compressed with the day")
	flag.IntVar(&o.Day.Builders, "day-builders", 64, "section day: builder concurrency on the build queue (MaximumConcurrency)")
	flag.IntVar(&o.Day.Backfillers, "day-backfill-builders", 8, "section day: builder concurrency on the backfill queue (BackfillConcurrency)")
	flag.Float64Var(&o.Day.ZipfS, "day-zipf", 1.0, "section day: Zipf exponent of firm sizes")
	flag.Uint64Var(&o.Day.Seed, "day-seed", 21, "section day: workload seed")
	flag.BoolVar(&preloadStatements, "day-statements", true, "section day: load pg_stat_statements in the throwaway server and report each statement's calls and time per upload, by handler (only when section day runs)")
	flag.StringVar(&o.Only, "only", "", "comma-separated sections to run (throughput,pgbench,roundtrips,stale,burst,growth,relay,memory,extract,brief,backfill,prune,fairness,perupload,day); default all")
	flag.StringVar(&o.Out, "out", "results/latest.json", "where to write the JSON results")
	cpuProfile := flag.String("cpuprofile", "", "write this process's CPU profile (the rail's and the peers' client side) to the file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatalf("railbench: -cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatalf("railbench: -cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}

	var err error
	if o.Growth, err = parseSizes(growth); err != nil {
		log.Fatalf("railbench: -growth: %v", err)
	}
	if o.PruneSizes, err = parseSizes(pruneSizes); err != nil {
		log.Fatalf("railbench: -prune-frames: %v", err)
	}
	if o.Day.Scales, err = parseScales(dayScales); err != nil {
		log.Fatalf("railbench: -day-scale: %v", err)
	}
	mode, err := parseExecMode(o.ExecMode)
	if err != nil {
		log.Fatalf("railbench: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, mode); err != nil {
		pprof.StopCPUProfile()
		log.Fatalf("railbench: %v", err)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// offlineOnly: -only names sections that need no database.
func offlineOnly(o options) bool {
	if o.Only == "" {
		return false
	}
	for _, s := range strings.Split(o.Only, ",") {
		if s = strings.TrimSpace(s); s != "extract" && s != "brief" {
			return false
		}
	}
	return true
}

func (o options) want(section string) bool {
	if o.Only == "" {
		return true
	}
	for _, s := range strings.Split(o.Only, ",") {
		if strings.TrimSpace(s) == section {
			return true
		}
	}
	return false
}

// Results is everything the run measured, written as JSON.
type Results struct {
	Machine    Machine            `json:"machine"`
	Options    options            `json:"options"`
	Command    string             `json:"command"`
	StartedAt  time.Time          `json:"started_at"`
	Duration   string             `json:"duration"`
	Throughput *ThroughputResults `json:"throughput,omitempty"`
	RoundTrips *RoundTripResults  `json:"round_trips,omitempty"`
	Stale      *StaleResults      `json:"stale_writes,omitempty"`
	Burst      *BurstResults      `json:"builds_per_burst,omitempty"`
	Growth     *GrowthResults     `json:"growth,omitempty"`
	Relay      *RelayResults      `json:"relay,omitempty"`
	Extract    *ExtractResults    `json:"extract,omitempty"`
	Brief      *BriefResults      `json:"brief,omitempty"`
	Memory     *MemoryResults     `json:"build_memory,omitempty"`
	Backfill   *BackfillResults   `json:"backfill,omitempty"`
	Prune      *PruneResults      `json:"frame_prune,omitempty"`
	Fairness   *FairnessResults   `json:"fairness,omitempty"`
	PerUpload  *PerUploadResults  `json:"per_served_upload,omitempty"`
	Day        *DayResults        `json:"day,omitempty"`
	Summary    []SummaryLine      `json:"summary"`
}

type Machine struct {
	NumCPU    int    `json:"nproc"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	Postgres  string `json:"postgres"`
	Server    string `json:"server"` // throwaway (localpg) or DATABASE_URL
}

type SummaryLine struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func run(ctx context.Context, o options, mode pgx.QueryExecMode) error {
	began := time.Now()
	res := &Results{
		Options:   o,
		Command:   "cd bench && go run ./cmd/railbench " + strings.Join(os.Args[1:], " "),
		StartedAt: began.UTC(),
		Machine:   Machine{NumCPU: runtime.NumCPU(), CPUModel: cpuModel(), GoVersion: runtime.Version()},
	}
	var err error
	if o.want("extract") {
		// No database: PDF text extraction only.
		if res.Extract, err = runExtract(o); err != nil {
			return fmt.Errorf("extract: %w", err)
		}
	}
	if o.want("brief") {
		// No database either: the extractive Brief over the same filings.
		if res.Brief, err = runBrief(ctx, o); err != nil {
			return fmt.Errorf("brief: %w", err)
		}
	}
	if offlineOnly(o) {
		return finish(res, o, began)
	}
	preloadStatements = preloadStatements && o.want("day") // the other sections run without it
	e, err := setupEnv(ctx, logf, mode)
	if err != nil {
		return err
	}
	defer e.close()
	res.Machine.Postgres = e.pgVersion
	res.Machine.Server = "throwaway (internal/testenv/localpg: fsync, synchronous_commit, full_page_writes off)"
	if e.server == nil {
		res.Machine.Server = "DATABASE_URL"
	}
	logf("postgres: %s", e.pgVersion)

	if o.want("throughput") || o.want("pgbench") {
		if res.Throughput, err = runThroughput(ctx, e, o); err != nil {
			return fmt.Errorf("throughput: %w", err)
		}
	}
	if o.want("roundtrips") {
		if res.RoundTrips, err = runRoundTrips(ctx, e, o); err != nil {
			return fmt.Errorf("round trips: %w", err)
		}
	}
	if o.want("stale") {
		if res.Stale, err = runStale(ctx, e, o); err != nil {
			return fmt.Errorf("stale writes: %w", err)
		}
	}
	if o.want("burst") {
		if res.Burst, err = runBurst(ctx, e, o); err != nil {
			return fmt.Errorf("builds per burst: %w", err)
		}
	}
	if o.want("growth") {
		if res.Growth, err = runGrowth(ctx, e, o); err != nil {
			return fmt.Errorf("growth: %w", err)
		}
	}
	if o.want("relay") {
		if res.Relay, err = runRelay(ctx, e, o); err != nil {
			return fmt.Errorf("relay: %w", err)
		}
	}

	if o.want("memory") {
		if res.Memory, err = runMemory(ctx, e, o); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}

	if o.want("backfill") {
		if res.Backfill, err = runBackfill(ctx, e, o); err != nil {
			return fmt.Errorf("backfill: %w", err)
		}
	}

	if o.want("perupload") {
		if res.PerUpload, err = runPerUpload(ctx, e, o); err != nil {
			return fmt.Errorf("per served upload: %w", err)
		}
	}

	if o.want("prune") {
		if res.Prune, err = runPrune(ctx, e, o); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
	}

	if o.want("fairness") {
		if res.Fairness, err = runFairness(ctx, e, o); err != nil {
			return fmt.Errorf("fairness: %w", err)
		}
	}

	if o.want("day") {
		if res.Day, err = runDay(ctx, e, o.Day); err != nil {
			return fmt.Errorf("day: %w", err)
		}
	}

	return finish(res, o, began)
}

// finish summarises the results, prints the summary and writes the JSON.
func finish(res *Results, o options, began time.Time) error {
	res.Duration = time.Since(began).Round(time.Second).String()
	res.Summary = summarize(res)
	fmt.Println()
	fmt.Println("== railbench summary ==")
	for _, l := range res.Summary {
		fmt.Printf("%s: %s\n", l.Name, l.Value)
	}
	if o.Out != "" {
		if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
			return err
		}
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.Out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		logf("wrote %s", o.Out)
	}
	return nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		if f == "" {
			continue
		}
		mult := 1
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1_000, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "m"):
			mult, f = 1_000_000, strings.TrimSuffix(f, "m")
		}
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 0 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

func parseExecMode(s string) (pgx.QueryExecMode, error) {
	switch s {
	case "cache_statement":
		return pgx.QueryExecModeCacheStatement, nil
	case "cache_describe":
		return pgx.QueryExecModeCacheDescribe, nil
	case "describe_exec":
		return pgx.QueryExecModeDescribeExec, nil
	case "exec":
		return pgx.QueryExecModeExec, nil
	case "simple_protocol":
		return pgx.QueryExecModeSimpleProtocol, nil
	}
	return 0, fmt.Errorf("unknown -exec-mode %q", s)
}
