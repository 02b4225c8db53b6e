package pdftext

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/ledongthuc/pdf"
)

// matrix is a PDF transformation matrix [a b c d e f].
type matrix [6]float64

var ident = matrix{1, 0, 0, 1, 0, 0}

// mul returns m×n: m applied first, then n.
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m matrix) finite() bool {
	for _, f := range m {
		if !finite(f) {
			return false
		}
	}
	return true
}

func translate(x, y float64) matrix { return matrix{1, 0, 0, 1, x, y} }

// glyph is one shown character code with its text, in device space.
type glyph struct {
	x, y   float64 // origin
	ex, ey float64 // origin of the next glyph (after the advance)
	size   float64 // font size on the page
	s      string
	exact  bool // the advance comes from the font's widths
}

type gstate struct {
	ctm, tm, tlm       matrix
	font               *font
	fs, tc, tw, th, tl float64
	rise               float64
}

// abort carries an error out of pdf.Interpret's callback.
type abort struct{ err error }

// interp runs the content streams of one page.
type interp struct {
	ctx    context.Context
	b      *budget
	glyphs []glyph
	ops    int
	forms  int // form XObjects run on this page
	// unmapped counts the glyphs shown whose code maps to no text (a
	// composite font without /ToUnicode whose encoding is no Unicode
	// CMap); unmappedEnc names one such font's encoding.
	unmapped    int
	unmappedEnc string
}

const (
	maxFormDepth   = 8       // nesting of form XObjects
	maxPageGlyphs  = 1 << 18 // glyphs kept per page
	maxGStateDepth = 256     // q nesting
	// maxFormRuns bounds the form XObjects run per page: nesting is at
	// most maxFormDepth deep, but a form that draws itself n times would
	// otherwise run n^8 times.
	maxFormRuns = 4096
)

// page runs a page's content stream and returns its glyphs.
func (in *interp) page(p pdf.Value) []glyph {
	ctm := ident
	switch ((p.Key("Rotate").Int64()%360 + 360) % 360) / 90 {
	case 1:
		ctm = matrix{0, -1, 1, 0, 0, 0}
	case 2:
		ctm = matrix{-1, 0, 0, -1, 0, 0}
	case 3:
		ctm = matrix{0, 1, -1, 0, 0, 0}
	}
	res := inherited(p, "Resources")
	in.run(p.Key("Contents"), res, ctm, 0)
	in.annotations(p, res, ctm)
	return in.glyphs
}

// maxAnnots bounds the annotations read per page.
const maxAnnots = 1000

// annotations runs the normal appearance streams of the page's visible
// annotations (free text, stamps, filled-in form fields): they are part of
// what the page shows, as poppler's pdftotext also reads them.
func (in *interp) annotations(p, res pdf.Value, ctm matrix) {
	annots := p.Key("Annots")
	for i := 0; i < min(annots.Len(), maxAnnots); i++ {
		a := annots.Index(i)
		if a.Key("F").Int64()&(1|2|32) != 0 { // invisible, hidden, no view
			continue
		}
		if a.Key("Subtype").Name() == "Popup" {
			continue
		}
		ap := a.Key("AP").Key("N")
		if ap.Kind() == pdf.Dict {
			ap = ap.Key(a.Key("AS").Name())
		}
		rect := a.Key("Rect")
		if ap.Kind() != pdf.Stream || rect.Len() != 4 {
			continue
		}
		m := formMatrix(ap)
		bb := ap.Key("BBox")
		if bb.Len() != 4 {
			continue
		}
		// Fit the appearance's transformed bounding box to /Rect.
		x0, y0, x1, y1 := bbox(m, bb.Index(0).Float64(), bb.Index(1).Float64(), bb.Index(2).Float64(), bb.Index(3).Float64())
		rx0, ry0, rx1, ry1 := rect.Index(0).Float64(), rect.Index(1).Float64(), rect.Index(2).Float64(), rect.Index(3).Float64()
		rx0, rx1 = math.Min(rx0, rx1), math.Max(rx0, rx1)
		ry0, ry1 = math.Min(ry0, ry1), math.Max(ry0, ry1)
		sx, sy := 1.0, 1.0
		if x1-x0 > 1e-6 {
			sx = (rx1 - rx0) / (x1 - x0)
		}
		if y1-y0 > 1e-6 {
			sy = (ry1 - ry0) / (y1 - y0)
		}
		fit := matrix{sx, 0, 0, sy, rx0 - sx*x0, ry0 - sy*y0}
		if !fit.finite() {
			continue
		}
		ares := ap.Key("Resources")
		if ares.Kind() != pdf.Dict {
			ares = res
		}
		in.run(ap, ares, m.mul(fit).mul(ctm), 1)
	}
}

// formMatrix is a form XObject's /Matrix, or the identity.
func formMatrix(xo pdf.Value) matrix {
	m := ident
	if mm := xo.Key("Matrix"); mm.Len() == 6 {
		for i := range m {
			m[i] = mm.Index(i).Float64()
		}
		if !m.finite() {
			m = ident
		}
	}
	return m
}

// bbox transforms a rectangle by m and returns the bounds of the result.
func bbox(m matrix, x0, y0, x1, y1 float64) (float64, float64, float64, float64) {
	minX, minY := math.Inf(1), math.Inf(1)
	maxX, maxY := math.Inf(-1), math.Inf(-1)
	for _, p := range [][2]float64{{x0, y0}, {x0, y1}, {x1, y0}, {x1, y1}} {
		x := p[0]*m[0] + p[1]*m[2] + m[4]
		y := p[0]*m[1] + p[1]*m[3] + m[5]
		minX, maxX = math.Min(minX, x), math.Max(maxX, x)
		minY, maxY = math.Min(minY, y), math.Max(maxY, y)
	}
	return minX, minY, maxX, maxY
}

// inherited looks key up on the page and its ancestors.
func inherited(p pdf.Value, key string) pdf.Value {
	for i := 0; i < maxDepth && p.Kind() == pdf.Dict; i++ {
		if v := p.Key(key); v.Kind() != pdf.Null {
			return v
		}
		p = p.Key("Parent")
	}
	return pdf.Value{}
}

func (in *interp) run(strm, res pdf.Value, ctm matrix, depth int) {
	if strm.Kind() != pdf.Stream && strm.Kind() != pdf.Array {
		return
	}
	if err := in.b.content(strm); err != nil {
		panic(abort{err})
	}
	fonts := map[string]*font{}
	// Forms by name, each looked up once per stream: a Do repeated a
	// million times costs a map lookup, not a walk of the resources.
	forms := map[string]pdf.Value{}
	g := gstate{ctm: ctm, tm: ident, tlm: ident, th: 1}
	var stack []gstate
	pdf.Interpret(strm, func(stk *pdf.Stack, op string) {
		args := popAll(stk)
		in.ops++
		if in.ops&1023 == 0 {
			if err := in.ctx.Err(); err != nil {
				panic(abort{timeoutError(err)})
			}
		}
		num := func(i int) float64 {
			if i >= len(args) {
				return 0
			}
			f := args[i].Float64()
			if !finite(f) {
				return 0
			}
			return f
		}
		mat := func() (matrix, bool) {
			if len(args) < 6 {
				return matrix{}, false
			}
			var m matrix
			for i := range m {
				m[i] = num(i)
			}
			return m, true
		}
		switch op {
		case "q":
			if len(stack) < maxGStateDepth {
				stack = append(stack, g)
			}
		case "Q":
			if n := len(stack); n > 0 {
				g = stack[n-1]
				stack = stack[:n-1]
			}
		case "cm":
			if m, ok := mat(); ok {
				g.ctm = m.mul(g.ctm)
			}
		case "BT":
			g.tm, g.tlm = ident, ident
		case "Tf":
			if len(args) >= 2 {
				name := args[0].Name()
				f, ok := fonts[name]
				if !ok {
					f = in.b.font(res.Key("Font").Key(name))
					fonts[name] = f
				}
				g.font, g.fs = f, num(1)
			}
		case "Tc":
			g.tc = num(0)
		case "Tw":
			g.tw = num(0)
		case "Tz":
			g.th = num(0) / 100
		case "TL":
			g.tl = num(0)
		case "Ts":
			g.rise = num(0)
		case "TD":
			g.tl = -num(1)
			fallthrough
		case "Td":
			g.tlm = translate(num(0), num(1)).mul(g.tlm)
			g.tm = g.tlm
		case "Tm":
			if m, ok := mat(); ok {
				g.tm, g.tlm = m, m
			}
		case "T*":
			g.tlm = translate(0, -g.tl).mul(g.tlm)
			g.tm = g.tlm
		case "'", "\"":
			if op == "\"" && len(args) >= 3 {
				g.tw, g.tc = num(0), num(1)
				args = args[2:]
			}
			g.tlm = translate(0, -g.tl).mul(g.tlm)
			g.tm = g.tlm
			fallthrough
		case "Tj":
			if len(args) >= 1 {
				in.show(&g, args[len(args)-1].RawString())
			}
		case "TJ":
			if len(args) < 1 {
				return
			}
			a := args[0]
			for i := 0; i < a.Len(); i++ {
				x := a.Index(i)
				if x.Kind() == pdf.String {
					in.show(&g, x.RawString())
				} else if f := x.Float64(); finite(f) {
					g.tm = translate(-f/1000*g.fs*g.th, 0).mul(g.tm)
				}
			}
		case "Do":
			if len(args) < 1 || depth >= maxFormDepth {
				return
			}
			nm := args[0].Name()
			xo, ok := forms[nm]
			if !ok {
				xo = res.Key("XObject").Key(nm)
				forms[nm] = xo
			}
			if xo.Kind() != pdf.Stream || xo.Key("Subtype").Name() != "Form" {
				return
			}
			if in.forms++; in.forms > maxFormRuns {
				panic(fmt.Errorf("more than %d form XObjects drawn on the page", maxFormRuns))
			}
			m := formMatrix(xo)
			xres := xo.Key("Resources")
			if xres.Kind() != pdf.Dict {
				xres = res
			}
			in.run(xo, xres, m.mul(g.ctm), depth+1)
		}
	})
}

// show lays out the glyphs of one shown string and advances the text
// matrix.
func (in *interp) show(g *gstate, s string) {
	f := g.font
	if f == nil {
		f = &font{codeLen: func(s string) int { return min(1, len(s)) }, scale: 0.001, dw: 500, widths: map[int]float64{}}
		g.font = f
	}
	f.each(s, func(code int, text string, w float64, space bool) {
		trm := matrix{g.fs * g.th, 0, 0, g.fs, 0, g.rise}.mul(g.tm).mul(g.ctm)
		tx := w*f.scale*g.fs + g.tc
		if space {
			tx += g.tw
		}
		tx *= g.th
		g.tm = translate(tx, 0).mul(g.tm)
		next := matrix{g.fs * g.th, 0, 0, g.fs, 0, g.rise}.mul(g.tm).mul(g.ctm)
		if text == "" && code != 0 && f.twoByte {
			if in.unmapped++; in.unmappedEnc == "" {
				in.unmappedEnc = f.encoding
			}
		}
		if text == "" || !trm.finite() || !next.finite() {
			return
		}
		if len(in.glyphs) >= maxPageGlyphs {
			panic(abort{&LimitError{Limit: LimitGlyphs, Max: maxPageGlyphs}})
		}
		in.glyphs = append(in.glyphs, glyph{
			x: trm[4], y: trm[5], ex: next[4], ey: next[5],
			size: math.Hypot(trm[2], trm[3]), s: text, exact: f.widthsOK,
		})
	})
}

// budget accounts for the decompressed bytes of one document's content
// streams, so that a decompression bomb stops at the limit instead of
// spending time and memory.
type budget struct {
	buf   []byte // count's read buffer, reused
	ctx   context.Context
	left  int64
	max   int64
	fonts map[uintptr]*font // fonts loaded, by the font dictionary's identity
}

// maxFonts bounds the fonts a document keeps loaded.
const maxFonts = 4096

// font loads the font dictionary v once per document: pages that share a
// font share its widths and its ToUnicode map.
func (b *budget) font(v pdf.Value) *font {
	id := v.Identity()
	if f, ok := b.fonts[id]; ok && id != 0 {
		return f
	}
	f := loadFont(v, b)
	if id != 0 && len(b.fonts) < maxFonts {
		if b.fonts == nil {
			b.fonts = map[uintptr]*font{}
		}
		b.fonts[id] = f
	}
	return f
}

// content reads a content stream (or array of them) once, counting its
// decompressed bytes against the budget, before it is interpreted.
func (b *budget) content(v pdf.Value) error {
	if v.Kind() == pdf.Array {
		for i := 0; i < v.Len(); i++ {
			if err := b.content(v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
	n, err := b.count(v, b.left)
	b.left -= n
	if err != nil {
		return err
	}
	if b.left < 0 {
		return &LimitError{Limit: LimitDecoded, Max: b.max}
	}
	return nil
}

// consume checks that a font's ToUnicode CMap is of a sane size before it
// is parsed; a bigger one is ignored.
func (b *budget) consume(v pdf.Value) (ok bool) {
	const maxCMap = 1 << 20
	defer func() {
		if x := recover(); x != nil {
			if a, isAbort := x.(abort); isAbort {
				panic(a)
			}
			if se, stop := x.(*pdf.StopError); stop {
				panic(se)
			}
			ok = false
		}
	}()
	n, err := b.count(v, maxCMap)
	if err != nil {
		panic(abort{err})
	}
	// A CMap's bytes count against the document's decompressed bytes too.
	if b.left -= n; b.left < 0 {
		panic(abort{&LimitError{Limit: LimitDecoded, Max: b.max}})
	}
	return err == nil && n <= maxCMap
}

// count returns the decompressed size of stream v, reading at most limit+1
// bytes.
func (b *budget) count(v pdf.Value, limit int64) (int64, error) {
	rc := v.Reader()
	defer rc.Close()
	var n int64
	if b.buf == nil {
		b.buf = make([]byte, 32<<10)
	}
	buf := b.buf
	for n <= limit {
		if err := b.ctx.Err(); err != nil {
			return n, timeoutError(err)
		}
		m, err := rc.Read(buf)
		n += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			// A stream that cannot be decoded fails its page, not the
			// document; the interpreter sees the same error.
			panic(err)
		}
	}
	return n, nil
}
