package rail_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// demandOn records one demand on ref.
func (b *bundle) demandOn(t *testing.T, ref rail.MatterRef) {
	t.Helper()
	if _, err := b.ledger.Demand(b.ctx, nil, ref, 1); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func claimsByMatter(cs []rail.Claim) map[rail.MatterRef]rail.Claim {
	m := map[rail.MatterRef]rail.Claim{}
	for _, c := range cs {
		m[c.MatterRef] = c
	}
	return m
}

// A batch grants exactly what single claims would: demanded, open, idle
// matters; not a matter with no demand, a live lease or a closed matter;
// a ref given twice once.
func TestClaimManyConditionsEachRow(t *testing.T) {
	b := setup(t, rail.Config{})
	a, c, live, idle, closed := b.ref, b.newMatter(t, "c"), b.newMatter(t, "live"), b.newMatter(t, "idle"), b.newMatter(t, "closed")
	for _, r := range []rail.MatterRef{a, c, live, closed} {
		b.demandOn(t, r)
	}
	if _, ok, err := b.ledger.Claim(b.ctx, live, "holder"); err != nil || !ok {
		t.Fatalf("claim live: ok=%v err=%v", ok, err)
	}
	b.demandOn(t, live) // demand during the live claim: its commit follows up, no second claim
	if _, err := b.pool.Exec(b.ctx, `UPDATE app.matters SET status = 'closed' WHERE matter_id = $1`, closed.MatterID); err != nil {
		t.Fatal(err)
	}

	got, err := b.ledger.ClaimMany(b.ctx, []rail.MatterRef{a, live, idle, closed, c, a}, "batch")
	if err != nil {
		t.Fatal(err)
	}
	m := claimsByMatter(got)
	if len(got) != 2 || len(m) != 2 {
		t.Fatalf("granted %d claims (%v), want a and c once each", len(got), got)
	}
	for _, r := range []rail.MatterRef{a, c} {
		cl, ok := m[r]
		if !ok {
			t.Fatalf("%s not granted", r)
		}
		if cl.Token != 1 || cl.Target != 1 || cl.Built != 0 || cl.Attempt != 1 || cl.TookOverExpiry || cl.ClaimedAt.IsZero() {
			t.Fatalf("claim %+v", cl)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frame_runs WHERE worker_id = 'batch' AND outcome = 'claimed'`); n != 2 {
		t.Fatalf("%d runs for the batch, want 2", n)
	}
	// The same batch again: everything is now held.
	if again, err := b.ledger.ClaimMany(b.ctx, []rail.MatterRef{a, c, live}, "batch2"); err != nil || len(again) != 0 {
		t.Fatalf("second batch: %v %v", again, err)
	}
}

// Scenario: a stale token in a batch is fenced while the others land; the
// same claim twice in one batch lands once.
func TestCommitManyFencesEachItemOnItsOwnToken(t *testing.T) {
	b := setup(t, rail.Config{})
	stale := b.ref
	x, y := b.newMatter(t, "x"), b.newMatter(t, "y")
	for _, r := range []rail.MatterRef{stale, x, y} {
		b.demandOn(t, r)
	}
	old := b.mustClaim(t, "stalled")
	b.expireLease(t)
	got, err := b.ledger.ClaimMany(b.ctx, []rail.MatterRef{stale, x, y}, "batch")
	if err != nil || len(got) != 3 {
		t.Fatalf("claims %v err %v", got, err)
	}
	m := claimsByMatter(got)
	if s := m[stale]; s.Token != 2 || !s.TookOverExpiry || s.Attempt != 2 {
		t.Fatalf("takeover claim %+v", s)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frame_runs WHERE matter_id = $1 AND token = 1 AND outcome = 'lease_expired'`, stale.MatterID); n != 1 {
		t.Fatalf("stalled run not marked lease_expired")
	}
	b.demandOn(t, y) // demand during y's build: one follow-up is due

	items := []rail.CommitItem{
		{Claim: old, Frame: frameOf("stalled")},  // stale token: fenced
		{Claim: m[x], Frame: frameOf("x")},       // lands
		{Claim: m[y], Frame: frameOf("y")},       // lands, follow-up due
		{Claim: m[x], Frame: frameOf("x-again")}, // the same claim again: fenced
		{Claim: m[stale], Frame: frameOf("new")}, // the current token: lands
	}
	res, err := b.ledger.CommitMany(b.ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(items) {
		t.Fatalf("%d results for %d items", len(res), len(items))
	}
	for i, want := range []bool{false, true, true, false, true} {
		landed := res[i].Err == nil
		if landed != want {
			t.Fatalf("item %d: landed=%v (err %v), want %v", i, landed, res[i].Err, want)
		}
		if !landed && !errors.Is(res[i].Err, rail.ErrFenced) {
			t.Fatalf("item %d: err %v, want ErrFenced", i, res[i].Err)
		}
	}
	if res[1].FollowUpDue || !res[2].FollowUpDue || res[2].Requested != 2 || res[2].Target != 1 {
		t.Fatalf("follow-ups: x %+v, y %+v", res[1].CommitResult, res[2].CommitResult)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frames WHERE matter_id = $1 AND token = 1`, stale.MatterID); n != 0 {
		t.Fatalf("stale frame landed")
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frames WHERE fingerprint IN ('stalled', 'x-again')`); n != 0 {
		t.Fatalf("%d fenced frames landed", n)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frames`); n != 3 {
		t.Fatalf("%d frames, want 3", n)
	}
	// One fact per landed frame, naming its frame and token.
	if n := b.count(t, `SELECT count(*) FROM ops.domain_event_outbox o JOIN ops.matter_frames f
        ON f.frame_id::text = o.payload->>'frame_id' AND f.token::text = o.payload->>'token'
        AND f.matter_id = o.matter_id AND f.target_generation::text = o.payload->>'target_generation'
        WHERE o.event_name = 'frame.built'`); n != 3 {
		t.Fatalf("%d matching frame.built facts, want 3", n)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.domain_event_outbox WHERE event_name = 'frame.built'`); n != 3 {
		t.Fatalf("%d frame.built facts, want 3", n)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frame_runs WHERE outcome = 'landed' AND worker_id = 'batch'`); n != 3 {
		t.Fatalf("%d landed runs, want 3", n)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frame_runs WHERE outcome = 'landed' AND worker_id = 'stalled'`); n != 0 {
		t.Fatalf("the stalled run was marked landed")
	}
	for _, r := range []rail.MatterRef{stale, x} {
		j, err := b.ledger.Job(b.ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if j.RunStatus != rail.StatusIdle || j.BuiltGeneration != j.RequestedGeneration {
			t.Fatalf("%s: %+v", r, j)
		}
	}
	// Committing the landed claims again fences them all.
	again, err := b.ledger.CommitMany(b.ctx, items[1:3])
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again {
		if !errors.Is(r.Err, rail.ErrFenced) {
			t.Fatalf("recommit %d: %v", i, r.Err)
		}
	}
}

// Negative control for the batch fence: the same stale commit through the
// single-row Commit is fenced too, and a batch of only stale items writes
// nothing.
func TestCommitManyAllStaleWritesNothing(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	old := b.mustClaim(t, "stalled")
	b.expireLease(t)
	cur := b.mustClaim(t, "current")
	res, err := b.ledger.CommitMany(b.ctx, []rail.CommitItem{{Claim: old, Frame: frameOf("stalled")}})
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, rail.ErrFenced) {
		t.Fatalf("res %v err %v", res, err)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frames`) + b.count(t, `SELECT count(*) FROM ops.domain_event_outbox`); n != 0 {
		t.Fatalf("%d rows written by a fenced batch", n)
	}
	if j := b.job(t); j.RunStatus != rail.StatusRunning || j.ClaimedGeneration != cur.Token {
		t.Fatalf("row disturbed: %+v", j)
	}
	if _, err := b.ledger.Commit(b.ctx, cur, frameOf("current")); err != nil {
		t.Fatal(err)
	}
}

// 50 concurrent batches over overlapping matters, each listing its matters
// in a different order (and some twice): one winner per matter, no deadlock.
func TestFiftyRacingClaimManyOneWinnerPerMatter(t *testing.T) {
	b := setup(t, rail.Config{})
	const matters = 12
	refs := []rail.MatterRef{b.ref}
	for i := 1; i < matters; i++ {
		refs = append(refs, b.newMatter(t, fmt.Sprintf("m%d", i)))
	}
	for _, r := range refs {
		b.demandOn(t, r)
	}
	var mu sync.Mutex
	wins := map[rail.MatterRef]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 10 refs from a rotating, direction-alternating window, plus a duplicate.
			var batch []rail.MatterRef
			for k := range 10 {
				i := (g*5 + k) % matters
				if g%2 == 1 {
					i = (matters - 1 - i + matters) % matters
				}
				batch = append(batch, refs[i])
			}
			batch = append(batch, batch[g%len(batch)])
			<-start
			got, err := b.ledger.ClaimMany(b.ctx, batch, fmt.Sprintf("w%d", g))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, c := range got {
				wins[c.MatterRef]++
			}
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	for _, r := range refs {
		if wins[r] != 1 {
			t.Errorf("%s: %d winners, want 1", r, wins[r])
		}
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frame_jobs WHERE claimed_generation <> 1 OR run_status <> 'running'`); n != 0 {
		t.Fatalf("%d rows not claimed exactly once", n)
	}
	if n := b.count(t, `SELECT count(*) FROM ops.matter_frame_runs`); n != matters {
		t.Fatalf("%d runs, want %d", n, matters)
	}
}

// Batched commits racing single claims that take over expired leases: every
// matter ends with exactly one frame, from whichever token was current.
func TestCommitManyRacingTakeovers(t *testing.T) {
	b := setup(t, rail.Config{})
	refs := []rail.MatterRef{b.ref}
	for i := 1; i < 10; i++ {
		refs = append(refs, b.newMatter(t, fmt.Sprintf("m%d", i)))
	}
	for _, r := range refs {
		b.demandOn(t, r)
	}
	got, err := b.ledger.ClaimMany(b.ctx, refs, "batch")
	if err != nil || len(got) != len(refs) {
		t.Fatalf("claims %d err %v", len(got), err)
	}
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 day'`); err != nil {
		t.Fatal(err)
	}
	items := make([]rail.CommitItem, len(got))
	for i, c := range got {
		items[i] = rail.CommitItem{Claim: c, Frame: frameOf("batch")}
	}
	var wg sync.WaitGroup
	var res []rail.CommitOutcome
	var cerr error
	takers := make([]rail.Claim, len(refs))
	taken := make([]bool, len(refs))
	wg.Add(1)
	go func() { defer wg.Done(); res, cerr = b.ledger.CommitMany(b.ctx, items) }()
	for i, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, ok, err := b.ledger.Claim(b.ctx, r, "taker")
			if err != nil {
				t.Error(err)
			}
			takers[i], taken[i] = c, ok
		}()
	}
	wg.Wait()
	if cerr != nil {
		t.Fatal(cerr)
	}
	landedBatch := map[rail.MatterRef]bool{}
	for i, r := range res {
		landedBatch[items[i].Claim.MatterRef] = r.Err == nil
	}
	for i, r := range refs {
		if taken[i] {
			if _, err := b.ledger.Commit(b.ctx, takers[i], frameOf("taker")); err != nil {
				t.Fatalf("%s: taker commit: %v", r, err)
			}
			if landedBatch[r] {
				// The batch landed first and the taker claimed afterwards:
				// possible only with new demand, which there is none of.
				t.Fatalf("%s: claimed after the batch landed with no new demand", r)
			}
		} else if !landedBatch[r] {
			t.Fatalf("%s: neither the batch nor a taker landed", r)
		}
		if n := b.count(t, `SELECT count(*) FROM ops.matter_frames WHERE matter_id = $1`, r.MatterID); n != 1 {
			t.Fatalf("%s: %d frames, want 1", r, n)
		}
	}
}
