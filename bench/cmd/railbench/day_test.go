package main

import (
	"strings"
	"testing"
	"time"
)

// TestDayWorkload: the day's generator gives what the section reports it
// gives: exactly the uploads asked for, in time order within the day,
// firms' sizes falling with their Zipf rank, most uploads in working
// hours, and no upload on a matter after its close.
func TestDayWorkload(t *testing.T) {
	o := dayOptions{Firms: 200, Uploads: 20000, Matters: 2000, Length: 24 * time.Second, ZipfS: 1, Seed: 7}
	w := buildDayWorkload(o, 1)
	if w.uploads != o.Uploads {
		t.Fatalf("%d uploads, want %d", w.uploads, o.Uploads)
	}
	perRank := map[int]int{}
	var uploads, working int
	closedAt := map[int]time.Duration{}
	for i, ev := range w.events {
		if i > 0 && ev.At < w.events[i-1].At {
			t.Fatalf("event %d at %s before event %d at %s", i, ev.At, i-1, w.events[i-1].At)
		}
		switch ev.Kind {
		case 'u':
			uploads++
			perRank[w.matterRank[ev.Matter]]++
			if h := float64(ev.At) / float64(o.Length) * 24; h >= 9 && h < 17 {
				working++
			}
		case 'c':
			closedAt[ev.Matter] = ev.At
		}
	}
	if uploads != o.Uploads {
		t.Fatalf("%d upload events, want %d", uploads, o.Uploads)
	}
	for _, ev := range w.events {
		if at, ok := closedAt[ev.Matter]; ok && ev.Kind == 'u' && ev.At > at {
			t.Fatalf("upload at %s on a matter closed at %s", ev.At, at)
		}
	}
	if w.closes == 0 || w.regens == 0 {
		t.Fatalf("closes %d, Regenerates %d: want some of each", w.closes, w.regens)
	}
	// Zipf: the largest firm has the most matters and uploads; the top
	// tenth of the firms get well over a third of the uploads.
	matters := map[int]int{}
	for _, r := range w.matterRank {
		matters[r]++
	}
	if matters[1] <= matters[10] || matters[10] < matters[100] {
		t.Fatalf("matters by rank 1/10/100: %d/%d/%d; want falling", matters[1], matters[10], matters[100])
	}
	top := 0
	for r := 1; r <= o.Firms/10; r++ {
		top += perRank[r]
	}
	if float64(top) < 0.4*float64(uploads) {
		t.Fatalf("top tenth of firms got %d of %d uploads; want Zipf's share (over 40%%)", top, uploads)
	}
	// The working-hours peak: 09-17 holds 7.6 of the profile's 10.5
	// density-hours (72%).
	if share := float64(working) / float64(uploads); share < 0.65 || share > 0.8 {
		t.Fatalf("%.2f of uploads between 09 and 17; want about 0.72", share)
	}
}

// Every figure the day section reports in docs/benchmarks.md (its table's
// rows, and the statements by handler) is a line of the `name: value`
// summary, listing every scale.
func TestDaySummaryListsEveryFigure(t *testing.T) {
	s := DayScale{Scale: 0.1, Latency: map[string]DayLatency{}, Handlers: map[string]DayHandler{
		"builder": {CallsPerUpload: 2}, "nudge records": {CallsPerUpload: 0.2}}}
	d := &DayResults{Scales: []DayScale{s, s}}
	got := map[string]string{}
	for _, l := range daySummary(d) {
		got[l.Name] = l.Value
	}
	for _, name := range []string{"day_uploads", "day_workload", "day_generator_lag_max_ms",
		"day_upload_to_current_ms_small", "day_upload_to_current_ms_medium", "day_upload_to_current_ms_large",
		"day_upload_to_current_ms_all", "day_builds_per_upload", "day_backfill_builds", "day_model_calls_per_upload",
		"day_xact_per_upload", "day_wal_bytes_per_upload", "day_db_cpu_ms_per_upload", "day_db_cpu_peak_cores",
		"day_idle_floor", "day_marginal_per_upload", "day_invocations", "day_uploads_not_current", "day_outdated_at_end",
		"day_wall", "day_trigger_batching", "day_live_builds_per_upload", "day_sweeper_ms_per_pass", "day_statements_per_upload_builder", "day_statements_per_upload_nudge_records"} {
		v, ok := got[name]
		if !ok {
			t.Errorf("summary has no %s", name)
			continue
		}
		if !strings.Contains(v, "0.1=") || strings.Count(v, "0.1=") != 2 {
			t.Errorf("%s: %q does not list both scales", name, v)
		}
	}
}
