package postgres_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

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

// age moves every frame, run and body timestamp of b's matter back by d.
func (b *bundle) ageHistory(t *testing.T, d time.Duration) {
	t.Helper()
	for _, q := range []string{
		`UPDATE ops.matter_frames SET built_at = built_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.matter_frame_runs SET claimed_at = claimed_at - make_interval(secs => $3),
            finished_at = finished_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
		`UPDATE ops.matter_frame_bodies SET used_at = used_at - make_interval(secs => $3),
            created_at = created_at - make_interval(secs => $3) WHERE firm_id = $1 AND matter_id = $2`,
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
