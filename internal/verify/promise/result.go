package promise

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Violations: what the oracle checks (doc.go says when each is checked).
const (
	// VPromise: an open, unquarantined matter's newest frame was not built
	// from exactly the documents on record (a document missing, or no frame
	// at all), and no alarm accounts for the difference (a parked fact).
	VPromise = "promise broken: an open matter's Brief lacks documents on record"
	// VClosedNotHeld: a closed matter has documents its newest frame lacks,
	// and its ledger row does not hold demand for them (requested = built).
	VClosedNotHeld = "closed matter's unbuilt documents not held"
	// VAckedWithoutEffect: a demand fact left the trigger queue (acknowledged)
	// with no demand recorded for it.
	VAckedWithoutEffect = "fact acknowledged without its effect"
	// VParkedTransient: a parked fact was refused by the bus only with
	// retryable errors (or never refused at all).
	VParkedTransient = "fact parked for a transient error"
	// VGauges: a gauge the sweeper reported differs from what the ledger says.
	VGauges = "gauge differs from the ledger"
	// VMissingAlarm: an open matter's document is unbuilt and no gauge
	// (outbox backlog, parked, queue, behind, quarantined) accounts for it.
	VMissingAlarm = "missing alarm: unbuilt document no gauge accounts for"
	// VRelayLivelock: the bus accepted entries in a relay invocation and
	// none was marked published (and nothing killed the relay's session).
	VRelayLivelock = "relay livelock: bus accepted entries, none marked"
	// VStuckRow: a row stayed running under a token whose invocation had
	// ended, with nothing ambiguous about its outcome.
	VStuckRow = "row left running after its invocation ended"
	// VQuarantineSwallowed: a quarantined row holds demand recorded after its
	// last attempt's claim (new demand must release a quarantine).
	VQuarantineSwallowed = "quarantine swallowed demand"
	// VClosedClaimed: the builder claimed a closed matter (a closed
	// matter's demand is held, never built), by the single claim or the
	// batch's.
	VClosedClaimed = "closed matter claimed"
	// VBackfillOnLiveQueue: a nudge on the live build queue for a matter
	// whose only unserved demand is the backfill's.
	VBackfillOnLiveQueue = "backfill work on the live build queue"
	// VRetryLate: a failed build's retry was claimed later than its backoff
	// plus one sweep period (plus the settle delay and one tick), with no
	// fault on its path to excuse it.
	VRetryLate = "failed build retried late (not at its backoff)"
	// VOutdatedLeft: after quiescence an open matter's newest frame was built
	// by another identity than the deployed builder's.
	VOutdatedLeft = "outdated matter left after quiescence"
	// VNotQuiescent: the rail did not settle (nothing left to do) within the
	// quiescence bound.
	VNotQuiescent = "rail did not settle"
	// VHarness: the harness itself failed (a setup or oracle query).
	VHarness = "harness error"
)

// Violation is one failed check.
type Violation struct {
	Kind   string
	Step   int
	Detail string
}

// Result is one seed's outcome.
type Result struct {
	Seed       uint64
	Steps      int
	Faults     map[Kind]int // kinds injected, by count
	Violations []Violation
	Trace      []string
	// Timing: real time spent, by part of the harness (for tuning).
	Timing map[string]time.Duration
	// Stats.
	Frames, Uploads, RelayInvocations, Sweeps int
	// Batches: builder invocations whose claim statement won two claims or
	// more (the batch path: Ledger.ClaimBatch, Ledger.LoadBuilds, a
	// goroutine per claim); BatchClaims: the claims they won.
	Batches, BatchClaims int
}

// Count returns how many violations of kind k the run found.
func (r *Result) Count(k string) int {
	n := 0
	for _, v := range r.Violations {
		if v.Kind == k {
			n++
		}
	}
	return n
}

// Kinds returns the violation kinds found, by count.
func (r *Result) Kinds() map[string]int {
	m := map[string]int{}
	for _, v := range r.Violations {
		m[v.Kind]++
	}
	return m
}

// Report renders the violations and the trace's last n lines.
func (r *Result) Report(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d violation(s), %d step(s)\n", r.Seed, len(r.Violations), r.Steps)
	for i, v := range r.Violations {
		if i == 20 {
			fmt.Fprintf(&b, "  … %d more\n", len(r.Violations)-20)
			break
		}
		fmt.Fprintf(&b, "  [step %d] %s: %s\n", v.Step, v.Kind, v.Detail)
	}
	fmt.Fprintf(&b, "faults: %s\n", FormatCounts(r.Faults))
	fmt.Fprintf(&b, "timing: %v\n", r.Timing)
	t := r.Trace
	if n > 0 && len(t) > n {
		t = t[len(t)-n:]
	}
	for _, l := range t {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// FormatCounts renders a count map sorted by key.
func FormatCounts[K ~string](m map[K]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
