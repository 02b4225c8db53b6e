package pdftext

import (
	"strings"
	"sync"

	"github.com/go-pdf/fpdf"
)

// The standard 14 fonts may be used without /Widths: a reader is expected
// to know their metrics. Guessing an average width for them puts every
// glyph after the first of a word in the wrong place, so that the gaps
// between words cannot be told from the slack of the guess (an OCR text
// layer that sets each word in Times-Roman, one Td per word, comes out as
// "CEV A" for "CEVA"). fpdf, which the samples already use to write PDFs,
// carries the core fonts' metrics; they are read from it once.

// coreMetrics maps a core font (family and style as fpdf names them) to
// its widths by character, in glyph units.
var coreMetrics = sync.OnceValue(func() map[string]map[rune]float64 {
	out := map[string]map[rune]float64{}
	for _, family := range []string{"Times", "Helvetica", "Courier"} {
		for _, style := range []string{"", "B", "I", "BI"} {
			p := fpdf.New("P", "pt", "A4", "")
			p.SetFont(family, style, 1000)
			if p.Err() {
				continue
			}
			m := map[rune]float64{}
			for c := 0x20; c < 0x100; c++ {
				r := rune(c)
				if c >= 0x80 && c < 0xA0 {
					if r = winAnsiHigh[c]; r == 0 {
						continue
					}
				}
				if c == 0x7F {
					continue
				}
				if w := p.GetStringSymbolWidth(string([]byte{byte(c)})); w > 0 {
					m[r] = float64(w)
				}
			}
			out[family+"/"+style] = m
		}
	}
	return out
})

// standardMetrics returns the widths of the standard font base names
// (Times-Roman, Helvetica-Oblique, Courier-Bold, …, and the Arial, Times
// New Roman and Courier New names that readers substitute them for), or
// nil for any other font.
func standardMetrics(base string) map[rune]float64 {
	if i := strings.IndexByte(base, '+'); i >= 0 {
		base = base[i+1:]
	}
	var family string
	switch {
	case strings.HasPrefix(base, "Times"):
		family = "Times"
	case strings.HasPrefix(base, "Helvetica"), strings.HasPrefix(base, "Arial"):
		family = "Helvetica"
	case strings.HasPrefix(base, "Courier"):
		family = "Courier"
	default:
		return nil
	}
	style := ""
	if strings.Contains(base, "Bold") {
		style += "B"
	}
	if strings.Contains(base, "Italic") || strings.Contains(base, "Oblique") {
		style += "I"
	}
	return coreMetrics()[family+"/"+style]
}
