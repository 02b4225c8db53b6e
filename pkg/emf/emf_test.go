package emf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

type line struct {
	AWS struct {
		Timestamp         int64 `json:"Timestamp"`
		CloudWatchMetrics []struct {
			Namespace  string     `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    []struct {
				Name string `json:"Name"`
				Unit string `json:"Unit"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	} `json:"_aws"`
	fields map[string]any
}

func parse(t *testing.T, out []byte) []line {
	t.Helper()
	var lines []line
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not JSON: %s: %v", sc.Bytes(), err)
		}
		if err := json.Unmarshal(sc.Bytes(), &l.fields); err != nil {
			t.Fatal(err)
		}
		// Structural checks every EMF line must pass.
		if len(l.AWS.CloudWatchMetrics) != 1 {
			t.Fatalf("CloudWatchMetrics = %+v", l.AWS.CloudWatchMetrics)
		}
		d := l.AWS.CloudWatchMetrics[0]
		if d.Namespace != "BriefRail" || len(d.Dimensions) != 1 || len(d.Dimensions[0]) != 1 || d.Dimensions[0][0] != "Rail" {
			t.Fatalf("directive = %+v", d)
		}
		if l.fields["Rail"] != "brief" {
			t.Fatalf("Rail = %v", l.fields["Rail"])
		}
		if len(d.Metrics) == 0 || len(d.Metrics) > 100 {
			t.Fatalf("%d metrics in one line", len(d.Metrics))
		}
		for _, m := range d.Metrics {
			if _, ok := l.fields[m.Name]; !ok {
				t.Fatalf("metric %s declared but has no value", m.Name)
			}
		}
		lines = append(lines, l)
	}
	return lines
}

func TestFlushStructure(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC)
	m := New(&buf, WithClock(func() time.Time { return at }))
	m.Count("Claims", 1)
	m.Count("Claims", 2)
	m.Gauge("OutboxBacklog", 7, Count)
	m.Gauge("OutboxBacklog", 4, Count)
	m.Duration("BuildDurationSeconds", 1500*time.Millisecond)
	m.Observe("BuildDurationSeconds", 2.5, Seconds)
	m.Gauge("OldestUnservedDemandSeconds", 12, Seconds)
	m.Count("NaN", math.NaN())
	m.SetProperty("request_id", "req-1")
	m.SetProperty("Rail", "other") // ignored: the dimension
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := parse(t, buf.Bytes())
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1:\n%s", len(lines), buf.String())
	}
	l := lines[0]
	if l.AWS.Timestamp != at.UnixMilli() {
		t.Errorf("Timestamp = %d", l.AWS.Timestamp)
	}
	units := map[string]string{}
	for _, md := range l.AWS.CloudWatchMetrics[0].Metrics {
		units[md.Name] = md.Unit
	}
	want := map[string]string{"Claims": "Count", "OutboxBacklog": "Count", "BuildDurationSeconds": "Seconds", "OldestUnservedDemandSeconds": "Seconds"}
	if fmt.Sprint(units) != fmt.Sprint(want) {
		t.Errorf("metrics = %v, want %v", units, want)
	}
	if l.fields["Claims"] != 3.0 || l.fields["OutboxBacklog"] != 4.0 || l.fields["request_id"] != "req-1" {
		t.Errorf("fields = %v", l.fields)
	}
	if got := fmt.Sprint(l.fields["BuildDurationSeconds"]); got != "[1.5 2.5]" {
		t.Errorf("BuildDurationSeconds = %s", got)
	}

	// Flushed: the next Flush with nothing recorded writes nothing, and properties are gone.
	buf.Reset()
	if err := m.Flush(); err != nil || buf.Len() != 0 {
		t.Errorf("empty Flush wrote %q (err %v)", buf.String(), err)
	}
	m.SetProperty("request_id", "req-2")
	if err := m.Flush(); err != nil || buf.Len() != 0 {
		t.Errorf("Flush with only properties wrote %q", buf.String())
	}
	m.Count("Claims", 1)
	m.Flush()
	if l := parse(t, buf.Bytes()); len(l) != 1 || l[0].fields["request_id"] != nil || l[0].fields["Claims"] != 1.0 {
		t.Errorf("after reset: %s", buf.String())
	}
}

func TestSplitsAt100MetricsAnd100Values(t *testing.T) {
	var buf bytes.Buffer
	m := New(&buf)
	for i := range 250 {
		m.Count(fmt.Sprintf("M%03d", i), 1)
	}
	for i := range 150 {
		m.Observe("BuildDurationSeconds", float64(i), Seconds)
	}
	m.SetProperty("request_id", "r")
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := parse(t, buf.Bytes())
	seen := map[string]int{}
	var samples int
	for _, l := range lines {
		if l.fields["request_id"] != "r" {
			t.Error("a split line lost the properties")
		}
		for _, md := range l.AWS.CloudWatchMetrics[0].Metrics {
			seen[md.Name]++
			if md.Name == "BuildDurationSeconds" {
				vals, _ := l.fields[md.Name].([]any)
				if len(vals) > 100 {
					t.Errorf("%d values in one line", len(vals))
				}
				samples += len(vals)
			}
		}
	}
	if len(seen) != 251 || samples != 150 {
		t.Errorf("%d distinct metrics, %d samples across %d lines", len(seen), samples, len(lines))
	}
	for name, n := range seen {
		if name != "BuildDurationSeconds" && n != 1 {
			t.Errorf("%s appears in %d lines", name, n)
		}
	}
	if len(lines) != 4 { // 251 metrics -> 3 lines; the 50 leftover samples -> 1 more
		t.Errorf("%d lines, want 4", len(lines))
	}
}

func TestConcurrentUse(t *testing.T) {
	var buf bytes.Buffer
	m := New(&buf)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				m.Count("EventsPublished", 1)
				m.SetProperty("request_id", "x")
			}
		}()
	}
	wg.Wait()
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	if l := parse(t, buf.Bytes()); len(l) != 1 || l[0].fields["EventsPublished"] != 8000.0 {
		t.Errorf("got %s", buf.String())
	}
}
