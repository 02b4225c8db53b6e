package rail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	ReasonRetry    = "retry"     // a build failed: due again at the end of its backoff (sent with that delay)
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

// Nudger delivers nudges to builders after delay (the settle window). A
// nil error: every nudge was handed to the queue. An error that is (or
// wraps) a *NudgeError: exactly the nudges it lists were not (a partial
// failure; the others were sent). Any other error: none is known to have
// been sent. NudgeFailed reads a nudge's fate from the error.
type Nudger interface {
	Nudge(ctx context.Context, nudges []Nudge, delay time.Duration) error
}

// NudgeError is a Nudger's error naming the nudges of one call that were
// not sent, by their index in the call's slice; the others were sent.
type NudgeError struct {
	Failed map[int]error
}

func (e *NudgeError) Error() string {
	errs := make([]error, 0, len(e.Failed))
	for _, i := range slices.Sorted(maps.Keys(e.Failed)) {
		errs = append(errs, e.Failed[i])
	}
	return fmt.Sprintf("%d nudges not sent: %v", len(e.Failed), errors.Join(errs...))
}

// Unwrap returns the failed nudges' errors.
func (e *NudgeError) Unwrap() []error {
	out := make([]error, 0, len(e.Failed))
	for _, err := range e.Failed {
		out = append(out, err)
	}
	return out
}

// NudgeFailed returns why nudge i of a Nudge call that returned err was
// not sent, or nil when it was: nil for every nudge when err is nil, the
// listed ones' errors when err is a *NudgeError, err itself for every
// nudge otherwise.
func NudgeFailed(err error, i int) error {
	if err == nil {
		return nil
	}
	var ne *NudgeError
	if errors.As(err, &ne) {
		return ne.Failed[i]
	}
	return err
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
	// ClaimBatch is Claim for several matters in one statement: it returns
	// the claims it won (each row conditioned as Claim conditions it; a
	// matter given twice is claimed at most once); a matter with nothing
	// to do is absent.
	ClaimBatch(ctx context.Context, refs []MatterRef, workerID string) ([]Claim, error)
	// Heartbeat refreshes c's lease; ErrFenced when c was superseded.
	Heartbeat(ctx context.Context, c Claim) error
	// CommitGroup lands the frames of a group of finished builds in one
	// statement (one round trip for the group), each iff its own claim's
	// token is current: errs[i] is ErrFenced for a member whose token was
	// stale (nothing of it written), and the others land all the same. err
	// is the statement's: ErrCommitRefused (nothing of any member written)
	// or ambiguous (any member may have landed). A single build commits as a
	// group of one; there is no other commit.
	CommitGroup(ctx context.Context, group []FrameCommit) (res []CommitResult, errs []error, err error)
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
	// LoadBuild is LoadInputs and ClaimedLatestFrame in one statement: what
	// a build reads before it decides whether to call the builder.
	LoadBuild(ctx context.Context, c Claim) (in Inputs, prev StoredFrame, found bool, err error)
	// LoadBuilds is LoadBuild for every claim of a batch in one statement,
	// in the order given; ErrFenced (for the whole batch) when any claim
	// no longer holds its matter.
	LoadBuilds(ctx context.Context, claims []Claim) ([]Loaded, error)
}

// Loaded is what LoadBuild reads for one claim: its inputs and its
// matter's newest frame (Found false when there is none).
type Loaded struct {
	Inputs Inputs
	Prev   StoredFrame
	Found  bool
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

// BatchInbox is an Inbox that can record a whole batch in one call: every
// fact verified and recorded as InboxTx.Receive does, and for each matter
// with new facts one demand of n (DemandFrom with DemandFromFact, the new
// facts' ids and the first new fact's trace header), all committed
// together or not at all. It returns an error, and writes nothing, when any
// part fails or a matter is not found under its firm; the trigger then
// records the batch matter by matter (Inbox), which gives each of those
// cases its own outcome. (An error reading the result after the call
// committed leaves the batch recorded: matter by matter then finds its
// facts heard and sends no nudge, and the sweeper re-nudges the demand.)
type BatchInbox interface {
	Inbox
	ReceiveBatch(ctx context.Context, facts []ReceivedFact) (BatchReceipt, error)
}

// ReceivedFact is one demand fact of a batch, for BatchInbox.
type ReceivedFact struct {
	Ref         MatterRef
	EventID     uuid.UUID
	Name        string
	TraceHeader string
}

// BatchReceipt is what BatchInbox.ReceiveBatch recorded: every fact's
// verdict (VerdictFresh, VerdictDuplicate, or a refusal reason:
// RefusedUnconfirmed, RefusedConflict), by the matter it was delivered
// under and its event id (a batch can carry one event id under two
// matters: its own, and a forged copy), and each demanded matter's result.
type BatchReceipt struct {
	Verdicts map[FactKey]string
	Demands  map[MatterRef]DemandResult
}

// FactKey names a delivered fact: the matter it names and its event id.
type FactKey struct {
	Ref     MatterRef
	EventID uuid.UUID
}

// A fact's verdict in a BatchReceipt, besides the refusal reasons.
const (
	VerdictFresh     = "fresh"     // recorded now: it creates demand
	VerdictDuplicate = "duplicate" // heard before: it adds none
)

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
	// BackfillControl reads the control row and the load: Paused,
	// ChangedAt, ChangedBy, Admitted and Load of the returned status.
	BackfillControl(ctx context.Context) (BackfillStatus, error)
}

// BackfillTx is one admission pass's transaction.
type BackfillTx interface {
	DemandTx
	// Control locks the control row and returns whether the backfill is
	// paused and the bucket's credit in seconds (at most capSeconds).
	Control(ctx context.Context, capSeconds float64) (paused bool, creditSeconds float64, err error)
	// Load reads the backfill's load: the open, unquarantined matters
	// holding unserved backfill demand (admitted, queued or building), and
	// the backfill demand served in the last BackfillWindow.
	Load(ctx context.Context) (BackfillLoad, error)
	// Outdated lists up to limit outdated matters eligible for admission
	// (current, idle, open), oldest frame first, and counts the open
	// outdated matters and the eligible ones, in one scan.
	Outdated(ctx context.Context, deployed BuilderIdentity, limit int) (OutdatedScan, error)
	// Spend takes n admissions at rate per minute from a bucket holding at
	// most capSeconds.
	Spend(ctx context.Context, n int, rate, capSeconds float64) error
}

// OutdatedScan is what BackfillTx.Outdated found.
type OutdatedScan struct {
	Eligible   []MatterRef // up to the limit, oldest frame first
	Outdated   int         // open matters built by another identity
	Admissible int         // of those, current and idle
}

// Outbox is the relay's port. One lease covers the whole outbox: a relay
// pass reads due rows only while it holds that lease, writes nothing to a
// row it has not published or failed, and holds no transaction across the
// bus call.
type Outbox interface {
	// Claim takes or renews the relay lease for q.Holder (for q.Lease) and,
	// in the same statement, marks q.Published published (the previous
	// pass's accepted rows, unfenced) and reads up to q.Limit due rows
	// other than those: first rows that failed before and whose backoff is
	// over (earliest due first), then rows never tried (in commit order).
	// While another holder's lease runs, nothing is read (Busy). A claim
	// that takes the lease (a new holder) reads nothing either (Taken):
	// the caller claims again, so what it reads postdates every write of
	// the holder before (its last marks, its fenced failure records).
	Claim(ctx context.Context, q OutboxClaimRequest) (OutboxClaim, error)
	// Settle writes a pass's outcome in one statement: it marks s.Published
	// (unfenced: true whoever holds the lease now), records each failure
	// (counting the attempt, backing the row off from base doubling up to
	// limit, parking an undeliverable row at once and a permanently
	// refused one after maxAttempts) only while s.Token is still the
	// lease's (Settled.LeaseLost otherwise), and with s.Release gives the
	// lease up. Rows of the claim neither published nor failed need no
	// write: they are due again.
	Settle(ctx context.Context, s OutboxSettlement) (Settled, error)
	Gauges(ctx context.Context) (OutboxGauges, error)
}

// OutboxClaimRequest is one pass's claim.
type OutboxClaimRequest struct {
	Holder    uuid.UUID     // the relay run asking for the lease
	Limit     int           // rows to read at most
	Lease     time.Duration // the lease runs this long from the claim
	Published []uuid.UUID   // the previous pass's accepted rows, marked by this statement
}

// OutboxClaim is what one claim statement did and read.
type OutboxClaim struct {
	Holder   uuid.UUID
	Token    int64 // the lease's fencing token while Holder holds it; 0 when Busy
	Busy     bool  // another relay's lease runs: nothing read
	Taken    bool  // this claim took the lease (Holder did not hold it): nothing read, claim again
	TookOver bool  // ... from a holder that had not released it (its lease ended)
	Marked   int64 // rows of the request's Published this statement marked
	Rows     []OutboxRow
}

// OutboxSettlement is a pass's outcome to write.
type OutboxSettlement struct {
	Holder      uuid.UUID
	Token       int64 // fences the failure records
	Published   []uuid.UUID
	Failures    []PublishFailure
	Base, Limit time.Duration // the backoff
	MaxAttempts int
	Release     bool // give the lease up (the run's last write)
}

// Settled is what Settle recorded.
type Settled struct {
	Published int64           // rows marked published
	Failures  []FailureRecord // failures recorded
	LeaseLost bool            // failures were given but the token was no longer the lease's: none recorded
	Released  bool            // the lease was given up
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
	FailureCall          FailureKind = iota // transient (the call failed or was cut, or a retryable refusal): back off, never park
	FailureRejected                         // the bus refused it permanently: back off, park after MaxAttempts such refusals
	FailureUndeliverable                    // it can never be sent as it is: park now
)

// ErrPermanentRefusal is wrapped by a Publisher's error (a per-entry
// PublishResult.Err, or a whole call's error) when the bus says retrying
// the same entry cannot succeed (EventBridge: MalformedDetail,
// InvalidArgument, AccessDeniedException, …; a ValidationException for
// the call). Only such refusals count toward parking a row; any other
// error (throttling, an internal failure, a timeout, an unknown code)
// backs the row off and is retried without end, visible in the backlog
// gauges.
var ErrPermanentRefusal = errors.New("refused permanently by the bus")

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
