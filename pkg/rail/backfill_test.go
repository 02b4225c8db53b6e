package rail_test

import (
	"math"
	"testing"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The admission rule's bound: what the builders served in the window plus
// their concurrency, less what is admitted and unserved.
func TestBackfillRoom(t *testing.T) {
	for _, c := range []struct {
		conc int
		load rail.BackfillLoad
		want int
	}{
		{2, rail.BackfillLoad{}, 2},                         // a fresh start: the builders' concurrency
		{0, rail.BackfillLoad{}, 2},                         // zero: the default concurrency
		{2, rail.BackfillLoad{Served: 30}, 32},              // builders that served a pass's 30 take 30 more
		{2, rail.BackfillLoad{InFlight: 6, Served: 4}, 0},   // behind: nothing more until they serve
		{2, rail.BackfillLoad{InFlight: 9, Served: 4}, 0},   // never negative
		{8, rail.BackfillLoad{InFlight: 3, Served: 10}, 15}, // 8 + 10 - 3
	} {
		if got := rail.BackfillRoom(c.conc, c.load); got != c.want {
			t.Errorf("BackfillRoom(%d, %+v) = %d, want %d", c.conc, c.load, got, c.want)
		}
	}
}

// `backfill status`'s ETA projects the admission rule, not the rate alone:
// at the deployed defaults (30 a minute, 2 builders) a model change over
// 20,000 matters takes the rate's 11 hours and the ramp when the builders
// keep up, and the builders' own pace when they are behind. Before, it
// was outdated / rate whatever the builders did (and admission held the
// backfill to 2 a minute: a week).
func TestBackfillETA(t *testing.T) {
	eta, pace := rail.BackfillETA(20_000, 30, 2, rail.BackfillLoad{})
	if pace != 30 || eta < 40_000 || eta > 40_000+20*60 {
		t.Fatalf("fresh start: ETA %.0f s at %g/min: want 40,000 s (20,000 at 30/min) plus at most 20 min of ramp", eta, pace)
	}
	// Builders behind (admitted backfill waited 5 minutes), 4 served in
	// the last window: their pace.
	behind := rail.BackfillLoad{InFlight: 6, Served: 4, OldestSeconds: 300}
	eta, pace = rail.BackfillETA(20_000, 30, 2, behind)
	if pace != 4 || math.Abs(eta-20_000*15) > 60 {
		t.Fatalf("builders behind: ETA %.0f s at %g/min: want 300,000 s (20,000 at 4/min)", eta, pace)
	}
	// Behind and nothing served in the window: no pace to project.
	if eta, pace = rail.BackfillETA(100, 30, 2, rail.BackfillLoad{InFlight: 2, OldestSeconds: 600}); eta != -1 || pace != 0 {
		t.Fatalf("stalled: ETA %v at %v: want -1 (unknown)", eta, pace)
	}
	// Nothing outdated: done.
	if eta, _ = rail.BackfillETA(0, 30, 2, rail.BackfillLoad{}); eta != 0 {
		t.Fatalf("nothing outdated: ETA %v", eta)
	}
	// A rate below one a minute: 3 matters at 0.5/min are admitted at 0,
	// 2 and 4 minutes, the last served before the pass at 5.
	if eta, _ = rail.BackfillETA(3, 0.5, 10, rail.BackfillLoad{}); eta != 300 {
		t.Fatalf("0.5/min: ETA %v s, want 300", eta)
	}
	// Builders that keep up at a rate the concurrency alone would cap:
	// 8 builders, 500 a minute.
	if eta, pace = rail.BackfillETA(50_000, 500, 8, rail.BackfillLoad{Served: 500}); pace != 500 || eta != 100*60 {
		t.Fatalf("500/min, ramped: ETA %v at %v: want 100 min", eta, pace)
	}
}
