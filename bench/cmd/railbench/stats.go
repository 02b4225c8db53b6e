package main

import (
	"math"
	"slices"
	"time"
)

// median of xs (NaN for none).
func median(xs []float64) float64 { return quantile(xs, 0.5) }

// quantile by linear interpolation between closest ranks.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func durationsMS(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

func round(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// Series is one repeated measurement: every repetition's value and their
// median.
type Series struct {
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
}

func series(unit string, xs []float64) Series {
	s := Series{Unit: unit, Values: make([]float64, len(xs))}
	for i, x := range xs {
		s.Values[i] = round(x, 3)
	}
	if len(xs) > 0 {
		s.Median = round(median(xs), 3)
		s.Min = round(slices.Min(xs), 3)
		s.Max = round(slices.Max(xs), 3)
	}
	return s
}
