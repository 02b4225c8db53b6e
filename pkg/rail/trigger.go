package rail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
)

// The trigger: it hears facts from the bus (through a queue), records Brief
// demand for the facts that create it, and nudges the builders. Transport
// types (SQS messages, EventBridge envelopes) stay in the adapters; the
// trigger sees InboundFacts.

// CreatesDemand reports whether a fact named name creates Brief demand:
// document.uploaded, document.removed and brief.regeneration_requested. The
// rail's own frame.built never does (a build must not demand another build).
func CreatesDemand(name string) bool {
	switch name {
	case FactDocumentUploaded, FactDocumentRemoved, FactRegenerationRequested:
		return true
	}
	return false
}

// DefaultInboxRetention is how long the trigger remembers an event_id: longer
// than any queue or dead-letter queue can hold the message (14 days at most),
// so a redrive after a long outage still dedupes.
const DefaultInboxRetention = 15 * 24 * time.Hour

// InboundFact is one message the trigger received: a decoded fact, or the
// reason it could not be decoded.
type InboundFact struct {
	MessageID   string     // the transport's message id, for logs
	Fact        FactDetail // valid when Err is nil
	Err         error      // the body could not be decoded; this message fails alone
	TraceHeader string     // the X-Ray trace header it arrived with, if any
}

// CountSink receives counters (pkg/emf's Logger is one). Nil means none.
type CountSink interface {
	Count(name string, n float64)
}

// Metric names the trigger counts.
const (
	MetricDemandsRecorded = "DemandsRecorded" // matters given new demand
	MetricFactsCoalesced  = "FactsCoalesced"  // facts folded into another fact's demand
	MetricDemandsHeld     = "DemandsHeld"     // of DemandsRecorded: on a closed matter, held until re-opened
	// MetricFactsRefused counts demand facts the inbox refused (RefusedFact):
	// each such message fails, is retried and ends in the trigger's DLQ.
	MetricFactsRefused = "FactsRefused"
)

// Trigger turns demand facts into ledger demand and nudges. Safe for
// concurrent use.
type Trigger struct {
	Ledger Inbox
	Nudger Nudger
	// SettleDelay is put on every nudge (SQS DelaySeconds) so that a burst
	// of facts for one matter is served by one build.
	SettleDelay time.Duration
	Log         *slog.Logger
	Metrics     CountSink
	// DropHeld is a seam for negative controls only, never set by the
	// rail: a closed matter's facts are acknowledged with their inbox rows
	// and demand rolled back, as the trigger did before closed matters
	// held demand in flight (the upload in flight at the close is lost).
	DropHeld bool
}

func (t *Trigger) log() *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (t *Trigger) count(name string, n int) {
	if t.Metrics != nil && n > 0 {
		t.Metrics.Count(name, float64(n))
	}
}

// matterFacts is one matter's demand facts in a batch, in arrival order.
type matterFacts struct {
	ref   MatterRef
	index []int // positions in the batch
}

// Handle processes a batch and returns one error per message, in order: nil
// acknowledges the message, non-nil asks for redelivery (the transport's
// redrive policy dead-letters it after enough tries).
//
//   - A malformed message fails alone.
//   - A fact that creates no demand (an unknown name, frame.built) is
//     acknowledged and changes nothing.
//   - A demand fact is verified, not trusted: it must be the fact the
//     rail's outbox holds under its event_id (same firm, matter and name).
//     One that is not (forged, or naming an unknown matter or one filed
//     under another firm, which no outbox row can), or whose event_id the
//     inbox heard for another firm, matter or name, is refused: its message
//     fails alone (ErrFactRefused; retried, then dead-lettered, where the
//     trigger DLQ alarm sees it), it is logged and counted
//     (MetricFactsRefused), and it writes nothing and is never taken as
//     seen.
//   - A fact for a closed matter is recorded like any other (inbox rows and
//     demand, one transaction) and its demand is held on the matter's row:
//     not claimed, not nudged, counted by MattersClosedWithDemand, and
//     built after the matter is re-opened (the sweeper re-nudges it). A
//     fact committed while its matter was open (an upload in flight when
//     it closed) is never acknowledged away.
//   - Facts already seen (the same event_id, firm, matter and name) add no
//     demand.
//   - The new facts for one matter become their inbox rows and one demand
//     of n, then one nudge for the matter, sent after the commit with the
//     settle delay. A nudge that cannot be sent is logged and the facts are
//     still acknowledged: the demand is in the ledger and the sweeper
//     re-nudges it.
//   - With a BatchInbox ledger (pkg/postgres), the whole batch (every
//     matter's inbox rows and demand) is one call that commits together;
//     if that call fails it writes nothing and the batch is recorded
//     matter by matter, one transaction each, as without one.
//   - A database error fails that matter's facts only.
func (t *Trigger) Handle(ctx context.Context, msgs []InboundFact) []error {
	errs := make([]error, len(msgs))
	var groups []*matterFacts
	byRef := map[MatterRef]*matterFacts{}
	for i, m := range msgs {
		log := t.log().With("message_id", m.MessageID)
		if m.Err != nil {
			errs[i] = fmt.Errorf("malformed fact in message %s: %w", m.MessageID, m.Err)
			log.ErrorContext(ctx, "malformed fact: failing this message (it is retried, then dead-lettered)", "err", m.Err)
			continue
		}
		f := m.Fact
		if !CreatesDemand(f.EventName) {
			log.InfoContext(ctx, "fact creates no demand; acknowledged", "event_id", f.EventID,
				"event_name", f.EventName, "firm_id", f.FirmID, "matter_id", f.MatterID.UUID)
			continue
		}
		ref, ok := f.Ref()
		if !ok {
			log.WarnContext(ctx, "demand fact names no matter; acknowledged without demand", "event_id", f.EventID,
				"event_name", f.EventName, "firm_id", f.FirmID)
			continue
		}
		g := byRef[ref]
		if g == nil {
			g = &matterFacts{ref: ref}
			byRef[ref] = g
			groups = append(groups, g)
		}
		g.index = append(g.index, i)
	}

	var nudges []Nudge
	batched := false
	if bi, ok := t.Ledger.(BatchInbox); ok && len(groups) > 0 && !t.DropHeld {
		nudges, batched = t.recordBatch(ctx, bi, msgs, groups, errs)
	}
	for _, g := range groups {
		if batched {
			break
		}
		n, refused, err := t.record(ctx, msgs, g)
		if err != nil {
			for _, i := range g.index {
				errs[i] = err
			}
			continue
		}
		for _, i := range g.index {
			errs[i] = refused[msgs[i].Fact.EventID]
		}
		if n.Reason != "" {
			nudges = append(nudges, n)
		}
	}
	if len(nudges) > 0 {
		if err := t.Nudger.Nudge(ctx, nudges, t.SettleDelay); err != nil {
			t.log().ErrorContext(ctx, "nudge failed after the demand committed; the sweeper will re-nudge",
				"err", err, "matters", len(nudges))
		}
	}
	return errs
}

// record writes one matter's new facts and their demand in one transaction.
// It returns the nudge to send (zero when nothing new was recorded), the
// refused facts' errors by event id (each fails its message alone), or an
// error that fails the matter's messages.
func (t *Trigger) record(ctx context.Context, msgs []InboundFact, g *matterFacts) (_ Nudge, refusedErrs map[uuid.UUID]error, _ error) {
	log := t.log().With("firm_id", g.ref.FirmID, "matter_id", g.ref.MatterID)
	ids, names := g.facts(msgs)

	tx, err := t.Ledger.BeginInbox(ctx)
	if err != nil {
		return Nudge{}, nil, fmt.Errorf("trigger %s: begin: %w", g.ref, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	fresh, refused, err := tx.Receive(ctx, g.ref, ids, names)
	if err != nil {
		return Nudge{}, nil, fmt.Errorf("trigger %s: inbox: %w", g.ref, err)
	}
	refusedErrs = t.refusals(ctx, log, g.ref, refused)
	if len(fresh) == 0 {
		if len(refused) < len(ids) {
			log.InfoContext(ctx, "facts already recorded; acknowledged", "event_ids", ids)
		}
		return Nudge{}, refusedErrs, nil
	}
	origin := DemandOrigin{Source: DemandFromFact, EventIDs: fresh, TraceHeader: g.trace(msgs, fresh)}
	res, err := tx.DemandFrom(ctx, g.ref, len(fresh), origin)
	switch {
	case errors.Is(err, ErrUnknownMatter), errors.Is(err, ErrFirmMismatch):
		// Rolled back: nothing is written. The fact will never apply, so
		// retrying it would only loop.
		log.WarnContext(ctx, "facts name no matter of this firm; acknowledged without demand",
			"reason", err.Error(), "event_ids", ids)
		return Nudge{}, refusedErrs, nil
	case err != nil:
		return Nudge{}, nil, fmt.Errorf("trigger %s: %w", g.ref, err)
	case res.Held && t.DropHeld: // the negative control: the defect, on purpose
		log.WarnContext(ctx, "matter closed; facts acknowledged without demand (DropHeld)", "event_ids", ids)
		return Nudge{}, refusedErrs, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return Nudge{}, nil, fmt.Errorf("trigger %s: commit: %w", g.ref, err)
	}
	return t.demanded(ctx, log, g, fresh, origin.TraceHeader, res), refusedErrs, nil
}

// facts is the matter's facts' ids and names in batch order, each event id
// once (the same fact twice in one batch is one fact).
func (g *matterFacts) facts(msgs []InboundFact) (ids []uuid.UUID, names []string) {
	ids = make([]uuid.UUID, 0, len(g.index))
	names = make([]string, 0, len(g.index))
	seen := map[uuid.UUID]bool{}
	for _, i := range g.index {
		f := msgs[i].Fact
		if seen[f.EventID] {
			continue
		}
		seen[f.EventID] = true
		ids, names = append(ids, f.EventID), append(names, f.EventName)
	}
	return ids, names
}

// trace is the trace header the demand carries: the first new fact's that
// has one (it continues into the build).
func (g *matterFacts) trace(msgs []InboundFact, fresh []uuid.UUID) string {
	for _, i := range g.index {
		if msgs[i].TraceHeader != "" && slices.Contains(fresh, msgs[i].Fact.EventID) {
			return msgs[i].TraceHeader
		}
	}
	return ""
}

// refusals logs and counts the refused facts and returns each one's error
// (its message fails alone).
func (t *Trigger) refusals(ctx context.Context, log *slog.Logger, ref MatterRef, refused []RefusedFact) map[uuid.UUID]error {
	if len(refused) == 0 {
		return nil
	}
	errs := make(map[uuid.UUID]error, len(refused))
	for _, r := range refused {
		errs[r.EventID] = fmt.Errorf("trigger %s: event %s: %w (%s)", ref, r.EventID, ErrFactRefused, r.Reason)
		log.ErrorContext(ctx, "fact refused: not the fact the rail recorded under its event_id; failing its message (retried, then dead-lettered)",
			"event_id", r.EventID, "reason", r.Reason)
	}
	t.count(MetricFactsRefused, len(refused))
	return errs
}

// demanded counts and logs a committed demand and returns the matter's
// nudge (none for a closed matter's held demand).
func (t *Trigger) demanded(ctx context.Context, log *slog.Logger, g *matterFacts, fresh []uuid.UUID, trace string, res DemandResult) Nudge {
	t.count(MetricDemandsRecorded, 1)
	t.count(MetricFactsCoalesced, len(fresh)-1)
	if res.Held {
		// No nudge: a closed matter is not claimed. Re-opening restarts the
		// demand's clock and the sweeper's next pass re-nudges it.
		t.count(MetricDemandsHeld, 1)
		log.InfoContext(ctx, "demand recorded and held: the matter is closed; it is built after re-opening",
			"facts", len(fresh), "duplicates", len(g.index)-len(fresh),
			"requested_generation", res.Requested, "run_status", res.Status)
		return Nudge{}
	}
	log.InfoContext(ctx, "demand recorded", "facts", len(fresh), "duplicates", len(g.index)-len(fresh),
		"requested_generation", res.Requested, "run_status", res.Status)
	return Nudge{V: 1, FirmID: g.ref.FirmID, MatterID: g.ref.MatterID, Reason: ReasonDemand, TraceHeader: trace}
}

// recordBatch records every matter's facts and demand in one call
// (BatchInbox) and fills errs for the refused facts. It returns false,
// having written nothing, when the call fails: the caller then records the
// batch matter by matter, which isolates whatever failed to its matter.
func (t *Trigger) recordBatch(ctx context.Context, bi BatchInbox, msgs []InboundFact, groups []*matterFacts, errs []error) ([]Nudge, bool) {
	var facts []ReceivedFact
	for _, g := range groups {
		seen := map[uuid.UUID]bool{} // each event id once a matter, with its first delivery's name and trace (as facts)
		for _, i := range g.index {
			f := msgs[i].Fact
			if seen[f.EventID] {
				continue
			}
			seen[f.EventID] = true
			facts = append(facts, ReceivedFact{Ref: g.ref, EventID: f.EventID, Name: f.EventName, TraceHeader: msgs[i].TraceHeader})
		}
	}
	rc, err := bi.ReceiveBatch(ctx, facts)
	if err != nil {
		t.log().WarnContext(ctx, "batch not recorded in one call; recording it matter by matter", "err", err,
			"matters", len(groups), "facts", len(facts))
		return nil, false
	}
	var nudges []Nudge
	for _, g := range groups {
		log := t.log().With("firm_id", g.ref.FirmID, "matter_id", g.ref.MatterID)
		ids, _ := g.facts(msgs)
		var (
			fresh   []uuid.UUID
			refused []RefusedFact
		)
		for _, id := range ids {
			switch v := rc.Verdicts[FactKey{Ref: g.ref, EventID: id}]; v {
			case VerdictFresh:
				fresh = append(fresh, id)
			case VerdictDuplicate:
			default:
				refused = append(refused, RefusedFact{EventID: id, Reason: v})
			}
		}
		refusedErrs := t.refusals(ctx, log, g.ref, refused)
		for _, i := range g.index {
			errs[i] = refusedErrs[msgs[i].Fact.EventID]
		}
		if len(fresh) == 0 {
			if len(refused) < len(ids) {
				log.InfoContext(ctx, "facts already recorded; acknowledged", "event_ids", ids)
			}
			continue
		}
		res, ok := rc.Demands[g.ref]
		if !ok { // the ledger recorded it (BatchInbox's contract); only its result is missing
			log.ErrorContext(ctx, "batch receipt has no demand result for a matter with new facts; nudging it", "facts", len(fresh))
		}
		if n := t.demanded(ctx, log, g, fresh, g.trace(msgs, fresh), res); n.Reason != "" {
			nudges = append(nudges, n)
		}
	}
	return nudges, true
}
