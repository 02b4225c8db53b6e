package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The negative control: the seed's original statements run through the
// same checks as the ledger. A check that cannot fail them is not checking.

// proto is the surface the checks drive.
type proto interface {
	// demand records demand as the protocol does on hearing a fact.
	demand(ctx context.Context) error
	// claim is a worker's attempt on receiving a nudge; the loser of a
	// claim race does what the protocol tells it to (loserAfter).
	claim(ctx context.Context) (token int64, ok bool, err error)
	// loserAfter is what a claim's loser does after losing (the seed sets
	// rebuild_needed in a separate statement; the ledger does nothing).
	loserAfter(ctx context.Context) error
	commit(ctx context.Context, token int64) (landed, followUp bool, err error)
	// unserved: would a sweep with every lease expired find demand to serve?
	unserved(ctx context.Context) (bool, error)
	expire(ctx context.Context) error
}

// checkNoWastedBuild: one demand, its nudge delivered twice (the second
// after the first build landed) → one build.
func checkNoWastedBuild(ctx context.Context, p proto) error {
	if err := p.demand(ctx); err != nil {
		return err
	}
	builds := 0
	for range 2 {
		tok, ok, err := p.claim(ctx)
		if err != nil {
			return err
		}
		if ok {
			builds++
			if _, _, err := p.commit(ctx, tok); err != nil {
				return err
			}
		}
	}
	if builds != 1 {
		return fmt.Errorf("wasted build: one demand started %d builds", builds)
	}
	return nil
}

// checkCrashedClaimNotLost: a worker crashes after its claim; once the lease
// expires the sweep must still see the demand.
func checkCrashedClaimNotLost(ctx context.Context, p proto) error {
	if err := p.demand(ctx); err != nil {
		return err
	}
	if _, ok, err := p.claim(ctx); err != nil || !ok {
		return fmt.Errorf("claim: ok=%v err=%v", ok, err)
	}
	// crash: the worker is gone
	if err := p.expire(ctx); err != nil {
		return err
	}
	u, err := p.unserved(ctx)
	if err != nil {
		return err
	}
	if !u {
		return errors.New("lost demand: a crashed claim's demand is invisible to the sweep")
	}
	return nil
}

// checkMidBuildDemandServed: a demand arrives during a build; its nudge
// loses the claim race. After the build commits, either a follow-up is due
// or the sweep can see the demand.
func checkMidBuildDemandServed(ctx context.Context, p proto) error {
	if err := p.demand(ctx); err != nil {
		return err
	}
	tok, ok, err := p.claim(ctx)
	if err != nil || !ok {
		return fmt.Errorf("claim: ok=%v err=%v", ok, err)
	}
	if err := p.demand(ctx); err != nil { // mid-build demand
		return err
	}
	if _, ok, err := p.claim(ctx); err != nil || ok {
		return fmt.Errorf("mid-build claim: ok=%v err=%v, want refused", ok, err)
	}
	_, followUp, err := p.commit(ctx, tok) // the build finishes first...
	if err != nil {
		return err
	}
	if err := p.loserAfter(ctx); err != nil { // ...then the loser's breadcrumb
		return err
	}
	u, err := p.unserved(ctx)
	if err != nil {
		return err
	}
	if !followUp && !u {
		return errors.New("lost wake-up: demand that arrived mid-build will never be built")
	}
	return nil
}

// checkZombieFenced: the seed's fence is sound, and the same check says so.
func checkZombieFenced(ctx context.Context, p proto) error {
	if err := p.demand(ctx); err != nil {
		return err
	}
	a, ok, err := p.claim(ctx)
	if err != nil || !ok {
		return fmt.Errorf("claim A: ok=%v err=%v", ok, err)
	}
	if err := p.expire(ctx); err != nil {
		return err
	}
	if err := p.demand(ctx); err != nil {
		return err
	}
	b, ok, err := p.claim(ctx)
	if err != nil || !ok {
		return fmt.Errorf("claim B: ok=%v err=%v", ok, err)
	}
	if landed, _, err := p.commit(ctx, b); err != nil || !landed {
		return fmt.Errorf("B's commit: landed=%v err=%v", landed, err)
	}
	if landed, _, err := p.commit(ctx, a); err != nil || landed {
		return fmt.Errorf("stale frame landed: zombie commit landed=%v err=%v", landed, err)
	}
	return nil
}

var checks = []struct {
	name      string
	check     func(context.Context, proto) error
	seedFails bool
}{
	{"no wasted build", checkNoWastedBuild, true},
	{"crashed claim not lost", checkCrashedClaimNotLost, true},
	{"mid-build demand served", checkMidBuildDemandServed, true},
	{"zombie fenced", checkZombieFenced, false},
}

func TestProtocolChecks(t *testing.T) {
	for _, c := range checks {
		t.Run("ledger/"+c.name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			if err := c.check(b.ctx, &ledgerProto{b: b}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("seed/"+c.name, func(t *testing.T) {
			b := setup(t, rail.Config{})
			err := c.check(b.ctx, newSeedProto(t, b))
			switch {
			case c.seedFails && err == nil:
				t.Fatal("negative control: the seed's statements passed a check they are known to fail")
			case c.seedFails:
				t.Logf("seed fails as expected: %v", err)
			case err != nil:
				t.Fatalf("the seed's fencing is sound, but the check failed: %v", err)
			}
		})
	}
}

type ledgerProto struct {
	b *bundle
}

func (p *ledgerProto) demand(ctx context.Context) error {
	_, err := p.b.ledger.Demand(ctx, p.b.ref, 1)
	return err
}

func (p *ledgerProto) claim(ctx context.Context) (int64, bool, error) {
	c, ok, err := p.b.ledger.Claim(ctx, p.b.ref, "w")
	return c.Token, ok, err
}

func (p *ledgerProto) loserAfter(context.Context) error { return nil }

func (p *ledgerProto) commit(ctx context.Context, token int64) (bool, bool, error) {
	res, err := p.b.ledger.Commit(ctx, rail.Claim{MatterRef: p.b.ref, Token: token}, frameOf(fmt.Sprint(token)))
	if errors.Is(err, rail.ErrFenced) {
		return false, false, nil
	}
	return err == nil, res.FollowUpDue, err
}

func (p *ledgerProto) unserved(ctx context.Context) (bool, error) {
	var u bool
	err := p.b.pool.QueryRow(ctx, `SELECT `+postgres.SQLDemandUnserved("j")+` FROM ops.matter_frame_jobs j
        WHERE j.firm_id = $1 AND j.matter_id = $2`, p.b.ref.FirmID, p.b.ref.MatterID).Scan(&u)
	return u, err
}

func (p *ledgerProto) expire(ctx context.Context) error {
	lease := p.b.ledger.Config().Lease
	_, err := p.b.pool.Exec(ctx, `UPDATE ops.matter_frame_jobs
        SET claimed_at = claimed_at - make_interval(secs => $3)
        WHERE firm_id = $1 AND matter_id = $2 AND run_status = 'running'`,
		p.b.ref.FirmID, p.b.ref.MatterID, lease.Seconds()+1)
	return err
}

// seedProto runs the seed's statements, verbatim in substance, on a table
// shaped as the seed describes it.
type seedProto struct {
	b *bundle
}

func newSeedProto(t *testing.T, b *bundle) *seedProto {
	_, err := b.pool.Exec(b.ctx, `CREATE TABLE seed_jobs (
        firm_id uuid, matter_id uuid, run_status text, rebuild_needed boolean,
        requested_generation bigint, claimed_generation bigint, claimed_at timestamptz,
        PRIMARY KEY (firm_id, matter_id))`)
	if err != nil {
		t.Fatal(err)
	}
	return &seedProto{b: b}
}

// In the seed a demand is its nudge: the claim itself records it.
func (p *seedProto) demand(context.Context) error { return nil }

func (p *seedProto) claim(ctx context.Context) (int64, bool, error) {
	var tok int64
	err := p.b.pool.QueryRow(ctx, `
INSERT INTO seed_jobs (firm_id, matter_id, run_status, rebuild_needed, requested_generation, claimed_generation, claimed_at)
VALUES ($1, $2, 'running', false, 1, 1, now())
ON CONFLICT (firm_id, matter_id) DO UPDATE SET
  run_status = 'running',
  requested_generation = seed_jobs.requested_generation + 1,
  claimed_generation   = seed_jobs.requested_generation + 1,
  claimed_at = now()
WHERE seed_jobs.run_status <> 'running'
   OR seed_jobs.claimed_at < now() - make_interval(secs => $3)
RETURNING claimed_generation`, p.b.ref.FirmID, p.b.ref.MatterID, rail.DefaultLease.Seconds()).Scan(&tok)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return tok, err == nil, err
}

func (p *seedProto) loserAfter(ctx context.Context) error {
	_, err := p.b.pool.Exec(ctx, `UPDATE seed_jobs SET rebuild_needed = true WHERE firm_id = $1 AND matter_id = $2`,
		p.b.ref.FirmID, p.b.ref.MatterID)
	return err
}

func (p *seedProto) commit(ctx context.Context, token int64) (bool, bool, error) {
	var requeue bool
	err := p.b.pool.QueryRow(ctx, `UPDATE seed_jobs SET run_status = 'idle', rebuild_needed = false
WHERE firm_id = $1 AND matter_id = $2 AND claimed_generation = $3 AND run_status = 'running'
RETURNING (SELECT rebuild_needed FROM seed_jobs WHERE firm_id = $1 AND matter_id = $2)`,
		p.b.ref.FirmID, p.b.ref.MatterID, token).Scan(&requeue)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, requeue, err
}

func (p *seedProto) unserved(ctx context.Context) (bool, error) {
	var u bool
	err := p.b.pool.QueryRow(ctx, `SELECT claimed_generation < requested_generation FROM seed_jobs
        WHERE firm_id = $1 AND matter_id = $2`, p.b.ref.FirmID, p.b.ref.MatterID).Scan(&u)
	return u, err
}

func (p *seedProto) expire(ctx context.Context) error {
	_, err := p.b.pool.Exec(ctx, `UPDATE seed_jobs SET claimed_at = claimed_at - interval '1 day'
        WHERE firm_id = $1 AND matter_id = $2`, p.b.ref.FirmID, p.b.ref.MatterID)
	return err
}
