package rail

import (
	"context"
	"encoding/json"
	"errors"
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

// The ledger's ports: what the orchestration (Worker, Trigger, Relay,
// Backfill) needs from the database. pkg/postgres implements them, one
// statement per method (one round trip) unless its comment says otherwise;
// the statements, the rules they are composed from (pkg/postgres/rules.go)
// and every read model live there. Nothing here names a driver.

// Ledger is the worker's port: claim, heartbeat, fenced commit, failure,
// and the reads a build needs. *postgres.Ledger implements it.
type Ledger interface {
	// Config returns the ledger's effective configuration (the lease sets
	// the worker's heartbeat).
	Config() Config
	// Claim takes the matter's job if it has unserved demand and no live
	// claim; ok is false when there is nothing to do.
	Claim(ctx context.Context, ref MatterRef, workerID string) (c Claim, ok bool, err error)
	// Heartbeat refreshes c's lease; ErrFenced when c was superseded.
	Heartbeat(ctx context.Context, c Claim) error
	// Commit lands f iff c's token is current; ErrFenced when it is not
	// (nothing written).
	Commit(ctx context.Context, c Claim, f Frame) (CommitResult, error)
	// Fail records a failed attempt while c's token is current; ErrFenced
	// when it is not.
	Fail(ctx context.Context, c Claim, cause error) (FailResult, error)
	// FrameLanded reports whether a frame with c's token exists (asked
	// after an ambiguous commit).
	FrameLanded(ctx context.Context, c Claim) (bool, error)
	// MarkRun records how an attempt ended when the ledger row was not
	// changed by it. Best effort.
	MarkRun(ctx context.Context, c Claim, outcome, msg string) error
	// ClaimedLatestFrame returns the claimed matter's newest frame,
	// found=false if none; ErrFenced once c is not the current claim.
	ClaimedLatestFrame(ctx context.Context, c Claim) (f StoredFrame, found bool, err error)
	// LoadInputs reads the claimed matter's title and document manifest;
	// the returned Inputs reads each document's text when asked. The claim's
	// token is the read capability: once it is no longer the matter's
	// current running claim, every read fails with ErrFenced.
	LoadInputs(ctx context.Context, c Claim) (Inputs, error)
}

// DocumentSource reads one document of a build's manifest, with its text
// (Inputs.Documents). found is false when the document no longer exists.
type DocumentSource interface {
	ReadDocument(ctx context.Context, ref MatterRef, id uuid.UUID) (d Document, found bool, err error)
}

// DemandTx is a database transaction that records demand: its demand
// commits (or rolls back) with the caller's other writes in it. Rollback
// after Commit is a no-op.
type DemandTx interface {
	DemandFrom(ctx context.Context, ref MatterRef, n int, o DemandOrigin) (DemandResult, error)
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Inbox is the trigger's port: a transaction holding one matter's inbox
// rows (the dedupe on event_id) and the demand they create.
type Inbox interface {
	BeginInbox(ctx context.Context) (InboxTx, error)
}

// InboxTx is one trigger transaction.
type InboxTx interface {
	DemandTx
	// Receive records the facts (event ids and names, in the same order)
	// for ref and returns the ids not seen before, and the facts it
	// refused: a fact is recorded only when it is the fact the rail's
	// outbox holds under its event id (same firm, matter and name), and it
	// is a duplicate only of an inbox row with the same four; anything else
	// is refused, never taken as seen. One statement.
	Receive(ctx context.Context, ref MatterRef, eventIDs []uuid.UUID, names []string) (fresh []uuid.UUID, refused []RefusedFact, err error)
}

// RefusedFact is a demand fact the inbox would not record, and why.
type RefusedFact struct {
	EventID uuid.UUID
	Reason  string // RefusedUnconfirmed or RefusedConflict
}

// Why the inbox refuses a fact.
const (
	// RefusedUnconfirmed: no fact in the outbox has this event id with this
	// firm, matter and name (a forged fact; or one redriven after the
	// outbox pruned its row).
	RefusedUnconfirmed = "unconfirmed"
	// RefusedConflict: the inbox heard this event id for another firm,
	// matter or name.
	RefusedConflict = "conflict"
)

// ErrFactRefused is the error a refused fact's message fails with.
var ErrFactRefused = errors.New("fact refused")

// BackfillLedger is the backfill's port: the admission transaction (the
// control row's token bucket locked for the pass) and the counts.
type BackfillLedger interface {
	BeginBackfill(ctx context.Context) (BackfillTx, error)
	// CountOutdated counts open matters whose newest frame deployed did
	// not build, and how many of those are current and idle.
	CountOutdated(ctx context.Context, deployed BuilderIdentity) (outdated, admissible int, err error)
	// BackfillControl reads the control row: Paused, ChangedAt, ChangedBy,
	// Admitted and InFlight of the returned status.
	BackfillControl(ctx context.Context) (BackfillStatus, error)
}

// BackfillTx is one admission pass's transaction.
type BackfillTx interface {
	DemandTx
	// Control locks the control row and returns whether the backfill is
	// paused and the bucket's credit in seconds (at most 60).
	Control(ctx context.Context) (paused bool, creditSeconds float64, err error)
	// Outdated lists up to limit outdated matters eligible for admission
	// (current, idle, open), oldest frame first.
	Outdated(ctx context.Context, deployed BuilderIdentity, limit int) ([]MatterRef, error)
	// Spend takes n admissions at rate per minute from the bucket.
	Spend(ctx context.Context, n int, rate float64) error
}

// Outbox is the relay's port: a pass's transaction over the outbox, and the
// gauges read after it.
type Outbox interface {
	BeginRelay(ctx context.Context) (OutboxTx, error)
	Gauges(ctx context.Context) (OutboxGauges, error)
}

// OutboxTx is one relay pass: the rows it takes stay locked (skipped by
// other relays) until Commit or Rollback. Rollback after Commit is a no-op.
type OutboxTx interface {
	// TakeDue takes up to limit rows that failed before and whose backoff
	// is over, earliest due first.
	TakeDue(ctx context.Context, limit int) ([]OutboxRow, error)
	// TakeUnsent takes up to limit rows never tried, in commit order.
	TakeUnsent(ctx context.Context, limit int) ([]OutboxRow, error)
	// SetIdleTimeout bounds how long the pass's session may sit idle in
	// its transaction (transaction-local).
	SetIdleTimeout(ctx context.Context, d time.Duration) error
	// MarkPublished marks the rows published and returns how many it marked.
	MarkPublished(ctx context.Context, ids []uuid.UUID) (int64, error)
	// RecordFailures counts each row's failed attempt, records its error
	// and backs it off (base doubling up to limit); it parks an
	// undeliverable row at once and a rejected one after maxAttempts.
	RecordFailures(ctx context.Context, failures []PublishFailure, base, limit time.Duration, maxAttempts int) ([]FailureRecord, error)
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// OutboxRow is a fact the relay took from the outbox.
type OutboxRow struct {
	EventID     uuid.UUID
	FirmID      uuid.UUID
	MatterID    uuid.NullUUID
	Name        string
	Payload     []byte
	OccurredAt  time.Time
	TraceHeader string
	Attempts    int
	// Unreadable says why the row cannot be a fact as stored (a column
	// that cannot be read, an occurred_at that is not a finite time); ""
	// when it can. Such a row is parked alone instead of failing the pass.
	Unreadable string
}

// FailureKind says what a failed row's record does.
type FailureKind int

// Failure kinds (their values are stored by pkg/postgres's statement).
const (
	FailureCall          FailureKind = iota // the call carrying it failed as a whole: back off, never park
	FailureRejected                         // the bus refused it: back off, park after MaxAttempts
	FailureUndeliverable                    // it can never be sent as it is: park now
)

// PublishFailure is one row the relay could not publish.
type PublishFailure struct {
	EventID uuid.UUID
	Msg     string
	Kind    FailureKind
}

// FailureRecord is a failed row as recorded.
type FailureRecord struct {
	EventID  uuid.UUID
	Parked   bool
	Attempts int
	Reason   string // why it was parked
}
