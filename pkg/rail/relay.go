package rail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The relay: puts committed outbox rows on the bus, at least once.
//
// One relay lease covers the outbox (ops.relay_lease): only its holder
// reads and publishes, so no row needs a lease of its own and a relayed
// fact is written once, when it is marked published. A pass:
//
//  1. Claim, one statement: take or renew the lease (lease_until = now +
//     Lease; a new holder gets a higher fencing token), mark the previous
//     pass's accepted rows published, and read the oldest due, unpublished,
//     unparked rows other than those (due retries first, then rows never
//     tried, in commit order), at most BatchSize, without writing them. A
//     relay that finds another's lease running reads nothing and waits for
//     its next poll (RelayStats.LeaseBusy). A claim that takes the lease
//     (the run's first, or a takeover of a lease its holder never released:
//     a relay frozen or killed, RelayStats.Takeovers) reads nothing in that
//     statement; the relay claims again at once, so what it reads
//     postdates every write of the holder before. A row whose transaction has not committed yet is simply not
//     visible; it is still unpublished when it commits, so a later pass
//     takes it: no high-water mark, so no row is ever skipped for
//     committing out of order.
//  2. PutEvents, 10 entries a call, with no transaction open, within the
//     publish budget (PublishTimeout, and always at least leaseGuard
//     before the lease ends), so two relays never publish at once. A slow
//     bus slows the pass; nothing on the database side can time it out.
//  3. When every entry was accepted, nothing more: the marks ride on the
//     next pass's claim (or on the run's release, its last statement).
//     Otherwise Settle, one statement: mark the accepted entries; record
//     each failed entry's error and back it off exponentially; park a row
//     that can never be sent, or that the bus refused permanently
//     MaxAttempts times (parked rows are visible, never block others, and
//     wait for UnparkFacts). Failure records are fenced by the token: a
//     relay whose lease was taken over records none (RelayStats.FencedOut;
//     the new holder tries those rows afresh); its marks are written
//     anyway (the bus has the facts). Rows of the
//     claim the pass did not try need no write: they are due again.
//
// A Run (and a DrainOnce) ends with one statement writing its last marks
// and releasing the lease. A relay that dies after PutEvents and before
// its marks loses nothing: its lease ends, the next relay takes it over
// and re-publishes the rows with the same event_id and a new envelope id;
// consumers dedupe on event_id. A run whose last marks could not be
// written reports an error wrapping ErrRelayMarksLost.

// Relay defaults.
const (
	DefaultRelayBatch          = 100
	DefaultRelayMaxAttempts    = 10
	DefaultRelayBackoff        = time.Second
	DefaultRelayBackoffMax     = 5 * time.Minute
	DefaultRelayPublishTimeout = 10 * time.Second
	// DefaultRelayLeaseMargin: the default lease is the publish budget
	// plus this (20 s by default): time for the calls in flight at the
	// budget's end to finish and for Settle.
	DefaultRelayLeaseMargin = 10 * time.Second
	DefaultRelayWindow      = 50 * time.Second
	DefaultRelayPoll        = 150 * time.Millisecond
	PutEventsMaxEntries     = 10 // EventBridge's limit per PutEvents call
	// DefaultRelayMaxEntryBytes is EventBridge's PutEvents size limit
	// (256 KB, counted as EntrySize does) with a margin; the relay also
	// keeps each call's entries together under it.
	DefaultRelayMaxEntryBytes = 256_000
	markTimeout               = 5 * time.Second
	// leaseGuard: the publish budget ends at least this long before the
	// lease (as the relay measures it from the claim's return).
	leaseGuard = 5 * time.Second
)

// Relay drains the outbox (ops.domain_event_outbox, through the Outbox
// port) to a Publisher. The zero values of its tunables take the defaults
// above. Several relays may run at once.
type Relay struct {
	Outbox    Outbox
	Publisher Publisher
	// BatchSize: rows claimed per pass (sent PutEventsMaxEntries a call).
	BatchSize int
	// MaxAttempts: failed attempts after which a row the bus rejects is parked.
	MaxAttempts int
	// Backoff doubles per failed attempt, up to BackoffMax.
	Backoff    time.Duration
	BackoffMax time.Duration
	// PublishTimeout bounds the PutEvents calls of one pass. No
	// transaction is open meanwhile.
	PublishTimeout time.Duration
	// Lease is how long a pass's claim keeps the relay lease, and so the
	// outbox, from other relays (default PublishTimeout +
	// DefaultRelayLeaseMargin). The publish
	// budget ends at least leaseGuard (5 s) before it: a Lease shorter
	// than PublishTimeout + 5 s shortens the budget.
	Lease time.Duration
	// MaxEntryBytes: a row whose PutEvents entry would be larger is parked
	// as undeliverable; a call's entries together stay under it too.
	// Default DefaultRelayMaxEntryBytes.
	MaxEntryBytes int
	Log           *slog.Logger

	// Permanent, when set, says which publish errors are permanent
	// refusals (the only ones that count toward parking a row); nil:
	// errors.Is(err, ErrPermanentRefusal). A hook for the simulation's
	// negative controls (func(error) bool { return true } is the relay
	// before issue 18, which counted every refusal). Leave it nil.
	Permanent func(error) bool

	// AfterPublish, when set, runs after the PutEvents calls of a pass and
	// before its marks are written: fault injection for tests (a panic
	// here is a relay dying between PutEvents and marking; its rows wait
	// for the lease to end). Leave it nil.
	AfterPublish func()
}

// RelayStats reports what a pass (or a Run) did and what is left.
type RelayStats struct {
	Passes    int // passes made
	Published int // entries the bus accepted and that were marked published
	Failed    int // entries not accepted (rejected or in a failed call), to be retried
	Parked    int // rows parked by this run (undeliverable, or refused MaxAttempts times)
	LeaseBusy int // passes that found another relay's lease running and read nothing
	Takeovers int // leases taken from a holder that had not released it
	FencedOut int // failure records not written: the lease had been taken over meanwhile
	// After the last pass: rows still unpublished and unparked (due or
	// backing off), the age of the oldest of them, and all parked rows.
	// Measured says these three were read; when it is false they are
	// unknown (the database could not be reached), not zero.
	Backlog          int64
	OldestAgeSeconds float64
	ParkedTotal      int64
	Measured         bool
}

func (s *RelayStats) add(o RelayStats) {
	s.Passes += o.Passes
	s.Published += o.Published
	s.Failed += o.Failed
	s.Parked += o.Parked
	s.LeaseBusy += o.LeaseBusy
	s.Takeovers += o.Takeovers
	s.FencedOut += o.FencedOut
}

func (r *Relay) batch() int {
	if r.BatchSize > 0 {
		return r.BatchSize
	}
	return DefaultRelayBatch
}

func (r *Relay) maxAttempts() int {
	if r.MaxAttempts > 0 {
		return r.MaxAttempts
	}
	return DefaultRelayMaxAttempts
}

func (r *Relay) backoff() (base, limit time.Duration) {
	base, limit = r.Backoff, r.BackoffMax
	if base <= 0 {
		base = DefaultRelayBackoff
	}
	if limit <= 0 {
		limit = DefaultRelayBackoffMax
	}
	return base, max(base, limit)
}

func (r *Relay) publishTimeout() time.Duration {
	if r.PublishTimeout > 0 {
		return r.PublishTimeout
	}
	return DefaultRelayPublishTimeout
}

func (r *Relay) maxEntryBytes() int {
	if r.MaxEntryBytes > 0 {
		return r.MaxEntryBytes
	}
	return DefaultRelayMaxEntryBytes
}

func (r *Relay) permanent(err error) bool {
	if r.Permanent != nil {
		return r.Permanent(err)
	}
	return errors.Is(err, ErrPermanentRefusal)
}

func (r *Relay) lease() time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return r.publishTimeout() + DefaultRelayLeaseMargin
}

// publishBudget is how long a pass may publish: PublishTimeout, ending at
// least leaseGuard before the lease (half the lease when it is shorter
// than that).
func (r *Relay) publishBudget() time.Duration {
	l := r.lease()
	if l <= 2*leaseGuard {
		return min(r.publishTimeout(), l/2)
	}
	return min(r.publishTimeout(), l-leaseGuard)
}

func (r *Relay) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

// DrainOnce makes one pass (at most BatchSize rows), writes its marks and
// releases the lease, and reports it, with the backlog left behind.
func (r *Relay) DrainOnce(ctx context.Context) (RelayStats, error) {
	h, err := newHolder()
	if err != nil {
		return RelayStats{}, err
	}
	st, _, err := h.pass(ctx, r)
	fin, ferr := h.finish(ctx, r)
	st.Published += fin
	if err = errors.Join(err, ferr); err != nil {
		return st, err
	}
	return st, r.fillBacklog(ctx, &st)
}

// ErrRelayNoProgress is wrapped by Run's error when the outbox could not be
// read after the window (the database could not be reached): the stats
// then say nothing about the backlog (RelayStats.Measured is false).
var ErrRelayNoProgress = errors.New("relay: no pass succeeded")

// ErrRelayMarksLost is wrapped by a pass's error (and Run's) when the pass
// published but could not record the outcome (the statement failed: the
// database went away): its rows go out again, and the pass made no
// progress. Run
// then fails even though the window ended.
var ErrRelayMarksLost = errors.New("relay: a pass's marks were not written")

// Run drains for window (default 50 s), passing again at once while passes
// come back full and otherwise every poll (default 150 ms). It polls rather
// than LISTENs: LISTEN pins an RDS Proxy session. When ctx has a deadline
// (a Lambda invocation), the window ends PublishTimeout+5 s before it so
// the last pass can finish; Run makes at least one pass. A failed pass is
// logged and retried at the next poll; the failed rows carry their own
// backoff (a bus outage shows in the backlog gauges, which stay true).
// Run returns nil when the window ends, ctx's error when ctx is done
// first, and an error wrapping ErrRelayNoProgress (with the last pass's
// error) when the backlog could not be read afterwards: a relay that
// cannot reach its database fails loudly instead of reporting an empty
// outbox. When a pass of the window published but lost its marks, Run
// returns an error wrapping ErrRelayMarksLost (with the stats): such a
// pass made no progress, and the window is not reported as a success.
func (r *Relay) Run(ctx context.Context, window, poll time.Duration) (RelayStats, error) {
	if window <= 0 {
		window = DefaultRelayWindow
	}
	if poll <= 0 {
		poll = DefaultRelayPoll
	}
	end := time.Now().Add(window)
	if dl, ok := ctx.Deadline(); ok {
		if safe := dl.Add(-(r.publishTimeout() + markTimeout)); safe.Before(end) {
			end = safe
		}
	}
	h, err := newHolder()
	if err != nil {
		return RelayStats{}, err
	}
	var total RelayStats
	var lastErr, marksLost error
	succeeded := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for first := true; first || time.Now().Before(end); first = false { // at least one pass
		st, claimed, err := h.pass(ctx, r)
		total.add(st)
		if err == nil {
			succeeded++
		} else if ctx.Err() == nil {
			lastErr = err
		}
		if errors.Is(err, ErrRelayMarksLost) {
			marksLost = err
		}
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			r.log().WarnContext(ctx, "relay pass failed", "err", err)
		} else if claimed == r.batch() {
			continue // a full batch: there is probably more
		}
		timer.Reset(min(poll, max(time.Until(end), 0)))
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	fin, ferr := h.finish(ctx, r)
	total.Published += fin
	if errors.Is(ferr, ErrRelayMarksLost) {
		marksLost = ferr
	} else if ferr != nil {
		r.log().WarnContext(ctx, "relay: the lease was not released (it ends by itself)", "err", ferr)
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	if err := r.fillBacklog(bctx, &total); err != nil {
		return total, fmt.Errorf("%w: %v", ErrRelayNoProgress, errors.Join(err, lastErr))
	}
	if succeeded == 0 && lastErr != nil {
		r.log().ErrorContext(ctx, "relay: no pass of the window succeeded", "passes", total.Passes, "err", lastErr)
	}
	if marksLost != nil {
		return total, errors.Join(marksLost, ctx.Err())
	}
	return total, ctx.Err()
}

// prepared is a row ready for PutEvents.
type prepared struct {
	entry BusEntry
	size  int
	retry bool // it failed before: sent in a call of its own
}

// prepare turns a row into a bus entry, or says why it can never be one.
// The detail is checked with the trigger's own decoder, so the relay
// publishes only what the consumer accepts.
func (r *Relay) prepare(o OutboxRow) (prepared, string) {
	if o.Unreadable != "" {
		return prepared{}, "undeliverable: " + o.Unreadable
	}
	detail, err := EncodeBusDetail(FactDetail{
		EventID: o.EventID, EventName: o.Name, FirmID: o.FirmID, MatterID: o.MatterID,
		OccurredAt: o.OccurredAt, Payload: o.Payload,
	})
	if err != nil {
		return prepared{}, "undeliverable: the bus detail would not decode: " + err.Error()
	}
	size := EntrySize(o.Name, detail)
	if max := r.maxEntryBytes(); size > max {
		return prepared{}, fmt.Sprintf("undeliverable: the PutEvents entry would be %d bytes, at most %d", size, max)
	}
	return prepared{entry: BusEntry{EventID: o.EventID, Name: o.Name, Detail: detail, TraceHeader: o.TraceHeader},
		size: size, retry: o.Attempts > 0}, ""
}

// EntrySize is how EventBridge counts a PutEvents entry toward its size
// limit (Source + DetailType + Detail, UTF-8 bytes), with the Source
// counted at its largest (256 bytes) since the publisher sets it.
func EntrySize(name string, detail []byte) int { return maxSourceBytes + len(name) + len(detail) }

const maxSourceBytes = 256

// holder is one Run's (or DrainOnce's) hold on the relay lease: its id,
// and the accepted rows whose marks ride on its next statement.
type holder struct {
	id      uuid.UUID
	token   int64
	pending []uuid.UUID
}

func newHolder() (*holder, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("relay: holder id: %w", err)
	}
	return &holder{id: id}, nil
}

// pass is one claim, publish, and (when a row failed) settle. claimed is
// the number of rows it took. The marks of a wholly accepted pass are
// left pending for the next statement.
func (h *holder) pass(ctx context.Context, r *Relay) (st RelayStats, claimed int, err error) {
	if r.Outbox == nil || r.Publisher == nil {
		return st, 0, errors.New("relay: Outbox and Publisher are required")
	}
	st.Passes = 1
	if ctx.Err() != nil {
		return st, 0, ctx.Err() // the pending marks are left to finish
	}
	carried := h.pending
	h.pending = nil
	cctx := ctx
	if len(carried) > 0 {
		// The statement carries the last pass's marks: like a settlement,
		// it is not cut by ctx (the bus has those facts).
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
		defer cancel()
	}
	c, err := r.Outbox.Claim(cctx, OutboxClaimRequest{Holder: h.id, Limit: r.batch(), Lease: r.lease(), Published: carried})
	if err != nil {
		if len(carried) > 0 {
			// The previous pass's marks went with the statement: those
			// rows go out again.
			return st, 0, fmt.Errorf("relay: claim: %w: %d rows published, their marks not written: %v",
				ErrRelayMarksLost, len(carried), err)
		}
		return st, 0, fmt.Errorf("relay: claim: %w", err)
	}
	st.Published += int(c.Marked)
	if c.Taken {
		if c.TookOver {
			st.Takeovers++
			r.log().WarnContext(ctx, "relay took over a lease its holder had not released", "token", c.Token)
		}
		if c, err = r.Outbox.Claim(ctx, OutboxClaimRequest{Holder: h.id, Limit: r.batch(), Lease: r.lease()}); err != nil {
			return st, 0, fmt.Errorf("relay: claim: %w", err)
		}
	}
	if c.Busy {
		st.LeaseBusy++
		return st, 0, nil
	}
	h.token = c.Token
	if len(c.Rows) == 0 {
		return st, 0, nil
	}
	if ctx.Err() != nil {
		return st, 0, ctx.Err() // nothing tried: the rows are due again, unwritten
	}
	var ready []prepared
	var failures []PublishFailure
	for _, o := range c.Rows {
		p, why := r.prepare(o)
		if why != "" {
			failures = append(failures, PublishFailure{EventID: o.EventID, Msg: why, Kind: FailureUndeliverable})
			continue
		}
		ready = append(ready, p)
	}
	ok, pubFailures, callErr := r.publish(ctx, ready)
	failures = append(failures, pubFailures...)
	if r.AfterPublish != nil {
		r.AfterPublish()
	}
	if len(failures) == 0 {
		h.pending = ok
		if callErr != nil {
			return st, len(c.Rows), fmt.Errorf("relay: publish: %w", callErr)
		}
		return st, len(c.Rows), nil
	}

	// Settle even if ctx was cancelled meanwhile: the bus has the events,
	// and an unmarked row is only re-published.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	for i := range failures {
		failures[i].Msg = truncate(failures[i].Msg, 2000)
	}
	base, limit := r.backoff()
	set, err := r.Outbox.Settle(mctx, OutboxSettlement{Holder: h.id, Token: c.Token, Published: ok, Failures: failures,
		Base: base, Limit: limit, MaxAttempts: r.maxAttempts()})
	if err != nil {
		return st, len(c.Rows), fmt.Errorf("%w: %d rows published, their marks not written: %v",
			ErrRelayMarksLost, len(ok), err)
	}
	st.Published += int(set.Published)
	for _, rec := range set.Failures {
		st.Failed++
		if rec.Parked {
			st.Parked++
			r.log().ErrorContext(ctx, "relay parked a fact", "event_id", rec.EventID, "attempts", rec.Attempts, "reason", rec.Reason)
		}
	}
	if set.LeaseLost {
		// The new holder tries those rows afresh: nothing is lost but an
		// attempt's count, so the pass did not fail.
		st.FencedOut += len(failures)
		r.log().WarnContext(ctx, "relay lease taken over: this pass's failure records were not written",
			"failures", len(failures), "token", c.Token)
	}
	if callErr != nil {
		return st, len(c.Rows), fmt.Errorf("relay: publish: %w", callErr)
	}
	return st, len(c.Rows), nil
}

// finish writes the pending marks and releases the lease, in one
// statement, even when ctx is done. When that fails the lease is released
// alone (so the next relay need not wait for it to end) and the marks are
// reported lost: those rows go out again.
func (h *holder) finish(ctx context.Context, r *Relay) (published int, err error) {
	if r.Outbox == nil {
		return 0, nil
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	set, err := r.Outbox.Settle(mctx, OutboxSettlement{Holder: h.id, Token: h.token, Published: h.pending, Release: true})
	if err == nil {
		h.pending = nil
		return int(set.Published), nil
	}
	n := len(h.pending)
	h.pending = nil
	if n == 0 {
		return 0, fmt.Errorf("relay: release the lease: %w", err)
	}
	if _, rerr := r.Outbox.Settle(mctx, OutboxSettlement{Holder: h.id, Token: h.token, Release: true}); rerr != nil {
		err = errors.Join(err, fmt.Errorf("release the lease: %w", rerr))
	}
	return 0, fmt.Errorf("%w: %d rows published, their marks not written: %v", ErrRelayMarksLost, n, err)
}

// publish sends the entries within the publish budget: rows that never failed
// in calls of up to PutEventsMaxEntries entries and MaxEntryBytes bytes,
// then rows that failed before in calls of their own, so a row that makes
// a whole call fail cannot keep failing the rows it was sent with. Until a
// call succeeds, a failed call ends the pass (the bus is presumed down; the
// rest of the claim is released, due at the next pass). After a call of
// the pass succeeded, a failed call carrying one entry counts against that
// entry (it can be parked) when the bus refused it permanently
// (ErrPermanentRefusal); a failed call carrying several backs them off.
// Only permanent refusals count toward parking: a retryable per-entry
// error (throttling, an internal failure) and a call cut by the pass's own
// budget back the row off without counting. A call is not started when
// less of the budget is left than the slowest call of the pass took: a
// slow bus ends the pass early, with the rest released, rather than cut.
func (r *Relay) publish(ctx context.Context, ready []prepared) (ok []uuid.UUID, failures []PublishFailure, callErr error) {
	pctx, cancel := context.WithTimeout(ctx, r.publishBudget())
	defer cancel()
	var calls [][]prepared
	var cur []prepared
	curSize := 0
	for _, p := range ready {
		if p.retry {
			continue
		}
		if len(cur) == PutEventsMaxEntries || (len(cur) > 0 && curSize+p.size > r.maxEntryBytes()) {
			calls, cur, curSize = append(calls, cur), nil, 0
		}
		cur, curSize = append(cur, p), curSize+p.size
	}
	if len(cur) > 0 {
		calls = append(calls, cur)
	}
	for _, p := range ready {
		if p.retry {
			calls = append(calls, []prepared{p})
		}
	}
	anyOK := false
	deadline, _ := pctx.Deadline()
	var longest time.Duration // the slowest call of the pass so far
	for _, call := range calls {
		// A call that would likely outlast the budget is not started: its
		// rows are left to Settle's release (due at the next pass, no
		// attempt counted) instead of being cut mid-call.
		if longest > 0 && time.Until(deadline) < longest {
			break
		}
		entries := make([]BusEntry, len(call))
		for i, p := range call {
			entries[i] = p.entry
		}
		began := time.Now()
		res, err := r.Publisher.Publish(pctx, entries)
		longest = max(longest, time.Since(began))
		if err == nil && len(res) != len(entries) {
			err = fmt.Errorf("publisher returned %d results for %d entries", len(res), len(entries))
		}
		if err != nil {
			kind := FailureCall
			msg := "PutEvents call failed: " + err.Error()
			switch {
			case pctx.Err() != nil:
				msg = "PutEvents call cut by the pass's publish budget or cancelled: " + err.Error()
			case anyOK && len(entries) == 1 && r.permanent(err):
				kind = FailureRejected
				msg = "PutEvents call carrying this entry alone failed while other calls succeeded: " + err.Error()
			}
			for _, e := range entries {
				failures = append(failures, PublishFailure{EventID: e.EventID, Msg: msg, Kind: kind})
			}
			if !anyOK {
				return ok, failures, err
			}
			callErr = err
			continue
		}
		anyOK = true
		for i, res := range res {
			switch {
			case res.EventID != entries[i].EventID:
				failures = append(failures, PublishFailure{EventID: entries[i].EventID,
					Msg: fmt.Sprintf("publisher result %d names %s, not %s", i, res.EventID, entries[i].EventID)})
			case res.Err != nil:
				kind := FailureCall // retryable: back off, never park
				if r.permanent(res.Err) {
					kind = FailureRejected
				}
				failures = append(failures, PublishFailure{EventID: entries[i].EventID, Msg: res.Err.Error(), Kind: kind})
			default:
				ok = append(ok, entries[i].EventID)
			}
		}
	}
	return ok, failures, callErr
}

// OutboxGauges is the outbox's state as the gauges report it.
type OutboxGauges struct {
	Backlog          int64   // unpublished, unparked rows (due or backing off)
	OldestAgeSeconds float64 // age of the oldest of them by the database clock; 0 when none
	Parked           int64   // parked rows
}

func (r *Relay) fillBacklog(ctx context.Context, st *RelayStats) error {
	g, err := r.Outbox.Gauges(ctx)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	st.Backlog, st.OldestAgeSeconds, st.ParkedTotal, st.Measured = g.Backlog, g.OldestAgeSeconds, g.Parked, true
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
