package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// RoundTripResults: wire round trips and pgx statements per ledger call, in
// steady state (statements already prepared), on a one-connection pool.
type RoundTripResults struct {
	Modes map[string]RoundTripMode `json:"modes"`
	Notes []string                 `json:"notes"`
}

type RoundTripMode struct {
	Cycles           int     `json:"cycles"`
	DemandRoundTrips float64 `json:"demand_round_trips"`
	ClaimRoundTrips  float64 `json:"claim_round_trips"`
	CommitRoundTrips float64 `json:"commit_round_trips"`
	DemandStatements float64 `json:"demand_statements"`
	ClaimStatements  float64 `json:"claim_statements"`
	CommitStatements float64 `json:"commit_statements"`
	// A builder invocation's batch of BatchOf nudges: the claim statement
	// (Ledger.ClaimBatch) and the builds' read statement (LoadBuilds).
	BatchOf              int     `json:"batch_of"`
	BatchClaimRoundTrips float64 `json:"batch_claim_round_trips"`
	BatchReadRoundTrips  float64 `json:"batch_read_round_trips"`
	// The batch's frames landed by one group commit (Ledger.CommitGroup).
	BatchCommitRoundTrips float64 `json:"batch_commit_round_trips"`
}

func runRoundTrips(ctx context.Context, e *env, o options) (*RoundTripResults, error) {
	out := &RoundTripResults{Modes: map[string]RoundTripMode{}, Notes: []string{
		"round trip: a client write that follows a server reply, counted on the socket; statement: a pgx Query/Exec/QueryRow call (QueryTracer)",
		"measured after a warm-up so prepared statements are cached; exec mode (what RDS Proxy allows) never prepares",
	}}
	modes := []struct {
		name string
		mode pgx.QueryExecMode
	}{{o.ExecMode, e.execMode}}
	if o.ExecMode != "exec" {
		modes = append(modes, struct {
			name string
			mode pgx.QueryExecMode
		}{"exec", pgx.QueryExecModeExec})
	}
	for _, m := range modes {
		w := &wireCounter{}
		pool, err := e.poolMode(ctx, 1, w, m.mode)
		if err != nil {
			return nil, err
		}
		led := postgres.NewLedger(pool, rail.Config{})
		const cycles, warm = 100, 5
		refs, err := createMatters(ctx, pool, cycles+warm, "roundtrips ")
		if err != nil {
			pool.Close()
			return nil, err
		}
		var rtD, rtC, rtK, stD, stC, stK int64
		measure := func(f func() error, rt, st *int64) error {
			r0, s0 := w.snapshot()
			if err := f(); err != nil {
				return err
			}
			r1, s1 := w.snapshot()
			*rt += r1 - r0
			*st += s1 - s0
			return nil
		}
		for i, ref := range refs {
			var d1, d2, d3, s1, s2, s3 int64
			var c rail.Claim
			err := measure(func() error { _, err := led.Demand(ctx, ref, 1); return err }, &d1, &s1)
			if err == nil {
				err = measure(func() error {
					var ok bool
					var err error
					c, ok, err = led.Claim(ctx, ref, "rt")
					if err == nil && !ok {
						err = fmt.Errorf("claim found nothing to do")
					}
					return err
				}, &d2, &s2)
			}
			if err == nil {
				err = measure(func() error { _, err := led.Commit(ctx, c, noopFrame); return err }, &d3, &s3)
			}
			if err != nil {
				pool.Close()
				return nil, err
			}
			if i >= warm {
				rtD, rtC, rtK = rtD+d1, rtC+d2, rtK+d3
				stD, stC, stK = stD+s1, stC+s2, stK+s3
			}
		}
		// Batches of 10, as the builder function claims and reads them.
		const batchOf, batches = 10, 10
		brefs, err := createMatters(ctx, pool, batchOf*(batches+1), "roundtrips batch ")
		if err != nil {
			pool.Close()
			return nil, err
		}
		var rtB, rtR, rtG int64
		for b := range batches + 1 {
			set := brefs[b*batchOf : (b+1)*batchOf]
			for _, ref := range set {
				if _, err := led.Demand(ctx, ref, 1); err != nil {
					pool.Close()
					return nil, err
				}
			}
			var claims []rail.Claim
			var b1, r1, g1, ignored int64
			err := measure(func() error {
				var err error
				claims, err = led.ClaimBatch(ctx, set, "rt")
				if err == nil && len(claims) != len(set) {
					err = fmt.Errorf("batch claim won %d of %d", len(claims), len(set))
				}
				return err
			}, &b1, &ignored)
			if err == nil {
				err = measure(func() error { _, err := led.LoadBuilds(ctx, claims); return err }, &r1, &ignored)
			}
			if err == nil {
				group := make([]rail.FrameCommit, len(claims))
				for i, c := range claims {
					group[i] = rail.FrameCommit{Claim: c, Frame: noopFrame}
				}
				err = measure(func() error {
					_, errs, err := led.CommitGroup(ctx, group)
					for _, e := range errs {
						if err == nil {
							err = e
						}
					}
					return err
				}, &g1, &ignored)
			}
			if err != nil {
				pool.Close()
				return nil, err
			}
			if b > 0 { // the first batch is the warm-up
				rtB, rtR, rtG = rtB+b1, rtR+r1, rtG+g1
			}
		}
		pool.Close()
		n := float64(cycles)
		out.Modes[m.name] = RoundTripMode{Cycles: cycles,
			DemandRoundTrips: float64(rtD) / n, ClaimRoundTrips: float64(rtC) / n, CommitRoundTrips: float64(rtK) / n,
			DemandStatements: float64(stD) / n, ClaimStatements: float64(stC) / n, CommitStatements: float64(stK) / n,
			BatchOf: batchOf, BatchClaimRoundTrips: float64(rtB) / batches, BatchReadRoundTrips: float64(rtR) / batches,
			BatchCommitRoundTrips: float64(rtG) / batches}
		logf("round trips (%s): demand %.2f, claim %.2f, commit %.2f; a batch of %d: claim %.2f, reads %.2f, group commit %.2f", m.name,
			float64(rtD)/n, float64(rtC)/n, float64(rtK)/n, batchOf, float64(rtB)/batches, float64(rtR)/batches, float64(rtG)/batches)
	}
	return out, nil
}
