package pdftext

import (
	"math"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// font is what the interpreter needs of a PDF font: how to cut a shown
// string into character codes, the text of each code and its advance width
// in text space units per unit of font size.
type font struct {
	codeLen   func(s string) int // bytes of the next code in s
	toUnicode map[string]string  // code bytes -> text, from /ToUnicode
	simple    pdf.TextEncoding   // single-byte fonts without (or with a partial) ToUnicode
	widths    map[int]float64    // code -> width in glyph units
	dw        float64            // default width in glyph units
	scale     float64            // glyph units -> text space (1/1000, or FontMatrix for Type3)
	widthsOK  bool               // widths come from the file, not a guess
	twoByte   bool               // composite (Type0) font
	byteText  [256]*string       // decoded single-byte codes, filled on first use
	// uni decodes a code of a composite font whose /Encoding is one of the
	// predefined Unicode CMaps (UniJIS-UCS2-H, UniGB-UTF16-H, ...): its
	// codes are Unicode text themselves, so no /ToUnicode is needed.
	uni cmapCodes
	// encoding names the font's /Encoding, for the note on a page whose
	// glyphs map to no text.
	encoding string
}

// maxWidthEntries bounds the /W and /Widths arrays read per font.
const maxWidthEntries = 1 << 16

// loadFont reads a font dictionary; budget accounts for the bytes of its
// ToUnicode CMap.
func loadFont(v pdf.Value, b *budget) *font {
	f := &font{scale: 0.001, dw: 0, widths: map[int]float64{}}
	subtype := v.Key("Subtype").Name()
	var ws pdf.Value
	if subtype == "Type3" {
		if m := v.Key("FontMatrix"); m.Kind() == pdf.Array && m.Len() >= 1 {
			if s := m.Index(0).Float64(); finite(s) && s != 0 {
				f.scale = math.Abs(s)
			}
		}
	}
	if subtype == "Type0" {
		f.twoByte = true
		f.codeLen = func(s string) int { return min(2, len(s)) }
		desc := v.Key("DescendantFonts").Index(0)
		f.dw = 1000
		if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.dw = dw.Float64()
		}
		readCIDWidths(desc.Key("W"), f.widths)
		f.widthsOK = true
		if enc := v.Key("Encoding"); enc.Kind() == pdf.Name {
			f.encoding = enc.Name()
			f.uni = predefinedCMap(f.encoding)
		} else if enc.Kind() == pdf.Stream {
			f.encoding = "an embedded CMap"
		}
	} else {
		f.codeLen = func(s string) int { return min(1, len(s)) }
		first := int(v.Key("FirstChar").Int64())
		ws = v.Key("Widths")
		n := min(ws.Len(), maxWidthEntries)
		for i := 0; i < n; i++ {
			f.widths[first+i] = ws.Index(i).Float64()
		}
		f.widthsOK = n > 0
		f.dw = v.Key("FontDescriptor").Key("MissingWidth").Float64()
		if !f.widthsOK {
			// No widths in the file: advance by an average width so that
			// glyphs still move along the line, and trust measured gaps
			// only where the average is exact (Courier).
			f.dw, f.widthsOK = standardWidth(v.Key("BaseFont").Name())
		}
		f.simple = simpleEncoding(v)
	}
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		if cm, lens := safeToUnicode(tu, v, b); len(cm) > 0 {
			f.toUnicode = cm
			if f.twoByte && len(lens) > 0 {
				f.codeLen = codeLenFunc(lens)
			}
		}
	}
	if f.uni != nil {
		// The encoding's own code lengths (a UTF-16 surrogate pair is
		// one code of 4 bytes), whatever a /ToUnicode's code space says.
		f.codeLen = f.uni.codeLen
	}
	if f.uni != nil && f.toUnicode == nil {
		f.toUnicode = map[string]string{} // decoded codes are kept here
	}
	if !f.twoByte && ws.Len() == 0 && subtype != "Type3" {
		f.standardWidths(v.Key("BaseFont").Name())
	}
	return f
}

// standardWidth is an average advance (glyph units) for a font without
// /Widths, such as the standard 14 fonts, and whether it is exact: it is for
// monospaced Courier only.
func standardWidth(base string) (float64, bool) {
	if i := strings.IndexByte(base, '+'); i >= 0 {
		base = base[i+1:]
	}
	switch {
	case strings.HasPrefix(base, "Courier"):
		return 600, true
	case strings.HasPrefix(base, "Helvetica"), strings.HasPrefix(base, "Arial"):
		return 556, false
	}
	return 500, false
}

// readCIDWidths parses a CIDFont /W array: c [w1 w2 ...] or c1 c2 w.
func readCIDWidths(w pdf.Value, out map[int]float64) {
	n := w.Len()
	entries := 0
	for i := 0; i < n && entries < maxWidthEntries; {
		c := int(w.Index(i).Int64())
		if i+1 >= n {
			return
		}
		next := w.Index(i + 1)
		if next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && entries < maxWidthEntries; j++ {
				out[c+j] = next.Index(j).Float64()
				entries++
			}
			i += 2
			continue
		}
		if i+2 >= n {
			return
		}
		hi := int(next.Int64())
		wd := w.Index(i + 2).Float64()
		for c2 := c; c2 <= hi && entries < maxWidthEntries; c2++ {
			out[c2] = wd
			entries++
		}
		i += 3
	}
}

// codeLenFunc cuts codes by the lengths of the CMap's code space ranges,
// trying the shortest that has a mapping first.
func codeLenFunc(lens map[int]bool) func(string) int {
	var ls []int
	for l := 1; l <= 4; l++ {
		if lens[l] {
			ls = append(ls, l)
		}
	}
	if len(ls) == 1 {
		l := ls[0]
		return func(s string) int { return min(l, len(s)) }
	}
	return func(s string) int { return min(2, len(s)) }
}

// each cuts s into codes and returns each code's text and width (glyph
// units).
func (f *font) each(s string, fn func(code int, text string, w float64, space bool)) {
	for len(s) > 0 {
		n := f.codeLen(s)
		if n <= 0 {
			n = 1
		}
		raw := s[:n]
		s = s[n:]
		code := 0
		for i := 0; i < len(raw); i++ {
			code = code<<8 | int(raw[i])
		}
		var text string
		if n == 1 && f.byteText[raw[0]] != nil {
			text = *f.byteText[raw[0]]
		} else {
			t, ok := f.toUnicode[raw]
			if !ok && f.simple != nil {
				t = f.simple.Decode(raw)
			}
			if !ok && f.uni != nil {
				t = f.uni.text(raw)
				if len(f.toUnicode) < maxDecodedCodes {
					f.toUnicode[raw] = t
				}
			}
			text = t
			if n == 1 {
				f.byteText[raw[0]] = &t
			}
		}
		cid := code
		if f.uni != nil {
			cid = f.uni.cid(code)
		}
		w, ok := f.widths[cid]
		if !ok {
			w = f.dw
		}
		fn(code, text, w, n == 1 && code == 32)
	}
}

// safeToUnicode is readToUnicode, except that a CMap the interpreter
// cannot read (a begin on a non-dictionary, a dictionary stack too deep)
// is ignored as if the font had none. A document limit still ends the
// document.
func safeToUnicode(v, scratch pdf.Value, b *budget) (m map[string]string, lens map[int]bool) {
	defer func() {
		if x := recover(); x != nil {
			switch x.(type) {
			case abort, *pdf.StopError:
				panic(x)
			}
			m, lens = nil, nil
		}
	}()
	return readToUnicode(v, scratch, b)
}

// maxDestination bounds the bytes of one ToUnicode destination (16 UTF-16
// units: a ligature or an accented letter needs two or three); a longer
// one is cut, so one glyph cannot show a page of text.
const maxDestination = 32

// destination cuts a ToUnicode destination string to maxDestination bytes.
func destination(s string) string {
	if len(s) > maxDestination {
		return s[:maxDestination]
	}
	return s
}

// readToUnicode parses the bfchar and bfrange sections of a ToUnicode CMap
// and the lengths of its code space ranges. The CMap's PostScript prologue
// ("/CIDInit /ProcSet findresource begin") needs a dictionary to begin: the
// font's own dictionary, scratch, serves (the interpreter defines a few
// CMap keys in it, which nothing reads).
func readToUnicode(v, scratch pdf.Value, b *budget) (map[string]string, map[int]bool) {
	if !b.consume(v) {
		return nil, nil
	}
	m := map[string]string{}
	lens := map[int]bool{}
	const maxMappings = 1 << 16
	// steps bounds the codes bfrange sections enumerate, also when ranges
	// repeat codes already mapped (so the map stops growing).
	steps := 4 * maxMappings
	n := -1 // the count given to the last begin... operator
	pop := func(stk *pdf.Stack, k int) []pdf.Value {
		c := stk.Len()
		if n >= 0 {
			c = min(c, k*n)
		}
		args := make([]pdf.Value, c)
		for i := c - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		n = -1
		return args
	}
	pdf.Interpret(v, func(stk *pdf.Stack, op string) {
		switch op {
		case "findresource":
			stk.Pop()
			stk.Pop()
			if scratch.Kind() == pdf.Dict {
				stk.Push(scratch)
			}
		case "dup":
			if stk.Len() > 0 {
				top := stk.Pop()
				stk.Push(top)
				stk.Push(top)
			}
		case "defineresource":
			stk.Pop()
			val := stk.Pop()
			stk.Pop()
			stk.Push(val)
		case "begincodespacerange", "beginbfchar", "beginbfrange", "begincidchar", "begincidrange", "beginnotdefchar", "beginnotdefrange":
			n = int(stk.Pop().Int64())
		case "endcodespacerange":
			args := pop(stk, 2)
			for i := 0; i+1 < len(args); i += 2 {
				lens[len(args[i].RawString())] = true
			}
		case "endcidchar", "endnotdefchar":
			pop(stk, 2)
		case "endcidrange", "endnotdefrange":
			pop(stk, 3)
		case "endbfchar":
			args := pop(stk, 2)
			for i := 0; i+1 < len(args) && len(m) < maxMappings; i += 2 {
				m[args[i].RawString()] = utf16BE(destination(args[i+1].RawString()))
			}
		case "endbfrange":
			args := pop(stk, 3)
			for i := 0; i+2 < len(args) && len(m) < maxMappings; i += 3 {
				lo, hi, dst := args[i].RawString(), args[i+1].RawString(), args[i+2]
				if len(lo) == 0 || len(lo) != len(hi) || len(lo) > 4 {
					continue
				}
				l, h := codeInt(lo), codeInt(hi)
				if h < l || h-l > maxMappings {
					continue
				}
				for c := l; c <= h && len(m) < maxMappings && steps > 0; c++ {
					steps--
					key := codeBytes(c, len(lo))
					switch dst.Kind() {
					case pdf.Array:
						if c-l < dst.Len() {
							m[key] = utf16BE(destination(dst.Index(c - l).RawString()))
						}
					case pdf.String:
						m[key] = utf16BE(addToLast(destination(dst.RawString()), c-l))
					}
				}
			}
		}
	})
	return m, lens
}

func popAll(stk *pdf.Stack) []pdf.Value {
	n := stk.Len()
	args := make([]pdf.Value, n)
	for i := n - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	return args
}

func codeInt(s string) int {
	c := 0
	for i := 0; i < len(s); i++ {
		c = c<<8 | int(s[i])
	}
	return c
}

func codeBytes(c, n int) string {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(c)
		c >>= 8
	}
	return string(b)
}

// addToLast adds d to the last byte pair (UTF-16 unit) of a bfrange
// destination.
func addToLast(s string, d int) string {
	if len(s) < 2 {
		return s
	}
	b := []byte(s)
	u := int(b[len(b)-2])<<8 | int(b[len(b)-1])
	u += d
	b[len(b)-2], b[len(b)-1] = byte(u>>8), byte(u)
	return string(b)
}

// utf16BE decodes a CMap destination string (UTF-16BE, possibly with
// surrogate pairs or several characters, e.g. a ligature).
func utf16BE(s string) string {
	if len(s)%2 == 1 {
		if utf8.ValidString(s) {
			return s
		}
		s = s[:len(s)-1]
	}
	u := make([]uint16, len(s)/2)
	for i := range u {
		u[i] = uint16(s[2*i])<<8 | uint16(s[2*i+1])
	}
	return string(utf16.Decode(u))
}

// simpleEncoding decodes the single-byte codes of a simple font. The
// parser's encoder handles WinAnsi, MacRoman and /Differences; this adds
// what it leaves as raw bytes: StandardEncoding, the built-in encoding of
// a Type 1 font without /Encoding (quotes, dashes, ligatures), and a
// /Differences dictionary's /BaseEncoding.
func simpleEncoding(v pdf.Value) pdf.TextEncoding {
	fv := pdf.Font{V: v}
	enc := v.Key("Encoding")
	base := pdf.TextEncoding(fv.Encoder())
	var fallback *[256]rune
	switch enc.Kind() {
	case pdf.Null:
		if v.Key("ToUnicode").Kind() != pdf.Null || v.Key("FontDescriptor").Key("Flags").Int64()&4 != 0 {
			return base // mapped by ToUnicode, or a symbolic font
		}
		return &tableEncoding{table: &standardEncoding}
	case pdf.Dict:
		switch enc.Key("BaseEncoding").Name() {
		case "WinAnsiEncoding":
			fallback = &winAnsiHigh
		case "MacRomanEncoding":
			fallback = nil
		default:
			if v.Key("FontDescriptor").Key("Flags").Int64()&4 == 0 {
				fallback = &standardEncoding
			}
		}
	}
	if fallback == nil {
		return base
	}
	return &tableEncoding{table: fallback, first: base}
}

// tableEncoding decodes bytes by first (when it maps the byte to something
// else than itself) and otherwise by table (when it has an entry).
type tableEncoding struct {
	table *[256]rune
	first pdf.TextEncoding
}

func (e *tableEncoding) Decode(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if e.first != nil {
			if s := e.first.Decode(raw[i : i+1]); s != string(rune(c)) {
				b.WriteString(s)
				continue
			}
		}
		if r := e.table[c]; r != 0 {
			b.WriteRune(r)
		} else {
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// standardEncoding holds Adobe StandardEncoding where it differs from
// Latin-1; zero means "same as Latin-1".
var standardEncoding = func() (t [256]rune) {
	for c, r := range map[byte]rune{
		0x27: '’', 0x60: '‘',
		0xA1: '¡', 0xA2: '¢', 0xA3: '£', 0xA4: '⁄', 0xA5: '¥', 0xA6: 'ƒ', 0xA7: '§', 0xA8: '¤',
		0xA9: '\'', 0xAA: '“', 0xAB: '«', 0xAC: '‹', 0xAD: '›', 0xAE: 'ﬁ', 0xAF: 'ﬂ',
		0xB1: '–', 0xB2: '†', 0xB3: '‡', 0xB4: '·', 0xB6: '¶', 0xB7: '•', 0xB8: '‚', 0xB9: '„',
		0xBA: '”', 0xBB: '»', 0xBC: '…', 0xBD: '‰', 0xBF: '¿',
		0xC1: '`', 0xC2: '´', 0xC3: 'ˆ', 0xC4: '˜', 0xC5: '¯', 0xC6: '˘', 0xC7: '˙', 0xC8: '¨',
		0xCA: '˚', 0xCB: '¸', 0xCD: '˝', 0xCE: '˛', 0xCF: 'ˇ', 0xD0: '—',
		0xE1: 'Æ', 0xE3: 'ª', 0xE8: 'Ł', 0xE9: 'Ø', 0xEA: 'Œ', 0xEB: 'º',
		0xF1: 'æ', 0xF5: 'ı', 0xF8: 'ł', 0xF9: 'ø', 0xFA: 'œ', 0xFB: 'ß',
	} {
		t[c] = r
	}
	return t
}()

// winAnsiHigh holds WinAnsiEncoding's 0x80-0x9F, where it differs from
// Latin-1.
var winAnsiHigh = func() (t [256]rune) {
	for c, r := range map[byte]rune{
		0x80: '€', 0x82: '‚', 0x83: 'ƒ', 0x84: '„', 0x85: '…', 0x86: '†', 0x87: '‡', 0x88: 'ˆ',
		0x89: '‰', 0x8A: 'Š', 0x8B: '‹', 0x8C: 'Œ', 0x8E: 'Ž', 0x91: '‘', 0x92: '’', 0x93: '“',
		0x94: '”', 0x95: '•', 0x96: '–', 0x97: '—', 0x98: '˜', 0x99: '™', 0x9A: 'š', 0x9B: '›',
		0x9C: 'œ', 0x9E: 'ž', 0x9F: 'Ÿ',
	} {
		t[c] = r
	}
	return t
}()

// standardWidths gives a simple font without /Widths the metrics of the
// standard font it names, if it names one: each code's width is that of
// the character it shows.
func (f *font) standardWidths(base string) {
	m := standardMetrics(base)
	if m == nil {
		return
	}
	for c := 0; c < 256; c++ {
		raw := string([]byte{byte(c)})
		t, ok := f.toUnicode[raw]
		if !ok && f.simple != nil {
			t = f.simple.Decode(raw)
		}
		if r, n := utf8.DecodeRuneInString(t); n > 0 && n == len(t) {
			if w, ok := m[r]; ok {
				f.widths[c] = w
			}
		}
	}
	if len(f.widths) > 0 {
		f.widthsOK = true
	}
}

// cmapCodes reads the codes of a composite font whose /Encoding is a
// predefined CMap that says which characters its codes are.
type cmapCodes interface {
	codeLen(s string) int // bytes of the next code in s (at least 1)
	text(raw string) string
	cid(code int) int // a guess at the CID, for widths; -1 for none
}

// predefinedCMap returns how to read the codes of a predefined CMap that
// says which characters its codes are, or nil.
func predefinedCMap(name string) cmapCodes {
	if u := predefinedUnicodeCMap(name); u != nil {
		return u
	}
	if c := predefinedCharsetCMap(name); c != nil {
		return c
	}
	return nil
}

// maxDecodedCodes bounds the decoded codes a font keeps.
const maxDecodedCodes = 1 << 16

// uniCMap is one of the predefined CMaps of PDF 32000-1 §9.7.5.2 (Table
// 118) whose character codes are Unicode in a given form: UCS-2 or
// UTF-16 (big-endian), UTF-8 or UTF-32. Adobe's CMap resources publish
// more of the kind (UniJIS2004-UTF16-H, UniAKR-UTF8-H, ...); every
// "Uni..." name with one of the four forms is read the same way.
type uniCMap struct {
	form       string // "UCS2", "UTF16", "UTF8" or "UTF32"
	asciiFirst int    // CID of U+0020 in the font's character collection
}

// predefinedUnicodeCMap returns the uniCMap for an /Encoding name, or nil
// for every other encoding (Identity-H, the legacy CJK CMaps such as
// 90ms-RKSJ-H, whose codes map to CIDs and need /ToUnicode).
func predefinedUnicodeCMap(name string) *uniCMap {
	if !strings.HasPrefix(name, "Uni") || !(strings.HasSuffix(name, "-H") || strings.HasSuffix(name, "-V")) {
		return nil
	}
	parts := strings.Split(name, "-")
	for _, p := range parts[1:] {
		switch p {
		case "UCS2", "UTF16", "UTF8", "UTF32":
			c := &uniCMap{form: p, asciiFirst: 1}
			if slices.Contains(parts, "HW") {
				c.asciiFirst = 231 // Adobe-Japan1's half-width Latin
			}
			return c
		}
	}
	return nil
}

// codeLen cuts the next code from s by the CMap's form.
func (c *uniCMap) codeLen(s string) int {
	switch c.form {
	case "UTF16":
		if len(s) >= 4 && s[0] >= 0xD8 && s[0] <= 0xDB {
			return 4 // a surrogate pair
		}
		return min(2, len(s))
	case "UTF8":
		switch b := s[0]; {
		case b < 0x80 || b >= 0xF8:
			return 1
		case b >= 0xF0:
			return min(4, len(s))
		case b >= 0xE0:
			return min(3, len(s))
		case b >= 0xC0:
			return min(2, len(s))
		}
		return 1
	case "UTF32":
		return min(4, len(s))
	}
	return min(2, len(s)) // UCS2
}

// text decodes one code. A code that is no Unicode scalar value (a lone
// surrogate, a truncated code) is no text.
func (c *uniCMap) text(raw string) string {
	var r rune
	switch c.form {
	case "UTF8":
		var n int
		r, n = utf8.DecodeRuneInString(raw)
		if r == utf8.RuneError || n != len(raw) {
			return ""
		}
	case "UTF16":
		if len(raw) == 4 {
			r = utf16.DecodeRune(rune(raw[0])<<8|rune(raw[1]), rune(raw[2])<<8|rune(raw[3]))
			break
		}
		fallthrough
	case "UCS2":
		if len(raw) != 2 {
			return ""
		}
		r = rune(raw[0])<<8 | rune(raw[1])
	case "UTF32":
		if len(raw) != 4 {
			return ""
		}
		r = rune(raw[0])<<24 | rune(raw[1])<<16 | rune(raw[2])<<8 | rune(raw[3])
	}
	if r < 0x20 || !utf8.ValidRune(r) || r == utf8.RuneError {
		return ""
	}
	return string(r)
}

// cid guesses the CID a code selects, for its width: without the CMap's
// tables only printable ASCII is known (the first 95 CIDs of every Adobe
// CJK character collection, or Japan1's half-width run); every other code
// takes the font's default width, as full-width CJK glyphs have.
func (c *uniCMap) cid(code int) int {
	if code >= 0x20 && code <= 0x7E {
		return c.asciiFirst + code - 0x20
	}
	return -1
}

// charsetCMap is one of the predefined CMaps of PDF 32000-1 Table 118
// whose codes are a national character set's bytes: Shift-JIS (the RKSJ
// CMaps), EUC-JP, GB 2312 / GBK / GB 18030, Big Five, and EUC-KR / UHC.
// Older CJK word processors write these, without embedding the font or
// a /ToUnicode; golang.org/x/text decodes each set.
type charsetCMap struct {
	dec        *encoding.Decoder
	lead       func(s string) int // code length by the code's first bytes
	asciiFirst int                // CID of the single-byte space, for widths
}

func predefinedCharsetCMap(name string) *charsetCMap {
	if !strings.HasSuffix(name, "-H") && !strings.HasSuffix(name, "-V") {
		return nil
	}
	parts := strings.Split(name, "-")
	has := func(p string) bool { return slices.Contains(parts, p) }
	twoByte := func(lo byte) func(string) int {
		return func(s string) int {
			if s[0] >= lo && s[0] <= 0xFE && len(s) >= 2 {
				return 2
			}
			return 1
		}
	}
	switch {
	case has("RKSJ"):
		// Shift-JIS: single-byte ASCII and half-width katakana (0xA1-0xDF).
		first := 231 // half-width Latin, except in the proportional "p" CMaps
		if strings.HasSuffix(parts[0], "p") {
			first = 1
		}
		return &charsetCMap{dec: japanese.ShiftJIS.NewDecoder(), asciiFirst: first, lead: func(s string) int {
			if b := s[0]; (b >= 0x81 && b <= 0x9F || b >= 0xE0 && b <= 0xFC) && len(s) >= 2 {
				return 2
			}
			return 1
		}}
	case name == "EUC-H" || name == "EUC-V":
		return &charsetCMap{dec: japanese.EUCJP.NewDecoder(), asciiFirst: 231, lead: func(s string) int {
			switch b := s[0]; {
			case b == 0x8F:
				return min(3, len(s))
			case b == 0x8E || b >= 0xA1 && b <= 0xFE:
				return min(2, len(s))
			}
			return 1
		}}
	case parts[0] == "GBK2K":
		return &charsetCMap{dec: simplifiedchinese.GB18030.NewDecoder(), asciiFirst: 1, lead: func(s string) int {
			if s[0] < 0x81 || s[0] > 0xFE || len(s) < 2 {
				return 1
			}
			if s[1] >= 0x30 && s[1] <= 0x39 {
				return min(4, len(s)) // a four-byte GB 18030 code
			}
			return 2
		}}
	case has("EUC") && (strings.HasPrefix(parts[0], "GB")):
		return &charsetCMap{dec: simplifiedchinese.GBK.NewDecoder(), asciiFirst: 1, lead: twoByte(0x81)}
	case has("B5") || parts[0] == "B5pc":
		return &charsetCMap{dec: traditionalchinese.Big5.NewDecoder(), asciiFirst: 1, lead: twoByte(0x81)}
	case strings.HasPrefix(parts[0], "KSC") && (has("EUC") || has("UHC")):
		return &charsetCMap{dec: korean.EUCKR.NewDecoder(), asciiFirst: 1, lead: twoByte(0x81)}
	}
	return nil
}

func (c *charsetCMap) codeLen(s string) int { return c.lead(s) }

// text decodes one code; a code the set does not define is no text.
func (c *charsetCMap) text(raw string) string {
	t, err := c.dec.String(raw)
	if err != nil || t == "" || strings.ContainsRune(t, utf8.RuneError) || t[0] < 0x20 {
		return ""
	}
	return t
}

func (c *charsetCMap) cid(code int) int {
	if code >= 0x20 && code <= 0x7E {
		return c.asciiFirst + code - 0x20
	}
	return -1
}
