package lambdafn_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// A sweep whose first steps fail (the run table locked past their bound)
// still re-nudges and writes the gauges it measured; the invocation fails
// naming the steps, and writes no LeaseExpiries count (a step that failed
// writes nothing, never a false zero). Before the sweeper was a rail
// service the handler wrote no gauge at all after a failed Sweep.
func TestSweeperWritesTheMetricsOfTheStepsThatRan(t *testing.T) {
	db := railtest.NewDB(t)
	ctx := context.Background()
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(ctx, db.Pool, ref, "Harlow Logistics v. Penmark Freight"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.NewLedger(db.Pool, rail.Config{}).Demand(ctx, ref, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE ops.matter_frame_jobs SET last_demanded_at = last_demanded_at - interval '10 minutes'`); err != nil {
		t.Fatal(err)
	}
	metrics, nudges := &syncBuffer{}, &nudgeLog{}
	cfg, err := lambdafn.LoadConfig(lambdafn.Sweeper, func(k string) string {
		return map[string]string{lambdafn.EnvBuildQueueURL: "unused: the nudger is given"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h := lambdafn.NewSweeper(cfg, lambdafn.Deps{Pool: db.Pool, Nudger: nudges, Metrics: emf.New(metrics),
		Log: slog.New(slog.DiscardHandler)})
	h.Sweeper.StepTimeout = 500 * time.Millisecond

	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE ops.matter_frame_runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	res, err := h.Handle(ctx, lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: lambdafn.Sweeper})
	if err == nil || !strings.Contains(err.Error(), "quarantine") {
		t.Fatalf("invocation error %v: want the quarantine's", err)
	}
	if res.Renudged != 1 || len(nudges.sent) != 1 || res.MattersBehind != 1 {
		t.Fatalf("result %+v, nudges %+v: want the lost demand re-nudged and counted", res, nudges.sent)
	}
	for _, m := range []string{lambdafn.MetricMattersBehind, lambdafn.MetricOldestUnservedDemandSeconds, lambdafn.MetricOutboxBacklog} {
		if !metrics.metricSeen(m) {
			t.Errorf("%s not written", m)
		}
	}
	if metrics.metricSeen(lambdafn.MetricLeaseExpiries) {
		t.Error("LeaseExpiries written for a step that failed")
	}
}
