package pdftext_test

import (
	"bytes"
	"compress/lzw"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// The encoders below write the standard filters (PDF 32000-1 §7.4) and
// predictors (§7.4.4.4) for the tests; the parser's decoders are checked
// against them, and the files they make against poppler's pdftotext, so a
// bug in an encoder cannot make the parser look right.

// lzwEncode is LZWDecode data for p: 8-bit literals, codes of 9 to 12 bits
// most significant bit first, clear code 256, end of data 257. With early
// 1 (the default /EarlyChange) the code width grows one code before the
// table needs it, with early 0 when it needs it. The table is cleared
// before it is full, so long inputs cross every width several times.
func lzwEncode(p []byte, early int) []byte {
	e := newLZW(early)
	e.write(p)
	return e.close()
}

// lzwBomb is LZWDecode data for head, n copies of c, and tail; the run is
// written code by code (the k-th code after a clear stands for k copies),
// so a bomb of many megabytes takes a few thousand steps.
func lzwBomb(head []byte, c byte, n int, tail []byte, early int) []byte {
	e := newLZW(early)
	e.write(head)
	e.restart()
	for k := 1; n > 0; {
		m := min(k, n)
		code := int(c)
		if m > 1 {
			code = 256 + m
		}
		e.emit(code)
		n -= m
		if e.grow() {
			k = 1
		} else {
			k++
		}
	}
	e.restart()
	e.write(tail)
	return e.close()
}

type lzwEnc struct {
	out   bytes.Buffer
	acc   uint32
	nacc  uint
	width uint
	early int
	child [4096][256]int16 // child[code][b] is the code of code's string then b, or 0
	hi    int              // the last code assigned
	cur   int              // the code of the string pending, or -1
}

func newLZW(early int) *lzwEnc {
	e := &lzwEnc{width: 9, early: early, hi: 257, cur: -1}
	e.emit(256)
	return e
}

func (e *lzwEnc) emit(code int) {
	e.acc = e.acc<<e.width | uint32(code)
	e.nacc += e.width
	for e.nacc >= 8 {
		e.out.WriteByte(byte(e.acc >> (e.nacc - 8)))
		e.nacc -= 8
	}
}

// widen assigns the next code and widens the codes when it is due.
func (e *lzwEnc) widen() {
	e.hi++
	if e.hi+e.early >= 1<<e.width && e.width < 12 {
		e.width++
	}
}

// grow assigns the next code (the emitted string then the next byte),
// widens the codes, and clears the table before it fills; it reports a
// clear.
func (e *lzwEnc) grow() bool {
	e.widen()
	if e.hi < 4000 {
		return false
	}
	e.emit(256)
	clear(e.child[:])
	e.hi, e.width = 257, 9
	return true
}

func (e *lzwEnc) write(p []byte) {
	for _, b := range p {
		if e.cur < 0 {
			e.cur = int(b)
			continue
		}
		if c := e.child[e.cur][b]; c != 0 {
			e.cur = int(c)
			continue
		}
		e.emit(e.cur)
		e.child[e.cur][b] = int16(e.hi + 1)
		e.grow()
		e.cur = int(b)
	}
}

// restart writes the pending string and clears the table.
func (e *lzwEnc) restart() {
	if e.cur >= 0 {
		e.emit(e.cur)
		e.cur = -1
		e.widen()
	}
	e.emit(256)
	clear(e.child[:])
	e.hi, e.width = 257, 9
}

func (e *lzwEnc) close() []byte {
	if e.cur >= 0 {
		e.emit(e.cur)
		e.widen()
	}
	e.emit(257)
	if e.nacc > 0 {
		e.out.WriteByte(byte(e.acc << (8 - e.nacc)))
	}
	return e.out.Bytes()
}

// goLZW is p written by Go's compress/lzw: the GIF form, EarlyChange 0.
func goLZW(p []byte) []byte {
	var b bytes.Buffer
	w := lzw.NewWriter(&b, lzw.MSB, 8)
	w.Write(p)
	w.Close()
	return b.Bytes()
}

func flate(p []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(p)
	w.Close()
	return b.Bytes()
}

// hexEncode is ASCIIHexDecode data: digits in both cases, white space
// between some, and an odd final digit (the last byte's low digit, 0, is
// left implied) when the last byte allows it.
func hexEncode(p []byte) []byte {
	h := hex.EncodeToString(p)
	var b strings.Builder
	for i := 0; i < len(h); i++ {
		c := h[i]
		if i%3 == 0 {
			c = strings.ToUpper(string(c))[0]
		}
		b.WriteByte(c)
		if i%17 == 16 {
			b.WriteString("\n ")
		}
	}
	s := b.String()
	if strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
	}
	return []byte(s + ">")
}

func a85Encode(p []byte) []byte {
	out := make([]byte, ascii85.MaxEncodedLen(len(p)))
	n := ascii85.Encode(out, p)
	return append(out[:n], "~>"...)
}

// rlEncode is RunLengthDecode data: runs of 3 or more equal bytes as
// repeats (up to 128), the rest as literals (up to 128), then EOD.
func rlEncode(p []byte) []byte {
	var out []byte
	for i := 0; i < len(p); {
		j := i
		for j < len(p) && p[j] == p[i] && j-i < 128 {
			j++
		}
		if j-i >= 3 {
			out = append(out, byte(257-(j-i)), p[i])
			i = j
			continue
		}
		k := i
		for k < len(p) && k-i < 128 && !(k+2 < len(p) && p[k] == p[k+1] && p[k] == p[k+2]) {
			k++
		}
		out = append(out, byte(k-i-1))
		out = append(out, p[i:k]...)
		i = k
	}
	return append(out, 128)
}

// pred describes a predictor's parameters.
type pred struct {
	predictor, colors, bpc, columns int
}

func (p pred) row() int { return (p.colors*p.bpc*p.columns + 7) / 8 }

func (p pred) parms() string {
	return fmt.Sprintf("<< /Predictor %d /Colors %d /BitsPerComponent %d /Columns %d >>", p.predictor, p.colors, p.bpc, p.columns)
}

// encode applies the predictor to p, padded with spaces to whole rows.
// PNG rows take the filter of the predictor (10 to 14), or for 15 each
// filter in turn, so that every row type occurs.
func (p pred) encode(data []byte) []byte {
	row := p.row()
	for len(data)%row != 0 {
		data = append(data[:len(data):len(data)], ' ')
	}
	bpp := (p.colors*p.bpc + 7) / 8
	var out []byte
	prev := make([]byte, row)
	for r := 0; r*row < len(data); r++ {
		cur := data[r*row : (r+1)*row]
		switch {
		case p.predictor == 1:
			out = append(out, cur...)
		case p.predictor == 2:
			out = append(out, tiffDiff(cur, p)...)
		case p.predictor >= 10:
			typ := byte(p.predictor - 10)
			if p.predictor == 15 {
				typ = byte(r % 5)
			}
			out = append(out, typ)
			for i := range cur {
				var left, upLeft byte
				if i >= bpp {
					left, upLeft = cur[i-bpp], prev[i-bpp]
				}
				up := prev[i]
				var guess byte
				switch typ {
				case 1:
					guess = left
				case 2:
					guess = up
				case 3:
					guess = byte((int(left) + int(up)) / 2)
				case 4:
					guess = paethGuess(left, up, upLeft)
				}
				out = append(out, cur[i]-guess)
			}
		}
		prev = cur
	}
	return out
}

func paethGuess(a, b, c byte) byte {
	abs := func(x int) int {
		if x < 0 {
			return -x
		}
		return x
	}
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

// tiffDiff is one row under TIFF predictor 2: each component less the
// same component of the pixel to its left, modulo 2^bpc.
func tiffDiff(cur []byte, p pred) []byte {
	n := p.colors * p.columns
	get := func(k int) int {
		switch p.bpc {
		case 16:
			return int(cur[2*k])<<8 | int(cur[2*k+1])
		case 8:
			return int(cur[k])
		}
		bit := k * p.bpc
		return int(cur[bit/8]>>(8-p.bpc-bit%8)) & (1<<p.bpc - 1)
	}
	out := bytes.Clone(cur)
	for k := 0; k < n; k++ {
		v := get(k)
		if k >= p.colors {
			v -= get(k - p.colors)
		}
		v &= 1<<p.bpc - 1
		switch p.bpc {
		case 16:
			out[2*k], out[2*k+1] = byte(v>>8), byte(v)
		case 8:
			out[k] = byte(v)
		default:
			bit := k * p.bpc
			shift := 8 - p.bpc - bit%8
			out[bit/8] = out[bit/8]&^byte((1<<p.bpc-1)<<shift) | byte(v<<shift)
		}
	}
	return out
}

// filterLines are the lines of a filtered page: enough varied text that
// LZW codes reach 12 bits and the table is cleared.
func filterLines(name string, n int) []string {
	words := []string{"plaintiff", "respondent", "appellate", "jurisdiction", "memorandum", "stipulated", "Dated", "Exhibit", "docket", "motion"}
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%s %d %s %s %x %s", name, i+1, words[i%10], words[(i*7+3)%10], i*2654435761%65521, words[(i*3+1)%10])
	}
	return lines
}

// filterContent is a content stream showing lines in 5-point Helvetica,
// then drawing the image /Im1.
func filterContent(lines []string) []byte {
	var c bytes.Buffer
	c.WriteString("BT /F1 5 Tf 20 780 Td 5.5 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&c, "(%s) Tj T*\n", l)
	}
	c.WriteString("ET\nq 40 0 0 40 500 20 cm /Im1 Do Q\n")
	return c.Bytes()
}

const filterFont = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"

// filteredPages is a PDF whose page i has the content stream streams[i]
// (a whole stream object), with optional extra objects from 5 + pages on.
func filteredPages(streams ...string) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", filterFont}
	var kids []string
	for _, s := range streams {
		page := len(objs) + 1
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 %d 0 R >> >> /Contents %d 0 R >>", 4+2*len(streams), page+1),
			s)
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(streams))
	// Every page may draw /Im1: an image XObject in DCT (here not even a
	// JPEG), which text extraction must never decode.
	objs = append(objs, pdftexttest.Stream([]byte("\xff\xd8 not a jpeg"), "/Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode"))
	return pdftexttest.RawPDF("", objs...)
}

// words is s as its white-space separated words, one space between.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// popplerText runs pdftotext (when present; in CI it must be) on data.
func popplerText(t *testing.T, data []byte) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		needPdftotext(t) // fails in CI; elsewhere skips
		return "", false
	}
	path := filepath.Join(t.TempDir(), "f.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", path, "-")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, stderr.Bytes())
	}
	return string(out), true
}

type filterCase struct {
	name  string
	dict  string // /Filter and /DecodeParms
	data  []byte // the stream's encoded data
	lines []string
	// lenient is a form the parser accepts and poppler does not (not
	// cross-checked).
	lenient bool
}

// filterCases encode a page of text with every filter, predictor and
// chain the parser decodes.
func filterCases() []filterCase {
	var cases []filterCase
	lenient := func() { cases[len(cases)-1].lenient = true }
	add := func(name, dict string, enc func([]byte) []byte) {
		lines := filterLines(strings.NewReplacer(" ", "", "/", "", "<", "", ">", "", "[", "", "]", "").Replace(name), 140)
		cases = append(cases, filterCase{name: name, dict: dict, data: enc(filterContent(lines)), lines: lines})
	}
	add("LZW default", "/Filter /LZWDecode", func(p []byte) []byte { return lzwEncode(p, 1) })
	add("LZW EarlyChange 1", "/Filter /LZWDecode /DecodeParms << /EarlyChange 1 >>", func(p []byte) []byte { return lzwEncode(p, 1) })
	add("LZW EarlyChange 0", "/Filter /LZWDecode /DecodeParms << /EarlyChange 0 >>", func(p []byte) []byte { return lzwEncode(p, 0) })
	add("LZW EarlyChange 0 by compress/lzw", "/Filter /LZW /DecodeParms << /EarlyChange 0 >>", goLZW)
	add("ASCIIHex", "/Filter /ASCIIHexDecode", hexEncode)
	add("AHx", "/Filter /AHx", hexEncode)
	add("ASCII85", "/Filter /ASCII85Decode", a85Encode)
	add("A85", "/Filter /A85", a85Encode)
	add("RunLength", "/Filter /RunLengthDecode", rlEncode)
	add("RL", "/Filter /RL", rlEncode)
	add("Fl", "/Filter /Fl", flate)
	for _, p := range []pred{
		{1, 1, 8, 1},
		{10, 1, 8, 61}, {11, 1, 8, 61}, {12, 1, 8, 61}, {13, 1, 8, 61}, {14, 1, 8, 61}, {15, 1, 8, 61},
		{15, 3, 8, 23}, {14, 4, 8, 9}, {15, 2, 16, 13}, {15, 1, 4, 40}, {15, 1, 2, 64}, {15, 1, 1, 96},
		{2, 1, 8, 47}, {2, 3, 8, 17}, {2, 2, 16, 11}, {2, 1, 4, 50}, {2, 3, 2, 8}, {2, 1, 1, 64},
	} {
		p := p
		add(fmt.Sprintf("Flate %s", p.parms()), "/Filter /FlateDecode /DecodeParms "+p.parms(), func(b []byte) []byte { return flate(p.encode(b)) })
		if p.predictor == 2 && p.bpc == 16 {
			// TIFF predictor 2 on 16-bit components, differences of
			// 16-bit values (TIFF 6.0; MuPDF decodes them so): poppler
			// reads no text from it.
			lenient()
		}
	}
	for _, p := range []pred{{15, 1, 8, 37}, {12, 1, 8, 5}, {2, 3, 8, 21}} {
		p := p
		add(fmt.Sprintf("LZW %s", p.parms()), "/Filter /LZWDecode /DecodeParms "+p.parms(), func(b []byte) []byte { return lzwEncode(p.encode(b), 1) })
	}
	// The last row short: the padding that made it whole cut off again.
	for _, p := range []pred{{15, 3, 8, 23}, {2, 1, 8, 47}} {
		p := p
		add(fmt.Sprintf("Flate %s, last row short", p.parms()), "/Filter /FlateDecode /DecodeParms "+p.parms(), func(b []byte) []byte {
			enc := p.encode(b)
			return flate(enc[:len(enc)-(p.row()-len(b)%p.row())%p.row()])
		})
	}
	p12 := pred{12, 1, 8, 5}
	add("chain AHx Flate, parms [null <<>>]", "/Filter [/ASCIIHexDecode /FlateDecode] /DecodeParms [null "+p12.parms()+"]",
		func(b []byte) []byte { return hexEncode(flate(p12.encode(b))) })
	add("chain A85 LZW, abbreviated, parms [null <<>>]", "/Filter [/A85 /LZW] /DecodeParms [null << /EarlyChange 0 >>]",
		func(b []byte) []byte { return a85Encode(lzwEncode(b, 0)) })
	add("chain AHx RL, no parms", "/Filter [/AHx /RL]", func(b []byte) []byte { return hexEncode(rlEncode(b)) })
	add("chain of one, parms a dictionary", "/Filter [/FlateDecode] /DecodeParms "+p12.parms(), func(b []byte) []byte { return flate(p12.encode(b)) })
	lenient()
	add("one filter, parms an array", "/Filter /FlateDecode /DecodeParms ["+p12.parms()+"]", func(b []byte) []byte { return flate(p12.encode(b)) })
	lenient()
	add("chain A85 Fl RL", "/Filter [/A85 /Fl /RL] /DecodeParms [null null]", func(b []byte) []byte { return a85Encode(flate(rlEncode(b))) })
	return cases
}

// Each filter, predictor and chain decodes a content stream to the text
// it shows; poppler's pdftotext reads the same text from the same file,
// so the encoders are right too. Every page also draws an image XObject in
// DCTDecode, which must not disturb it.
func TestExtractFilters(t *testing.T) {
	for _, c := range filterCases() {
		t.Run(c.name, func(t *testing.T) {
			data := filteredPages(pdftexttest.Stream(c.data, c.dict))
			doc, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{Time: time.Minute})
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			want := words(strings.Join(c.lines, " "))
			if got := words(doc.Pages[0]); got != want {
				t.Fatalf("note %q\ngot  %.300q\nwant %.300q", doc.Note, got, want)
			}
			if doc.Note != "" {
				t.Errorf("note = %q", doc.Note)
			}
			if c.lenient {
				return
			}
			if ref, ok := popplerText(t, data); ok && words(ref) != want {
				t.Errorf("pdftotext reads another text: the encoder is wrong\ngot  %.300q\nwant %.300q", words(ref), want)
			}
		})
	}
}

// objStmFile is a file whose page tree and font are in an object stream
// encoded with objDict's filters (objEnc), found through an xref stream
// encoded with xrefDict's (xrefEnc); the page shows lines.
func objStmFile(lines []string, objDict string, objEnc func([]byte) []byte, xrefDict string, xrefEnc func([]byte) []byte) []byte {
	inStm := []string{
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		filterFont,
	}
	ids := []int{2, 3, 5}
	var head, body bytes.Buffer
	for i, o := range inStm {
		fmt.Fprintf(&head, "%d %d ", ids[i], body.Len())
		body.WriteString(o + "\n")
	}
	stm := append(head.Bytes(), body.Bytes()...)
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	off := map[int]int{}
	obj := func(n int, s string) {
		off[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, s)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(4, pdftexttest.Stream(flate(filterContent(lines)), "/Filter /FlateDecode"))
	obj(6, pdftexttest.Stream(objEnc(stm), fmt.Sprintf("/Type /ObjStm /N 3 /First %d %s", head.Len(), objDict)))
	var rows bytes.Buffer
	row := func(t byte, f2 uint32, f3 uint16) {
		rows.Write([]byte{t, byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2), byte(f3 >> 8), byte(f3)})
	}
	xoff := b.Len()
	row(0, 0, 65535)
	row(1, uint32(off[1]), 0)
	row(2, 6, 0)
	row(2, 6, 1)
	row(1, uint32(off[4]), 0)
	row(2, 6, 2)
	row(1, uint32(off[6]), 0)
	row(1, uint32(xoff), 0)
	x := xrefEnc(rows.Bytes())
	fmt.Fprintf(&b, "7 0 obj\n<< /Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R /Length %d %s >>\nstream\n", len(x), xrefDict)
	b.Write(x)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xoff)
	return b.Bytes()
}

// The parser's own streams decode with the new filters too: an xref
// stream in LZW with PNG predictors of every row type, an object stream
// in ASCIIHex over RunLength, and one in LZW (EarlyChange 0) under TIFF
// predictor 2.
func TestExtractFilteredFileStructure(t *testing.T) {
	png := pred{15, 1, 8, 7}
	tiff := pred{2, 1, 8, 9}
	for _, c := range []struct {
		name             string
		objDict, xrefDct string
		objEnc, xrefEnc  func([]byte) []byte
	}{
		{"xref LZW PNG, objstm AHx RL", "/Filter [/AHx /RL]", "/Filter /LZWDecode /DecodeParms " + png.parms(),
			func(b []byte) []byte { return hexEncode(rlEncode(b)) }, func(b []byte) []byte { return lzwEncode(png.encode(b), 1) }},
		{"xref RL, objstm LZW TIFF", "/Filter /LZWDecode /DecodeParms << /EarlyChange 0 /Predictor 2 /Columns 9 >>", "/Filter /RunLengthDecode",
			func(b []byte) []byte { return lzwEncode(tiff.encode(b), 0) }, rlEncode},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := filterLines("structure", 20)
			data := objStmFile(lines, c.objDict, c.objEnc, c.xrefDct, c.xrefEnc)
			doc, err := pdftext.Extract(data)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			want := words(strings.Join(lines, " "))
			if got := words(strings.Join(doc.Pages, " ")); got != want {
				t.Fatalf("got %.200q, want %.200q (note %q)", got, want, doc.Note)
			}
			if ref, ok := popplerText(t, data); ok && words(ref) != want {
				t.Errorf("pdftotext reads %.200q", words(ref))
			}
		})
	}
}

// malformedFilters are content streams whose filter data or parameters are
// wrong, with a word of the reason the page's note must give.
func malformedFilters() []struct {
	name, dict, reason string
	data               []byte
} {
	text := filterContent([]string{"malformed"})
	return []struct {
		name, dict, reason string
		data               []byte
	}{
		{"LZW code past the table", "/Filter /LZWDecode", "LZWDecode", []byte{0x80, 0x7f, 0xff, 0xff, 0xff, 0xff}},
		{"LZW EarlyChange 2", "/Filter /LZWDecode /DecodeParms << /EarlyChange 2 >>", "EarlyChange", lzwEncode(text, 1)},
		{"AHx not a digit", "/Filter /ASCIIHexDecode", "ASCIIHexDecode", []byte("4254 2047 zz>")},
		{"RL run cut short", "/Filter /RunLengthDecode", "RunLengthDecode", []byte{40, 'B', 'T'}},
		{"RL repeat cut short", "/Filter /RunLengthDecode", "RunLengthDecode", []byte{1, 'B', 'T', 200}},
		{"A85 bad group", "/Filter /ASCII85Decode", "ascii85", []byte("87czUR~>")},
		{"Flate not zlib", "/Filter /FlateDecode", "FlateDecode", []byte("not zlib at all")},
		{"Flate cut short under a predictor", "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4 >>", "unexpected EOF", flate(pred{12, 1, 8, 4}.encode(text))[:40]},
		{"PNG row filter 7", "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4 >>", "row filter", flate([]byte{7, 1, 2, 3, 4})},
		{"predictor 3", "/Filter /FlateDecode /DecodeParms << /Predictor 3 >>", "predictor", flate(text)},
		{"predictor 16", "/Filter /LZWDecode /DecodeParms << /Predictor 16 >>", "predictor", lzwEncode(text, 1)},
		{"Colors 0", "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Colors 0 >>", "Colors", flate(text)},
		{"Colors 10^9", "/Filter /FlateDecode /DecodeParms << /Predictor 2 /Colors 1000000000 >>", "Colors", flate(text)},
		{"BitsPerComponent 3", "/Filter /FlateDecode /DecodeParms << /Predictor 12 /BitsPerComponent 3 >>", "BitsPerComponent", flate(text)},
		{"row of 32 MiB", "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Colors 32 /BitsPerComponent 16 /Columns 1048576 >>", "row", flate(text)},
		{"filter not a name", "/Filter [/FlateDecode 7]", "filter", flate(text)},
		{"17 filters", "/Filter [" + strings.Repeat("/AHx ", 17) + "]", "filters", []byte(">")},
		{"unknown filter", "/Filter /BrotliDecode", "unknown filter BrotliDecode", text},
		{"DCTDecode content", "/Filter /DCTDecode", "image data", []byte("\xff\xd8\xff")},
		{"JPXDecode content", "/Filter /JPXDecode", "image data", []byte("jpx")},
		{"CCITTFaxDecode content", "/Filter /CCF", "image data", []byte("ccitt")},
		{"JBIG2Decode content", "/Filter [/AHx /JBIG2Decode]", "image data", []byte("00>")},
	}
}

// Malformed filter data or parameters fail their page only, with the
// reason in the note; never a panic, never the document. A content stream
// in an image-only filter is named so.
func TestMalformedFilters(t *testing.T) {
	good := filterLines("good", 3)
	for _, c := range malformedFilters() {
		t.Run(c.name, func(t *testing.T) {
			data := filteredPages(pdftexttest.Stream(filterContent(good), ""), pdftexttest.Stream(c.data, c.dict))
			doc, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{Time: 10 * time.Second})
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if words(doc.Pages[0]) != words(strings.Join(good, " ")) || doc.Pages[1] != "" {
				t.Errorf("pages = %q", doc.Pages)
			}
			if !strings.Contains(doc.Note, "page 2") || !strings.Contains(doc.Note, c.reason) {
				t.Errorf("note = %q, want page 2 and %q", doc.Note, c.reason)
			}
		})
	}
}

// bombContent is a content stream showing one string of n letters.
func bombContent(n int) []byte {
	return append(append([]byte("BT /F1 12 Tf 72 700 Td ("), bytes.Repeat([]byte("A"), n)...), ") Tj ET"...)
}

// lzwBombContent is bombContent(n) in LZWDecode.
func lzwBombContent(n, early int) []byte {
	return lzwBomb([]byte("BT /F1 12 Tf 72 700 Td ("), 'A', n, []byte(") Tj ET"), early)
}

// rlBomb is RunLengthDecode data of n letters A in runs of 128 (64:1).
func rlBomb(n int) []byte {
	out := []byte("\x17BT /F1 12 Tf 72 700 Td (")
	for ; n > 0; n -= 128 {
		out = append(out, 129, 'A')
	}
	return append(out, 6, ')', ' ', 'T', 'j', ' ', 'E', 'T', 128)
}

// LZW and RunLength bombs stop at the decoded-bytes limit, with memory far
// below what they decode to; so does a chain whose inner stage inflates to
// bytes the outer one drops (the content-stream count never sees them:
// the parser's own count of every stage does), and an object stream that
// inflates to blanks.
func TestFilterBombs(t *testing.T) {
	const inflated = 48 << 20
	spaces := pdftexttest.Deflate(pdftexttest.Seg{Pattern: []byte(" "), Count: 256 << 20})
	bombs := []struct {
		name string
		data []byte
	}{
		{"LZW", filteredPages(pdftexttest.Stream(lzwBombContent(inflated, 1), "/Filter /LZWDecode"))},
		{"LZW EarlyChange 0", filteredPages(pdftexttest.Stream(lzwBombContent(inflated, 0), "/Filter /LZWDecode /DecodeParms << /EarlyChange 0 >>"))},
		{"RunLength", filteredPages(pdftexttest.Stream(rlBomb(inflated), "/Filter /RunLengthDecode"))},
		{"Flate then AHx", filteredPages(pdftexttest.Stream(spaces, "/Filter [/FlateDecode /ASCIIHexDecode]"))},
		{"object stream", objStmFile(filterLines("x", 1), "/Filter /FlateDecode", func([]byte) []byte { return spaces }, "", func(b []byte) []byte { return b })},
	}
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			var err error
			start := time.Now()
			alloc := allocated(func() {
				_, err = pdftext.ExtractContext(context.Background(), b.data, pdftext.Limits{Decoded: 8 << 20, Time: time.Minute})
			})
			if limitOf(t, err) != pdftext.LimitDecoded {
				t.Fatalf("err = %v", err)
			}
			t.Logf("%d bytes stopped in %v after %.1f MiB allocated: %v", len(b.data), time.Since(start).Round(time.Millisecond), float64(alloc)/(1<<20), err)
			if alloc > 16<<20 {
				t.Errorf("allocated %d bytes for a bomb stopped at 8 MiB", alloc)
			}
		})
	}
	if testing.Short() || raceEnabled {
		return
	}
	// The control: with the limits lifted, the same LZW and RunLength
	// bombs are decoded whole and allocate their size, so the measure can
	// tell a stopped bomb from a running one.
	for _, b := range bombs[:3] {
		alloc := allocated(func() {
			pdftext.ExtractContext(context.Background(), b.data, pdftext.Limits{Decoded: 1 << 40, Time: time.Minute})
		})
		t.Logf("control, %s with the limit lifted: %.1f MiB allocated", b.name, float64(alloc)/(1<<20))
		if alloc < inflated {
			t.Errorf("control %s allocated only %d bytes", b.name, alloc)
		}
	}
}

// An inline image's data (BI ... ID data EI) is skipped as bytes: binary
// data holding string, array or dictionary delimiters neither swallows
// the text after it nor fails the page (as poppler reads it too).
func TestInlineImageData(t *testing.T) {
	for _, bin := range []string{"\xff\xd8\x01 abc \xff\xd9", "\xff\xd8 ( \x00 \xff\xd9", "\xff\xd8 ) [ << \xffE\xd9"} {
		c := "BT /F1 12 Tf 72 700 Td (before) Tj ET\nBI /W 8 /H 1 /CS /G /BPC 8 /F /DCT ID " + bin + "\nEI\nBT /F1 12 Tf 72 600 Td (after) Tj ET"
		data := filteredPages(pdftexttest.Stream([]byte(c), ""))
		doc, err := pdftext.Extract(data)
		if err != nil || words(doc.Pages[0]) != "before after" {
			t.Errorf("%q: pages %q, err %v, note %q", bin, doc.Pages, err, doc.Note)
		}
		if ref, ok := popplerText(t, data); ok && words(ref) != "before after" {
			t.Errorf("%q: pdftotext reads %q", bin, ref)
		}
	}
}

// The bomb's code-by-code run decodes to the run: Go's compress/lzw reads
// the EarlyChange 0 form, the parser the EarlyChange 1 form.
func TestLZWBombGenerator(t *testing.T) {
	for _, n := range []int{1, 2, 3, 100, 4000, 150_000, 9_000_000} {
		want := bombContent(n)
		got, err := io.ReadAll(lzw.NewReader(bytes.NewReader(lzwBombContent(n, 0)), lzw.MSB, 8))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("n=%d: %d bytes (%v), want %d", n, len(got), err, len(want))
		}
		if n > 200_000 {
			continue // over the page's glyph cap
		}
		doc, err := pdftext.Extract(filteredPages(pdftexttest.Stream(lzwBombContent(n, 1), "/Filter /LZWDecode")))
		if err != nil || len(doc.Pages[0]) != n {
			t.Fatalf("n=%d, EarlyChange 1: %d bytes of text (%v)", n, len(doc.Pages[0]), err)
		}
	}
}

// Malformed filter data in the parser's own streams (an xref stream, an
// object stream) fails the document as corrupt.
func TestMalformedFilteredFileStructure(t *testing.T) {
	same := func(b []byte) []byte { return b }
	bad := func([]byte) []byte { return []byte("41 4G>") }
	for _, c := range []struct {
		name             string
		objDict, xrefDct string
		objEnc, xrefEnc  func([]byte) []byte
	}{
		{"xref stream", "", "/Filter /AHx", same, bad},
		{"xref stream predictor", "", "/Filter /LZW /DecodeParms << /Predictor 9 >>", same, func(b []byte) []byte { return lzwEncode(b, 1) }},
		{"object stream", "/Filter /AHx", "", bad, same},
		{"object stream image filter", "/Filter /DCTDecode", "", same, same},
	} {
		_, err := pdftext.Extract(objStmFile(filterLines("x", 1), c.objDict, c.objEnc, c.xrefDct, c.xrefEnc))
		if !errors.Is(err, pdftext.ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}
