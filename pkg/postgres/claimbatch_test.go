package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// claimStates puts a matter in one of the states a claim must tell apart.
var claimStates = []struct {
	name  string
	claim bool // what a claim does
	make  func(t *testing.T, b *bundle, ref rail.MatterRef)
}{
	{"idle with demand", true, func(t *testing.T, b *bundle, ref rail.MatterRef) { demandOn(t, b, ref) }},
	{"no demand", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {}},
	{"served", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		c := claimOn(t, b, ref)
		if _, err := b.ledger.Commit(b.ctx, c, frameOf("served")); err != nil {
			t.Fatal(err)
		}
	}},
	{"live claim", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		claimOn(t, b, ref)
		demandOn(t, b, ref)
	}},
	{"expired lease", true, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		claimOn(t, b, ref)
		if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
            WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID); err != nil {
			t.Fatal(err)
		}
	}},
	{"backing off", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		c := claimOn(t, b, ref)
		if _, err := b.ledger.Fail(b.ctx, c, errors.New("model down")); err != nil {
			t.Fatal(err)
		}
	}},
	{"past its backoff", true, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		c := claimOn(t, b, ref)
		if _, err := b.ledger.Fail(b.ctx, c, errors.New("model down")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET not_before = clock_timestamp() - interval '1 second'
            WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID); err != nil {
			t.Fatal(err)
		}
	}},
	{"quarantined", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		for range b.ledger.Config().MaxAttempts {
			if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET not_before = NULL
                WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID); err != nil {
				t.Fatal(err)
			}
			c := claimOn(t, b, ref)
			if _, err := b.ledger.Fail(b.ctx, c, errors.New("model down")); err != nil {
				t.Fatal(err)
			}
		}
		if j, _ := b.ledger.Job(b.ctx, ref); j.RunStatus != rail.StatusQuarantined {
			t.Fatalf("not quarantined: %+v", j)
		}
	}},
	{"expired on its last attempt", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		claimOn(t, b, ref)
		if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour',
            attempts = max_attempts WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID); err != nil {
			t.Fatal(err)
		}
	}},
	{"closed", false, func(t *testing.T, b *bundle, ref rail.MatterRef) {
		demandOn(t, b, ref)
		if err := postgres.SetMatterStatus(b.ctx, b.pool, ref, "closed"); err != nil {
			t.Fatal(err)
		}
	}},
}

func demandOn(t *testing.T, b *bundle, ref rail.MatterRef) {
	t.Helper()
	if _, err := b.ledger.Demand(b.ctx, ref, 1); err != nil {
		t.Fatal(err)
	}
}

func claimOn(t *testing.T, b *bundle, ref rail.MatterRef) rail.Claim {
	t.Helper()
	c, ok, err := b.ledger.Claim(b.ctx, ref, "setup")
	if err != nil || !ok {
		t.Fatalf("setup claim of %s: %v %v", ref, ok, err)
	}
	return c
}

// A batch claim grants exactly what the single claim grants, row by row:
// two matters are put in each state a claim must tell apart, one of each
// pair is claimed alone and the other in one batch with every other state
// (and a matter named twice); the batch wins the same rows, with the same
// target, attempt and expiry takeover, and the run each claim records.
func TestClaimBatchConditionsEachRowAsClaimDoes(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 2})
	var batch []rail.MatterRef
	single := map[rail.MatterRef]string{}
	inBatch := map[rail.MatterRef]string{}
	for _, st := range claimStates {
		one, two := b.newMatter(t, st.name+" (alone)"), b.newMatter(t, st.name+" (batch)")
		st.make(t, b, one)
		st.make(t, b, two)
		single[one], inBatch[two] = st.name, st.name
		batch = append(batch, two)
	}
	batch = append(batch, batch[0]) // a matter named twice is claimed once
	slices.Reverse(batch)           // the order given is not the order locked

	before := time.Now()
	claims, err := b.ledger.ClaimBatch(b.ctx, batch, "batch")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]rail.Claim{}
	for _, c := range claims {
		name := inBatch[c.MatterRef]
		if _, dup := got[name]; dup {
			t.Fatalf("%s claimed twice in one batch", name)
		}
		got[name] = c
	}
	want := map[string]rail.Claim{}
	for ref, name := range single {
		c, ok, err := b.ledger.Claim(b.ctx, ref, "alone")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			want[name] = c
		}
	}
	for _, st := range claimStates {
		w, wok := want[st.name]
		g, gok := got[st.name]
		if wok != st.claim || gok != wok {
			t.Errorf("%s: single claim %v, batch claim %v; want %v", st.name, wok, gok, st.claim)
			continue
		}
		if !gok {
			continue
		}
		if g.Token != w.Token || g.Target != w.Target || g.Built != w.Built || g.Attempt != w.Attempt ||
			g.TookOverExpiry != w.TookOverExpiry {
			t.Errorf("%s: batch claim %+v, single claim %+v", st.name, g, w)
		}
		// The lease starts when the batch is claimed, by the database clock.
		if g.ClaimedAt.Before(before.Add(-time.Minute)) || g.ClaimedAt.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s: claimed_at %s, want the claim's own time", st.name, g.ClaimedAt)
		}
		j, err := b.ledger.Job(b.ctx, g.MatterRef)
		if err != nil {
			t.Fatal(err)
		}
		if j.RunStatus != rail.StatusRunning || j.ClaimedBy != "batch" || j.ClaimedGeneration != g.Token ||
			j.ClaimedAt == nil || !j.ClaimedAt.Equal(g.ClaimedAt) {
			t.Errorf("%s: row %+v after the batch claim %+v", st.name, j, g)
		}
		var runs, expired int
		if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FILTER (WHERE token = $3 AND outcome = 'claimed' AND worker_id = 'batch'),
                count(*) FILTER (WHERE outcome = 'lease_expired')
            FROM ops.matter_frame_runs WHERE firm_id = $1 AND matter_id = $2`, g.FirmID, g.MatterID, g.Token).Scan(&runs, &expired); err != nil {
			t.Fatal(err)
		}
		if runs != 1 || (expired == 1) != g.TookOverExpiry {
			t.Errorf("%s: %d runs of the batch claim, %d expired runs; took over %v", st.name, runs, expired, g.TookOverExpiry)
		}
	}
	if len(got) != len(want) {
		t.Errorf("batch won %d claims, single claims %d", len(got), len(want))
	}
	if again, err := b.ledger.ClaimBatch(b.ctx, batch, "again"); err != nil || len(again) != 0 {
		t.Fatalf("a second batch over live claims won %d (%v); want none", len(again), err)
	}
}

// The batch claim is one statement: one round trip whatever the batch's size.
func TestClaimBatchIsOneRoundTrip(t *testing.T) {
	b := setup(t, rail.Config{})
	var trips atomic.Int64
	led := postgres.NewLedger(countedPool(t, b.db.URL, &trips), rail.Config{})
	round := func() int64 {
		refs := make([]rail.MatterRef, 10)
		for i := range refs {
			refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
			demandOn(t, b, refs[i])
		}
		t0 := trips.Load()
		claims, err := led.ClaimBatch(b.ctx, refs, "w")
		if err != nil || len(claims) != len(refs) {
			t.Fatalf("claimed %d of %d: %v", len(claims), len(refs), err)
		}
		return trips.Load() - t0
	}
	round() // warm-up: connect, prepare
	const rounds = 3
	var total int64
	for range rounds {
		total += round()
	}
	if got := float64(total) / rounds; got != 1 {
		t.Fatalf("a batch claim of 10 took %.2f round trips; want 1.00", got)
	}
}

// Batches over the same matters, given in opposite orders and run at once,
// queue behind each other instead of deadlocking (the rows are locked in
// (firm, matter) order), and every matter is claimed exactly once a round.
// The control locks the rows in the order each batch gives them: the same
// rounds deadlock (the test stops at the first).
func TestClaimBatchesOverlappingQueueRatherThanDeadlock(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "ordered lock"
		if control {
			name = "control: locked in the order given"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			refs := make([]rail.MatterRef, 40)
			for i := range refs {
				refs[i] = b.newMatter(t, fmt.Sprint("matter ", i))
			}
			claim := b.ledger.ClaimBatch
			if control {
				claim = postgres.ClaimBatchUnordered(b.ledger)
			}
			var deadlocks atomic.Int64
			for round := range 15 {
				for _, r := range refs {
					demandOn(t, b, r)
				}
				var (
					wg  sync.WaitGroup
					mu  sync.Mutex
					won []rail.Claim
					bad []error
				)
				for w := range 6 {
					order := slices.Clone(refs)
					if w%2 == 1 {
						slices.Reverse(order)
					}
					// Rotate so the batches overlap in different places.
					k := (w * 7) % len(order)
					order = append(order[k:], order[:k]...)
					wg.Add(1)
					go func() {
						defer wg.Done()
						cs, err := claim(b.ctx, order, fmt.Sprint("w", w))
						var pe *pgconn.PgError
						if errors.As(err, &pe) && pe.Code == "40P01" {
							deadlocks.Add(1)
							return
						}
						if err != nil {
							mu.Lock()
							bad = append(bad, err)
							mu.Unlock()
							return
						}
						mu.Lock()
						won = append(won, cs...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				if len(bad) > 0 {
					t.Fatal(errors.Join(bad...))
				}
				if !control && len(won) != len(refs) {
					t.Fatalf("round %d: %d claims won of %d matters", round, len(won), len(refs))
				}
				// Land every claim so the next round has demand to claim.
				if control && deadlocks.Load() > 0 {
					break // shown; each deadlock costs the server's deadlock_timeout
				}
				for _, c := range won {
					if _, err := b.ledger.Commit(b.ctx, c, frameOf("round")); err != nil {
						t.Fatal(err)
					}
				}
			}
			t.Logf("%s: %d deadlocks (up to 15 rounds of 6 overlapping batches)", name, deadlocks.Load())
			if control && deadlocks.Load() == 0 {
				t.Fatal("control: the unordered statement never deadlocked; the test cannot tell the lock order apart")
			}
			if !control && deadlocks.Load() != 0 {
				t.Fatalf("%d deadlocks", deadlocks.Load())
			}
		})
	}
}

// The builder function's role serves a batch: the batch claim (its row
// locks included), the batch read (through the claimed_* functions it may
// execute) and each commit, with no grant beyond what the single-claim
// path has. (railbench -only roundtrips runs both batch statements in exec
// mode, RDS Proxy's.)
func TestBuilderRoleServesABatch(t *testing.T) {
	x := newAttackDB(t)
	x.as(t, "brief_builder") // skips without the roles
	bp := railtest.Pool(t, x.db.RoleURL("brief_builder"), 2)
	// Both matters hold demand, and x.claim holds a; expire it so the batch can take a over.
	if _, err := x.db.Pool.Exec(x.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
        WHERE firm_id = $1 AND matter_id = $2`, x.a.FirmID, x.a.MatterID); err != nil {
		t.Fatal(err)
	}
	w := &rail.Worker{Ledger: postgres.NewLedger(bp, rail.Config{}), Builder: rail.DigestBuilder{}, ID: "batch", Heartbeat: -1}
	outs, errs, err := w.BuildBatch(x.ctx, []rail.BatchItem{{Ref: x.a}, {Ref: x.b}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if errs[i] != nil || !o.Landed {
			t.Fatalf("item %d as the builder role: %+v %v; want landed", i, o, errs[i])
		}
	}
	claims, err := postgres.NewLedger(bp, rail.Config{}).ClaimBatch(x.ctx, []rail.MatterRef{x.a, x.b}, "again")
	if err != nil || len(claims) != 0 {
		t.Fatalf("a batch claim with nothing to do: %d claims, %v", len(claims), err)
	}
}
