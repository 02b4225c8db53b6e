// Package pdftext extracts text from an uploaded PDF, one string per page.
//
// Extract never panics on malformed input: every failure is reported as one of
// the package's error values (ErrNotPDF, ErrCorrupt, ErrEncrypted, ErrEmpty,
// ErrTooLarge), wrapped with context. Pages without a text layer, such as
// scanned images, are not an error: they come back as empty strings and
// Document.Note says which pages they were.
package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Limits on the work Extract does for one input.
const (
	MaxSize     = 32 << 20  // bytes of PDF input
	MaxPages    = 2000      // pages in the page tree
	MaxPageText = 256 << 10 // bytes of extracted text kept per page
	maxDepth    = 64        // nesting of the page tree
)

// Errors returned by Extract, always wrapped with context; test with errors.Is.
var (
	ErrNotPDF    = errors.New("not a PDF")
	ErrCorrupt   = errors.New("corrupt or unreadable PDF")
	ErrEncrypted = errors.New("encrypted PDF")
	ErrEmpty     = errors.New("PDF has no pages")
	ErrTooLarge  = errors.New("PDF exceeds extraction limits")
)

// Document is the text of one PDF.
type Document struct {
	// Pages holds the normalised text of each page, in page order (index 0 is
	// page 1). Paragraphs are separated by "\n"; lines within a paragraph are
	// joined by a single space. A page with no text layer is "".
	Pages []string
	// Note is empty, or a sentence about pages that yielded no text.
	Note string
}

// Extract returns the text of every page of the PDF in data.
func Extract(data []byte) (doc Document, err error) {
	if len(data) > MaxSize {
		return Document{}, fmt.Errorf("pdftext: input is %d bytes, limit %d: %w", len(data), MaxSize, ErrTooLarge)
	}
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return Document{}, fmt.Errorf("pdftext: input does not start with %%PDF-: %w", ErrNotPDF)
	}
	defer func() {
		if x := recover(); x != nil {
			doc = Document{}
			err = fmt.Errorf("pdftext: parser failed: %v: %w", x, ErrCorrupt)
		}
	}()

	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(strings.ToLower(err.Error()), "encrypt") {
			return Document{}, fmt.Errorf("pdftext: %v: %w", err, ErrEncrypted)
		}
		return Document{}, fmt.Errorf("pdftext: %v: %w", err, ErrCorrupt)
	}
	// The reader silently decrypts files whose user password is empty; the
	// rail still treats every encrypted upload as encrypted.
	if r.Trailer().Key("Encrypt").Kind() != pdf.Null {
		return Document{}, fmt.Errorf("pdftext: trailer has an /Encrypt dictionary: %w", ErrEncrypted)
	}

	root := r.Trailer().Key("Root").Key("Pages")
	if root.Kind() != pdf.Dict {
		return Document{}, fmt.Errorf("pdftext: document catalog has no page tree: %w", ErrCorrupt)
	}
	w := &treeWalker{}
	if err := w.walk(root, 0); err != nil {
		return Document{}, err
	}
	if len(w.pages) == 0 {
		return Document{}, fmt.Errorf("pdftext: page tree is empty: %w", ErrEmpty)
	}

	doc.Pages = make([]string, len(w.pages))
	var blank []int
	for i, p := range w.pages {
		text, err := pageText(p)
		if err != nil {
			return Document{}, fmt.Errorf("pdftext: page %d: %v: %w", i+1, err, ErrCorrupt)
		}
		doc.Pages[i] = text
		if text == "" {
			blank = append(blank, i+1)
		}
	}
	doc.Note = blankNote(blank, len(doc.Pages))
	return doc, nil
}

// treeWalker collects leaf pages from the page tree, in order, refusing
// cycles (by bounding depth and visits) and documents over MaxPages.
type treeWalker struct {
	pages  []pdf.Page
	visits int
}

func (w *treeWalker) walk(node pdf.Value, depth int) error {
	w.visits++
	if depth > maxDepth || w.visits > 4*MaxPages+64 {
		return fmt.Errorf("pdftext: page tree too deep or cyclic: %w", ErrCorrupt)
	}
	switch {
	case node.Key("Type").Name() == "Page":
		if len(w.pages) >= MaxPages {
			return fmt.Errorf("pdftext: more than %d pages: %w", MaxPages, ErrTooLarge)
		}
		w.pages = append(w.pages, pdf.Page{V: node})
	case node.Key("Kids").Kind() == pdf.Array:
		kids := node.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			if err := w.walk(kids.Index(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// pageText lays out the glyphs of one page as lines and paragraphs.
func pageText(p pdf.Page) (text string, err error) {
	defer func() {
		if x := recover(); x != nil {
			text, err = "", fmt.Errorf("content stream: %v", x)
		}
	}()
	if p.V.Key("Contents").Kind() == pdf.Null {
		return "", nil
	}
	return layout(p.Content().Text), nil
}

// run is a stretch of glyphs shown consecutively on one baseline.
type run struct {
	x, y, size float64
	end        float64 // x after the last glyph, when glyph widths are known
	widthsOK   bool
	text       strings.Builder
}

type line struct {
	y, size float64
	runs    []*run
}

// layout groups glyphs into runs, runs into lines (top to bottom, left to
// right), and lines into paragraphs separated by wider vertical gaps.
func layout(glyphs []pdf.Text) string {
	var runs []*run
	var cur *run
	for _, g := range glyphs {
		if !finite(g.X) || !finite(g.Y) || !finite(g.W) || !finite(g.FontSize) {
			continue
		}
		if g.S == "\n" || g.S == "\r" {
			cur = nil
			continue
		}
		size := math.Abs(g.FontSize)
		if size < 1 {
			size = 1
		}
		if cur != nil && math.Abs(g.Y-cur.y) <= 0.3*size && g.X >= cur.x-0.5 {
			if cur.widthsOK && g.X-cur.end > 0.2*size {
				cur.text.WriteByte(' ')
			}
			if cur.widthsOK && g.X < cur.end-size {
				cur = nil // jumped back along the line: a separate run
			}
		} else {
			cur = nil
		}
		if cur == nil {
			cur = &run{x: g.X, y: g.Y, size: size, end: g.X, widthsOK: true}
			runs = append(runs, cur)
		}
		cur.text.WriteString(g.S)
		if g.W > 0 {
			cur.end = g.X + g.W
		} else {
			cur.widthsOK = false
		}
		if cur.text.Len() > MaxPageText {
			break
		}
	}

	// Lines: sort runs top to bottom (stable, so equal positions keep stream
	// order), then merge runs whose baselines are within a fraction of the
	// font size.
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].y > runs[j].y })
	var lines []*line
	for _, r := range runs {
		if n := len(lines); n > 0 && math.Abs(lines[n-1].y-r.y) <= 0.3*math.Max(lines[n-1].size, r.size) {
			lines[n-1].runs = append(lines[n-1].runs, r)
			lines[n-1].size = math.Max(lines[n-1].size, r.size)
			continue
		}
		lines = append(lines, &line{y: r.y, size: r.size, runs: []*run{r}})
	}

	// Paragraphs: a line continues the previous one when the previous line is
	// "full" (close to the longest line on the page, so it was wrapped) and
	// the gap between them is ordinary line spacing. Anything else (short
	// lines such as headings, caption and signature lines, or a wide gap)
	// starts a new paragraph.
	type textLine struct {
		s       string
		y, size float64
		n       int
	}
	var tl []textLine
	maxChars := 0
	var gaps []float64
	for _, l := range lines {
		sort.SliceStable(l.runs, func(i, j int) bool { return l.runs[i].x < l.runs[j].x })
		var b strings.Builder
		for i, r := range l.runs {
			if i > 0 {
				prev := l.runs[i-1]
				if !prev.widthsOK || !r.widthsOK || r.x-prev.end > 0.2*r.size {
					b.WriteByte(' ')
				}
			}
			b.WriteString(r.text.String())
			if b.Len() > MaxPageText {
				break
			}
		}
		s := normalise(b.String())
		if s == "" {
			continue
		}
		n := utf8.RuneCountInString(s)
		maxChars = max(maxChars, n)
		if k := len(tl); k > 0 {
			gaps = append(gaps, (tl[k-1].y-l.y)/math.Max(tl[k-1].size, l.size))
		}
		tl = append(tl, textLine{s: s, y: l.y, size: l.size, n: n})
	}
	// A page whose closest lines are well over single spacing apart is double
	// spaced; allow twice the gap within a paragraph there.
	spacing := 1.45
	if len(gaps) > 0 && slices.Min(gaps) > 1.7 {
		spacing = 2.9
	}
	var out strings.Builder
	for i, l := range tl {
		if i > 0 {
			prev := tl[i-1]
			gap := prev.y - l.y
			full := float64(prev.n) >= 0.7*float64(maxChars)
			if full && gap > 0 && gap <= spacing*math.Max(prev.size, l.size) {
				out.WriteByte(' ')
			} else {
				out.WriteByte('\n')
			}
		}
		out.WriteString(l.s)
		if out.Len() > MaxPageText {
			break
		}
	}
	s := out.String()
	if len(s) > MaxPageText {
		s = strings.ToValidUTF8(s[:MaxPageText], "")
	}
	return s
}

// normalise makes text valid UTF-8, turns control characters and any run of
// white space into one space, and trims the ends.
func normalise(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError || r == '\u00a0' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// blankNote describes pages (1-based) that yielded no text.
func blankNote(blank []int, total int) string {
	switch {
	case len(blank) == 0:
		return ""
	case len(blank) == total:
		return "no text layer on the whole document (" + plural(total, "page") + "); it may be a scan that needs OCR"
	case len(blank) == 1:
		return "no text layer on page " + strconv.Itoa(blank[0]) + "; it may be a scanned image"
	}
	return "no text layer on pages " + ranges(blank) + "; they may be scanned images"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// ranges renders sorted page numbers compactly: 2, 4-6, 9.
func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ns[i]))
		} else {
			parts = append(parts, strconv.Itoa(ns[i])+"-"+strconv.Itoa(ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
