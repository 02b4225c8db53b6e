package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// On-call's second question: why is this matter where it is? Why reads one
// matter's causal chain from the outbox, the trigger's inbox, the demand
// and nudge records, the runs and the frames, and ends in the diagnosis's
// verdict.

// Timeline entry kinds, in the order entries at the same instant are shown.
const (
	EntryFact    = "fact"    // a fact recorded in the outbox (published, pending or parked)
	EntryReceipt = "receipt" // the trigger recorded the fact in its inbox
	EntryDemand  = "demand"  // a demand and the generation it produced
	EntryNudge   = "nudge"   // a nudge handed to a build queue (or refused)
	EntryClaim   = "claim"   // a claim: token, worker, target
	EntryRunEnd  = "run"     // how a claim ended
	EntryFrame   = "frame"   // a landed frame
)

var entryOrder = map[string]int{EntryFact: 0, EntryReceipt: 1, EntryDemand: 2, EntryNudge: 3, EntryClaim: 4, EntryRunEnd: 5, EntryFrame: 6}

// WhyEntry is one line of the timeline.
type WhyEntry struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Text    string    `json:"text"`
	TraceID string    `json:"trace_id,omitempty"`
	// The ids the entry is about, for tools.
	EventID    *uuid.UUID `json:"event_id,omitempty"`
	Generation int64      `json:"generation,omitempty"`
	Token      int64      `json:"token,omitempty"`
}

// WhyReport is one matter's causal chain, oldest first, and its verdict.
type WhyReport struct {
	Diagnosis Diagnosis  `json:"diagnosis"`
	Entries   []WhyEntry `json:"entries"`
	Omitted   int        `json:"omitted"` // older entries left out by the limit (at least this many)
	Verdict   string     `json:"verdict"`
}

// Why assembles one matter's timeline: its facts (event_id, name,
// occurred, published, parked), their receipts by the trigger, the demands
// (generation, facts coalesced, source), the nudges sent, every claim
// (token, worker, target, whether it took over an expired lease), how each
// run ended, the frames (builder identity, model invoked or skipped), and
// the trace ids recorded along the way. It keeps the newest limit entries
// (default 200). The records are pruned by their retentions, so an old
// matter's chain starts where its records do.
func (l *Ledger) Why(ctx context.Context, ref rail.MatterRef, oc OnCallConfig, limit int) (WhyReport, error) {
	if limit <= 0 {
		limit = 200
	}
	diag, err := l.Diagnose(ctx, ref, oc)
	if err != nil {
		return WhyReport{}, err
	}
	rep := WhyReport{Diagnosis: diag, Verdict: diag.Verdict()}
	var entries []WhyEntry
	add := func(e WhyEntry) { entries = append(entries, e) }

	// Facts and their receipts.
	rows, err := l.pool.Query(ctx, `SELECT o.event_id, o.event_name, o.occurred_at, o.published_at, o.parked_at,
            o.trace_header, o.last_error, o.publish_attempts, i.received_at
        FROM ops.outbox_facts o LEFT JOIN ops.trigger_inbox i
          ON i.event_id = o.event_id AND i.firm_id = o.firm_id AND i.matter_id = o.matter_id
        WHERE o.matter_id = $2 AND o.firm_id = $1
        ORDER BY o.occurred_at DESC LIMIT $3`, ref.FirmID, ref.MatterID, limit)
	if err != nil {
		return rep, fmt.Errorf("why %s: facts: %w", ref, err)
	}
	type fact struct {
		id                uuid.UUID
		name              string
		occurred          time.Time
		published, parked *time.Time
		trace, lastErr    string
		attempts          int
		received          *time.Time
	}
	facts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fact, error) {
		var f fact
		err := r.Scan(&f.id, &f.name, &f.occurred, &f.published, &f.parked, &f.trace, &f.lastErr, &f.attempts, &f.received)
		return f, err
	})
	if err != nil {
		return rep, fmt.Errorf("why %s: facts: %w", ref, err)
	}
	for _, f := range facts {
		id := f.id
		state := "pending: not yet on the bus"
		switch {
		case f.published != nil:
			state = "published " + fmtMillis(*f.published)
		case f.parked != nil:
			state = fmt.Sprintf("PARKED %s after %d attempt(s): %s (railctl outbox)", fmtMillis(*f.parked), f.attempts, orNone(f.lastErr))
		case f.attempts > 0:
			state = fmt.Sprintf("pending: %d failed attempt(s), last: %s", f.attempts, orNone(f.lastErr))
		}
		add(WhyEntry{At: f.occurred, Kind: EntryFact, EventID: &id, TraceID: traceID(f.trace),
			Text: fmt.Sprintf("%s %s occurred; %s", f.name, short(id), state)})
		if f.received != nil {
			add(WhyEntry{At: *f.received, Kind: EntryReceipt, EventID: &id,
				Text: fmt.Sprintf("trigger received %s %s (inbox row)", f.name, short(id))})
		}
	}

	// Demands.
	rows, err = l.pool.Query(ctx, `SELECT generation, n, source, event_ids::text[], occurred_at, recorded_at,
            trace_header, served_token, served_at
        FROM ops.matter_demands WHERE firm_id = $1 AND matter_id = $2
        ORDER BY generation DESC LIMIT $3`, ref.FirmID, ref.MatterID, limit)
	if err != nil {
		return rep, fmt.Errorf("why %s: demands: %w", ref, err)
	}
	type demand struct {
		gen      int64
		n        int
		source   string
		ids      []string
		occurred time.Time
		recorded time.Time
		trace    string
		token    *int64
		servedAt *time.Time
	}
	demands, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (demand, error) {
		var d demand
		err := r.Scan(&d.gen, &d.n, &d.source, &d.ids, &d.occurred, &d.recorded, &d.trace, &d.token, &d.servedAt)
		return d, err
	})
	if err != nil {
		return rep, fmt.Errorf("why %s: demands: %w", ref, err)
	}
	for _, d := range demands {
		what := d.source
		switch {
		case d.source == rail.DemandFromFact && len(d.ids) > 1:
			what = fmt.Sprintf("%d facts coalesced (%s)", len(d.ids), shortList(d.ids))
		case d.source == rail.DemandFromFact && len(d.ids) == 1:
			what = "fact " + shortText(d.ids[0])
		case d.source == rail.DemandFromOperator:
			what = "an operator (railctl demand)"
		case d.source == rail.DemandFromBackfill:
			what = "the backfill (outdated builder)"
		}
		served := "unserved"
		if d.token != nil && d.servedAt != nil {
			from := "the demand"
			if d.source == rail.DemandFromFact {
				from = "its fact occurred"
			}
			served = fmt.Sprintf("served by token %d at %s, %s after %s", *d.token, fmtMillis(*d.servedAt),
				d.servedAt.Sub(d.occurred).Round(time.Millisecond), from)
		}
		add(WhyEntry{At: d.recorded, Kind: EntryDemand, Generation: d.gen, TraceID: traceID(d.trace),
			Text: fmt.Sprintf("demand -> generation %d from %s; %s", d.gen, what, served)})
	}

	// Nudges.
	rows, err = l.pool.Query(ctx, `SELECT sent_at, reason, queue, delay_seconds, trace_header, error
        FROM ops.matter_nudges WHERE firm_id = $1 AND matter_id = $2
        ORDER BY sent_at DESC LIMIT $3`, ref.FirmID, ref.MatterID, limit)
	if err != nil {
		return rep, fmt.Errorf("why %s: nudges: %w", ref, err)
	}
	err = forEach(rows, func(r pgx.CollectableRow) error {
		var (
			at                    time.Time
			reason, queue, tr, er string
			delay                 float64
		)
		if err := r.Scan(&at, &reason, &queue, &delay, &tr, &er); err != nil {
			return err
		}
		text := fmt.Sprintf("nudge (%s) -> %s queue, delay %s", reason, queue, time.Duration(delay*float64(time.Second)))
		if er != "" {
			text = fmt.Sprintf("nudge (%s) to the %s queue REFUSED: %s (the sweeper re-nudges)", reason, queue, er)
		}
		add(WhyEntry{At: at, Kind: EntryNudge, Text: text, TraceID: traceID(tr)})
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("why %s: nudges: %w", ref, err)
	}

	// Claims and how they ended. A claim took over an expired lease when
	// the claim before it ended lease_expired, fenced or superseded (only
	// a newer claim ends a live run that way).
	rows, err = l.pool.Query(ctx, `SELECT token, target_generation, worker_id, outcome, claimed_at, finished_at, error,
            coalesce(pg_catalog.lag(outcome) OVER (ORDER BY token) IN ('claimed', 'lease_expired', 'fenced', 'superseded'), false)
        FROM (SELECT * FROM ops.matter_frame_runs WHERE firm_id = $1 AND matter_id = $2
              ORDER BY token DESC LIMIT $3) AS r
        ORDER BY token`, ref.FirmID, ref.MatterID, limit)
	if err != nil {
		return rep, fmt.Errorf("why %s: runs: %w", ref, err)
	}
	err = forEach(rows, func(r pgx.CollectableRow) error {
		var (
			token, target           int64
			worker, outcome, errMsg string
			claimed                 time.Time
			finished                *time.Time
			tookOver                bool
		)
		if err := r.Scan(&token, &target, &worker, &outcome, &claimed, &finished, &errMsg, &tookOver); err != nil {
			return err
		}
		over := ""
		if tookOver {
			over = ", took over an expired lease"
		}
		add(WhyEntry{At: claimed, Kind: EntryClaim, Token: token,
			Text: fmt.Sprintf("claim token %d by %s, target generation %d%s", token, worker, target, over)})
		if finished != nil || outcome != "claimed" {
			at := claimed
			if finished != nil {
				at = *finished
			}
			add(WhyEntry{At: at, Kind: EntryRunEnd, Token: token, Text: runEnd(token, outcome, errMsg)})
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("why %s: runs: %w", ref, err)
	}

	// Frames, with the trace their frame.built fact carried.
	rows, err = l.pool.Query(ctx, `SELECT f.token, f.target_generation, f.builder, f.builder_version, f.model_id,
            f.prompt_hash, f.model_invoked, f.built_at,
            coalesce((SELECT o.trace_header FROM ops.domain_event_outbox o
                      WHERE o.matter_id = f.matter_id AND o.event_name = 'frame.built'
                        AND o.payload->>'frame_id' = f.frame_id::text LIMIT 1), '')
        FROM ops.matter_frames f WHERE f.firm_id = $1 AND f.matter_id = $2
        ORDER BY f.token DESC LIMIT $3`, ref.FirmID, ref.MatterID, limit)
	if err != nil {
		return rep, fmt.Errorf("why %s: frames: %w", ref, err)
	}
	err = forEach(rows, func(r pgx.CollectableRow) error {
		var (
			token, target int64
			id            rail.BuilderIdentity
			invoked       bool
			at            time.Time
			trace         string
		)
		if err := r.Scan(&token, &target, &id.Name, &id.Version, &id.ModelID, &id.PromptHash, &invoked, &at, &trace); err != nil {
			return err
		}
		model := "model invoked"
		if !invoked {
			model = "model skipped (inputs and builder unchanged: same fingerprint)"
		}
		add(WhyEntry{At: at, Kind: EntryFrame, Token: token, Generation: target, TraceID: traceID(trace),
			Text: fmt.Sprintf("frame landed: token %d, generation %d, built by %s, %s", token, target, id, model)})
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("why %s: frames: %w", ref, err)
	}

	slices.SortStableFunc(entries, func(a, b WhyEntry) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return entryOrder[a.Kind] - entryOrder[b.Kind]
	})
	if len(entries) > limit {
		rep.Omitted = len(entries) - limit
		entries = entries[len(entries)-limit:]
	}
	rep.Entries = entries
	return rep, nil
}

func runEnd(token int64, outcome, errMsg string) string {
	switch outcome {
	case "landed":
		return fmt.Sprintf("token %d landed", token)
	case "fenced":
		return fmt.Sprintf("token %d's lease expired and its commit was FENCED: a newer claim owned the matter; nothing landed", token)
	case "superseded":
		return fmt.Sprintf("token %d's lease expired and it was superseded during its build (a heartbeat found a newer claim); not committed", token)
	case "failed":
		return fmt.Sprintf("token %d FAILED: %s", token, orNone(errMsg))
	case "lease_expired":
		return fmt.Sprintf("token %d's lease EXPIRED with no commit", token)
	case "quarantined":
		return fmt.Sprintf("token %d QUARANTINED the matter: %s", token, orNone(errMsg))
	case "claimed":
		return fmt.Sprintf("token %d still building", token)
	}
	return fmt.Sprintf("token %d %s %s", token, outcome, errMsg)
}

func forEach(rows pgx.Rows, f func(pgx.CollectableRow) error) error {
	_, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) { return struct{}{}, f(r) })
	return err
}

func fmtMillis(t time.Time) string { return t.UTC().Format("15:04:05.000") }

func short(id uuid.UUID) string { return id.String()[:8] }

func shortText(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func shortList(ids []string) string {
	out := ""
	for i, s := range ids {
		if i == 3 {
			return out + fmt.Sprintf(", +%d more", len(ids)-3)
		}
		if i > 0 {
			out += ", "
		}
		out += shortText(s)
	}
	return out
}

// traceID is the X-Ray trace id (Root=…) of a trace header, "" when none.
func traceID(header string) string {
	const root = "Root="
	for _, part := range splitSemi(header) {
		if len(part) > len(root) && part[:len(root)] == root {
			return part[len(root):]
		}
	}
	return ""
}

func splitSemi(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ';' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
