package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// barrierBuilder's builds all finish together: each waits until n builds
// have started, then returns. Its body is chosen by the matter's title:
// "refuse" builds a body the test's CHECK constraint refuses, and the
// build of a matter titled "zombie" first has its claim taken over (its
// lease expired and the matter claimed by another worker), so its commit
// is stale.
type barrierBuilder struct {
	n       int
	mu      sync.Mutex
	started int
	all     chan struct{}
	onBuild func(in rail.Inputs) // before the barrier
}

func newBarrierBuilder(n int, onBuild func(rail.Inputs)) *barrierBuilder {
	return &barrierBuilder{n: n, all: make(chan struct{}), onBuild: onBuild}
}

func (b *barrierBuilder) Name() string { return "barrier/v1" }

func (b *barrierBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	if b.onBuild != nil {
		b.onBuild(in)
	}
	b.mu.Lock()
	if b.started++; b.started == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if in.Title == "refuse" {
		return json.RawMessage(`{"refuse":true}`), nil
	}
	return json.RawMessage(fmt.Sprintf(`{"title":%q}`, in.Title)), nil
}

func batchItems(refs []rail.MatterRef) []rail.BatchItem {
	items := make([]rail.BatchItem, len(refs))
	for i, r := range refs {
		items[i] = rail.BatchItem{Ref: r}
	}
	return items
}

// A group commit fences each member on its own: in one statement, the
// member whose claim was taken over is reported fenced with nothing of it
// written, and its neighbours land with their own results (the follow-up
// due where demand arrived during the build, and only there).
func TestCommitGroupFencesEachMemberOnItsOwn(t *testing.T) {
	b := setup(t, rail.Config{})
	refs := make([]rail.MatterRef, 5)
	for i := range refs {
		refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
		demandOn(t, b, refs[i])
	}
	claims, err := b.ledger.ClaimBatch(b.ctx, refs, "A")
	if err != nil || len(claims) != len(refs) {
		t.Fatalf("claimed %d of %d: %v", len(claims), len(refs), err)
	}
	// Member 2's lease lapses and B takes the matter over; member 4 gets
	// demand during its build.
	stale := claims[2]
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
        WHERE firm_id = $1 AND matter_id = $2`, stale.FirmID, stale.MatterID); err != nil {
		t.Fatal(err)
	}
	takeover, ok, err := b.ledger.Claim(b.ctx, stale.MatterRef, "B")
	if err != nil || !ok {
		t.Fatalf("takeover: %v %v", ok, err)
	}
	demandOn(t, b, claims[4].MatterRef)

	group := make([]rail.FrameCommit, len(claims))
	for i, c := range claims {
		group[i] = rail.FrameCommit{Claim: c, Frame: frameOf(fmt.Sprint("A", i))}
	}
	res, errs, err := b.ledger.CommitGroup(b.ctx, group)
	if err != nil {
		t.Fatalf("group commit: %v", err)
	}
	for i := range group {
		switch {
		case i == 2:
			if !errors.Is(errs[i], rail.ErrFenced) {
				t.Errorf("stale member: err %v, want ErrFenced", errs[i])
			}
		case errs[i] != nil:
			t.Errorf("member %d: %v; a stale neighbour must not stop it landing", i, errs[i])
		case res[i].FollowUpDue != (i == 4):
			t.Errorf("member %d: follow-up due %v", i, res[i].FollowUpDue)
		case len(res[i].Served) != 1 || res[i].Served[0].Generation != 1:
			t.Errorf("member %d served %+v, want its one demand", i, res[i].Served)
		}
	}
	var frames, facts, landedRuns int
	if err := b.pool.QueryRow(b.ctx, `SELECT
        (SELECT count(*) FROM ops.matter_frames),
        (SELECT count(*) FROM ops.domain_event_outbox WHERE event_name = 'frame.built'),
        (SELECT count(*) FROM ops.matter_frame_runs WHERE outcome = 'landed')`).Scan(&frames, &facts, &landedRuns); err != nil {
		t.Fatal(err)
	}
	if frames != 4 || facts != 4 || landedRuns != 4 {
		t.Fatalf("frames %d, frame.built facts %d, landed runs %d; want 4 of each", frames, facts, landedRuns)
	}
	if j, _ := b.ledger.Job(b.ctx, stale.MatterRef); j.RunStatus != rail.StatusRunning || j.BuiltGeneration != 0 {
		t.Fatalf("the taken-over row: %+v; want still running under B's claim", j)
	}
	// B's frame lands alone, a group of one.
	if _, err := b.ledger.Commit(b.ctx, takeover, frameOf("B")); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, b.pool)
}

// A group naming a matter twice writes nothing.
func TestCommitGroupRefusesAMatterTwice(t *testing.T) {
	b := setup(t, rail.Config{})
	b.demand(t)
	c := b.mustClaim(t, "A")
	_, _, err := b.ledger.CommitGroup(b.ctx, []rail.FrameCommit{{Claim: c, Frame: frameOf("1")}, {Claim: c, Frame: frameOf("2")}})
	if !errors.Is(err, postgres.ErrGroupRepeatsMatter) {
		t.Fatalf("err %v, want ErrGroupRepeatsMatter", err)
	}
	if len(b.frames(t)) != 0 {
		t.Fatal("a frame landed")
	}
}

// The builds of one batch that finish together commit together: ten
// builds released at once cost far fewer commit statements (round trips)
// than ten, the group's statement one round trip however many frames it
// lands. Before the group commit each build committed on its own: ten.
func TestBuildBatchCommitsFinishedBuildsTogether(t *testing.T) {
	b := setup(t, rail.Config{})
	var trips atomic.Int64
	led := postgres.NewLedger(countedPool(t, b.db.URL, &trips), rail.Config{})
	const n = 10
	round := func() (commits int64) {
		refs := make([]rail.MatterRef, n)
		for i := range refs {
			refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
			demandOn(t, b, refs[i])
		}
		w := &rail.Worker{Ledger: led, Builder: newBarrierBuilder(n, nil), ID: "w", Heartbeat: -1}
		t0 := trips.Load()
		outs, errs, err := w.BuildBatch(b.ctx, batchItems(refs), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range outs {
			if errs[i] != nil || !outs[i].Landed {
				t.Fatalf("item %d: %+v %v", i, outs[i], errs[i])
			}
		}
		return trips.Load() - t0 - 2 // less the claim and the batch read
	}
	round() // warm-up: connect, prepare
	for range 3 {
		if got := round(); got > n/2 {
			t.Fatalf("%d builds finishing together took %d commit round trips; want them grouped (at most %d)", n, got, n/2)
		}
	}
	checkInvariants(t, b.pool)
}

// In a group, a build whose claim was taken over is fenced and one whose
// frame the database refuses is recorded as failed; their neighbours land
// all the same (a refused group is committed again member by member).
func TestBuildBatchGroupMembersFailAlone(t *testing.T) {
	b := setup(t, rail.Config{})
	if _, err := b.pool.Exec(b.ctx, `ALTER TABLE ops.matter_frame_bodies
        ADD CONSTRAINT test_refuses_this_body CHECK (body <> '{"refuse":true}'::jsonb)`); err != nil {
		t.Fatal(err)
	}
	titles := []string{"a", "zombie", "b", "refuse", "c", "d"}
	refs := make([]rail.MatterRef, len(titles))
	byTitle := map[string]rail.MatterRef{}
	for i, ti := range titles {
		refs[i] = b.newMatter(t, ti)
		byTitle[ti] = refs[i]
		demandOn(t, b, refs[i])
	}
	var takeover rail.Claim
	takeOver := func(in rail.Inputs) {
		if in.Title != "zombie" {
			return
		}
		if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
            WHERE firm_id = $1 AND matter_id = $2`, in.Ref.FirmID, in.Ref.MatterID); err != nil {
			t.Error(err)
			return
		}
		c, ok, err := b.ledger.Claim(b.ctx, in.Ref, "B")
		if err != nil || !ok {
			t.Errorf("takeover: %v %v", ok, err)
		}
		takeover = c
	}
	w := &rail.Worker{Ledger: b.ledger, Builder: newBarrierBuilder(len(refs), takeOver), ID: "A", Heartbeat: -1}
	outs, errs, err := w.BuildBatch(b.ctx, batchItems(refs), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range titles {
		out := outs[i]
		switch {
		case errs[i] != nil:
			t.Errorf("%s: %v", ti, errs[i])
		case ti == "zombie" && (!out.Fenced || out.Landed):
			t.Errorf("zombie: %+v, want fenced", out)
		case ti == "refuse" && (!out.Failed || out.Landed):
			t.Errorf("refused: %+v, want a recorded failure", out)
		case ti != "zombie" && ti != "refuse" && !out.Landed:
			t.Errorf("%s: %+v, want landed beside a fenced and a refused neighbour", ti, out)
		}
	}
	if j, _ := b.ledger.Job(b.ctx, byTitle["refuse"]); j.RunStatus != rail.StatusIdle || j.NotBefore == nil || j.LastError == "" {
		t.Errorf("refused member's row %+v; want idle, backing off, the refusal recorded", j)
	}
	if _, err := b.ledger.Commit(b.ctx, takeover, frameOf("B")); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, b.pool)
}

// A group commit of ten frames is one round trip: one statement, no
// BEGIN or COMMIT around it (as a commit of one frame is).
func TestCommitGroupIsOneRoundTrip(t *testing.T) {
	b := setup(t, rail.Config{})
	var trips atomic.Int64
	led := postgres.NewLedger(countedPool(t, b.db.URL, &trips), rail.Config{})
	round := func(n int) int64 {
		refs := make([]rail.MatterRef, n)
		for i := range refs {
			refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
			demandOn(t, b, refs[i])
		}
		claims, err := b.ledger.ClaimBatch(b.ctx, refs, "w")
		if err != nil || len(claims) != n {
			t.Fatalf("claimed %d of %d: %v", len(claims), n, err)
		}
		group := make([]rail.FrameCommit, n)
		for i, c := range claims {
			group[i] = rail.FrameCommit{Claim: c, Frame: frameOf(fmt.Sprint(i))}
		}
		t0 := trips.Load()
		_, errs, err := led.CommitGroup(b.ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range errs {
			if e != nil {
				t.Fatalf("member %d: %v", i, e)
			}
		}
		return trips.Load() - t0
	}
	round(1) // warm-up: connect, prepare
	for _, n := range []int{10, 1, 10} {
		if got := round(n); got != 1 {
			t.Fatalf("a group commit of %d frames took %d round trips; want 1", n, got)
		}
	}
	checkInvariants(t, b.pool)
}

// lostReplyLedger lands every group and then reports the reply lost: an
// ambiguous error (no server answer) after the statement committed.
type lostReplyLedger struct{ *postgres.Ledger }

func (l lostReplyLedger) CommitGroup(ctx context.Context, group []rail.FrameCommit) ([]rail.CommitResult, []error, error) {
	if _, _, err := l.Ledger.CommitGroup(ctx, group); err != nil {
		return nil, nil, err
	}
	return nil, nil, errors.New("reading the reply: connection reset by peer")
}

// A group commit whose outcome is unknown leaves each member to ask
// FrameLanded on its own: when the statement landed, every member reports
// its frame landed; when the connection was lost before it did, every
// member returns the ambiguous error with nothing recorded (its lease
// decides), as a commit of one does.
func TestBuildBatchAmbiguousGroupCommitAsksEachMember(t *testing.T) {
	for _, landed := range []bool{true, false} {
		t.Run(fmt.Sprintf("landed=%v", landed), func(t *testing.T) {
			b := setup(t, rail.Config{})
			refs := make([]rail.MatterRef, 4)
			for i := range refs {
				refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
				demandOn(t, b, refs[i])
			}
			var led rail.Ledger = lostReplyLedger{b.ledger}
			if !landed {
				led = killingLedger{Ledger: b.ledger, b: b, t: t}
			}
			w := &rail.Worker{Ledger: led, Builder: newBarrierBuilder(len(refs), nil), ID: "w", Heartbeat: -1}
			outs, errs, err := w.BuildBatch(b.ctx, batchItems(refs), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range refs {
				out, j := outs[i], b.jobOf(t, refs[i])
				switch {
				case landed && (errs[i] != nil || !out.Landed || j.RunStatus != rail.StatusIdle):
					t.Errorf("member %d: %+v %v, row %s; want landed (FrameLanded says so)", i, out, errs[i], j.RunStatus)
				case !landed && (errs[i] == nil || out.Landed || out.Failed || j.RunStatus != rail.StatusRunning || j.Attempts != 1):
					t.Errorf("member %d: %+v %v, row %+v; want the ambiguous error, nothing recorded", i, out, errs[i], j)
				}
			}
			var frames int
			if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM ops.matter_frames`).Scan(&frames); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: len(refs), false: 0}[landed]; frames != want {
				t.Fatalf("%d frames, want %d", frames, want)
			}
		})
	}
}

func (b *bundle) jobOf(t *testing.T, ref rail.MatterRef) postgres.JobRow {
	t.Helper()
	j, err := b.ledger.Job(b.ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// gatedBuilder builds {"title": ...}; while gate is set, a build waits for
// it to close first (a model call still under way).
type gatedBuilder struct{ gate chan struct{} }

func (gatedBuilder) Name() string { return "gated/v1" }

func (g gatedBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	if g.gate != nil {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return json.RawMessage(fmt.Sprintf(`{"title":%q}`, in.Title)), nil
}

// slowReadLedger makes every build read on its own (the batch read fails)
// and one matter's read slow; it records the size of every commit group
// and closes landed after the first.
type slowReadLedger struct {
	*postgres.Ledger
	slow   rail.MatterRef
	mu     sync.Mutex
	groups []int
	landed chan struct{}
}

func (l *slowReadLedger) LoadBuilds(context.Context, []rail.Claim) ([]rail.Loaded, error) {
	return nil, errors.New("batch read unavailable in this test")
}

func (l *slowReadLedger) LoadBuild(ctx context.Context, c rail.Claim) (rail.Inputs, rail.StoredFrame, bool, error) {
	if c.MatterRef == l.slow {
		time.Sleep(150 * time.Millisecond)
	}
	return l.Ledger.LoadBuild(ctx, c)
}

func (l *slowReadLedger) CommitGroup(ctx context.Context, group []rail.FrameCommit) ([]rail.CommitResult, []error, error) {
	res, errs, err := l.Ledger.CommitGroup(ctx, group)
	l.mu.Lock()
	if l.groups = append(l.groups, len(group)); len(l.groups) == 1 {
		close(l.landed)
	}
	l.mu.Unlock()
	return res, errs, err
}

// A group waits for the builds of its batch still computing without a
// model call (here one whose read is slow), so the first build to finish
// does not commit alone; it never waits for a model call (here one that
// ends only once the group has landed).
func TestBuildBatchGroupWaitsForComputingBuildsNotModelCalls(t *testing.T) {
	b := setup(t, rail.Config{})
	const n = 6
	refs := make([]rail.MatterRef, n)
	for i := range refs {
		refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
		demandOn(t, b, refs[i])
	}
	first := &rail.Worker{Ledger: b.ledger, Builder: gatedBuilder{}, ID: "w", Heartbeat: -1}
	if _, _, err := first.BuildBatch(b.ctx, batchItems(refs), nil); err != nil {
		t.Fatal(err)
	}
	build := func(refs []rail.MatterRef, led *slowReadLedger, builder gatedBuilder) {
		t.Helper()
		for _, r := range refs {
			demandOn(t, b, r)
		}
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		w := &rail.Worker{Ledger: led, Builder: builder, ID: "w", Heartbeat: -1}
		outs, errs, err := w.BuildBatch(ctx, batchItems(refs), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range outs {
			if errs[i] != nil || !outs[i].Landed {
				t.Fatalf("item %d: %+v %v", i, outs[i], errs[i])
			}
		}
	}

	// Every matter unchanged: no model call; one read is slow.
	led := &slowReadLedger{Ledger: b.ledger, slow: refs[n-1], landed: make(chan struct{})}
	build(refs, led, gatedBuilder{})
	if len(led.groups) != 1 || led.groups[0] != n {
		t.Fatalf("commit groups %v; want one group of all %d unchanged matters' frames", led.groups, n)
	}

	// A new matter's build calls the model, which ends only after a
	// commit landed: the unchanged matters' group must not wait for it.
	fresh := b.newMatter(t, "a new matter")
	led = &slowReadLedger{Ledger: b.ledger, slow: refs[n-1], landed: make(chan struct{})}
	build(append(refs, fresh), led, gatedBuilder{gate: led.landed})
	if len(led.groups) != 2 || led.groups[0] != n || led.groups[1] != 1 {
		t.Fatalf("commit groups %v; want the %d unchanged frames, then the model call's alone", led.groups, n)
	}
	checkInvariants(t, b.pool)
}
