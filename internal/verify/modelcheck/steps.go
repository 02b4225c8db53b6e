package modelcheck

import "fmt"

// Config is one model-checking configuration.
type Config struct {
	Protocol Protocol
	Mutation Mutation // fixed protocol only
	// Workers is the number of workers (1..3).
	Workers int
	// Demands is the number of demands the environment may make in total.
	Demands int
	// MaxAttempts is the quarantine threshold (default 2).
	MaxAttempts int
	// NudgeCap bounds the nudge bag; a nudge sent into a full bag is dropped,
	// which the model allows anyway (default 2).
	NudgeCap int
	// MaxClaims bounds the fencing token. A claim that would exceed it is not
	// explored and the state is counted as truncated. The fixed protocol never
	// reaches the default (15); the seed's claim is unbounded and needs it.
	MaxClaims int
	// MaxStates stops the search (reported as incomplete); default 20M.
	MaxStates int
	// NoDrop disables the "nudge dropped" fault (the bus still coalesces a
	// nudge sent into a full bag). Used to show that a seed bug needs no lost
	// message.
	NoDrop bool
}

func (c Config) withDefaults() Config {
	if c.Workers == 0 {
		c.Workers = 2
	}
	if c.Demands == 0 {
		c.Demands = 2
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 2
	}
	if c.NudgeCap == 0 {
		c.NudgeCap = 2
	}
	if c.MaxClaims == 0 {
		c.MaxClaims = 15
	}
	if c.MaxStates == 0 {
		c.MaxStates = 20_000_000
	}
	return c
}

func (c Config) String() string {
	s := fmt.Sprintf("%s workers=%d demands=%d max_attempts=%d nudge_cap=%d max_claims=%d",
		c.Protocol, c.Workers, c.Demands, c.MaxAttempts, c.NudgeCap, c.MaxClaims)
	if c.Mutation != NoMutation {
		s += " mutation=" + c.Mutation.String()
	}
	if c.NoDrop {
		s += " no-drop"
	}
	return s
}

// Step kinds.
const (
	stepDemand uint8 = iota
	stepDeliver
	stepRead
	stepHeartbeat
	stepCommit
	stepFail
	stepCrash
	stepSetFlag
	stepExpire
	stepBackoff
	stepSweep
	stepDuplicate
	stepDrop
)

// step is one transition label plus the event data the history checks need.
type step struct {
	Kind    uint8
	W       int8   // worker index in the pre-state (canonical order), -1 for environment
	Was     worker // that worker's local state before the step
	Granted bool   // deliver: the claim returned a row; commit/fail/heartbeat: token matched
	Landed  bool   // commit: a frame landed
	Token   uint8  // claim: token issued; commit: the worker's token
	Target  uint8  // claim: target issued; commit: the frame's target
	Seen    uint8  // commit: inputs the build saw
	Note    string
}

func (st step) String() string {
	who := "env"
	if st.W >= 0 {
		who = "worker " + st.Was.String()
	}
	var s string
	switch st.Kind {
	case stepDemand:
		s = "demand: input committed, requested += 1, nudge sent"
	case stepDeliver:
		if st.Granted {
			s = fmt.Sprintf("nudge delivered; claim granted token=%d target=%d", st.Token, st.Target)
		} else {
			s = "nudge delivered; claim refused (0 rows)"
		}
	case stepRead:
		s = "reads inputs"
	case stepHeartbeat:
		if st.Granted {
			s = "heartbeat refreshes lease"
		} else {
			s = "heartbeat: 0 rows, superseded, stops"
		}
	case stepCommit:
		if st.Landed {
			s = fmt.Sprintf("commit lands frame token=%d target=%d saw=%d", st.Token, st.Target, st.Seen)
		} else {
			s = fmt.Sprintf("commit token=%d fenced (0 rows)", st.Token)
		}
	case stepFail:
		if st.Granted {
			s = "fail: target handed back"
		} else {
			s = "fail: fenced"
		}
	case stepCrash:
		s = "crashes (forgets everything)"
	case stepSetFlag:
		s = "writes rebuild_needed = true"
	case stepExpire:
		s = "lease expires"
	case stepBackoff:
		s = "backoff passes"
	case stepSweep:
		s = "sweep"
	case stepDuplicate:
		s = "nudge duplicated"
	case stepDrop:
		s = "nudge dropped"
	}
	if st.Note != "" {
		s += " (" + st.Note + ")"
	}
	return who + ": " + s
}

// machine generates the successors of a state under one configuration.
type machine struct {
	cfg       Config
	truncated bool // set by successors when a bound disabled a step
}

func (m *machine) initial() State {
	s := State{
		BackoffDone:     true,
		LastClaimLanded: true,
		NWorkers:        uint8(m.cfg.Workers),
	}
	return s
}

func (m *machine) sendNudge(s *State) {
	if int(s.Nudges) < m.cfg.NudgeCap {
		s.Nudges++
	}
}

// successors calls emit for every enabled step of s. next is not canonical.
func (m *machine) successors(s State, emit func(step, State)) {
	m.truncated = false
	cfg := m.cfg
	fixed := cfg.Protocol == Fixed

	// Environment: a demand.
	if int(s.Inputs) < cfg.Demands {
		n := s
		n.Inputs++ // the input commits before its demand
		if s.Status == statusRunning {
			n.FreshAfterDemand = 1 // the build in flight counts as one
		} else {
			n.FreshAfterDemand = 0
		}
		note := ""
		if fixed {
			n.Requested++
			if n.Status == statusQuarantined {
				n.Status = statusIdle
				n.Attempts = 0
				n.ReleasesSinceLand++
				note = "releases quarantine"
			}
		} else {
			n.Requested = n.Inputs // abstract: the seed's demand is the fact
		}
		m.sendNudge(&n)
		emit(step{Kind: stepDemand, W: -1, Note: note}, n)
	}

	// Workers. Workers in the same local state give the same canonical
	// successor, so only the first of each is expanded.
	for i := 0; i < int(s.NWorkers); i++ {
		w := s.Workers[i]
		dup := false
		for j := 0; j < i; j++ {
			if s.Workers[j] == w {
				dup = true
			}
		}
		if dup {
			continue
		}
		m.workerSteps(s, i, emit)
	}

	// Environment: lease expiry, backoff, sweep, nudge faults.
	if s.Status == statusRunning && s.LeaseLive {
		n := s
		n.LeaseLive = false
		emit(step{Kind: stepExpire, W: -1}, n)
	}
	if !s.BackoffDone {
		n := s
		n.BackoffDone = true
		emit(step{Kind: stepBackoff, W: -1}, n)
	}
	if n, note, ok := m.sweep(s); ok {
		emit(step{Kind: stepSweep, W: -1, Note: note}, n)
	}
	if s.Nudges > 0 && int(s.Nudges) < cfg.NudgeCap {
		n := s
		n.Nudges++
		emit(step{Kind: stepDuplicate, W: -1}, n)
	}
	if s.Nudges > 0 && !cfg.NoDrop {
		n := s
		n.Nudges--
		emit(step{Kind: stepDrop, W: -1}, n)
	}
}

// claimAllowed is the claim statement's WHERE clause.
func (m *machine) claimAllowed(s State) bool {
	if m.cfg.Protocol == Seed {
		return s.Status != statusRunning || !s.LeaseLive
	}
	if m.cfg.Mutation != MutNoDemandCheck && s.Requested <= s.Built {
		return false
	}
	if int(s.Attempts) >= m.cfg.MaxAttempts {
		return false // poison row: left for the sweep to quarantine
	}
	return (s.Status == statusIdle && s.BackoffDone) || (s.Status == statusRunning && !s.LeaseLive)
}

func (m *machine) workerSteps(s State, i int, emit func(step, State)) {
	cfg := m.cfg
	fixed := cfg.Protocol == Fixed
	w := s.Workers[i]
	wi := int8(i)
	inner := emit
	emit = func(st step, n State) {
		st.Was = w
		inner(st, n)
	}
	switch w.Phase {
	case phaseIdle:
		if s.Nudges == 0 {
			return
		}
		n := s
		n.Nudges--
		if !m.claimAllowed(s) {
			if !fixed {
				n.Workers[i] = worker{Phase: phaseLoser}
			}
			emit(step{Kind: stepDeliver, W: wi}, n)
			return
		}
		if int(s.Claimed) >= cfg.MaxClaims {
			m.truncated = true
			return
		}
		n.Status = statusRunning
		n.LeaseLive = true
		n.ClaimedAtSet = true
		if fixed {
			n.Claimed++
			n.Target = n.Requested
			n.Attempts++
		} else {
			n.SeedReqGen++
			n.Claimed = n.SeedReqGen
			n.Target = n.Inputs // ghost: the claim covers the demands so far
		}
		if s.LastClaimLanded {
			n.FreshAfterDemand++
		}
		n.LastClaimLanded = false
		n.ClaimsSinceLand++
		n.Workers[i] = worker{Phase: phaseHolding, Token: n.Claimed, Target: n.Target}
		emit(step{Kind: stepDeliver, W: wi, Granted: true, Token: n.Claimed, Target: n.Target}, n)

	case phaseHolding, phaseBuilt:
		if w.Phase == phaseHolding {
			n := s
			n.Workers[i] = worker{Phase: phaseBuilt, Token: w.Token, Target: w.Target, Seen: s.Inputs}
			emit(step{Kind: stepRead, W: wi}, n)
		}
		current := s.Claimed == w.Token && s.Status == statusRunning
		if fixed {
			// Heartbeat: only when it changes something.
			if !current {
				n := s
				n.Workers[i] = worker{}
				emit(step{Kind: stepHeartbeat, W: wi}, n)
			} else if !s.LeaseLive {
				n := s
				n.LeaseLive = true
				emit(step{Kind: stepHeartbeat, W: wi, Granted: true}, n)
			}
			// Fail.
			n := s
			n.Workers[i] = worker{}
			if current {
				n.Target = n.Built
				if int(n.Attempts) >= cfg.MaxAttempts {
					n.Status = statusQuarantined
				} else {
					n.Status = statusIdle
					n.BackoffDone = false
				}
			}
			emit(step{Kind: stepFail, W: wi, Granted: current}, n)
		}
		if w.Phase == phaseBuilt {
			m.commit(s, i, emit)
		}
		n := s
		n.Workers[i] = worker{}
		emit(step{Kind: stepCrash, W: wi}, n)

	case phaseLoser:
		n := s
		n.RebuildNeeded = true
		n.Workers[i] = worker{}
		emit(step{Kind: stepSetFlag, W: wi}, n)
		n = s
		n.Workers[i] = worker{}
		emit(step{Kind: stepCrash, W: wi}, n)
	}
}

func (m *machine) commit(s State, i int, emit func(step, State)) {
	cfg := m.cfg
	w := s.Workers[i]
	n := s
	n.Workers[i] = worker{}
	st := step{Kind: stepCommit, W: int8(i), Was: w, Token: w.Token, Target: w.Target, Seen: w.Seen}
	matches := s.Claimed == w.Token && s.Status == statusRunning
	if cfg.Protocol == Fixed && cfg.Mutation == MutUnfencedCommit {
		matches = s.Status == statusRunning
	}
	if !matches {
		emit(st, n)
		return
	}
	st.Granted, st.Landed = true, true
	if cfg.Protocol == Fixed {
		built := w.Target
		if cfg.Mutation == MutBuiltFromRequested {
			built = s.Requested
		}
		st.Target = built
		n.Built, n.Target = built, built
		n.Attempts = 0
		n.Status = statusIdle
		n.BackoffDone = true
		if n.Requested > n.Target {
			m.sendNudge(&n) // exactly one follow-up
			st.Note = "follow-up nudge"
		}
	} else {
		n.Built = w.Target // ghost: the frame's target
		n.Status = statusIdle
		if n.RebuildNeeded {
			n.RebuildNeeded = false
			m.sendNudge(&n)
			st.Note = "rebuild_needed: requeued"
		}
	}
	n.Landed |= 1 << w.Token
	n.NewestTarget = st.Target
	n.ClaimsSinceLand = 0
	n.ReleasesSinceLand = 0
	n.LastClaimLanded = true
	emit(st, n)
}

// sweep returns the sweep's effect on s, and false if it has none.
func (m *machine) sweep(s State) (State, string, bool) {
	n := s
	expired := s.Status == statusRunning && !s.LeaseLive
	if m.cfg.Protocol == Seed {
		if expired {
			n.Status = statusIdle // "a sweep fails any claim older than the lease horizon"
			return n, "fails expired claim", true
		}
		if s.Claimed < s.SeedReqGen && int(s.Nudges) < m.cfg.NudgeCap {
			n.Nudges++
			return n, "re-nudges claimed < requested", true
		}
		return s, "", false
	}
	if expired && int(s.Attempts) >= m.cfg.MaxAttempts {
		n.Status = statusQuarantined
		n.Target = n.Built
		return n, "quarantines poison row", true
	}
	if m.cfg.Mutation == MutSweepNoNudge {
		return s, "", false
	}
	if s.Requested > s.Built && m.claimAllowed(s) && int(s.Nudges) < m.cfg.NudgeCap {
		n.Nudges++
		return n, "re-nudges unserved demand", true
	}
	return s, "", false
}

// quiescent: nothing in flight and nothing pending in time. No nudge in the
// bag, no worker holding a claim or about to write, no live lease on a running
// row, no backoff pending, and the sweep would change nothing.
func (m *machine) quiescent(s State) bool {
	if s.Nudges != 0 || !s.BackoffDone {
		return false
	}
	if s.Status == statusRunning && s.LeaseLive {
		return false
	}
	for i := 0; i < int(s.NWorkers); i++ {
		if s.Workers[i].Phase != phaseIdle {
			return false
		}
	}
	_, _, acts := m.sweep(s)
	return !acts
}

// pendingFlag is the row's own statement that a rebuild is owed: the seed's
// written rebuild_needed, the fixed protocol's generated requested > target.
func (m *machine) pendingFlag(s State) bool {
	if m.cfg.Protocol == Seed {
		return s.RebuildNeeded
	}
	return s.Requested > s.Target
}
