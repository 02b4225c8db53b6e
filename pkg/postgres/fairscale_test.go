package postgres_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// EnvFairScale sets how many matters TestFairSelectionCostAtScale gives the
// big firm (default 20,000; docs/benchmarks.md records 100,000).
const EnvFairScale = "RAIL_FAIR_SCALE"

// The selections as they were before fairness (oldest first, no window):
// the same run's baseline.
var (
	unfairUnservedSQL = strings.Replace(strings.Replace(postgres.SweepUnservedSQL,
		"WHERE firm_rank <= $3\nORDER BY backfill_only, firm_rank, demand_since NULLS LAST, firm_id",
		"ORDER BY backfill_only, demand_since NULLS LAST", 1),
		"row_number() OVER (PARTITION BY backfill_only, firm_id\n                                   ORDER BY demand_since NULLS LAST, matter_id)", "0", 1)
	unfairOutdatedSQL = strings.Replace(strings.Replace(postgres.OutdatedSQL,
		"WHERE firm_rank <= $5\n    ORDER BY firm_rank, claimed_at NULLS FIRST", "ORDER BY claimed_at NULLS FIRST", 1),
		"row_number() OVER (PARTITION BY firm_id ORDER BY claimed_at NULLS FIRST, matter_id)", "0", 1)
)

// The fair statements' cost at scale, against the same statements without
// the window, on the worst case for the window (every matter a candidate:
// all behind for the re-nudge, all outdated and idle for the admission),
// medians of 3, interleaved. The window sorts the candidates the plain
// statement already read; it must stay within the sweep step's bound and
// within a small factor of the baseline. Plans are logged (go test -v).
func TestFairSelectionCostAtScale(t *testing.T) {
	n := 20_000
	if v := os.Getenv(EnvFairScale); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("%s=%q: want a number of matters, at least 1000", EnvFairScale, v)
		}
	}
	if unfairUnservedSQL == postgres.SweepUnservedSQL || unfairOutdatedSQL == postgres.OutdatedSQL {
		t.Fatal("the baselines did not strip the window: update them with the statements")
	}
	cfg := rail.Config{}
	for _, behind := range []bool{true, false} {
		name, fair, unfair := "unserved", postgres.SweepUnservedSQL, unfairUnservedSQL
		args := func() []any { return []any{900, 60, rail.DefaultSweepLimit, 5} }
		if !behind {
			name, fair, unfair = "outdated", postgres.OutdatedSQL, unfairOutdatedSQL
			args = func() []any {
				return []any{deployedID.Name, deployedID.Version, deployedID.ModelID, deployedID.PromptHash, 500}
			}
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t, cfg)
			b.fillFirms(t, n, 100, behind)
			run := func(q string) (time.Duration, int) {
				start := time.Now()
				rows, err := b.pool.Query(b.ctx, q, args()...)
				if err != nil {
					t.Fatal(err)
				}
				k := 0
				for rows.Next() {
					k++
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				return time.Since(start), k
			}
			var fs, us []time.Duration
			for range 3 {
				d, k1 := run(unfair)
				us = append(us, d)
				d, k2 := run(fair)
				fs = append(fs, d)
				if k1 != k2 {
					t.Fatalf("fair listed %d rows, unfair %d", k2, k1)
				}
			}
			slices.Sort(fs)
			slices.Sort(us)
			t.Logf("%s at %d matters, median of 3: fair %s, oldest-first %s", name, n+100, fs[1].Round(time.Millisecond), us[1].Round(time.Millisecond))
			var plan []string
			rows, err := b.pool.Query(b.ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+fair, args()...)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, line)
			}
			t.Logf("plan:\n%s", strings.Join(plan, "\n"))
			if fs[1] > rail.DefaultSweepStepTimeout || fs[1] > 3*us[1]+100*time.Millisecond {
				t.Errorf("%s: fair %s against %s oldest-first: above the step bound or 3× the baseline", name, fs[1], us[1])
			}
		})
	}
}
