package pdftext_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// BenchmarkCorpus extracts every real filing of the corpus once per
// iteration and reports pages per second.
func BenchmarkCorpus(b *testing.B) {
	var files [][]byte
	pages := 0
	for _, p := range corpus(b) {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		doc, err := pdftext.Extract(data)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
		pages += len(doc.Pages)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, f := range files {
			if _, err := pdftext.Extract(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkPages extracts generated filings of 100, 300 and 900 pages (40
// lines each): time per page should not grow with the page count.
func BenchmarkPages(b *testing.B) {
	for _, n := range []int{100, 300, 900} {
		data := pdftexttest.Pages(n, pdftexttest.FilingPage)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := pdftext.Extract(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
