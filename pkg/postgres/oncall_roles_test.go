package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// rolePool connects as one of migration 008's per-function roles (SET ROLE
// after connecting), so a missing grant fails the statement.
func rolePool(t *testing.T, b *bundle, role string) *pgxpool.Pool {
	t.Helper()
	var exists bool
	if err := b.pool.QueryRow(b.ctx, `SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		t.Skipf("role %s does not exist (the migrating role cannot create roles)", role)
	}
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SET ROLE "+pgx.Identifier{role}.Sanitize())
		return err
	}
	p, err := pgxpool.NewWithConfig(b.ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Each function's on-call statements run under its own least-privilege
// role (migrations 008 and 012): the trigger's demand record and nudge
// record, the builder's served-demand stamp, identity and follow-up record,
// the sweeper's backfill admission, nudge record and pruning.
func TestOnCallStatementsRunUnderTheFunctionRoles(t *testing.T) {
	b := setup(t, rail.Config{})
	in := recordedFact(t, b, b.ref, rail.FactDocumentUploaded)

	tp := rolePool(t, b, "brief_trigger")
	trig := &rail.Trigger{Ledger: postgres.NewLedger(tp, rail.Config{}), SettleDelay: time.Second,
		Nudger: &postgres.RecordingNudger{Next: &nudgeRecorder{}, DB: tp}}
	noErrors(t, trig.Handle(b.ctx, []rail.InboundFact{in}))
	var nudges int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_nudges`).Scan(&nudges); err != nil || nudges != 1 {
		t.Fatalf("trigger's nudge not recorded under brief_trigger: %d %v", nudges, err)
	}

	bp := rolePool(t, b, "brief_builder")
	w := &rail.Worker{Ledger: postgres.NewLedger(bp, rail.Config{}), Builder: &identBuilder{id: deployedID}, ID: "w", Heartbeat: -1}
	out, err := w.BuildOnce(b.ctx, b.ref)
	if err != nil || !out.Landed || len(out.Served) != 1 {
		t.Fatalf("build under brief_builder: %+v %v", out, err)
	}
	if err := postgres.RecordNudges(b.ctx, bp, postgres.QueueBuild, []rail.Nudge{{V: 1, FirmID: b.ref.FirmID, MatterID: b.ref.MatterID, Reason: rail.ReasonFollowUp}}, time.Second, nil); err != nil {
		t.Fatalf("follow-up record under brief_builder: %v", err)
	}

	sp := rolePool(t, b, "brief_sweeper")
	other := rail.BuilderIdentity{Name: "test", Version: "3"}
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.backfill_control SET allowance_at = clock_timestamp() - interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	bf := &rail.Backfill{Ledger: postgres.NewLedger(sp, rail.Config{}), Deployed: other, Rate: 10,
		Nudger: &postgres.RecordingNudger{Next: &nudgeRecorder{}, DB: sp, Queue: postgres.QueueBackfill}}
	pass, err := bf.Admit(b.ctx)
	if err != nil || len(pass.Admitted) != 1 {
		t.Fatalf("backfill under brief_sweeper: %+v %v", pass, err)
	}
	if _, err := postgres.PruneOnCallRecord(b.ctx, sp, time.Hour, 0); err != nil {
		t.Fatalf("prune under brief_sweeper: %v", err)
	}
	if _, err := postgres.NewLedger(sp, rail.Config{}).Sweep(b.ctx, 0); err != nil {
		t.Fatalf("sweep under brief_sweeper: %v", err)
	}
	// Frame retention's marks and prune (its own tables), twice: the first
	// pass rebuilds the marks, the second marks incrementally.
	for range 2 {
		if _, err := postgres.PruneFrames(b.ctx, sp, postgres.FrameRetention{}); err != nil {
			t.Fatalf("frame retention under brief_sweeper: %v", err)
		}
	}

	// The relay's claim and settlement: lease, mark, failure record, release.
	rp := rolePool(t, b, "brief_relay")
	s := newSink()
	ids := recordN(t, b.pool, 3)
	s.reject[ids[0]] = true
	r := &rail.Relay{Outbox: postgres.NewOutbox(rp), Publisher: s}
	if st, err := r.DrainOnce(b.ctx); err != nil || st.Published < 2 || st.Failed != 1 {
		t.Fatalf("relay under brief_relay: %+v %v", st, err)
	}
}
