package rail

import (
	"time"

	"github.com/google/uuid"
)

// The ledger's vocabulary: what its ports (ports.go) take and return.

// DemandResult reports a recorded demand.
type DemandResult struct {
	Requested int64  // requested_generation after the demand
	Status    string // run_status after the demand
	// Held: the matter is closed. The demand is recorded on its row all the
	// same and held there (MattersClosedWithDemand, `railctl status`): it
	// is not claimed or re-nudged until the matter is re-opened, and then
	// built (docs/ARCHITECTURE.md, "Closed matters").
	Held bool
}

// Demand sources recorded in ops.matter_demands.
const (
	DemandFromFact     = "fact"     // the trigger heard facts
	DemandFromOperator = "operator" // railctl demand, or any caller of Demand
	DemandFromBackfill = "backfill" // the backfill admitted an outdated matter
)

// DemandOrigin says where a demand came from, for on-call's record: its
// source, the facts it coalesces (their event_ids) and the trace it
// continues.
type DemandOrigin struct {
	Source      string // DemandFrom…; empty: operator
	EventIDs    []uuid.UUID
	TraceHeader string
}

// Frame is a finished build ready to land.
type Frame struct {
	Body         []byte // JSON
	Fingerprint  string
	Builder      string
	Identity     BuilderIdentity // recorded on the frame (Identity.Name is Builder when set)
	ModelInvoked bool
	TraceHeader  string // carried onto the frame.built fact
}

// FrameCommit is one member of a commit group: a finished build's frame
// and the claim it was built under (its token fences it).
type FrameCommit struct {
	Claim Claim
	Frame Frame
}

// ServedDemand is one demand a landed frame served: its generation, how many
// facts it coalesced, its source, and its upload -> current latency (from
// its oldest fact's occurred_at to the commit, both database clock).
type ServedDemand struct {
	Generation int64   `json:"generation"`
	N          int     `json:"n"`
	Source     string  `json:"source"`
	AgeSeconds float64 `json:"age_seconds"`
}

// CommitResult reports a landed frame.
type CommitResult struct {
	FrameID     uuid.UUID
	Target      int64 // now built_generation
	Requested   int64 // requested_generation at commit
	FollowUpDue bool  // demand arrived during the build: exactly one follow-up is due
	// Served: the demands this frame served (ops.matter_demands rows
	// stamped by the commit), oldest first.
	Served []ServedDemand
}

// FailResult reports a recorded failure.
type FailResult struct {
	Status   string // idle (will retry after backoff) or quarantined
	Attempts int
}

// StoredFrame is a landed frame.
type StoredFrame struct {
	FrameID      uuid.UUID `json:"frame_id"`
	Token        int64     `json:"token"`
	Target       int64     `json:"target_generation"`
	Fingerprint  string    `json:"fingerprint"`
	Builder      string    `json:"builder"`
	ModelInvoked bool      `json:"model_invoked"`
	BuiltAt      time.Time `json:"built_at"`
	Body         []byte    `json:"-"`
	// Identity is the builder's full identity (Identity.Name = Builder).
	Identity BuilderIdentity `json:"builder_identity"`
}
