package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// landN lands n frames on b's matter; frame i's body is bodyOf(i).
func (b *bundle) landN(t *testing.T, n int, bodyOf func(i int) string) {
	t.Helper()
	for i := 1; i <= n; i++ {
		b.demand(t)
		c := b.mustClaim(t, "w")
		body, _ := json.Marshal(map[string]string{"v": bodyOf(i)})
		if _, err := b.ledger.Commit(b.ctx, c, rail.Frame{Body: body, Fingerprint: bodyOf(i), Builder: "test"}); err != nil {
			t.Fatal(err)
		}
	}
}

// ageHistory moves every frame, run and body timestamp of b's matter back
// by d (and the frame retention's mark, a copy of a built_at).
func (b *bundle) ageHistory(t *testing.T, d time.Duration) {
	t.Helper()
	for _, q := range []string{
		`UPDATE ops.matter_frames SET built_at = built_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.matter_frame_runs SET claimed_at = claimed_at - make_interval(secs => $3),
            finished_at = finished_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.matter_frame_bodies SET used_at = used_at - make_interval(secs => $3),
            created_at = created_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		// the retention's mark holds a copy of a frame's built_at
		`UPDATE ops.frame_prune_candidates SET oldest_out_at = oldest_out_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
	} {
		if _, err := b.pool.Exec(b.ctx, q, b.ref.FirmID, b.ref.MatterID, d.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *bundle) rows(t *testing.T, table string) (n int) {
	t.Helper()
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM `+table+` WHERE firm_id = $1 AND matter_id = $2`,
		b.ref.FirmID, b.ref.MatterID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *bundle) latestBody(t *testing.T) string {
	t.Helper()
	f, ok, err := b.ledger.LatestFrame(b.ctx, b.ref)
	if err != nil || !ok {
		t.Fatalf("latest frame: %v %v", ok, err)
	}
	return string(f.Body)
}

// Frames, runs and bodies are pruned past the newest Keep and the
// retention, a bounded number per pass; the current frame and its body
// stay readable; frames with equal bodies share one stored body.
func TestPruneFramesKeepsNewestAndYoung(t *testing.T) {
	b := setup(t, rail.Config{})
	b.landN(t, 15, func(i int) string { return fmt.Sprint("v", (i-1)/3) }) // bodies v0 v0 v0 v1 ... v4
	if n := b.rows(t, "ops.matter_frame_bodies"); n != 5 {
		t.Fatalf("15 frames over 5 distinct bodies stored %d bodies, want 5", n)
	}
	var inline int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_frames WHERE body IS NOT NULL`).Scan(&inline); err != nil || inline != 0 {
		t.Fatalf("frames carrying an inline body copy: %d %v", inline, err)
	}
	policy := postgres.FrameRetention{Keep: 4, Retention: 30 * 24 * time.Hour, PerPass: 5}

	// Young: nothing goes, however many frames.
	if r, err := postgres.PruneFrames(b.ctx, b.pool, policy); err != nil || r != (postgres.FramesPruned{}) {
		t.Fatalf("young frames pruned: %+v %v", r, err)
	}
	b.ageHistory(t, 40*24*time.Hour)
	var total postgres.FramesPruned
	for pass := 1; ; pass++ {
		r, err := postgres.PruneFrames(b.ctx, b.pool, policy)
		if err != nil {
			t.Fatal(err)
		}
		if r.Frames > int64(policy.PerPass) {
			t.Fatalf("pass %d pruned %d frames, bound %d", pass, r.Frames, policy.PerPass)
		}
		checkInvariants(t, b.pool) // runs stay gapless, bodies present, after every pass
		total.Frames, total.Runs, total.Bodies = total.Frames+r.Frames, total.Runs+r.Runs, total.Bodies+r.Bodies
		if r.Frames == 0 {
			break
		}
		if pass > 10 {
			t.Fatal("pruning does not finish")
		}
	}
	if total.Frames != 11 || b.rows(t, "ops.matter_frames") != 4 {
		t.Fatalf("pruned %+v, %d frames left; want 11 pruned, 4 left", total, b.rows(t, "ops.matter_frames"))
	}
	if total.Runs != 11 || b.rows(t, "ops.matter_frame_runs") != 4 {
		t.Fatalf("runs: pruned %d, %d left; want 11 and 4", total.Runs, b.rows(t, "ops.matter_frame_runs"))
	}
	// Frames 12..15 keep bodies v3 (12) and v4 (13..15).
	if total.Bodies != 3 || b.rows(t, "ops.matter_frame_bodies") != 2 {
		t.Fatalf("bodies: pruned %d, %d left; want 3 and 2", total.Bodies, b.rows(t, "ops.matter_frame_bodies"))
	}
	if got := b.latestBody(t); got != `{"v": "v4"}` {
		t.Fatalf("current brief after pruning: %s", got)
	}

	// Keep 1 (0 means the default; the newest is never pruned in any case).
	if _, err := postgres.PruneFrames(b.ctx, b.pool, postgres.FrameRetention{Keep: 1, Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if n := b.rows(t, "ops.matter_frames"); n != 1 {
		t.Fatalf("keep 1: %d frames left", n)
	}
	if got := b.latestBody(t); got != `{"v": "v4"}` {
		t.Fatalf("current brief after pruning to one: %s", got)
	}
	if j := b.job(t); j.BuiltGeneration != 15 {
		t.Fatalf("row after pruning: %+v", j)
	}
}

// A build whose inputs are unchanged re-uses the previous body: the second
// frame references the stored body, and readers still get it.
func TestUnchangedFingerprintStoresNoSecondBody(t *testing.T) {
	b := setup(t, rail.Config{})
	b.addDoc(t, "complaint.pdf", "p1")
	for range 3 {
		b.demand(t)
		if out := b.buildOnce(t, b.worker(rail.DigestBuilder{}, "w")); !out.Landed {
			t.Fatalf("build: %+v", out)
		}
	}
	if f, b2 := b.rows(t, "ops.matter_frames"), b.rows(t, "ops.matter_frame_bodies"); f != 3 || b2 != 1 {
		t.Fatalf("3 builds of unchanged inputs: %d frames, %d bodies; want 3 and 1", f, b2)
	}
	var stored int
	if err := b.pool.QueryRow(b.ctx, `SELECT sum(octet_length(body::text)) FROM ops.matter_frame_bodies`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if body := b.latestBody(t); len(body) == 0 || stored > len(body)+64 {
		t.Fatalf("latest body %d bytes, stored %d bytes", len(body), stored)
	}
}

// scanAllOldFramesPruneSQL is frame retention's selection as it was before
// the candidates (each pass walked every old frame in built_at order and
// counted its newer frames), kept only as the negative control of
// TestPruneFramesCostFollowsWhatItPrunes.
const scanAllOldFramesPruneSQL = `SELECT f.frame_id FROM ops.matter_frames f
    WHERE f.built_at < clock_timestamp() - make_interval(secs => $2)
      AND (SELECT count(*) FROM ops.matter_frames n
           WHERE n.firm_id = f.firm_id AND n.matter_id = f.matter_id AND n.token > f.token) >= $1
    ORDER BY f.built_at LIMIT $3`

// seedFrames lands, by SQL, frames frames on each of matters new matters
// (tokens 1..frames), built about age ago, oldest token first.
func seedFrames(t testing.TB, pool *pgxpool.Pool, matters, frames int, age time.Duration) {
	t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { // the temp table lives for the transaction
		for _, st := range []struct {
			sql  string
			args []any
		}{
			{`CREATE TEMP TABLE seed_m ON COMMIT DROP AS
                SELECT gen_random_uuid() AS firm_id, gen_random_uuid() AS matter_id FROM generate_series(1, $1::int)`, []any{matters}},
			{`INSERT INTO app.firms (firm_id) SELECT firm_id FROM seed_m`, nil},
			{`INSERT INTO app.matters (firm_id, matter_id) SELECT firm_id, matter_id FROM seed_m`, nil},
			{`INSERT INTO ops.matter_frame_jobs (firm_id, matter_id, requested_generation, claimed_generation, target_generation, built_generation)
                SELECT firm_id, matter_id, $1::int, $1::int, $1::int, $1::int FROM seed_m`, []any{frames}},
			{`INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body, built_at)
                SELECT m.firm_id, m.matter_id, g, g, 'f' || g, 'seed', false, '{}'::jsonb,
                       clock_timestamp() - make_interval(secs => $2::float8) + make_interval(secs => g)
                FROM seed_m m, generate_series(1, $1::int) g`, []any{frames, age.Seconds()}},
		} {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return fmt.Errorf("%s: %w", st.sql, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// blocks is the shared buffers a plan touched (hit and read), summed over
// its nodes' own counts (each node's figure includes its children's, so
// the largest is the statement's).
func blocks(nodes []map[string]any) float64 {
	most := 0.0
	for _, n := range nodes {
		most = max(most, num(n["Shared Hit Blocks"])+num(n["Shared Read Blocks"]))
	}
	return most
}

// Frame retention's cost follows what it prunes, not the old frames it
// keeps: with 30,000 old frames inside their matters' keep windows (3,000
// matters at Keep 10) and 3 matters with 5 prunable frames each, the
// prune statement (EXPLAIN ANALYZE, BUFFERS, on the statement PruneFrames
// runs) touches a few dozen buffers and deletes exactly the 15, and the
// next pass's mark reads only what landed since. The negative control,
// the selection before the candidates, reads every old frame on the same
// data.
func TestPruneFramesCostFollowsWhatItPrunes(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	const age = 40 * 24 * time.Hour
	seedFrames(t, db.Pool, 3000, 10, age) // old, none prunable at Keep 10
	seedFrames(t, db.Pool, 3, 15, age)    // old, 5 prunable each
	if _, err := db.Pool.Exec(ctx, `ANALYZE ops.matter_frames; ANALYZE ops.matter_frame_jobs`); err != nil {
		t.Fatal(err)
	}
	policy := postgres.FrameRetention{}.WithDefaults()
	// The first passes rebuild the marks, a chunk of matters each (no marks
	// yet): 3,003 matters in chunks of 1,000 take four passes.
	for pass, want := range []int64{1000, 1000, 1000, 3} {
		read, marked, rebuild, err := postgres.MarkFrames(ctx, db.Pool, policy.Keep, 1000)
		if err != nil || !rebuild || read != want {
			t.Fatalf("rebuild pass %d: rebuild %v, %d matters read, %d marked (%v); want a chunk of %d", pass, rebuild, read, marked, err, want)
		}
	}
	var marks int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.frame_prune_candidates`).Scan(&marks); err != nil || marks != 3 {
		t.Fatalf("after the rebuild: %d matters marked (%v), want the 3 with prunable frames", marks, err)
	}
	if read, _, rebuild, err := postgres.MarkFrames(ctx, db.Pool, policy.Keep, 1000); err != nil || rebuild || read != 0 {
		t.Fatalf("after the rebuild: rebuild %v, %d read (%v); want an incremental mark reading nothing", rebuild, read, err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE ops.frame_prune_candidates`); err != nil {
		t.Fatal(err)
	}
	args := []any{policy.Keep, policy.Retention.Seconds(), policy.PerPass}
	nodes, plan := explainAnalyze(t, db.Pool, postgres.PruneFramesSQL, args...)
	t.Logf("prune statement over 30,000 kept old frames and 15 prunable: %v buffers\n%s", blocks(nodes), plan)
	if b := blocks(nodes); b > 400 {
		t.Errorf("the prune statement touched %v buffers; the 15 prunable frames and 3 matters' keep windows need a few dozen", b)
	}
	for _, n := range nodes {
		if n["Node Type"] == "Seq Scan" && n["Relation Name"] == "matter_frames" {
			t.Errorf("the prune statement scans matter_frames sequentially")
		}
	}
	old, oldPlan := explainAnalyze(t, db.Pool, scanAllOldFramesPruneSQL, args...)
	t.Logf("negative control, the selection before the candidates: %v buffers\n%s", blocks(old), oldPlan)
	if blocks(old) < 10*blocks(nodes) {
		t.Errorf("negative control: the old selection touched %v buffers, not ten times the new statement's %v", blocks(old), blocks(nodes))
	}
	// The real pass prunes exactly the 15, and the next mark reads only
	// what landed since (nothing).
	r, err := postgres.PruneFrames(ctx, db.Pool, policy)
	if err != nil || r.Frames != 15 {
		t.Fatalf("pass: %+v %v; want the 15 prunable frames", r, err)
	}
	var left int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM ops.matter_frames`).Scan(&left); err != nil || left != 30030 {
		t.Fatalf("%d frames left (%v), want 30,030", left, err)
	}
	var since float64
	if err := db.Pool.QueryRow(ctx, `SELECT extract(epoch FROM marked_through)::float8 FROM ops.frame_prune_state`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	mark, markPlan := explainAnalyze(t, db.Pool, postgres.MarkFramesSQL, policy.Keep, 600.0, since)
	t.Logf("the next pass's mark: %v buffers\n%s", blocks(mark), markPlan)
	if b := blocks(mark); b > 100 {
		t.Errorf("an incremental mark with nothing landed touched %v buffers", b)
	}
	if r, err := postgres.PruneFrames(ctx, db.Pool, policy); err != nil || r != (postgres.FramesPruned{}) {
		t.Fatalf("second pass: %+v %v; want nothing", r, err)
	}
}

// A rebuild of the marks (the first pass, a new keep setting) walks the
// matters a chunk a pass; a matter it already passed that lands frames
// meanwhile is marked by the incremental mark that follows, and pruned.
func TestPruneMarksFramesLandedDuringARebuild(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	ctx := context.Background()
	seedFrames(t, db.Pool, 30, 10, 40*24*time.Hour) // none prunable at Keep 10
	policy := postgres.FrameRetention{}.WithDefaults()
	if _, _, rebuild, err := postgres.MarkFrames(ctx, db.Pool, policy.Keep, 10); err != nil || !rebuild {
		t.Fatalf("first chunk: rebuild %v %v", rebuild, err)
	}
	// A matter of the first chunk (key order) lands 5 frames now: its 5
	// oldest are outside its keep window.
	if _, err := db.Pool.Exec(ctx, `WITH m AS (SELECT firm_id, matter_id FROM ops.matter_frame_jobs ORDER BY firm_id, matter_id LIMIT 1)
        INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint, builder, model_invoked, body)
        SELECT m.firm_id, m.matter_id, g, g, 'f' || g, 'seed', false, '{}'::jsonb FROM m, generate_series(11, 15) g`); err != nil {
		t.Fatal(err)
	}
	for pass := 0; ; pass++ {
		read, _, rebuild, err := postgres.MarkFrames(ctx, db.Pool, policy.Keep, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !rebuild {
			if read != 1 {
				t.Fatalf("the incremental mark after the rebuild read %d matters, want the one that landed frames during it", read)
			}
			break
		}
		if pass > 5 {
			t.Fatal("the rebuild does not end")
		}
	}
	if r, err := postgres.PruneFrames(ctx, db.Pool, policy); err != nil || r.Frames != 5 {
		t.Fatalf("pass: %+v %v; want the 5 old frames now outside the keep window", r, err)
	}
}
