// Package pdftext extracts text from an uploaded PDF, one string per page.
//
// Page text keeps the page's lines: one line of text per "\n", in reading
// order (top to bottom, left to right), with an empty line between
// paragraphs; words hyphenated at line ends are left as printed. Joining
// lines into sentences, and dropping running headers, docket stamps and
// line numbers, is for the reader of the text (pkg/brief cleans it).
//
// The parser of the file structure is github.com/ledongthuc/pdf; the
// content streams are interpreted here (fonts and their ToUnicode maps,
// form XObjects, annotation appearances, rotated text), which is what makes
// real court filings extract: see docs/pdf-extraction.md.
//
// Extract never panics on malformed input. Whole-document failures are one
// of the package's error values (ErrNotPDF, ErrCorrupt, ErrEncrypted,
// ErrEmpty, and *LimitError, which matches ErrTooLarge), wrapped with
// context. A page that cannot be read does not fail the document: it comes
// back empty and Document.Note names it. Pages without a text layer, such
// as scanned images, are not an error either: they come back as empty
// strings and the note says which pages they were.
package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Default limits on the work Extract does for one input.
const (
	MaxSize     = 32 << 20  // bytes of PDF input
	MaxPages    = 2000      // pages in the page tree
	MaxDecoded  = 256 << 20 // decompressed bytes of content streams per document
	MaxPageText = 256 << 10 // bytes of extracted text kept per page
	MaxDuration = 25 * time.Second
	// MaxWork bounds the parser's work per document, counted where it is
	// done: tokens read, buffers refilled, objects resolved, dictionary
	// lookups, cross-reference entries (see third_party/pdf/HARDENING.md).
	// Within it, a document may spend workBase plus workPerPage a page:
	// real filings cost 3,000 to 11,000 units a page.
	MaxWork     = pdf.DefaultWork
	workBase    = 4 << 20
	workPerPage = 32 << 10
	// parserDecoded is the parser's own decoded-bytes bound, in units of
	// Limits.Decoded: every filter stage of every stream counts against it,
	// each time it is read.
	parserDecoded = 4
	// MaxText is the text a document may have: extraction stops once the
	// text passes it, because the record layer refuses more.
	MaxText      = rail.MaxDocumentBytes
	maxDepth     = 64   // nesting of the page tree
	headerWithin = 1024 // the %PDF- header may follow this many bytes of junk
)

// Errors returned by Extract, always wrapped with context; test with errors.Is.
var (
	ErrNotPDF  = errors.New("not a PDF")
	ErrCorrupt = errors.New("corrupt or unreadable PDF")
	// ErrEncrypted is a PDF that needs a user password to open, or whose
	// encryption cannot be read (another security handler than the
	// password-based one, an unknown revision or crypt filter, a
	// malformed encryption dictionary). A PDF encrypted for its
	// permissions only (the user password is empty) is extracted, and
	// its note says so.
	ErrEncrypted = errors.New("encrypted PDF")
	ErrEmpty     = errors.New("PDF has no pages")
	// ErrTooLarge matches every *LimitError: the input is over one of the
	// limits on size, pages, decompressed bytes or time.
	ErrTooLarge = errors.New("PDF exceeds extraction limits")
)

// Limit names one of the limits of Limits.
type Limit string

// The limits a LimitError can name.
const (
	LimitSize    Limit = "size"    // bytes of input
	LimitPages   Limit = "pages"   // pages in the page tree
	LimitDecoded Limit = "decoded" // decompressed content-stream bytes
	LimitTime    Limit = "time"    // wall time per document
	LimitGlyphs  Limit = "glyphs"  // characters shown on one page
	LimitWork    Limit = "work"    // the parser's units of work
	LimitText    Limit = "text"    // bytes of text across pages
)

// LimitError reports which limit an input exceeded. errors.Is(err,
// ErrTooLarge) holds for every LimitError; LimitTime also matches
// context.DeadlineExceeded or context.Canceled, whichever ended the work.
type LimitError struct {
	Limit Limit
	Max   int64 // the limit: bytes, pages, glyphs, or nanoseconds for LimitTime
	cause error
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitTime:
		if e.Max > 0 {
			return fmt.Sprintf("extraction took longer than %v", time.Duration(e.Max))
		}
		return "extraction stopped: " + e.cause.Error()
	case LimitSize, LimitDecoded, LimitText:
		return fmt.Sprintf("more than %d %s bytes", e.Max, map[Limit]string{LimitSize: "input", LimitDecoded: "decompressed content", LimitText: "text"}[e.Limit])
	case LimitWork:
		return fmt.Sprintf("more than %d units of parser work (tokens, lookups, objects)", e.Max)
	}
	return fmt.Sprintf("more than %d %s", e.Max, e.Limit)
}

func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }
func (e *LimitError) Unwrap() error        { return e.cause }

// Limits bound the work of one Extract call. A zero field takes the
// default.
type Limits struct {
	Size    int64         // bytes of input (MaxSize)
	Pages   int           // pages (MaxPages)
	Decoded int64         // decompressed content-stream bytes (MaxDecoded); every filter stage of every stream, as often as read, at most 4 times it
	Time    time.Duration // wall time (MaxDuration)
	Work    int64         // parser work units (MaxWork)
	Text    int64         // bytes of text across pages (MaxText)
}

func (l Limits) withDefaults() Limits {
	if l.Size <= 0 {
		l.Size = MaxSize
	}
	if l.Pages <= 0 {
		l.Pages = MaxPages
	}
	if l.Decoded <= 0 {
		l.Decoded = MaxDecoded
	}
	if l.Time <= 0 {
		l.Time = MaxDuration
	}
	if l.Work <= 0 {
		l.Work = MaxWork
	}
	if l.Text <= 0 {
		l.Text = MaxText
	}
	return l
}

// timeoutError turns a context's error into a LimitError.
func timeoutError(err error) error {
	return &LimitError{Limit: LimitTime, cause: err}
}

// Document is the text of one PDF.
type Document struct {
	// Pages holds the text of each page, in page order (index 0 is page 1).
	// Within a page, each line of text is one line ("\n"-terminated except
	// the last), in reading order: top to bottom, left to right. An empty
	// line separates paragraphs (a wider vertical gap, or a short line
	// followed by another). Runs of white space within a line are one
	// space; lines are trimmed. A page with no text layer, or whose content
	// could not be read, is "".
	Pages []string
	// Note is empty, or sentences about pages that yielded no text (no
	// text layer) or could not be read (named by number, with the reason),
	// and about a file encrypted for its permissions only (read without a
	// password).
	Note string
	// Work is the parser work the document cost (see Limits.Work).
	Work int64
}

// Extract returns the text of every page of the PDF in data, within the
// default limits.
func Extract(data []byte) (Document, error) {
	return ExtractContext(context.Background(), data, Limits{})
}

// ExtractContext is Extract with a context and limits. It never panics:
// a page whose content cannot be read is left empty and named in the note;
// whole-document failures are one of the package's error values.
func ExtractContext(ctx context.Context, data []byte, lim Limits) (doc Document, err error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.Size {
		return Document{}, fmt.Errorf("pdftext: input is %d bytes: %w", len(data), &LimitError{Limit: LimitSize, Max: lim.Size})
	}
	if len(data) == 0 {
		return Document{}, fmt.Errorf("pdftext: input is empty (0 bytes): %w", ErrNotPDF)
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Time)
	defer cancel()
	defer func() {
		if x := recover(); x != nil {
			doc = Document{}
			if a, ok := x.(abort); ok {
				err = fmt.Errorf("pdftext: %w", a.err)
				return
			}
			if se, ok := x.(*pdf.StopError); ok {
				err = fmt.Errorf("pdftext: %w", stopLimit(se, lim))
				return
			}
			err = fmt.Errorf("pdftext: parser failed: %v: %w", x, ErrCorrupt)
		}
	}()

	r, err := open(ctx, data, lim)
	if err != nil {
		var se *pdf.StopError
		if errors.As(err, &se) {
			return Document{}, fmt.Errorf("pdftext: opening: %w", stopLimit(se, lim))
		}
		return Document{}, err
	}
	// A file that opened with /Encrypt opened with the empty user password:
	// encrypted for its permissions only (an owner password), which every
	// viewer opens without asking. Files that need a user password were
	// refused by open.
	var notes []string
	if r.Trailer().Key("Encrypt").Kind() != pdf.Null {
		notes = append(notes, encryptedNote)
	}

	root := r.Trailer().Key("Root").Key("Pages")
	if root.Kind() != pdf.Dict {
		return Document{}, fmt.Errorf("pdftext: document catalog has no page tree: %w", ErrCorrupt)
	}
	w := &treeWalker{max: lim.Pages}
	if err := w.walk(root, 0); err != nil {
		return Document{}, err
	}
	if len(w.pages) == 0 {
		return Document{}, fmt.Errorf("pdftext: page tree is empty: %w", ErrEmpty)
	}

	// The work a document may cost grows with its pages: a small file
	// cannot buy the budget of a 2,000-page one.
	lim.Work = min(lim.Work, workBase+workPerPage*int64(len(w.pages)))
	r.SetWorkLimit(lim.Work)
	b := &budget{ctx: ctx, left: lim.Decoded, max: lim.Decoded}
	var sc scratch
	doc.Pages = make([]string, len(w.pages))
	var blank, unmapped []int
	var unmappedEnc string
	var failed []pageError
	var total int64
	for i, p := range w.pages {
		if err := ctx.Err(); err != nil {
			return Document{}, fmt.Errorf("pdftext: page %d: %w", i+1, limitTime(err, lim))
		}
		text, err := pageText(ctx, b, p, &sc)
		var le *LimitError
		switch {
		case errors.As(err, &le) && le.Limit != LimitGlyphs:
			if le.Limit == LimitTime {
				err = limitTime(le.cause, lim)
			}
			if le.Limit == LimitWork || le.Limit == LimitTime || le.Limit == LimitDecoded && le.Max == 0 {
				le.Max = map[Limit]int64{LimitWork: lim.Work, LimitTime: int64(lim.Time), LimitDecoded: lim.Decoded}[le.Limit]
			}
			return Document{}, fmt.Errorf("pdftext: page %d: %w", i+1, err)
		case err != nil:
			failed = append(failed, pageError{i + 1, err})
		case text == "" && sc.unmapped > 0:
			unmapped = append(unmapped, i+1)
			if unmappedEnc == "" {
				unmappedEnc = sc.unmappedEnc
			}
		case text == "":
			blank = append(blank, i+1)
		}
		doc.Pages[i] = text
		if total += int64(len(text)); total > lim.Text {
			return Document{}, fmt.Errorf("pdftext: page %d: %w", i+1, &LimitError{Limit: LimitText, Max: lim.Text})
		}
	}
	if len(failed) == len(doc.Pages) {
		return Document{}, fmt.Errorf("pdftext: no page could be read: page %d: %v: %w", failed[0].page, failed[0].err, ErrCorrupt)
	}
	doc.Note = joinNotes(append(notes, blankNote(blank, len(doc.Pages)), unmappedNote(unmapped, unmappedEnc), failedNote(failed))...)
	doc.Work = r.Spent()
	return doc, nil
}

func limitTime(cause error, lim Limits) error {
	return &LimitError{Limit: LimitTime, Max: int64(lim.Time), cause: cause}
}

// stopLimit is the LimitError for the parser's stop: its work or
// decoded-bytes budget, or the context (deadline or cancellation).
func stopLimit(se *pdf.StopError, lim Limits) error {
	if errors.Is(se.Err, pdf.ErrWorkLimit) {
		return &LimitError{Limit: LimitWork, Max: lim.Work, cause: se}
	}
	if errors.Is(se.Err, pdf.ErrDecodedLimit) {
		return &LimitError{Limit: LimitDecoded, Max: lim.Decoded, cause: se}
	}
	return limitTime(se.Err, lim)
}

// open finds the %PDF- header within the first 1,024 bytes and opens the
// file. Bytes before the header are ignored; cross-reference offsets are
// taken as counted from the header (what producers that prepend bytes
// mean) and, failing that, from the start of the input. A missing or
// misplaced %%EOF marker and a header version the parser does not know
// (such as PDF 2.0) are tolerated.
func open(ctx context.Context, data []byte, lim Limits) (*pdf.Reader, error) {
	at := bytes.Index(data[:min(len(data), headerWithin+len("%PDF-"))], []byte("%PDF-"))
	if at < 0 {
		what := "does not contain %PDF- in its first 1024 bytes"
		if looksLikeHTML(data) {
			what = "is HTML, not a PDF"
		}
		return nil, fmt.Errorf("pdftext: input %s: %w", what, ErrNotPDF)
	}
	r, err := openAt(ctx, fixTail(fixHeader(data[at:])), lim)
	if err != nil && at >= 10 {
		// Offsets counted from the start of the input: keep the junk's
		// length but turn it into a header line and a comment.
		d := bytes.Clone(data)
		copy(d, "%PDF-1.7\n%")
		for i := 10; i < at; i++ {
			if d[i] == '\r' || d[i] == '\n' {
				d[i] = ' '
			}
		}
		if r2, err2 := openAt(ctx, fixTail(d), lim); err2 == nil {
			return r2, nil
		}
	}
	return r, err
}

func openAt(ctx context.Context, data []byte, lim Limits) (r *pdf.Reader, err error) {
	defer func() {
		if x := recover(); x != nil {
			r, err = nil, fmt.Errorf("pdftext: parser failed: %v: %w", x, ErrCorrupt)
		}
	}()
	r, err = pdf.NewReaderContext(ctx, bytes.NewReader(data), int64(len(data)), lim.Work)
	if r != nil {
		// The parser counts the bytes every filter stage decodes (object
		// streams, and the inner stages of a filter chain, which the
		// budget of content streams never sees); content streams are read
		// twice, counted and then interpreted, hence the headroom.
		r.SetDecodedLimit(parserDecoded * lim.Decoded)
	}
	var se *pdf.StopError
	if errors.As(err, &se) {
		return nil, err
	}
	var ee *pdf.EncryptionError
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, fmt.Errorf("pdftext: the PDF needs a user password to open (%v): %w", err, ErrEncrypted)
	case errors.As(err, &ee):
		return nil, fmt.Errorf("pdftext: the PDF's encryption cannot be read (%v): %w", err, ErrEncrypted)
	case err != nil:
		return nil, fmt.Errorf("pdftext: %v: %w", err, ErrCorrupt)
	}
	return r, nil
}

// fixHeader gives the parser the header line it insists on
// ("%PDF-1.0" to "%PDF-1.7" then an end of line), copying data only when
// the header differs.
func fixHeader(data []byte) []byte {
	if len(data) < 9 {
		return data
	}
	if bytes.HasPrefix(data, []byte("%PDF-1.")) && data[7] >= '0' && data[7] <= '7' && (data[8] == '\r' || data[8] == '\n') {
		return data
	}
	d := bytes.Clone(data)
	copy(d, "%PDF-1.7\n")
	return d
}

// fixTail makes the input end with %%EOF: bytes after the last marker are
// cut, and a file without one gets it appended.
func fixTail(data []byte) []byte {
	tail := bytes.TrimRight(data[max(0, len(data)-100):], "\r\n\t \x00")
	if bytes.HasSuffix(tail, []byte("%%EOF")) {
		return data
	}
	if i := bytes.LastIndex(data, []byte("%%EOF")); i >= 0 && bytes.Contains(data[max(0, i-1024):i], []byte("startxref")) {
		return data[:i+len("%%EOF")]
	}
	return append(bytes.Clone(data), "\n%%EOF\n"...)
}

func looksLikeHTML(data []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(data[:min(len(data), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) || bytes.Contains(head, []byte("<head")) || bytes.Contains(head, []byte("<body"))
}

// treeWalker collects leaf pages from the page tree, in order, refusing
// cycles (by bounding depth and visits) and documents over max pages.
type treeWalker struct {
	pages  []pdf.Value
	visits int
	max    int
}

func (w *treeWalker) walk(node pdf.Value, depth int) error {
	w.visits++
	if depth > maxDepth || w.visits > 4*w.max+64 {
		return fmt.Errorf("pdftext: page tree too deep or cyclic: %w", ErrCorrupt)
	}
	switch {
	case node.Key("Type").Name() == "Page":
		if len(w.pages) >= w.max {
			return fmt.Errorf("pdftext: page tree: %w", &LimitError{Limit: LimitPages, Max: int64(w.max)})
		}
		w.pages = append(w.pages, node)
	case node.Key("Kids").Kind() == pdf.Array:
		kids := node.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			if err := w.walk(kids.Index(i), depth+1); err != nil {
				return err
			}
		}
	case node.Key("Contents").Kind() != pdf.Null && node.Key("Type").Kind() == pdf.Null:
		// A leaf without /Type that has content: a page all the same.
		if len(w.pages) >= w.max {
			return fmt.Errorf("pdftext: page tree: %w", &LimitError{Limit: LimitPages, Max: int64(w.max)})
		}
		w.pages = append(w.pages, node)
	}
	return nil
}

// pageError is a page whose content could not be read.
type pageError struct {
	page int
	err  error
}

// pageText lays out the glyphs of one page as lines and paragraphs. A panic
// in the parser fails this page only; an abort (a document limit) is
// returned as its error.
func pageText(ctx context.Context, b *budget, p pdf.Value, sc *scratch) (text string, err error) {
	in := &interp{ctx: ctx, b: b, glyphs: sc.glyphs[:0]}
	defer func() { sc.glyphs, sc.unmapped, sc.unmappedEnc = in.glyphs[:0], in.unmapped, in.unmappedEnc }()
	defer func() {
		if x := recover(); x != nil {
			if a, ok := x.(abort); ok {
				text, err = "", a.err
				return
			}
			if se, ok := x.(*pdf.StopError); ok {
				text, err = "", stopLimit(se, Limits{})
				return
			}
			text, err = "", fmt.Errorf("content stream: %v", x)
		}
	}()
	return layout(in.page(p), sc), nil
}

// scratch holds buffers reused from page to page of one document.
type scratch struct {
	glyphs, byDir []glyph
	// The last page's glyphs that mapped to no text, and one such font's
	// encoding (interp.unmapped).
	unmapped    int
	unmappedEnc string
}

// run is a stretch of glyphs shown consecutively on one baseline.
type run struct {
	x, y, size float64
	end        float64 // x after the last glyph
	exact      bool    // glyph widths are known, so gaps can be measured
	text       strings.Builder
	space      bool    // a space character is not yet written (see layoutDir)
	spaceX     float64 // where it starts
}

type line struct {
	y, size float64
	runs    []*run
}

// Thresholds, in units of the font size.
const (
	wordGap      = 0.15 // a gap wider than this between glyphs is a space
	baselineSlop = 0.3  // glyphs this close vertically share a line
)

// layout lays out a page's glyphs: each writing direction separately, the
// page's main direction first.
func layout(glyphs []glyph, sc *scratch) string {
	glyphs = dropOverprints(glyphs)
	var count [4]int
	dirs := make([]uint8, len(glyphs))
	dir := 0
	for i, g := range glyphs {
		dx, dy := g.ex-g.x, g.ey-g.y
		switch {
		case math.Abs(dx) < 1e-6 && math.Abs(dy) < 1e-6:
			// zero advance: keep the direction of the glyph before
		case math.Abs(dx) >= math.Abs(dy) && dx > 0:
			dir = 0
		case math.Abs(dx) >= math.Abs(dy):
			dir = 2
		case dy > 0:
			dir = 1
		default:
			dir = 3
		}
		dirs[i] = uint8(dir)
		count[dir]++
	}
	// Group the glyphs by direction (stable), rotated into a frame where
	// their text runs left to right.
	sc.byDir = slices.Grow(sc.byDir[:0], len(glyphs))[:len(glyphs)]
	var byDir [4][]glyph
	at := 0
	for d := range byDir {
		byDir[d] = sc.byDir[at : at : at+count[d]]
		at += count[d]
	}
	for i, g := range glyphs {
		d := dirs[i]
		byDir[d] = append(byDir[d], rotate(g, int(d)))
	}
	order := []int{0, 1, 2, 3}
	sort.SliceStable(order, func(i, j int) bool { return len(byDir[order[i]]) > len(byDir[order[j]]) })
	var parts []string
	for _, d := range order {
		if s := layoutDir(byDir[d]); s != "" {
			parts = append(parts, s)
		}
	}
	s := strings.Join(parts, "\n\n")
	if len(s) > MaxPageText {
		s = strings.TrimSpace(strings.ToValidUTF8(s[:MaxPageText], ""))
	}
	return s
}

// overprintGrid is the size, in points, of the cells in which a glyph drawn
// again on top of itself is looked for.
const overprintGrid = 0.1

// dropOverprints removes every glyph that repeats an earlier one of the
// page: the same text, not a space, drawn at the same origin (within a tenth of a
// point). A producer that draws a block twice, for bold or by running the
// same content twice (a pleading paper's whole column of line numbers, "1"
// "6" and again "1" "6"), shows it once; read twice it doubles the text
// ("1616"). The glyphs are filtered in place and in order.
func dropOverprints(glyphs []glyph) []glyph {
	type cell struct {
		s    string
		x, y int64
	}
	seen := make(map[cell]struct{}, len(glyphs))
	out := glyphs[:0]
	for _, g := range glyphs {
		if strings.TrimSpace(g.s) == "" {
			out = append(out, g)
			continue
		}
		x, y := int64(math.Round(g.x/overprintGrid)), int64(math.Round(g.y/overprintGrid))
		dup := false
		for dx := int64(-1); dx <= 1 && !dup; dx++ {
			for dy := int64(-1); dy <= 1; dy++ {
				if _, ok := seen[cell{g.s, x + dx, y + dy}]; ok {
					dup = true
					break
				}
			}
		}
		if dup {
			continue
		}
		seen[cell{g.s, x, y}] = struct{}{}
		out = append(out, g)
	}
	return out
}

// rotate turns a glyph of direction dir into the frame where its text runs
// left to right.
func rotate(g glyph, dir int) glyph {
	f := func(x, y float64) (float64, float64) {
		switch dir {
		case 1:
			return y, -x
		case 2:
			return -x, -y
		case 3:
			return -y, x
		}
		return x, y
	}
	g.x, g.y = f(g.x, g.y)
	g.ex, g.ey = f(g.ex, g.ey)
	return g
}

// layoutDir groups glyphs into runs, runs into lines (top to bottom, left
// to right), and marks paragraph breaks with an empty line.
func layoutDir(glyphs []glyph) string {
	var runs []*run
	var cur *run
	total := 0
	for _, g := range glyphs {
		size := math.Max(g.size, 1)
		if total > MaxPageText {
			break
		}
		total += len(g.s)
		if cur != nil && math.Abs(g.y-cur.y) <= baselineSlop*size && g.x >= cur.end-0.5*size {
			if cur.space {
				// A space character after which the next glyph is
				// drawn back over the glyph before the space leaves no
				// gap on the page and separates nothing (an OCR text
				// layer's word boxes, "CEV" " " "A"). Only where the
				// widths are known: a guessed width cannot tell.
				cur.space = false
				if !(g.exact && g.x < cur.spaceX) {
					cur.text.WriteByte(' ')
				}
			}
			if (cur.exact && g.exact && g.x-cur.end > wordGap*size) || (!g.exact && g.x-cur.end > 0.5*size) {
				cur.text.WriteByte(' ')
			}
		} else {
			if cur != nil && cur.space {
				cur.text.WriteByte(' ')
				cur.space = false
			}
			cur = &run{x: g.x, y: g.y, size: size, exact: true}
			runs = append(runs, cur)
		}
		cur.end = math.Max(g.ex, g.x)
		cur.exact = cur.exact && g.exact
		if g.s == " " && g.exact && cur.text.Len() > 0 {
			cur.space, cur.spaceX = true, g.x
			continue
		}
		cur.text.WriteString(g.s)
	}
	if cur != nil && cur.space {
		cur.text.WriteByte(' ')
	}

	// Lines: sort runs top to bottom (stable, so equal positions keep stream
	// order), then merge runs whose baselines are within a fraction of the
	// font size.
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].y > runs[j].y })
	var lines []*line
	for _, r := range runs {
		if n := len(lines); n > 0 && math.Abs(lines[n-1].y-r.y) <= baselineSlop*math.Max(lines[n-1].size, r.size) {
			lines[n-1].runs = append(lines[n-1].runs, r)
			lines[n-1].size = math.Max(lines[n-1].size, r.size)
			continue
		}
		lines = append(lines, &line{y: r.y, size: r.size, runs: []*run{r}})
	}

	// Paragraphs: a line continues the paragraph of the line before when
	// that line is "full" (close to the longest line on the page, so it was
	// wrapped) and the gap between them is ordinary line spacing. Anything
	// else (short lines such as headings, caption and signature lines, or a
	// wide gap) starts a new paragraph.
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
				if !prev.exact || !r.exact || r.x-prev.end > wordGap*r.size {
					b.WriteByte(' ')
				}
			}
			b.WriteString(r.text.String())
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
				out.WriteByte('\n')
			} else {
				out.WriteString("\n\n")
			}
		}
		out.WriteString(l.s)
		if out.Len() > MaxPageText {
			break
		}
	}
	return out.String()
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

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	var ns []string
	for _, n := range notes {
		if n != "" {
			ns = append(ns, n)
		}
	}
	return strings.Join(ns, "; ")
}

// encryptedNote is the note of a file encrypted for its permissions only.
const encryptedNote = "the file is encrypted with permissions only (an owner password, no user password) and was read without a password"

// failedNote names the pages whose content could not be read.
func failedNote(failed []pageError) string {
	if len(failed) == 0 {
		return ""
	}
	pages := make([]int, len(failed))
	for i, f := range failed {
		pages[i] = f.page
	}
	what := "page " + ranges(pages)
	if len(pages) > 1 {
		what = "pages " + ranges(pages)
	}
	reason := failed[0].err.Error()
	if len(reason) > 120 {
		reason = strings.ToValidUTF8(reason[:120], "") + "…"
	}
	return "could not read the content of " + what + " (" + reason + "); the other pages were extracted"
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

// unmappedNote describes pages (1-based) whose text is drawn in fonts
// that give no Unicode for their characters: the glyphs are there, but
// which characters they are is known only to the font's glyph programs.
// Unlike a scan, OCR of the page image is the only way to read them.
func unmappedNote(pages []int, enc string) string {
	if len(pages) == 0 {
		return ""
	}
	what := "page " + ranges(pages) + " shows"
	if len(pages) > 1 {
		what = "pages " + ranges(pages) + " show"
	}
	font := "a font"
	if enc != "" {
		font = "a font with /Encoding " + enc
	}
	return what + " text in " + font + " and no /ToUnicode map, so its characters cannot be read without OCR"
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
