package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
)

// localRail is the rail as pkg/app assembles it over the local transport
// (the template's bus and queues in process), driven by hand one
// invocation at a time so that a test decides what happens between hops.
type localRail struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	ledger *postgres.Ledger
	r      *app.Rail
	tr     app.Transport
	ref    rail.MatterRef
	// metrics: the handlers' EMF lines.
	metrics *strings.Builder
}

func newLocalRail(t *testing.T) *localRail {
	t.Helper()
	return newLocalRailWith(t, nil)
}

// newLocalRailWith is newLocalRail with the Brief builder fb (nil: the
// extractive builder, as deployed by default).
func newLocalRailWith(t *testing.T, fb rail.FrameBuilder) *localRail {
	t.Helper()
	ctx := context.Background()
	db := railtest.NewDB(t)
	pool := railtest.Pool(t, db.URL, 4)
	base, err := lambdafn.LoadOperatorConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	// The local rail's timings, with a sweep grace short enough to wait out.
	cfg := app.LocalConfig(base, app.LocalTimings{Lease: 10 * time.Second, SettleDelay: 10 * time.Millisecond,
		SweepGrace: 300 * time.Millisecond}, app.BuilderExtractive)
	metrics := &strings.Builder{}
	w, err := app.LocalWiring("../../template.yaml", cfg, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr := app.LocalTransport(w, nil)
	if fb == nil {
		if fb, err = app.NewFrameBuilder(ctx, app.BuilderExtractive, app.BuilderOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := app.Assemble(cfg, app.Deps{Pool: pool, Transport: tr, Builder: fb, Metrics: emf.New(metrics)})
	if err != nil {
		t.Fatal(err)
	}
	lr := &localRail{t: t, ctx: ctx, pool: pool, ledger: postgres.NewLedger(pool, cfg.RailConfig()), r: r, tr: tr, metrics: metrics,
		ref: rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}}
	if _, err := record.NewMatter(ctx, pool, lr.ref, "Harlow Logistics Ltd v. Penmark Freight Inc."); err != nil {
		t.Fatal(err)
	}
	return lr
}

// upload stores a document and its document.uploaded fact (one
// transaction, as the host application does).
func (lr *localRail) upload(name, text string) {
	lr.t.Helper()
	if _, err := record.StoreDocument(lr.ctx, lr.pool, lr.ref, rail.NewDocument{Name: name, Pages: []string{text}}); err != nil {
		lr.t.Fatal(err)
	}
}

func (lr *localRail) setStatus(status string) {
	lr.t.Helper()
	if err := postgres.SetMatterStatus(lr.ctx, lr.pool, lr.ref, status); err != nil {
		lr.t.Fatal(err)
	}
}

// relay invokes the relay function once (its schedule's input).
func (lr *localRail) relay() lambdafn.RelayResult {
	lr.t.Helper()
	res, err := lr.r.InvokeRelay(lr.ctx)
	if err != nil {
		lr.t.Fatalf("relay: %v", err)
	}
	return res
}

// poll delivers one batch from q to h, as the event source mapping does,
// and returns how many messages it carried.
func (lr *localRail) poll(name string, q localbus.Source, h localbus.Handler, wait time.Duration) int {
	lr.t.Helper()
	var failed error
	p := &localbus.Poller{Name: name, Source: q, Handler: h, Batch: 10, Wait: wait, OnError: func(err error) { failed = err }}
	n, err := p.PollOnce(lr.ctx)
	if err != nil || failed != nil {
		lr.t.Fatalf("%s: %v %v", name, err, failed)
	}
	return n
}

func (lr *localRail) trigger() int {
	return lr.poll(app.Trigger, lr.tr.TriggerQueue, lr.r.Trigger.Handle, 2*time.Second)
}

func (lr *localRail) build(wait time.Duration) int {
	return lr.poll(app.Builder, lr.tr.BuildQueue, lr.r.Builder.Handle, wait)
}

func (lr *localRail) sweep() lambdafn.SweepResult {
	lr.t.Helper()
	res, err := lr.r.InvokeSweeper(lr.ctx)
	if err != nil {
		lr.t.Fatalf("sweep: %v", err)
	}
	return res
}

func (lr *localRail) job() postgres.JobRow {
	lr.t.Helper()
	j, err := lr.ledger.Job(lr.ctx, lr.ref)
	if err != nil {
		lr.t.Fatal(err)
	}
	return j
}

// briefHas reports whether the matter's current Brief lists a document.
func (lr *localRail) briefHas(name string) bool {
	lr.t.Helper()
	f, ok, err := lr.ledger.LatestFrame(lr.ctx, lr.ref)
	if err != nil {
		lr.t.Fatal(err)
	}
	return ok && strings.Contains(string(f.Body), name)
}

// uploadInFlightAtClose walks the workflow that lost documents: a Brief
// is current, a lawyer uploads a document, the matter is closed before the
// upload's fact reaches the trigger, and later re-opened. Every hop is the
// functions' own handler.
func uploadInFlightAtClose(t *testing.T, lr *localRail) lambdafn.SweepResult {
	lr.upload("complaint.txt", "COMPLAINT. Harlow Logistics Ltd, plaintiff, sues Penmark Freight Inc., defendant.")
	if lr.relay().Published < 1 || lr.trigger() != 1 || lr.build(2*time.Second) != 1 || !lr.briefHas("complaint.txt") {
		t.Fatalf("first upload not built: %+v", lr.job())
	}

	lr.upload("answer.txt", "ANSWER. Penmark Freight Inc. denies the allegations of the complaint.")
	lr.setStatus("closed") // before the fact reaches the trigger
	if lr.relay().Published < 1 {
		t.Fatal("the upload's fact was not published")
	}
	if n := lr.trigger(); n != 1 {
		t.Fatalf("trigger heard %d facts, want 1", n)
	}
	return lr.sweep()
}

// TestUploadInFlightAtCloseIsHeldAndBuiltAfterReopen: the upload's demand
// is held while the matter is closed (the row and the gauge say so, no
// build is nudged) and built after re-opening: the sweeper re-nudges it,
// the builder builds it, the Brief lists the document. On main the trigger
// acknowledged the fact and rolled it back: nothing held, every gauge
// clean, and after re-opening the Brief never saw the answer.
func TestUploadInFlightAtCloseIsHeldAndBuiltAfterReopen(t *testing.T) {
	t.Parallel()
	lr := newLocalRail(t)
	res := uploadInFlightAtClose(t, lr)
	if j := lr.job(); j.HeldDemands != 1 || j.RequestedGeneration != j.BuiltGeneration+1 {
		t.Fatalf("closed: row %+v; want the upload's demand held", j)
	}
	if res.MattersClosedWithDemand != 1 || res.MattersBehind != 0 || res.Renudged != 0 {
		t.Fatalf("closed: sweep %+v; want one closed matter holding demand, nothing late, nothing re-nudged", res)
	}
	if n := lr.build(100 * time.Millisecond); n != 0 {
		t.Fatalf("%d nudge(s) for a closed matter", n)
	}

	lr.setStatus("open")
	time.Sleep(400 * time.Millisecond) // the sweeper's grace
	if res := lr.sweep(); res.Renudged != 1 || res.MattersBehind != 1 || res.MattersClosedWithDemand != 0 {
		t.Fatalf("re-opened: sweep %+v; want the held demand behind and re-nudged", res)
	}
	if lr.build(2*time.Second) != 1 {
		t.Fatal("no build after the re-nudge")
	}
	if j := lr.job(); !j.Current || !lr.briefHas("answer.txt") || !lr.briefHas("complaint.txt") {
		t.Fatalf("re-opened and built: row %+v, answer in the Brief %v; want current with both documents", j, lr.briefHas("answer.txt"))
	}
	if res := lr.sweep(); res.MattersBehind != 0 || res.MattersClosedWithDemand != 0 || res.OldestUnservedDemandSeconds != 0 {
		t.Fatalf("built: sweep %+v", res)
	}
}

// TestDropHeldLosesTheUpload: the trigger's negative-control seam
// (rail.Trigger.DropHeld) restores the behaviour before closed matters
// held demand in flight, and the same workflow loses the document with
// every light green. The simulation's negative controls use the seam.
func TestDropHeldLosesTheUpload(t *testing.T) {
	t.Parallel()
	lr := newLocalRail(t)
	lr.r.Trigger.Trigger.DropHeld = true
	res := uploadInFlightAtClose(t, lr)
	lr.setStatus("open")
	time.Sleep(400 * time.Millisecond)
	res = lr.sweep()
	lr.build(200 * time.Millisecond)
	if j := lr.job(); !j.Current || res.MattersBehind != 0 || res.Renudged != 0 || lr.briefHas("answer.txt") {
		t.Fatalf("DropHeld: row %+v, sweep %+v; want the defect: current, nothing behind, the answer missing", j, res)
	}
}
