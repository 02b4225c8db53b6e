package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// planPool is a one-connection pool whose session hands every plan it
// runs, the statements inside functions included, to the test (the
// auto_explain module, its output sent as NOTICEs). It skips the test
// when the server will not load the module.
func planPool(t *testing.T, url string) (*pgxpool.Pool, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var plans []string
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.MinConns = 1, 0
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if strings.Contains(n.Message, "plan:") {
			mu.Lock()
			plans = append(plans, n.Message)
			mu.Unlock()
		}
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		for _, s := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
			`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = notice`} {
			if _, err := c.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(context.Background()); err != nil {
		t.Skipf("this server does not load auto_explain for the test's role: %v", err)
	}
	return pool, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(plans)
	}
}

var seqScanOn = regexp.MustCompile(`Seq Scan on (\w+)`)

// The trigger's and the builder's statements plan for their keys however
// small a table was when a session made its plan (migration 029). On a
// freshly analyzed ledger of 300 matters, a new session hears ten uploads
// and builds the ten matters through the rail's own trigger and batch
// builder, then records an operator's demand and builds a batch of one:
// no plan it runs, nested ones included, reads a whole rail table. The
// control, the same calls with the functions' setting reset, reads whole
// tables (the job rows among them): the plans this test forbids are the
// ones the planner picks without it.
func TestHotPathPlansUseTheirKeys(t *testing.T) {
	b := setup(t, rail.Config{})
	refs := make([]rail.MatterRef, 300)
	for i := range refs {
		refs[i] = b.newMatter(t, fmt.Sprint("Matter ", i))
		if _, err := postgres.AddDocument(b.ctx, b.pool, refs[i], rail.NewDocument{Name: "complaint.pdf", Pages: []string{"page one"}}); err != nil {
			t.Fatal(err)
		}
	}
	// serve hears one upload on each matter and builds them, ten a batch.
	serve := func(t *testing.T, led *postgres.Ledger, refs []rail.MatterRef) {
		t.Helper()
		tr := &rail.Trigger{Ledger: led, Nudger: &nudgeRecorder{}}
		w := &rail.Worker{Ledger: led, Builder: &countingBuilder{}, ID: "plans", Heartbeat: -1}
		for len(refs) > 0 {
			k := min(10, len(refs))
			var msgs []rail.InboundFact
			for _, r := range refs[:k] {
				msgs = append(msgs, b.fact(t, r, rail.FactDocumentUploaded))
			}
			noErrors(t, tr.Handle(b.ctx, msgs))
			outs, errs, err := w.BuildBatch(b.ctx, batchItems(refs[:k]), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range outs {
				if errs[i] != nil || !outs[i].Landed {
					t.Fatalf("matter %d: %+v %v", i, outs[i], errs[i])
				}
			}
			refs = refs[k:]
		}
	}
	serve(t, b.ledger, refs[20:])
	if _, err := b.pool.Exec(b.ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	// the rail's tables
	rows, _ := b.pool.Query(b.ctx, `SELECT relname FROM pg_catalog.pg_class WHERE relkind = 'r' AND relnamespace IN ('ops'::regnamespace, 'app'::regnamespace)`)
	ours, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ours) == 0 {
		t.Fatalf("rail tables: %v %v", ours, err)
	}
	// scans serves refs in a new session and returns the rail tables its
	// plans read whole, and how many plans it saw.
	scans := func(t *testing.T, refs []rail.MatterRef) (map[string]int, int) {
		t.Helper()
		pool, plans := planPool(t, b.db.URL)
		led := postgres.NewLedger(pool, rail.Config{})
		serve(t, led, refs)
		// An operator's demand and a batch of one (the single claim and
		// the token reads).
		if _, err := led.Demand(b.ctx, refs[0], 1); err != nil {
			t.Fatal(err)
		}
		w := &rail.Worker{Ledger: led, Builder: &countingBuilder{}, ID: "plans", Heartbeat: -1}
		if outs, errs, err := w.BuildBatch(b.ctx, batchItems(refs[:1]), nil); err != nil || errs[0] != nil || !outs[0].Landed {
			t.Fatalf("a batch of one: %+v %v %v", outs, errs, err)
		}
		got := map[string]int{}
		ps := plans()
		var sawCommit bool
		for _, p := range ps {
			sawCommit = sawCommit || strings.Contains(p, "Update on matter_frame_jobs") && strings.Contains(p, "Insert on matter_frames")
			for _, m := range seqScanOn.FindAllStringSubmatch(p, -1) {
				if slices.Contains(ours, m[1]) {
					got[m[1]]++
				}
			}
		}
		if !sawCommit {
			t.Fatalf("no plan of the commit among the session's %d plans: nested statements are not being explained", len(ps))
		}
		return got, len(ps)
	}

	got, n := scans(t, refs[:10])
	if len(got) > 0 {
		t.Errorf("the hot path's plans read whole tables (table: plans) %v, of %d plans", got, n)
	}

	// The control: the same calls on the functions as they were before
	// migration 029.
	var reset []string
	rows, _ = b.pool.Query(b.ctx, `SELECT format('ALTER FUNCTION %s RESET enable_seqscan', p.oid::regprocedure)
        FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'ops'::regnamespace AND 'enable_seqscan=off' = ANY (p.proconfig)`)
	reset, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(reset) != 9 {
		t.Fatalf("functions planning for their keys: %d (%v), want the nine of migration 029", len(reset), err)
	}
	for _, s := range reset {
		if _, err := b.pool.Exec(b.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got, n = scans(t, refs[10:20])
	if got["matter_frame_jobs"] == 0 {
		t.Errorf("control: without migration 029 no plan read the job rows whole (%v, of %d plans): this test no longer shows what the setting prevents", got, n)
	}
	t.Logf("control, without the setting: whole-table reads (table: plans) %v, of %d plans", got, n)
}
