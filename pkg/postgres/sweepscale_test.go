package postgres_test

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// EnvSweepScale sets how many matters TestSweepPassAtScale fills (default
// 20,000 in every run; docs/benchmarks.md records it at 1,000,000).
const EnvSweepScale = "RAIL_SWEEP_SCALE"

// fillMatters inserts n matters across 100 firms, each with a ledger row
// and one landed frame by another builder than the deployed one (every
// matter outdated: the backfill's counts at their worst); one in a hundred
// is behind with its nudge lost, one in a thousand running on an expired
// lease.
func (b *bundle) fillMatters(t *testing.T, n int) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO app.firms (firm_id) SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(f), 12, '0'))::uuid
            FROM generate_series(1, 100) f ON CONFLICT DO NOTHING`,
		`CREATE TEMP TABLE scale AS SELECT i,
            ('00000000-0000-4000-8000-' || lpad(to_hex(i % 100 + 1), 12, '0'))::uuid AS firm_id,
            ('10000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid AS matter_id
            FROM generate_series(1, $1::int) i`,
		`INSERT INTO app.matters (firm_id, matter_id, title) SELECT firm_id, matter_id, 'scale' FROM scale`,
		`INSERT INTO ops.matter_frame_jobs (firm_id, matter_id, requested_generation, claimed_generation,
                target_generation, built_generation, run_status, claimed_at, demand_since, uncovered_since,
                last_demanded_at, lease_seconds, max_attempts, built_by)
            SELECT firm_id, matter_id,
                CASE WHEN i % 100 = 0 THEN 2 ELSE 1 END, 1,
                CASE WHEN i % 1000 = 1 THEN 1 ELSE 1 END, CASE WHEN i % 1000 = 1 THEN 0 ELSE 1 END,
                CASE WHEN i % 1000 = 1 THEN 'running' ELSE 'idle' END,
                clock_timestamp() - interval '1 day',
                CASE WHEN i % 100 = 0 OR i % 1000 = 1 THEN clock_timestamp() - interval '10 minutes' END,
                CASE WHEN i % 100 = 0 THEN clock_timestamp() - interval '10 minutes' END,
                clock_timestamp() - interval '10 minutes', 900, 5,
                -- the frame's builder as the commit records it; one row in a
                -- hundred as if its frame predated the column (the fallback,
                -- and the sweep's "record builders" step)
                CASE WHEN i % 1000 = 1 OR i % 100 = 50 THEN NULL ELSE 'other' || chr(31) || chr(31) || chr(31) END
            FROM scale`,
		`INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body)
            SELECT firm_id, matter_id, 1, 1, 'f', 'other', true, '{}' FROM scale WHERE i % 1000 <> 1`,
		`INSERT INTO ops.matter_frame_runs (firm_id, matter_id, token, target_generation, worker_id, outcome)
            SELECT firm_id, matter_id, 1, 1, 'w', CASE WHEN i % 1000 = 1 THEN 'claimed' ELSE 'landed' END FROM scale`,
		`ANALYZE`,
	} {
		var err error
		if q[:6] == "CREATE" {
			_, err = b.pool.Exec(b.ctx, q, n)
		} else {
			_, err = b.pool.Exec(b.ctx, q)
		}
		if err != nil {
			t.Fatalf("fill: %v\n%s", err, q)
		}
	}
}

// The sweeper's full scans against its 60 s invocation (and the sweeper
// role's 50 s statement timeout) at scale: every step of a pass finishes
// inside its own 15 s bound, the pass inside 55 s, and the counts are
// right. Each step's time is logged (go test -v; RAIL_SWEEP_SCALE=1000000
// for the figure in docs/benchmarks.md).
func TestSweepPassAtScale(t *testing.T) {
	n := 20_000
	if v := os.Getenv(EnvSweepScale); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("%s=%q: want a number of matters, at least 1000", EnvSweepScale, v)
		}
	}
	b := setup(t, rail.Config{})
	start := time.Now()
	b.fillMatters(t, n)
	t.Logf("filled %d matters in %s", n, time.Since(start).Round(time.Millisecond))

	timed := func(name string, f func() error) {
		t.Helper()
		start := time.Now()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := time.Since(start)
		t.Logf("%-16s %8s", name, d.Round(time.Millisecond))
		if d > rail.DefaultSweepStepTimeout {
			t.Errorf("%s took %s at %d matters: above the step timeout %s", name, d, n, rail.DefaultSweepStepTimeout)
		}
	}
	timed("gauges", func() error {
		g, err := b.ledger.LedgerGauges(b.ctx)
		if err == nil && g.MattersBehind != n/100+n/1000 {
			t.Errorf("gauges %+v: want %d behind", g, n/100+n/1000)
		}
		return err
	})
	timed("unserved", func() error {
		found, err := b.ledger.Unserved(b.ctx, 0)
		if err == nil && len(found) != min(rail.DefaultSweepLimit, n/100+n/1000) {
			t.Errorf("unserved: %d listed", len(found))
		}
		return err
	})
	bf := &rail.Backfill{Ledger: b.ledger, Deployed: deployedID, Rate: 30}
	timed("count outdated", func() error {
		outdated, _, err := bf.Count(b.ctx)
		if err == nil && outdated != n-n/1000 {
			t.Errorf("outdated %d", outdated)
		}
		return err
	})
	// Same run, same data: the outdated count as the backfill read it
	// before the row recorded its builder (a newest-frame lookup per
	// matter), interleaved with today's, three rounds, medians. The two
	// must agree.
	var before, after []time.Duration
	for range 3 {
		start := time.Now()
		var old int
		if err := b.pool.QueryRow(b.ctx, frameLookupCountSQL, deployedID.Name, deployedID.Version, deployedID.ModelID,
			deployedID.PromptHash).Scan(&old); err != nil {
			t.Fatal(err)
		}
		before = append(before, time.Since(start))
		start = time.Now()
		now, _, err := b.ledger.CountOutdated(b.ctx, deployedID)
		if err != nil {
			t.Fatal(err)
		}
		after = append(after, time.Since(start))
		if now != old {
			t.Fatalf("outdated: %d read off the rows, %d from the frames", now, old)
		}
	}
	slices.Sort(before)
	slices.Sort(after)
	t.Logf("outdated count, median of 3: frame lookup per matter %s, off the row %s", before[1].Round(time.Millisecond),
		after[1].Round(time.Millisecond))

	s := b.sweeper(&nudgeRecorder{}, &nudgeRecorder{})
	bf.Nudger = &nudgeRecorder{}
	s.Backfill = bf
	start = time.Now()
	pass, err := s.Pass(b.ctx)
	d := time.Since(start)
	for _, step := range []string{rail.StepQuarantine, rail.StepExpiredLeases, rail.StepRenudge, rail.StepGauges, rail.StepBackfill,
		rail.StepOutboxGauges, rail.StepPruneOutbox, rail.StepPruneInbox, rail.StepPruneRecords, rail.StepPruneFrames, rail.StepBuilders} {
		t.Logf("  step %-16s %8s", step, pass.Took[step].Round(time.Millisecond))
	}
	if err != nil || len(pass.Failed) != 0 || pass.Backfill == nil {
		t.Fatalf("pass at %d matters (%s): failed steps %v: %v", n, d, pass.Failed, err)
	}
	t.Logf("whole pass       %8s (%d re-nudged, %d quarantined, %d expiries, %d admitted, %d outdated)", d.Round(time.Millisecond),
		len(pass.Renudged), len(pass.Quarantined), pass.LeaseExpiries, len(pass.Backfill.Admitted), pass.Backfill.Outdated)
	if pass.Backfill.Outdated != n-n/1000 {
		t.Errorf("the pass counted %d outdated", pass.Backfill.Outdated)
	}
	if want := int64(min(n/100, postgres.DefaultFillBuiltBy)); pass.BuildersRecorded != want {
		t.Errorf("the pass recorded %d builders, want %d", pass.BuildersRecorded, want)
	}
	if d > 55*time.Second {
		t.Errorf("pass took %s at %d matters: above the invocation's 60 s less the margin", d, n)
	}
}

// frameLookupCountSQL is the outdated count as it was before the ledger
// row recorded its builder: the newest frame of every matter looked up
// (the baseline TestSweepPassAtScale measures beside today's).
var frameLookupCountSQL = `
SELECT count(*) FROM ops.matter_frame_jobs j
JOIN app.matters m USING (firm_id, matter_id)
JOIN LATERAL (
    SELECT f.builder, f.builder_version, f.model_id, f.prompt_hash
    FROM ops.matter_frames f WHERE f.firm_id = j.firm_id AND f.matter_id = j.matter_id
    ORDER BY f.token DESC LIMIT 1
) f ON true
WHERE m.status = 'open' AND ` + postgres.SQLBuiltByOther("f", "$1", "$2", "$3", "$4")
