package rail

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// The rail's ports: what the protocol needs from the outside world. AWS
// adapters (EventBridge, SQS) and in-process ones implement them; no AWS
// type crosses into this package.

// Nudge reasons.
const (
	ReasonDemand   = "demand"    // the trigger recorded new demand
	ReasonFollowUp = "follow_up" // demand arrived during a build
	ReasonSweep    = "sweep"     // the sweeper found demand whose nudge was lost
	ReasonBackfill = "backfill"  // the backfill admitted an outdated matter (its own queue)
)

// Nudge is a build-queue message: ids and trace context only. It is a tap
// on the shoulder ("go look at the ledger"), never the truth: a lost nudge
// loses nothing (the sweeper re-nudges) and a duplicate builds nothing
// (the claim needs unserved demand).
type Nudge struct {
	V        int       `json:"v"`
	FirmID   uuid.UUID `json:"firm_id"`
	MatterID uuid.UUID `json:"matter_id"`
	Reason   string    `json:"reason"`
	// TraceHeader travels as the message's AWSTraceHeader system
	// attribute, not in the body.
	TraceHeader string `json:"-"`
}

// Ref returns the nudge's matter.
func (n Nudge) Ref() MatterRef { return MatterRef{FirmID: n.FirmID, MatterID: n.MatterID} }

// Nudger delivers nudges to builders after delay (the settle window).
type Nudger interface {
	Nudge(ctx context.Context, nudges []Nudge, delay time.Duration) error
}

// BusEntry is one fact to put on the event bus.
type BusEntry struct {
	EventID     uuid.UUID       // the application id consumers dedupe on
	Name        string          // DetailType: the event name
	Detail      json.RawMessage // the JSON detail (ids only)
	TraceHeader string          // optional X-Ray trace header
}

// PublishResult is the outcome of one entry, in the order given.
type PublishResult struct {
	EventID uuid.UUID
	Err     error // nil when the bus accepted the entry
}

// Publisher puts facts on the bus. It returns one result per entry; a
// non-nil error means the whole call failed and no entry is known to have
// been accepted.
type Publisher interface {
	Publish(ctx context.Context, entries []BusEntry) ([]PublishResult, error)
}
