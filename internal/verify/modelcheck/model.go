package modelcheck

import (
	"fmt"
	"strings"
)

// Protocol selects which statements drive the ledger row.
type Protocol uint8

const (
	// Fixed is the coherent state machine of docs/ARCHITECTURE.md and
	// shared/design/protocol.md: demand-only requested counter, built
	// watermark, fenced commit and fail, attempts and quarantine, sweep that
	// re-nudges unserved demand.
	Fixed Protocol = iota
	// Seed is the seed post's original statements: the claim is the demand
	// (it bumps requested_generation), the loser of a claim writes
	// rebuild_needed in a separate statement, completion only flips the row to
	// idle, and "unserved demand" is read as claimed < requested.
	Seed
)

func (p Protocol) String() string {
	switch p {
	case Fixed:
		return "fixed"
	case Seed:
		return "seed"
	}
	return fmt.Sprintf("Protocol(%d)", uint8(p))
}

// Mutation deliberately breaks one statement of the fixed protocol, so the
// tests can show that the invariant guarding it is able to fire.
type Mutation uint8

const (
	// NoMutation runs the protocol as specified.
	NoMutation Mutation = iota
	// MutUnfencedCommit drops the token compare from the completion (River's
	// shape: it checks only run_status = 'running').
	MutUnfencedCommit
	// MutBuiltFromRequested makes the completion set built_generation =
	// requested_generation instead of the claim's target.
	MutBuiltFromRequested
	// MutNoDemandCheck drops "requested > built" from the claim, so any
	// nudge on an idle row starts a build.
	MutNoDemandCheck
	// MutSweepNoNudge makes the sweep only quarantine, never re-nudge.
	MutSweepNoNudge
)

func (m Mutation) String() string {
	switch m {
	case NoMutation:
		return "none"
	case MutUnfencedCommit:
		return "unfenced-commit"
	case MutBuiltFromRequested:
		return "built-from-requested"
	case MutNoDemandCheck:
		return "no-demand-check"
	case MutSweepNoNudge:
		return "sweep-no-nudge"
	}
	return fmt.Sprintf("Mutation(%d)", uint8(m))
}

// Run status of the ledger row.
const (
	statusIdle uint8 = iota
	statusRunning
	statusQuarantined
)

var statusNames = [...]string{"idle", "running", "quarantined"}

// Worker phases.
const (
	phaseIdle    uint8 = iota // no claim held (also: a crashed worker after restart)
	phaseHolding              // claim committed and returned; inputs not read yet
	phaseBuilt                // inputs read, build finished, commit pending
	phaseLoser                // seed only: claim refused, "rebuild_needed = true" not yet written
)

var phaseNames = [...]string{"idle", "holding", "built", "loser"}

// maxWorkers is the largest worker count the encoding supports.
const maxWorkers = 3

// worker is one worker's local state.
type worker struct {
	Phase  uint8
	Token  uint8 // fencing token returned by its claim
	Target uint8 // target_generation returned by its claim
	Seen   uint8 // inputs committed when it read them (phaseBuilt)
}

// State is one global state: the ledger row, the environment, ghost history
// variables, and the workers. Field meanings are uniform across protocols (the
// abstract state); see the package comment for how the seed maps onto it.
type State struct {
	// The ledger row, abstract view.
	Requested    uint8 // demands the row records (seed: demand facts, a ghost)
	Claimed      uint8 // claimed_generation, the fencing token
	Target       uint8 // target_generation (seed: ghost, demands at claim time)
	Built        uint8 // built_generation (seed: ghost, target of newest frame)
	Status       uint8
	LeaseLive    bool // claimed_at within the lease horizon
	ClaimedAtSet bool // claimed_at IS NOT NULL
	BackoffDone  bool // not_before has passed
	Attempts     uint8

	// Seed-only columns.
	SeedReqGen    uint8 // the seed's requested_generation (bumped by its claim)
	RebuildNeeded bool  // the seed's written rebuild_needed flag

	// Environment.
	Inputs uint8 // inputs committed (one per demand, committed before it)
	Nudges uint8 // nudges in the bag (identical messages: only the count matters)

	// Ghost history.
	Landed            uint32 // bit t set: a frame with token t has landed
	NewestTarget      uint8  // target of the newest landed frame
	FreshAfterDemand  uint8  // builds started (or in flight) since the last demand
	ClaimsSinceLand   uint8  // claims since the last landed frame
	ReleasesSinceLand uint8  // quarantine releases since the last landed frame
	LastClaimLanded   bool   // the previous claim's frame landed (next claim is fresh)

	NWorkers uint8
	Workers  [maxWorkers]worker
}

// keyLen is the length of the canonical encoding.
const keyLen = 24 + 4*maxWorkers

// key is the canonical encoding of a State, used for the visited set.
type key [keyLen]byte

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// canon sorts the workers: workers are interchangeable, so states that differ
// only by a permutation of workers are the same state (symmetry reduction).
func (s *State) canon() {
	if s.Status != statusRunning {
		s.LeaseLive = false // the lease means nothing on a row nobody holds
	}
	ws := s.Workers[:s.NWorkers]
	for i := 1; i < len(ws); i++ { // insertion sort: at most three workers
		for j := i; j > 0 && ws[j].less(ws[j-1]); j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

func (a worker) less(b worker) bool {
	if a.Phase != b.Phase {
		return a.Phase < b.Phase
	}
	if a.Token != b.Token {
		return a.Token < b.Token
	}
	if a.Target != b.Target {
		return a.Target < b.Target
	}
	return a.Seen < b.Seen
}

func (s *State) encode() key {
	var k key
	k[0] = s.Requested
	k[1] = s.Claimed
	k[2] = s.Target
	k[3] = s.Built
	k[4] = s.Status
	k[5] = b2u(s.LeaseLive) | b2u(s.ClaimedAtSet)<<1 | b2u(s.BackoffDone)<<2 |
		b2u(s.RebuildNeeded)<<3 | b2u(s.LastClaimLanded)<<4
	k[6] = s.Attempts
	k[7] = s.SeedReqGen
	k[8] = s.Inputs
	k[9] = s.Nudges
	k[10] = byte(s.Landed)
	k[11] = byte(s.Landed >> 8)
	k[12] = byte(s.Landed >> 16)
	k[13] = byte(s.Landed >> 24)
	k[14] = s.NewestTarget
	k[15] = s.FreshAfterDemand
	k[16] = s.ClaimsSinceLand
	k[17] = s.ReleasesSinceLand
	k[18] = s.NWorkers
	for i := 0; i < maxWorkers; i++ {
		w := s.Workers[i]
		o := 24 + 4*i
		k[o], k[o+1], k[o+2], k[o+3] = w.Phase, w.Token, w.Target, w.Seen
	}
	return k
}

func decode(k key) State {
	s := State{
		Requested:         k[0],
		Claimed:           k[1],
		Target:            k[2],
		Built:             k[3],
		Status:            k[4],
		LeaseLive:         k[5]&1 != 0,
		ClaimedAtSet:      k[5]&2 != 0,
		BackoffDone:       k[5]&4 != 0,
		RebuildNeeded:     k[5]&8 != 0,
		LastClaimLanded:   k[5]&16 != 0,
		Attempts:          k[6],
		SeedReqGen:        k[7],
		Inputs:            k[8],
		Nudges:            k[9],
		Landed:            uint32(k[10]) | uint32(k[11])<<8 | uint32(k[12])<<16 | uint32(k[13])<<24,
		NewestTarget:      k[14],
		FreshAfterDemand:  k[15],
		ClaimsSinceLand:   k[16],
		ReleasesSinceLand: k[17],
		NWorkers:          k[18],
	}
	for i := 0; i < maxWorkers; i++ {
		o := 24 + 4*i
		s.Workers[i] = worker{Phase: k[o], Token: k[o+1], Target: k[o+2], Seen: k[o+3]}
	}
	return s
}

// String renders a state on one line for counterexample traces.
func (s State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "row{req=%d claimed=%d target=%d built=%d %s lease=%s attempts=%d",
		s.Requested, s.Claimed, s.Target, s.Built, statusNames[s.Status], leaseName(s), s.Attempts)
	if !s.BackoffDone {
		b.WriteString(" backoff")
	}
	if s.SeedReqGen != 0 || s.RebuildNeeded {
		fmt.Fprintf(&b, " seed.requested_generation=%d rebuild_needed=%t", s.SeedReqGen, s.RebuildNeeded)
	}
	fmt.Fprintf(&b, "} inputs=%d nudges=%d frames=%s workers=[", s.Inputs, s.Nudges, landedList(s.Landed))
	for i := 0; i < int(s.NWorkers); i++ {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(s.Workers[i].String())
	}
	b.WriteString("]")
	return b.String()
}

func (w worker) String() string {
	switch w.Phase {
	case phaseHolding:
		return fmt.Sprintf("holding(t=%d,T=%d)", w.Token, w.Target)
	case phaseBuilt:
		return fmt.Sprintf("built(t=%d,T=%d,saw=%d)", w.Token, w.Target, w.Seen)
	default:
		return phaseNames[w.Phase]
	}
}

func leaseName(s State) string {
	switch {
	case !s.ClaimedAtSet:
		return "null"
	case s.Status != statusRunning:
		return "unheld"
	case s.LeaseLive:
		return "live"
	default:
		return "expired"
	}
}

func landedList(m uint32) string {
	var parts []string
	for t := 0; t < 32; t++ {
		if m&(1<<t) != 0 {
			parts = append(parts, fmt.Sprint(t))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}
