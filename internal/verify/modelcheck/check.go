package modelcheck

import (
	"fmt"
	"strings"
	"time"
)

// Invariant names one checked property.
type Invariant uint8

const (
	// Table invariants, checked in every reachable state.

	InvOrder        Invariant = iota // built <= target <= requested
	InvRunningLease                  // running => claimed_at recorded
	InvIdleTarget                    // run_status <> running => target == built
	InvFrameTokens                   // every landed frame's token <= claimed
	InvNewestFrame                   // newest frame's target == built (built == 0 with no frame)

	// History invariants, checked on every transition (the path is the history).

	HistClaimToken    // a claim raises the token by exactly 1; nothing else changes it
	HistClaimGrant    // a claim is granted only on an idle row past backoff or an expired lease
	HistFrameFence    // a frame with token t lands only while claimed == t
	HistFrameOnce     // at most one frame per token
	HistFrameInputs   // a frame with target T saw every input <= T
	HistBuiltMonotone // built never decreases
	HistWastedBuild   // a claim starts a build covering no new demand (target == built)
	HistFollowUps     // more than two builds start after the last demand
	HistRetries       // claims between two landings exceed max_attempts per quarantine release

	// Liveness, checked on the finite graph.

	LiveLostWakeup // quiescent, idle, requested > built, and the row's own pending flag says so
	LiveLostDemand // quiescent, idle, requested > built, and the row no longer records it
	LiveEventually // no demand-free path to a quiescent state with built == requested or quarantined

	numInvariants
)

var invariantNames = [...]string{
	InvOrder:          "table: built <= target <= requested",
	InvRunningLease:   "table: running => claimed_at recorded",
	InvIdleTarget:     "table: not running => target == built",
	InvFrameTokens:    "table: frame tokens <= claimed",
	InvNewestFrame:    "table: newest frame's target == built",
	HistClaimToken:    "history: each claim raises the token by exactly 1",
	HistClaimGrant:    "history: claim granted only on idle row or expired lease",
	HistFrameFence:    "history: frame t lands only while claimed == t",
	HistFrameOnce:     "history: at most one frame per token",
	HistFrameInputs:   "history: frame with target T saw every input <= T",
	HistBuiltMonotone: "history: built never decreases",
	HistWastedBuild:   "history: wasted build (claim covers no new demand)",
	HistFollowUps:     "history: at most two builds start after the last demand",
	HistRetries:       "history: retries between landings bounded by max_attempts",
	LiveLostWakeup:    "liveness: lost wake-up (pending flag on a quiescent idle row)",
	LiveLostDemand:    "liveness: lost demand (quiescent idle row behind, and it does not know)",
	LiveEventually:    "liveness: every demand eventually built unless quarantined",
}

func (v Invariant) String() string {
	if int(v) < len(invariantNames) {
		return invariantNames[v]
	}
	return fmt.Sprintf("Invariant(%d)", uint8(v))
}

// TraceStep is one step of a counterexample: the step taken and the state it
// reached (the first step is the initial state, with Step "init").
type TraceStep struct {
	Step  string
	State string
}

// Violation is the shortest counterexample found for one invariant.
type Violation struct {
	Invariant Invariant
	// Count is how many states (table, liveness) or transitions (history)
	// violate it.
	Count  int
	Detail string
	Trace  []TraceStep
	// Final is the state the violation was observed in (for a history
	// invariant, the state the offending step reached).
	Final State
}

// Format prints the counterexample step by step.
func (v Violation) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "VIOLATION %s (%d occurrences): %s\n", v.Invariant, v.Count, v.Detail)
	for i, ts := range v.Trace {
		fmt.Fprintf(&b, "  %2d. %s\n      %s\n", i, ts.Step, ts.State)
	}
	return b.String()
}

// Report is the outcome of one exhaustive exploration.
type Report struct {
	Config      Config
	States      int // distinct canonical states reached
	Transitions int // transitions explored (including ones into seen states)
	MaxDepth    int // BFS depth of the deepest state
	Quiescent   int // quiescent states
	// Truncated counts states where MaxClaims disabled a claim. Zero means
	// the exploration is exhaustive for the configuration.
	Truncated int
	// Incomplete is set when MaxStates stopped the search.
	Incomplete bool
	// WastedClaims counts claim transitions whose target equalled built.
	WastedClaims int
	Violations   []Violation // one per violated invariant, shortest first found
	// Coverage counts explored transitions by outcome (see outcomeNames), so
	// tests can show that the interesting cases were reached at all.
	Coverage map[string]int
	Elapsed  time.Duration
}

// Violated returns the violation of inv, if any.
func (r Report) Violated(inv Invariant) (Violation, bool) {
	for _, v := range r.Violations {
		if v.Invariant == inv {
			return v, true
		}
	}
	return Violation{}, false
}

// Summary is a one-line account of the run.
func (r Report) Summary() string {
	s := fmt.Sprintf("%s: %d states, %d transitions, max depth %d, %d quiescent, %d truncated, %d wasted claims, %d invariants violated, %v",
		r.Config, r.States, r.Transitions, r.MaxDepth, r.Quiescent, r.Truncated, r.WastedClaims, len(r.Violations), r.Elapsed.Round(time.Millisecond))
	if r.Incomplete {
		s += " (INCOMPLETE: MaxStates reached)"
	}
	return s
}

// explorer holds one breadth-first search.
type explorer struct {
	m      machine
	index  map[key]int32
	keys   []key
	parent []int32
	depth  []uint16

	// Forward edges without demand steps, CSR layout.
	edgeStart []int32
	edges     []int32
	good      []bool

	first [numInvariants]*violationSite
	count [numInvariants]int
}

// violationSite locates a violation: the state it was seen in and, for a
// history invariant, the step out of it and the state that step reached.
type violationSite struct {
	state  int32
	st     *step
	post   State
	detail string
}

// Run explores every state reachable under cfg and checks every invariant.
func Run(cfg Config) Report {
	start := time.Now()
	cfg = cfg.withDefaults()
	if cfg.Workers < 1 || cfg.Workers > maxWorkers {
		panic(fmt.Sprintf("modelcheck: Workers must be 1..%d", maxWorkers))
	}
	if cfg.MaxClaims > 31 {
		panic("modelcheck: MaxClaims must be <= 31")
	}
	e := &explorer{m: machine{cfg: cfg}, index: make(map[key]int32)}
	rep := Report{Config: cfg}

	init := e.m.initial()
	init.canon()
	e.add(init.encode(), -1, 0)
	var cover [numOutcomes]int

	for i := 0; i < len(e.keys); i++ {
		if len(e.keys) >= cfg.MaxStates {
			rep.Incomplete = true
			break
		}
		s := decode(e.keys[i])
		idx := int32(i)
		e.checkState(idx, s)
		q := e.m.quiescent(s)
		if q {
			rep.Quiescent++
		}
		e.edgeStart = append(e.edgeStart, int32(len(e.edges)))
		d := e.depth[i]
		e.m.successors(s, func(st step, n State) {
			rep.Transitions++
			e.checkStep(idx, s, st, n)
			if st.Kind == stepDeliver && st.Granted && st.Target == s.Built {
				rep.WastedClaims++
			}
			cover[outcome(s, st, n)]++
			n.canon()
			k := n.encode()
			j, ok := e.index[k]
			if !ok {
				j = e.add(k, idx, d+1)
			}
			if st.Kind != stepDemand {
				e.edges = append(e.edges, j)
			}
		})
		good := q && (s.Requested == s.Built || s.Status == statusQuarantined)
		if e.m.truncated {
			rep.Truncated++
			good = true // optimistic: the bound, not the protocol, stopped it
		}
		e.good = append(e.good, good)
		if int(d) > rep.MaxDepth {
			rep.MaxDepth = int(d)
		}
	}
	rep.States = len(e.keys)
	if !rep.Incomplete {
		e.edgeStart = append(e.edgeStart, int32(len(e.edges)))
		e.checkEventually()
	}
	for inv := Invariant(0); inv < numInvariants; inv++ {
		if site := e.first[inv]; site != nil {
			rep.Violations = append(rep.Violations, Violation{
				Invariant: inv,
				Count:     e.count[inv],
				Detail:    site.detail,
				Trace:     e.trace(site),
				Final:     e.final(site),
			})
		}
	}
	rep.Coverage = make(map[string]int)
	for o, c := range cover {
		if c > 0 {
			rep.Coverage[outcomeNames[o]] = c
		}
	}
	rep.Elapsed = time.Since(start)
	return rep
}

// Transition outcomes, for coverage.
const (
	outOther = iota
	outClaim
	outReclaim // claim granted on a running row whose lease expired
	outClaimRefused
	outLand
	outLandAfterExpiry // a commit lands on an expired lease nobody reclaimed
	outFollowUp        // a landing that sent the follow-up nudge
	outFenced
	outHeartbeat
	outSuperseded
	outFail
	outFailQuarantine
	outFailFenced
	outSweepQuarantine
	outSweepNudge
	outSweepFailClaim
	outRelease
	outCrash
	outSetFlag
	numOutcomes
)

var outcomeNames = [...]string{
	outOther:           "other",
	outClaim:           "claim",
	outReclaim:         "reclaim after expiry",
	outClaimRefused:    "claim refused",
	outLand:            "frame landed",
	outLandAfterExpiry: "frame landed on expired lease",
	outFollowUp:        "frame landed with follow-up",
	outFenced:          "commit fenced",
	outHeartbeat:       "heartbeat",
	outSuperseded:      "heartbeat superseded",
	outFail:            "fail",
	outFailQuarantine:  "fail quarantines",
	outFailFenced:      "fail fenced",
	outSweepQuarantine: "sweep quarantines",
	outSweepNudge:      "sweep nudges",
	outSweepFailClaim:  "sweep fails claim",
	outRelease:         "demand releases quarantine",
	outCrash:           "crash",
	outSetFlag:         "rebuild_needed written",
}

func outcome(s State, st step, n State) int {
	switch st.Kind {
	case stepDeliver:
		switch {
		case !st.Granted:
			return outClaimRefused
		case s.Status == statusRunning:
			return outReclaim
		default:
			return outClaim
		}
	case stepCommit:
		switch {
		case !st.Landed:
			return outFenced
		case !s.LeaseLive:
			return outLandAfterExpiry
		case n.Nudges > s.Nudges:
			return outFollowUp
		default:
			return outLand
		}
	case stepHeartbeat:
		if st.Granted {
			return outHeartbeat
		}
		return outSuperseded
	case stepFail:
		switch {
		case !st.Granted:
			return outFailFenced
		case n.Status == statusQuarantined:
			return outFailQuarantine
		default:
			return outFail
		}
	case stepSweep:
		switch {
		case n.Status == statusQuarantined:
			return outSweepQuarantine
		case n.Nudges > s.Nudges:
			return outSweepNudge
		default:
			return outSweepFailClaim
		}
	case stepDemand:
		if s.Status == statusQuarantined && n.Status == statusIdle {
			return outRelease
		}
	case stepCrash:
		return outCrash
	case stepSetFlag:
		return outSetFlag
	}
	return outOther
}

func (e *explorer) add(k key, parent int32, depth uint16) int32 {
	j := int32(len(e.keys))
	e.index[k] = j
	e.keys = append(e.keys, k)
	e.parent = append(e.parent, parent)
	e.depth = append(e.depth, depth)
	return j
}

func (e *explorer) flag(inv Invariant, site violationSite) {
	e.count[inv]++
	if e.first[inv] == nil {
		e.first[inv] = &site
	}
}

func (e *explorer) checkState(i int32, s State) {
	if !(s.Built <= s.Target && s.Target <= s.Requested) {
		e.flag(InvOrder, violationSite{state: i, detail: fmt.Sprintf("built=%d target=%d requested=%d", s.Built, s.Target, s.Requested)})
	}
	if s.Status == statusRunning && !s.ClaimedAtSet {
		e.flag(InvRunningLease, violationSite{state: i, detail: "running row with claimed_at null"})
	}
	if s.Status != statusRunning && s.Target != s.Built {
		e.flag(InvIdleTarget, violationSite{state: i, detail: fmt.Sprintf("%s row has target=%d built=%d", statusNames[s.Status], s.Target, s.Built)})
	}
	if s.Landed>>(uint(s.Claimed)+1) != 0 {
		e.flag(InvFrameTokens, violationSite{state: i, detail: fmt.Sprintf("frames %s but claimed=%d", landedList(s.Landed), s.Claimed)})
	}
	if (s.Landed == 0 && s.Built != 0) || (s.Landed != 0 && s.NewestTarget != s.Built) {
		e.flag(InvNewestFrame, violationSite{state: i, detail: fmt.Sprintf("newest frame target=%d built=%d", s.NewestTarget, s.Built)})
	}
	if e.m.quiescent(s) && s.Requested > s.Built && s.Status != statusQuarantined {
		if e.m.pendingFlag(s) {
			e.flag(LiveLostWakeup, violationSite{state: i, detail: fmt.Sprintf("quiescent %s row, requested=%d built=%d, pending flag set, nothing will act on it", statusNames[s.Status], s.Requested, s.Built)})
		} else {
			e.flag(LiveLostDemand, violationSite{state: i, detail: fmt.Sprintf("quiescent %s row, requested=%d built=%d, the row's unserved-demand test says nothing to do", statusNames[s.Status], s.Requested, s.Built)})
		}
	}
}

func (e *explorer) checkStep(i int32, s State, st step, n State) {
	site := func(detail string) violationSite {
		stc := st
		return violationSite{state: i, st: &stc, post: n, detail: detail}
	}
	cfg := e.m.cfg
	claim := st.Kind == stepDeliver && st.Granted
	if claim {
		if n.Claimed != s.Claimed+1 || st.Token != n.Claimed {
			e.flag(HistClaimToken, site(fmt.Sprintf("claim moved token %d -> %d, returned %d", s.Claimed, n.Claimed, st.Token)))
		}
		idleOK := s.Status == statusIdle && s.BackoffDone
		expired := s.Status == statusRunning && !s.LeaseLive
		if !idleOK && !expired {
			e.flag(HistClaimGrant, site(fmt.Sprintf("claim granted on %s row, lease %s", statusNames[s.Status], leaseName(s))))
		}
		if st.Target == s.Built {
			e.flag(HistWastedBuild, site(fmt.Sprintf("claim token=%d target=%d but built=%d already: no new demand", st.Token, st.Target, s.Built)))
		}
		if n.FreshAfterDemand > 2 {
			e.flag(HistFollowUps, site(fmt.Sprintf("%d builds started since the last demand", n.FreshAfterDemand)))
		}
		if int(n.ClaimsSinceLand) > cfg.MaxAttempts*(1+int(n.ReleasesSinceLand)) {
			e.flag(HistRetries, site(fmt.Sprintf("%d claims since the last landed frame (%d quarantine releases)", n.ClaimsSinceLand, n.ReleasesSinceLand)))
		}
	} else if n.Claimed != s.Claimed {
		e.flag(HistClaimToken, site(fmt.Sprintf("token moved %d -> %d outside a claim", s.Claimed, n.Claimed)))
	}
	if st.Landed {
		if s.Claimed != st.Token {
			e.flag(HistFrameFence, site(fmt.Sprintf("frame token=%d landed while claimed=%d", st.Token, s.Claimed)))
		}
		if s.Landed&(1<<st.Token) != 0 {
			e.flag(HistFrameOnce, site(fmt.Sprintf("second frame for token=%d", st.Token)))
		}
		if st.Seen < st.Target {
			e.flag(HistFrameInputs, site(fmt.Sprintf("frame target=%d saw only %d inputs", st.Target, st.Seen)))
		}
	}
	if n.Built < s.Built {
		e.flag(HistBuiltMonotone, site(fmt.Sprintf("built %d -> %d", s.Built, n.Built)))
	}
}

// checkEventually marks every state from which no demand-free path reaches a
// good state (quiescent with built == requested, or quarantined), by
// backward reachability from the good states.
func (e *explorer) checkEventually() {
	n := len(e.keys)
	// Reverse CSR.
	inStart := make([]int32, n+1)
	for _, j := range e.edges {
		inStart[j+1]++
	}
	for i := 0; i < n; i++ {
		inStart[i+1] += inStart[i]
	}
	in := make([]int32, len(e.edges))
	fill := make([]int32, n)
	copy(fill, inStart[:n])
	for i := 0; i < n; i++ {
		for _, j := range e.edges[e.edgeStart[i]:e.edgeStart[i+1]] {
			in[fill[j]] = int32(i)
			fill[j]++
		}
	}
	reach := make([]bool, n)
	var stack []int32
	for i, g := range e.good {
		if g {
			reach[i] = true
			stack = append(stack, int32(i))
		}
	}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, i := range in[inStart[j]:inStart[j+1]] {
			if !reach[i] {
				reach[i] = true
				stack = append(stack, i)
			}
		}
	}
	for i := 0; i < n; i++ { // index order is BFS order: the first is shallowest
		if !reach[i] {
			s := decode(e.keys[i])
			e.flag(LiveEventually, violationSite{state: int32(i), detail: fmt.Sprintf(
				"from this state no demand-free path reaches built == requested (requested=%d built=%d %s)",
				s.Requested, s.Built, statusNames[s.Status])})
		}
	}
}

func (e *explorer) final(site *violationSite) State {
	if site.st != nil {
		return site.post
	}
	return decode(e.keys[site.state])
}

// trace rebuilds the path from the initial state to a violation site by
// replaying each parent's successors to recover the step labels.
func (e *explorer) trace(site *violationSite) []TraceStep {
	var chain []int32
	for j := site.state; j >= 0; j = e.parent[j] {
		chain = append(chain, j)
	}
	out := []TraceStep{{Step: "init", State: decode(e.keys[chain[len(chain)-1]]).String()}}
	m := machine{cfg: e.m.cfg}
	for c := len(chain) - 1; c > 0; c-- {
		p, child := chain[c], chain[c-1]
		ps := decode(e.keys[p])
		label := "?"
		m.successors(ps, func(st step, n State) {
			if label != "?" {
				return
			}
			n.canon()
			if n.encode() == e.keys[child] {
				label = st.String()
			}
		})
		out = append(out, TraceStep{Step: label, State: decode(e.keys[child]).String()})
	}
	if site.st != nil {
		out = append(out, TraceStep{Step: site.st.String(), State: site.post.String()})
	}
	return out
}
