package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/worker"
)

// BenchmarkWorkerOverhead extracts a real 2-page order in this process,
// in a warm worker and in a cold one (started per document), and reports
// each as ms/doc; make bench prints the summary (worker-overhead-*).
func BenchmarkWorkerOverhead(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "filings", "ca1-12-2209-order.pdf"))
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, start time.Time) {
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/doc")
	}
	b.Run("in-process", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if _, err := pdftext.Extract(data); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start)
	})
	b.Run("warm", func(b *testing.B) {
		p := &worker.Pool{Reuse: 1 << 30}
		defer p.Close()
		if _, err := p.Extract(context.Background(), data, pdftext.Limits{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if _, err := p.Extract(context.Background(), data, pdftext.Limits{}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start)
	})
	b.Run("cold", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			p := &worker.Pool{}
			if _, err := p.Extract(context.Background(), data, pdftext.Limits{}); err != nil {
				b.Fatal(err)
			}
			p.Close()
		}
		report(b, start)
	})
}
