package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Fault kinds, counted per run.
const (
	FaultStallBeforeFence   = "stall before fence"
	FaultStallAfterFence    = "stall after fence (commit tx open, row locked)"
	FaultKillBeforeFence    = "connection killed before fence"
	FaultKillAfterFence     = "connection killed after fence, before COMMIT"
	FaultKillAfterCommit    = "connection killed after COMMIT (reply lost)"
	FaultKillStalledTx      = "stalled transaction ended by the server"
	FaultClaimTxOpen        = "claim tx left open (row locked)"
	FaultFencedAfterWait    = "zombie commit waited on the row lock, then fenced"
	FaultBlocked            = "statement blocked on a held row lock"
	FaultLeaseExpired       = "lease expired (time travel)"
	FaultBackoffExpired     = "backoff expired (time travel)"
	FaultClockTick          = "clock advanced 4m (time travel)"
	FaultCrash              = "worker crash (claim forgotten)"
	FaultClaimReplyLost     = "claim reply lost (ambiguous claim)"
	FaultBuildFailed        = "build failure (Fail with backoff)"
	FaultNudgeDuplicated    = "nudge duplicated"
	FaultNudgeDropped       = "nudge dropped"
	FaultNudgeDelayed       = "nudge delayed"
	FaultNudgeReordered     = "nudge reordered"
	FaultSweepDuringCommit  = "sweep during an open commit"
	FaultDemandDuringCommit = "demand during an open commit"
	FaultRecommitAfterCheck = "re-commit after FrameLanded said no"
	FaultRelayCrash         = "relay crash between PutEvents and marking"
	FaultTwoRelays          = "two relays at once"
	FaultTwoRelaysLeaseBusy = "two relays at once, the second found the relay lease held"
	FaultPutEventsPartial   = "PutEvents partial failure"
	FaultPutEventsFailed    = "PutEvents call failed"
	FaultOutOfOrderFacts    = "outbox rows committed out of order"
	// Builds that end at their deadline (deadline.go).
	FaultDeadlineBeforeCommit = "build ended at its deadline, before the commit"
	FaultDeadlineDuringCommit = "build deadline passed during the commit (waiting on a row lock)"
	FaultDeadlineBuildCut     = "build cut off by its deadline (Fail)"
	// Matters closed and re-opened (sim.go, "closed matters").
	FaultMatterClosed        = "matter closed (its demand held)"
	FaultClosedMidBuild      = "matter closed mid-build (a claim held on it)"
	FaultMatterReopened      = "matter re-opened"
	FaultOddRowLegal         = "outbox row with an unusual legal payload (numbers, nesting, 2 KB)"
	FaultOddRowUndeliverable = "outbox row the CHECKs accept but the bus cannot carry"
	FaultRelayTxKilled       = "relay froze inside PutEvents past its lease"
)

// Violation kinds.
const (
	VStaleFrame     = "stale frame landed"
	VStaleFrameDB   = "stale frame landed (by the database clock)"
	VTokenReused    = "token reused or skipped"
	VDuplicateFrame = "two frames for one token"
	VInputsMissed   = "frame missed an input its target covers"
	VBuiltDecreased = "built_generation decreased"
	VWastedBuild    = "wasted build (claim covered no new demand)"
	VFollowUps      = "more than two builds after the last demand"
	VLiveLease      = "claim granted on a live lease"
	VTable          = "table invariant"
	VDemandLost     = "demand lost (not built after the drain, not quarantined)"
	VMismatch       = "history and database disagree"
	VLandedAnswer   = "FrameLanded answered wrongly"
	VError          = "unexpected error"
	VFactLost       = "committed fact never published"
	VFactMarked     = "fact marked published without the bus accepting it"
	VFactPhantom    = "fact published that never committed"
	VFrameFact      = "frame.built facts do not match landed frames"
	VFactTwice      = "two relays published the same row at once"
	VStuckRow       = "attempt ended with its row left running (stuck until the lease expires)"
	VGauges         = "gauges disagree with the history (false or missing alarm)"
	VClaimClosed    = "claim granted on a closed matter"
	VRelayHeldBack  = "relay held rows back (a pass failed, or a dead relay kept its rows)"
	VPayloadAltered = "payload on the bus differs from the row"
	VWrongPark      = "row parked that the bus could carry, or undeliverable row not parked"
)

// Result is what one run did and found.
type Result struct {
	Seed    uint64
	Matters int
	Steps   int
	Faults  map[string]int
	// Figures.
	Demands      int
	Claims       int
	FramesLanded int
	Fenced       int // commits (or heartbeats) refused by the fence
	DrainClaims  int // claims during the drain
	MaxFresh     int // most builds started after one matter's last demand
	DemandsLost  int // demand generations unbuilt after the drain (not quarantined)
	Quarantined  int // matters quarantined at the end
	// Outbox figures.
	Facts            int // committed outbox rows
	FactsParked      int
	FactsRepublished int // extra accepted copies (consumers dedupe on event_id)
	Violations       map[string][]string
	Trace            []string
	Elapsed          time.Duration
}

func (r *Result) violate(kind, format string, args ...any) {
	if r.Violations == nil {
		r.Violations = map[string][]string{}
	}
	r.Violations[kind] = append(r.Violations[kind], fmt.Sprintf(format, args...))
}

// Count returns the number of violations of a kind.
func (r *Result) Count(kind string) int { return len(r.Violations[kind]) }

// Failed reports whether any check failed.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// TraceHash identifies the run's step sequence (equal for a replay).
func (r *Result) TraceHash() string {
	h := sha256.New()
	for _, s := range r.Trace {
		h.Write([]byte(s))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Report formats the violations and the tail of the trace.
func (r *Result) Report(traceTail int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r.Violations)) {
		vs := r.Violations[k]
		fmt.Fprintf(&b, "%s (%d):\n", k, len(vs))
		for i, v := range vs {
			if i == 5 {
				fmt.Fprintf(&b, "  … %d more\n", len(vs)-5)
				break
			}
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	tr := r.Trace
	if traceTail > 0 && len(tr) > traceTail {
		fmt.Fprintf(&b, "trace (last %d of %d steps):\n", traceTail, len(tr))
		tr = tr[len(tr)-traceTail:]
	} else {
		b.WriteString("trace:\n")
	}
	for _, s := range tr {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

// Totals sums results.
type Totals struct {
	Seeds, FailedSeeds                           int
	Steps, Demands, Claims, FramesLanded, Fenced int
	DrainClaims, MaxFresh, DemandsLost           int
	Quarantined                                  int
	Facts, FactsParked, FactsRepublished         int
	Faults                                       map[string]int
	Violations                                   map[string]int
	FirstFailed                                  []uint64
}

// Add folds a result in.
func (t *Totals) Add(r *Result) {
	if t.Faults == nil {
		t.Faults, t.Violations = map[string]int{}, map[string]int{}
	}
	t.Seeds++
	t.Steps += r.Steps
	t.Demands += r.Demands
	t.Claims += r.Claims
	t.FramesLanded += r.FramesLanded
	t.Fenced += r.Fenced
	t.DrainClaims += r.DrainClaims
	t.MaxFresh = max(t.MaxFresh, r.MaxFresh)
	t.DemandsLost += r.DemandsLost
	t.Quarantined += r.Quarantined
	t.Facts += r.Facts
	t.FactsParked += r.FactsParked
	t.FactsRepublished += r.FactsRepublished
	for k, v := range r.Faults {
		t.Faults[k] += v
	}
	for k, v := range r.Violations {
		t.Violations[k] += len(v)
	}
	if r.Failed() {
		t.FailedSeeds++
		if len(t.FirstFailed) < 10 {
			t.FirstFailed = append(t.FirstFailed, r.Seed)
		}
	}
}

// notInjected are counted with the faults but are consequences of them (or
// the worker's correct reaction), and the clock advances are counted apart.
var notInjected = map[string]bool{FaultBlocked: true, FaultTwoRelaysLeaseBusy: true, FaultFencedAfterWait: true,
	FaultRecommitAfterCheck: true, FaultClockTick: true}

// FaultsInjected is the total of injected faults, not counting clock
// advances and consequences.
func (t *Totals) FaultsInjected() int {
	n := 0
	for k, v := range t.Faults {
		if !notInjected[k] {
			n += v
		}
	}
	return n
}

// Summary is the one-line figure set.
func (t *Totals) Summary() string {
	return fmt.Sprintf("sim summary: seeds=%d failed=%d steps=%d faults_injected=%d clock_advances=%d demands=%d claims=%d frames_landed=%d fenced=%d "+
		"stale_frames_landed=%d (db clock %d) demands_lost=%d wasted_builds=%d tokens_reused=%d duplicate_frames=%d inputs_missed=%d "+
		"max_builds_after_last_demand=%d quarantined=%d facts=%d facts_lost=%d facts_republished=%d facts_parked=%d stuck_rows=%d "+
		"relay_held_back=%d payloads_altered=%d wrong_parks=%d",
		t.Seeds, t.FailedSeeds, t.Steps, t.FaultsInjected(), t.Faults[FaultClockTick], t.Demands, t.Claims, t.FramesLanded, t.Fenced,
		t.Violations[VStaleFrame], t.Violations[VStaleFrameDB], t.DemandsLost, t.Violations[VWastedBuild], t.Violations[VTokenReused],
		t.Violations[VDuplicateFrame], t.Violations[VInputsMissed], t.MaxFresh, t.Quarantined,
		t.Facts, t.Violations[VFactLost], t.FactsRepublished, t.FactsParked, t.Violations[VStuckRow],
		t.Violations[VRelayHeldBack], t.Violations[VPayloadAltered], t.Violations[VWrongPark])
}

// FaultTable lists faults by kind, most frequent first.
func (t *Totals) FaultTable() string {
	keys := slices.Collect(maps.Keys(t.Faults))
	slices.SortFunc(keys, func(a, b string) int {
		if t.Faults[a] != t.Faults[b] {
			return t.Faults[b] - t.Faults[a]
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-48s %7d\n", k, t.Faults[k])
	}
	return b.String()
}
