package lambdafn_test

import (
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Upload -> current is measured per served demand and emitted as
// DemandToCurrentSeconds; a matter whose frame an older builder version
// built is outdated, the sweeper admits it onto the backfill queue (never
// the live build queue), the builder rebuilds it from there with the model,
// and the backfill's latency is kept apart (BackfillToCurrentSeconds).
func TestEndToEndStalenessMetricAndBackfill(t *testing.T) {
	s := newStack(t)
	ref, _ := s.seedUploads(2)
	s.runRelay()
	deadline := time.Now().Add(10 * time.Second)
	for s.job(ref).RequestedGeneration < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no demand recorded")
		}
		s.drainTrigger()
	}
	s.buildUntil(20*time.Second, func() bool { j := s.job(ref); return j.Current && j.BuiltGeneration > 0 })
	if n := s.metrics.metricSum(t, lambdafn.MetricDemandToCurrentSeconds); n <= 0 {
		t.Fatalf("DemandToCurrentSeconds sum %v: want one positive sample per served demand", n)
	}
	if s.metrics.metricSeen(lambdafn.MetricBackfillToCurrentSeconds) {
		t.Fatal("live demand reported as backfill")
	}

	// The deployed builder is unchanged: nothing is outdated, nothing admitted.
	s.refillBackfill(t)
	if sw := s.runSweeper(); sw.Outdated != 0 || sw.Backfilled != 0 {
		t.Fatalf("sweep with the deployed builder's frames: %+v", sw)
	}
	// The frame was built by an older version of the builder, before the
	// ledger row recorded its builder (built_by NULL: the sweep reads the
	// frame, and records it).
	for _, q := range []string{
		`UPDATE ops.matter_frames SET builder_version = 'brief/v0' WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.matter_frame_jobs SET built_by = NULL WHERE firm_id = $1 AND matter_id = $2`,
	} {
		if _, err := s.db.Pool.Exec(s.ctx, q, ref.FirmID, ref.MatterID); err != nil {
			t.Fatal(err)
		}
	}
	s.refillBackfill(t)
	sw := s.runSweeper()
	if sw.Backfilled != 1 || sw.Outdated != 1 {
		t.Fatalf("sweep: %+v, want the outdated matter admitted", sw)
	}
	if !s.metrics.metricSeen(lambdafn.MetricMattersOutdated) {
		t.Fatal("MattersOutdated not reported")
	}
	if d := s.depth(s.buildQ); d != 0 {
		t.Fatalf("the live build queue holds %d messages: backfill nudges must go to their own queue", d)
	}
	if d := s.depth(s.backfillQ); d != 1 {
		t.Fatalf("backfill queue depth %d, want 1", d)
	}
	deadline = time.Now().Add(20 * time.Second)
	for !s.job(ref).Current {
		if time.Now().After(deadline) {
			t.Fatal("the backfilled build did not land")
		}
		s.pollOnce(s.backfillQ, "BuilderFunction", s.builderH(), 1)
	}
	d, err := postgres.NewLedger(s.db.Pool, rail.Config{}).Diagnose(s.ctx, ref, postgres.OnCallConfig{Deployed: s.sweeper.Sweeper.Backfill.Deployed})
	if err != nil || d.State != postgres.StateCurrent || d.Outdated {
		t.Fatalf("after the backfill: %+v %v", d, err)
	}
	if !s.metrics.metricSeen(lambdafn.MetricBackfillToCurrentSeconds) {
		t.Fatal("BackfillToCurrentSeconds not reported for the backfilled build")
	}
	var invoked bool
	if err := s.db.Pool.QueryRow(s.ctx, `SELECT model_invoked FROM ops.matter_frames WHERE firm_id = $1 AND matter_id = $2
        ORDER BY token DESC LIMIT 1`, ref.FirmID, ref.MatterID).Scan(&invoked); err != nil || !invoked {
		t.Fatalf("the backfilled build skipped the model (invoked %v, err %v): the fingerprint must include the builder's identity", invoked, err)
	}
}

// refillBackfill moves the backfill's allowance a minute back (time travel
// on the control row), so the next sweep may admit a minute's worth.
func (s *stack) refillBackfill(t *testing.T) {
	t.Helper()
	if _, err := s.db.Pool.Exec(s.ctx, `UPDATE ops.backfill_control SET allowance_at = clock_timestamp() - interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
}
