package pdftexttest

import (
	"bytes"
	"fmt"
	"strings"
)

// Shape is one hostile input: a small file built to make a PDF reader
// allocate by a number it reads, follow a reference chain forever, or do
// work out of proportion to its size.
type Shape struct {
	Name string
	What string        // the construction, in a few words
	Make func() []byte // builds the file
}

// Hostile returns every hostile shape, each generated here (the large ones
// are deflate streams of repeated patterns, built in milliseconds).
func Hostile() []Shape {
	return []Shape{
		{"xref-subsection", "classic xref subsection header 9000000000 3", func() []byte { return XrefSubsection() }},
		{"xref-stream-size", "xref stream /Size 1000000000000", func() []byte { return XrefStreamSize() }},
		{"xref-stream-columns", "xref stream with /Predictor 12 /Columns 10000000000000", func() []byte { return XrefStreamColumns() }},
		{"content-columns", "a content stream with /Predictor 12 /Columns 10000000000000", func() []byte { return ContentColumns() }},
		{"prev-loop", "trailer /Prev pointing at its own xref", func() []byte { return PrevLoop() }},
		{"extends-loop", "object stream whose /Extends is itself", func() []byte { return ExtendsLoop() }},
		{"dict-stack", "<< >> begin x1M then x pop x10M in a content stream", func() []byte { return DictStack(1_000_000, 10_000_000) }},
		{"xobject-dict", "indirect /XObject dictionary of 200,000 entries, /n1 Do x100", func() []byte { return XObjectDict(200_000, 100) }},
		{"cmap-dict-flood", "1 MiB ToUnicode CMap with a dictionary flood", func() []byte { return CMapDictFlood() }},
		{"tj-array", "[0 0 0 ...] TJ of 240 MB decoded", func() []byte { return TJArray(120_000_000) }},
		{"literal-string", "one 250 MB literal string", func() []byte { return Bomb(250 << 20) }},
		{"tounicode-long", "one glyph mapped by ToUnicode to 60,000 characters, on 2,000 pages", func() []byte { return ToUnicodeLong(60_000, 2000) }},
		{"form-fanout", "a form XObject that draws itself 16 times, 8 deep (16^8 runs)", func() []byte { return FormFanout(16) }},
	}
}

// onePage is a one-page document whose content stream has the given body
// (already a stream object body) and whose page uses font f as /F1.
func onePage(content, font string) []byte {
	return RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		content,
		font,
	)
}

// XrefSubsection is a classic file whose xref subsection starts at object
// 9,000,000,000: a reader that sizes its table by the number dies.
func XrefSubsection() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	o1 := b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	x := b.Len()
	fmt.Fprintf(&b, "xref\n9000000000 3\n%010d 00000 n \n%010d 00000 n \n%010d 00000 n \n", o1, o1, o1)
	fmt.Fprintf(&b, "trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", x)
	return b.Bytes()
}

// xrefStreamFile is a file whose cross-reference section is an
// uncompressed xref stream (W [1 4 2]) over the given objects, with extra
// entries in its dictionary.
func xrefStreamFile(objs []string, inStream map[int][2]int, extra string, size string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	n := len(objs) + 2 // 0, the objects, and the xref stream itself
	xoff := b.Len()
	var rows bytes.Buffer
	row := func(t byte, f2 uint32, f3 uint16) {
		rows.Write([]byte{t, byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2), byte(f3 >> 8), byte(f3)})
	}
	row(0, 0, 65535)
	for i := range objs {
		if s, ok := inStream[i+1]; ok {
			row(2, uint32(s[0]), uint16(s[1]))
			continue
		}
		row(1, uint32(offsets[i]), 0)
	}
	row(1, uint32(xoff), 0)
	if size == "" {
		size = fmt.Sprint(n)
	}
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %s /W [1 4 2] /Root 1 0 R /Length %d %s >>\nstream\n", n, size, rows.Len(), extra)
	b.Write(rows.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xoff)
	return b.Bytes()
}

var tinyDoc = []string{
	"<< /Type /Catalog /Pages 2 0 R >>",
	"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
	"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
}

// XrefStreamSize is an xref stream claiming 10^12 objects.
func XrefStreamSize() []byte {
	return xrefStreamFile(tinyDoc, nil, "", "1000000000000")
}

// XrefStreamColumns is an xref stream whose PNG predictor has 10^13
// columns: a reader that allocates a row of that size dies.
func XrefStreamColumns() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	o1 := b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 1 0 R >>\nendobj\n")
	_ = o1
	z := Deflate(Seg{[]byte{2, 0, 0, 0, 0, 0, 0, 0}, 4})
	x := b.Len()
	fmt.Fprintf(&b, "2 0 obj\n<< /Type /XRef /Size 3 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 10000000000000 >> /Length %d >>\nstream\n", len(z))
	b.Write(z)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", x)
	return b.Bytes()
}

// ContentColumns is a page whose content stream has the same predictor.
func ContentColumns() []byte {
	z := Deflate(Seg{[]byte("BT /F1 12 Tf 72 700 Td (x) Tj ET"), 1})
	return onePage(Stream(z, "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 10000000000000 >>"), helvetica)
}

// PrevLoop is a classic file whose trailer's /Prev is its own xref.
func PrevLoop() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	o1 := b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 1 0 R >>\nendobj\n")
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 2\n0000000000 65535 f \n%010d 00000 n \n", o1)
	fmt.Fprintf(&b, "trailer\n<< /Size 2 /Root 1 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n", x, x)
	return b.Bytes()
}

// ExtendsLoop is a file whose page tree is in an object stream that does
// not hold it and /Extends itself.
func ExtendsLoop() []byte {
	objstm := "4 0 "
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"", // object 2: in object stream 3, which does not hold it
		fmt.Sprintf("<< /Type /ObjStm /N 1 /First %d /Extends 3 0 R /Length %d >>\nstream\n%snull\nendstream", len(objstm), len(objstm)+4, objstm),
	}
	return xrefStreamFile(objs, map[int][2]int{2: {3, 0}}, "", "")
}

// DictStack is a page whose content stream begins `<< >> begin` begins
// times, then runs `x pop` pops times: a reader that scans the dictionary
// stack for every keyword does begins*pops lookups.
func DictStack(begins, pops int64) []byte {
	z := Deflate(Seg{[]byte("<< >> begin\n"), begins}, Seg{[]byte("x pop\n"), pops})
	return onePage(Stream(z, "/Filter /FlateDecode"), helvetica)
}

// XObjectDict is a page whose /XObject resource dictionary is an indirect
// object of entries names, all the same empty form, shown dos times.
func XObjectDict(entries, dos int) []byte {
	var d strings.Builder
	d.WriteString("<<")
	for i := 1; i <= entries; i++ {
		fmt.Fprintf(&d, " /n%d 6 0 R", i)
	}
	d.WriteString(" >>")
	content := strings.Repeat("/n1 Do\n", dos)
	return RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject 5 0 R >> /Contents 4 0 R >>",
		Stream([]byte(content), ""),
		d.String(),
		Stream([]byte("BT ET"), "/Type /XObject /Subtype /Form /BBox [0 0 10 10]"),
	)
}

// CMapDictFlood is a font whose ToUnicode CMap (just under 1 MiB decoded)
// begins 40,000 dictionaries, then names 40,000 undefined keys.
func CMapDictFlood() []byte {
	z := Deflate(Seg{[]byte("<< >> begin\n"), 40_000}, Seg{[]byte("xx\n"), 160_000})
	font := "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"
	return RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		Stream([]byte("BT /F1 12 Tf 72 700 Td (x) Tj ET"), ""),
		font,
		Stream(z, "/Filter /FlateDecode"),
	)
}

// TJArray is a page showing one TJ array of zeros elements.
func TJArray(zeros int64) []byte {
	z := Deflate(Seg{[]byte("BT /F1 12 Tf 72 700 Td ["), 1}, Seg{[]byte("0 "), zeros}, Seg{[]byte("] TJ ET"), 1})
	return onePage(Stream(z, "/Filter /FlateDecode"), helvetica)
}

// ToUnicodeLong is a document of pages pages, all showing one glyph four
// times, that the font's ToUnicode CMap maps to chars characters.
func ToUnicodeLong(chars, pages int) []byte {
	z := Deflate(Seg{[]byte("1 begincodespacerange <00> <ff> endcodespacerange\n1 beginbfchar <01> <"), 1},
		Seg{[]byte("0041"), int64(chars)}, Seg{[]byte("> endbfchar\n"), 1})
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	// 3: font, 4: CMap, 5: content, then the pages.
	objs = append(objs,
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 1 /LastChar 1 /Widths [500] /ToUnicode 4 0 R >>",
		Stream(z, "/Filter /FlateDecode"),
		Stream([]byte("BT /F1 12 Tf 72 700 Td <01010101> Tj ET"), ""),
	)
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", len(objs)+1)
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)
	return RawPDF("", objs...)
}

// Seg is Count copies of Pattern (under 32 KiB).
type Seg struct {
	Pattern []byte
	Count   int64
}

// Deflate is a zlib stream of the segments in order, written by hand as
// one fixed-Huffman block: each pattern once as literals, then copies of
// 258 bytes at its own distance, so that gigabytes cost milliseconds.
func Deflate(segs ...Seg) []byte {
	var w bitWriter
	w.buf = append(w.buf, 0x78, 0x01)
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // fixed Huffman
	lit := func(b byte) {
		if b < 144 {
			w.code(0x30+uint32(b), 8)
		} else {
			w.code(0x190+uint32(b-144), 9)
		}
	}
	a, s := uint32(1), uint32(0)
	for _, sg := range segs {
		p, total := sg.Pattern, int64(len(sg.Pattern))*sg.Count
		if total == 0 {
			continue
		}
		for _, c := range p {
			lit(c)
		}
		done := int64(len(p))
		for total-done >= 258 {
			code, extra, base := distCode(len(p))
			w.code(0xC5, 8) // length 258
			w.code(uint32(code), 5)
			w.bits(uint32(len(p)-base), extra)
			done += 258
		}
		for ; done < total; done++ {
			lit(p[done%int64(len(p))])
		}
		a, s = adlerRepeat(a, s, p, sg.Count)
	}
	w.code(0, 7) // end of block
	w.flush()
	sum := s<<16 | a
	return append(w.buf, byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum))
}

// distCode is deflate's distance code for d, with its extra bits and base.
func distCode(d int) (code int, extra uint, base int) {
	base = 1
	for c := 0; c < 30; c++ {
		e := uint(0)
		if c >= 4 {
			e = uint(c/2 - 1)
		}
		if d < base+1<<e {
			return c, e, base
		}
		base += 1 << e
	}
	panic("distance over 32 KiB")
}

// adlerRepeat updates an Adler-32 state with n copies of p.
func adlerRepeat(a, b uint32, p []byte, n int64) (uint32, uint32) {
	if len(p) == 1 {
		return adlerRun(a, b, p[0], n)
	}
	for ; n > 0; n-- {
		a, b = adler(a, b, p)
	}
	return a, b
}

// FormFanout is a page drawing a form XObject whose content draws the
// same form fan times (its resources are its own): nesting stops at the
// form depth limit, but fan^depth runs remain.
func FormFanout(fan int) []byte {
	body := "BT /F1 9 Tf (x) Tj ET\n" + strings.Repeat("/Fx Do\n", fan)
	return RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 6 0 R /Contents 4 0 R >>",
		Stream([]byte("/Fx Do"), ""),
		helvetica,
		"<< /Font << /F1 5 0 R >> /XObject << /Fx 7 0 R >> >>",
		Stream([]byte(body), "/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources 6 0 R"),
	)
}
