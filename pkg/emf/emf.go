// Package emf writes CloudWatch Embedded Metric Format (EMF) log lines: one JSON object per line
// that CloudWatch Logs turns into metrics in namespace BriefRail with the dimension Rail=brief.
//
//	m := emf.New(os.Stdout)
//	m.Count("Claims", 1)
//	m.Gauge("OutboxBacklog", 12, emf.Count)
//	m.Observe("BuildDurationSeconds", 3.2, emf.Seconds)
//	m.SetProperty("request_id", lc.AwsRequestID)
//	m.Flush()
//
// Counters add up until the next Flush, gauges keep their last value, observations keep every
// value (CloudWatch computes percentiles from them). A Logger is safe for concurrent use.
package emf

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"sync"
	"time"
)

// Namespace, DimensionKey and DimensionValue are where the rail's metrics live.
const (
	Namespace      = "BriefRail"
	DimensionKey   = "Rail"
	DimensionValue = "brief"
)

// EMF limits: metrics per metric directive and values per metric.
const (
	MaxMetricsPerLine = 100
	MaxValuesPerLine  = 100
)

// Unit is a CloudWatch metric unit.
type Unit string

// Units the rail uses.
const (
	Count        Unit = "Count"
	Seconds      Unit = "Seconds"
	Milliseconds Unit = "Milliseconds"
	None         Unit = "None"
)

type kind int

const (
	counter kind = iota
	gauge
	observation
)

type metric struct {
	name   string
	unit   Unit
	kind   kind
	values []float64 // counter and gauge: exactly one
}

// Logger accumulates metrics and writes them as EMF lines on Flush.
type Logger struct {
	mu    sync.Mutex
	w     io.Writer
	now   func() time.Time
	order []string // metric names in first-use order: stable output
	byKey map[string]*metric
	props map[string]any
}

// Option configures a Logger.
type Option func(*Logger)

// WithClock sets the clock used for the EMF timestamp (tests).
func WithClock(now func() time.Time) Option { return func(l *Logger) { l.now = now } }

// New returns a Logger writing to w (in Lambda: os.Stdout).
func New(w io.Writer, opts ...Option) *Logger {
	l := &Logger{w: w, now: time.Now, byKey: map[string]*metric{}, props: map[string]any{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Count adds n to the counter name (unit Count).
func (l *Logger) Count(name string, n float64) {
	l.record(name, Count, counter, n)
}

// Gauge sets name to v; the last value before Flush wins.
func (l *Logger) Gauge(name string, v float64, unit Unit) {
	l.record(name, unit, gauge, v)
}

// Observe records one sample of name (for example one build's duration); every sample is kept.
func (l *Logger) Observe(name string, v float64, unit Unit) {
	l.record(name, unit, observation, v)
}

// Duration records d as an observation in seconds.
func (l *Logger) Duration(name string, d time.Duration) {
	l.Observe(name, d.Seconds(), Seconds)
}

// SetProperty adds a non-metric field to the next lines (request id, firm, matter, token).
// Properties are cleared by Flush. Keys used by metrics or the dimension are ignored.
func (l *Logger) SetProperty(key string, v any) {
	if key == "" || key == "_aws" || key == DimensionKey {
		return
	}
	l.mu.Lock()
	l.props[key] = v
	l.mu.Unlock()
}

func (l *Logger) record(name string, unit Unit, k kind, v float64) {
	if name == "" || name == "_aws" || name == DimensionKey || math.IsNaN(v) || math.IsInf(v, 0) {
		return // not representable in EMF / JSON
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.byKey[name]
	if !ok {
		m = &metric{name: name, unit: unit, kind: k}
		l.byKey[name] = m
		l.order = append(l.order, name)
	}
	m.unit, m.kind = unit, k
	switch {
	case k == observation:
		m.values = append(m.values, v)
	case k == counter && len(m.values) == 1:
		m.values[0] += v
	default:
		m.values = []float64{v}
	}
}

// Flush writes the accumulated metrics as EMF lines and resets the Logger. It writes nothing when
// no metric was recorded. A line carries at most MaxMetricsPerLine metrics and MaxValuesPerLine
// values per metric; more make more lines.
func (l *Logger) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.order) == 0 {
		l.props = map[string]any{}
		return nil
	}
	ts := l.now().UnixMilli()
	var errs []error
	for round := 0; ; round++ {
		// round r carries values [r*100, (r+1)*100) of each metric that still has some.
		var batch []*metric
		for _, name := range l.order {
			m := l.byKey[name]
			if len(m.values) > round*MaxValuesPerLine {
				batch = append(batch, m)
			}
		}
		if len(batch) == 0 {
			break
		}
		for start := 0; start < len(batch); start += MaxMetricsPerLine {
			end := min(start+MaxMetricsPerLine, len(batch))
			if err := l.writeLine(ts, batch[start:end], round); err != nil {
				errs = append(errs, err)
			}
		}
	}
	l.order, l.byKey, l.props = nil, map[string]*metric{}, map[string]any{}
	return errors.Join(errs...)
}

type metricDef struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit,omitempty"`
}

type directive struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []metricDef `json:"Metrics"`
}

type awsMeta struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

func (l *Logger) writeLine(ts int64, ms []*metric, round int) error {
	line := make(map[string]any, len(l.props)+len(ms)+2)
	for k, v := range l.props {
		line[k] = v
	}
	d := directive{Namespace: Namespace, Dimensions: [][]string{{DimensionKey}}}
	for _, m := range ms {
		vals := m.values[round*MaxValuesPerLine : min((round+1)*MaxValuesPerLine, len(m.values))]
		d.Metrics = append(d.Metrics, metricDef{Name: m.name, Unit: m.unit})
		if len(vals) == 1 {
			line[m.name] = vals[0]
		} else {
			line[m.name] = vals
		}
	}
	line[DimensionKey] = DimensionValue
	line["_aws"] = awsMeta{Timestamp: ts, CloudWatchMetrics: []directive{d}}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = l.w.Write(append(b, '\n')) // one Write per line: lines never interleave
	return err
}
