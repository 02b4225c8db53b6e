package modelcheck

import (
	"strings"
	"testing"
)

// fixedConfigs are the configurations TestFixedProtocol explores. The larger
// ones are skipped under -short.
func fixedConfigs(short bool) []Config {
	cs := []Config{
		{Protocol: Fixed, Workers: 2, Demands: 3},
		{Protocol: Fixed, Workers: 3, Demands: 2},
	}
	if !short {
		cs = append(cs,
			Config{Protocol: Fixed, Workers: 3, Demands: 3},
			Config{Protocol: Fixed, Workers: 2, Demands: 3, MaxAttempts: 3, NudgeCap: 3},
			Config{Protocol: Fixed, Workers: 2, Demands: 4},
		)
	}
	return cs
}

func TestFixedProtocol(t *testing.T) {
	for _, cfg := range fixedConfigs(testing.Short()) {
		t.Run(cfg.withDefaults().String(), func(t *testing.T) {
			rep := Run(cfg)
			t.Log(rep.Summary())
			for _, v := range rep.Violations {
				t.Errorf("%s", v.Format())
			}
			if rep.Incomplete {
				t.Errorf("search stopped at MaxStates: not exhaustive")
			}
			if rep.Truncated != 0 {
				t.Errorf("%d states hit MaxClaims: the fixed protocol's claims should be bounded by attempts", rep.Truncated)
			}
			if rep.WastedClaims != 0 {
				t.Errorf("%d wasted claims, want 0", rep.WastedClaims)
			}
			// Vacuity guard: a model that never reaches the hard cases proves
			// nothing. Every one of these must have been explored.
			for _, o := range []string{
				"claim", "reclaim after expiry", "claim refused",
				"frame landed", "frame landed on expired lease", "frame landed with follow-up",
				"commit fenced", "heartbeat", "heartbeat superseded",
				"fail", "fail quarantines", "fail fenced",
				"sweep quarantines", "sweep nudges", "demand releases quarantine", "crash",
			} {
				if rep.Coverage[o] == 0 {
					t.Errorf("outcome %q never explored", o)
				}
			}
			if rep.Quiescent == 0 {
				t.Errorf("no quiescent state reached")
			}
			t.Logf("coverage: %v", rep.Coverage)
		})
	}
}

// stepsOf returns the step labels of a counterexample.
func stepsOf(v Violation) []string {
	var out []string
	for _, ts := range v.Trace {
		out = append(out, ts.Step)
	}
	return out
}

// indexOf returns the index of the first step containing sub at or after from, or -1.
func indexOf(steps []string, from int, sub string) int {
	for i := from; i < len(steps); i++ {
		if strings.Contains(steps[i], sub) {
			return i
		}
	}
	return -1
}

func requireViolation(t *testing.T, rep Report, inv Invariant) Violation {
	t.Helper()
	v, ok := rep.Violated(inv)
	if !ok {
		t.Fatalf("%s: expected %q to be violated; violated: %v", rep.Config, inv, violatedNames(rep))
	}
	for i, ts := range v.Trace {
		if ts.Step == "?" {
			t.Errorf("trace step %d could not be replayed", i)
		}
	}
	t.Logf("%s", v.Format())
	return v
}

func violatedNames(rep Report) []string {
	var out []string
	for _, v := range rep.Violations {
		out = append(out, v.Invariant.String())
	}
	return out
}

// TestSeedProtocolFails is the negative control: the same explorer and the
// same invariants over the seed's original statements must find its three
// known bugs.
func TestSeedProtocolFails(t *testing.T) {
	rep := Run(Config{Protocol: Seed, Workers: 2, Demands: 2, MaxClaims: 5})
	t.Log(rep.Summary())
	t.Logf("violated: %v", violatedNames(rep))

	t.Run("wasted build", func(t *testing.T) {
		v := requireViolation(t, rep, HistWastedBuild)
		steps := stepsOf(v)
		// The build lands, then a left-over nudge claims the idle row again.
		landed := indexOf(steps, 0, "commit lands frame")
		if landed < 0 || indexOf(steps, landed+1, "claim granted") != len(steps)-1 {
			t.Errorf("want a claim granted after a landing as the last step, got %q", steps)
		}
		if rep.WastedClaims == 0 {
			t.Errorf("WastedClaims = 0")
		}
		// The duplicate-nudge form of the same bug: more builds than demands.
		requireViolation(t, rep, HistFollowUps)
	})

	t.Run("lost demand", func(t *testing.T) {
		// With no nudge ever dropped, a worker crashing after its claim is
		// enough: requested == claimed, and the sweep sees nothing to do.
		rep := Run(Config{Protocol: Seed, Workers: 2, Demands: 2, MaxClaims: 5, NoDrop: true})
		t.Log(rep.Summary())
		v := requireViolation(t, rep, LiveLostDemand)
		steps := stepsOf(v)
		claim := indexOf(steps, 0, "claim granted")
		crash := indexOf(steps, claim+1, "crashes")
		if claim < 0 || crash < 0 {
			t.Errorf("want a granted claim followed by a crash, got %q", steps)
		}
		if indexOf(steps, 0, "dropped") >= 0 {
			t.Errorf("no-drop run used a dropped nudge: %q", steps)
		}
		last := v.Final
		if last.Claimed != last.SeedReqGen {
			t.Errorf("want claimed == requested_generation at the end, got %d vs %d", last.Claimed, last.SeedReqGen)
		}
		requireViolation(t, rep, LiveEventually)
		// The table shows it too: the failed claim's target is never handed back.
		requireViolation(t, rep, InvIdleTarget)
	})

	t.Run("lost wake-up", func(t *testing.T) {
		v := requireViolation(t, rep, LiveLostWakeup)
		steps := stepsOf(v)
		refused := indexOf(steps, 0, "claim refused")
		landed := indexOf(steps, refused+1, "commit lands frame")
		flag := indexOf(steps, landed+1, "rebuild_needed = true")
		if refused < 0 || landed < 0 || flag < 0 {
			t.Errorf("want refused claim, then landing, then the flag written, got %q", steps)
		}
	})
}

// TestMutationsAreCaught breaks one statement of the fixed protocol at a time
// and checks that the invariant guarding it fires: the checker's own negative
// control, invariant by invariant.
func TestMutationsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		mut  Mutation
		want Invariant
	}{
		{MutUnfencedCommit, HistFrameFence},
		{MutBuiltFromRequested, HistFrameInputs},
		{MutNoDemandCheck, HistWastedBuild},
		{MutSweepNoNudge, LiveEventually},
	} {
		t.Run(tc.mut.String(), func(t *testing.T) {
			rep := Run(Config{Protocol: Fixed, Mutation: tc.mut, Workers: 2, Demands: 2, MaxClaims: 6})
			t.Log(rep.Summary())
			requireViolation(t, rep, tc.want)
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	s := State{
		Requested: 3, Claimed: 7, Target: 2, Built: 1, Status: statusRunning,
		LeaseLive: true, ClaimedAtSet: true, Attempts: 2, SeedReqGen: 4, RebuildNeeded: true,
		Inputs: 3, Nudges: 2, Landed: 1<<7 | 1<<3, NewestTarget: 1, FreshAfterDemand: 2,
		ClaimsSinceLand: 3, ReleasesSinceLand: 1, LastClaimLanded: true, NWorkers: 3,
		Workers: [maxWorkers]worker{{phaseBuilt, 7, 2, 3}, {phaseIdle, 0, 0, 0}, {phaseHolding, 5, 2, 0}},
	}
	s.canon()
	if got := decode(s.encode()); got != s {
		t.Fatalf("round trip:\n got %v\nwant %v", got, s)
	}
	p := s
	p.Workers[0], p.Workers[2] = p.Workers[2], p.Workers[0]
	p.canon()
	if p.encode() != s.encode() {
		t.Fatalf("permuted workers encode differently")
	}
}
