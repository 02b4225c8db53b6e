package pdftext_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// fuzzLimits keep one fuzz input's extraction short; the properties are
// the same as with the defaults.
var fuzzLimits = pdftext.Limits{Time: 5 * time.Second, Decoded: 16 << 20, Work: 4 << 20}

// checkExtraction asserts what every input must give: within the time
// limit (plus slack), a typed error or text within the per-page and
// per-document caps, never a panic (a panic fails the fuzz input itself).
func checkExtraction(t *testing.T, data []byte) {
	start := time.Now()
	doc, err := pdftext.ExtractContext(context.Background(), data, fuzzLimits)
	if d := time.Since(start); d > fuzzLimits.Time+5*time.Second {
		t.Fatalf("extraction took %v", d)
	}
	if err != nil {
		if !isTyped(err) {
			t.Fatalf("untyped error: %v", err)
		}
		return
	}
	total := 0
	for i, p := range doc.Pages {
		if len(p) > pdftext.MaxPageText {
			t.Fatalf("page %d: %d bytes", i+1, len(p))
		}
		total += len(p)
	}
	if int64(total) > pdftext.MaxText {
		t.Fatalf("%d bytes of text", total)
	}
	if doc.Work > fuzzLimits.Work+1024 {
		t.Fatalf("work %d over the limit %d", doc.Work, fuzzLimits.Work)
	}
}

// Small shapes (the big ones as seeds would make every fuzz run slow; they
// have TestHostileShapes), with their numbers varied.
func smallShapes() [][]byte {
	out := [][]byte{
		pdftexttest.XrefSubsection(), pdftexttest.XrefStreamSize(), pdftexttest.XrefStreamColumns(),
		pdftexttest.ContentColumns(), pdftexttest.PrevLoop(), pdftexttest.ExtendsLoop(),
		pdftexttest.DictStack(2000, 20000), pdftexttest.XObjectDict(2000, 100), pdftexttest.CMapDictFlood(),
		pdftexttest.TJArray(200_000), pdftexttest.Bomb(1 << 20), pdftexttest.ToUnicodeLong(6000, 20),
		pdftexttest.FormFanout(4),
	}
	// Files in the other filters and predictors, and the parser's own
	// streams in them.
	for _, c := range filterCases()[:12] {
		out = append(out, filteredPages(pdftexttest.Stream(c.data, c.dict)))
	}
	for _, c := range malformedFilters() {
		out = append(out, filteredPages(pdftexttest.Stream(c.data, c.dict)))
	}
	png := pred{15, 1, 8, 7}
	out = append(out, objStmFile(filterLines("s", 3), "/Filter [/AHx /RL]", func(b []byte) []byte { return hexEncode(rlEncode(b)) },
		"/Filter /LZWDecode /DecodeParms "+png.parms(), func(b []byte) []byte { return lzwEncode(png.encode(b), 1) }))
	return out
}

// FuzzFileStructure mutates whole files: cross-reference tables and
// streams, trailers, object streams, the page tree.
func FuzzFileStructure(f *testing.F) {
	for _, s := range smallShapes() {
		f.Add(s)
	}
	f.Add(pdftexttest.ManyPages(3))
	for _, e := range pdftexttest.Encryptions() {
		f.Add(pdftexttest.EncryptedPDF(e, "", "owner", []string{"Encrypted for its permissions."}))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkExtraction(t, data) })
}

// FuzzEncryption mutates entries appended to the encryption dictionary of
// a file encrypted (kind chooses how) with the empty user password:
// lengths of /O, /U, /OE, /UE and /Perms, /Length, /V, /R, crypt filters.
func FuzzEncryption(f *testing.F) {
	for i, extra := range []string{
		"", " /U <00>", " /O <00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0011>", " /Length 99999",
		" /R 7", " /V 3", " /CF << /StdAESV2 << /CFM /V2 /Length 0 >> >>", " /StmF /Identity /StrF /StdAESV2",
		" /UE <00> /OE <00>", " /Perms <>", " /EncryptMetadata false", " /Filter /Adobe.PubSec",
	} {
		f.Add(uint8(i), []byte(extra))
	}
	kinds := pdftexttest.Encryptions()
	f.Fuzz(func(t *testing.T, kind uint8, extra []byte) {
		checkExtraction(t, pdftexttest.EncryptedPDFWith(kinds[int(kind)%len(kinds)], "", "owner", string(extra), []string{"Encrypted for its permissions."}))
	})
}

// FuzzContentStream mutates one page's content stream (uncompressed), in a
// file that is otherwise sound.
func FuzzContentStream(f *testing.F) {
	for _, s := range []string{
		"BT /F1 12 Tf 72 700 Td (Hello) Tj ET",
		"<< >> begin << >> begin x pop x pop end end",
		"BT /F1 12 Tf [(a) -250 (b) 0 0 0 0] TJ ET",
		"q q q 1 0 0 1 0 0 cm Q Q Q Q Q",
		"/n1 Do /n1 Do",
		"BT /F1 12 Tf 72 700 Td <01010101> Tj ET",
		"[[[[[[[[[[ 1 2 3 ]]]]]]]]]] pop",
		"99999999999 beginbfchar endbfchar",
		"BI /W 8 /H 1 /F /DCT ID \xff\xd8 ( [ << \xff\xd9\nEI BT /F1 12 Tf (after) Tj ET",
		"BI /W 1 /H 1 ID EI",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		data := pdftexttest.RawPDF("",
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /n1 6 0 R >> >> /Contents 4 0 R >>",
			pdftexttest.Stream(content, ""),
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
			pdftexttest.Stream([]byte("BT /F1 9 Tf (form) Tj ET"), "/Type /XObject /Subtype /Form /BBox [0 0 10 10]"),
		)
		checkExtraction(t, data)
	})
}

// FuzzCMap mutates a font's ToUnicode CMap (and what the page shows with
// it).
func FuzzCMap(f *testing.F) {
	f.Add([]byte("/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <00> <ff> endcodespacerange 2 beginbfchar <01> <0041> <02> <00410042> endbfchar 1 beginbfrange <10> <20> <0061> endbfrange endcmap CMapName currentdict /CMap defineresource pop end end"), []byte("<0102101112>"))
	f.Add([]byte("<< >> begin << >> begin xx xx xx"), []byte("<01>"))
	f.Add([]byte("1 beginbfrange <0000> <ffff> [<0041> <0042>] endbfrange 1 beginbfrange <0000> <ffff> <0041> endbfrange"), []byte("<00000001fffe>"))
	f.Add([]byte("1 beginbfchar <01> <"+string(bytes.Repeat([]byte("0041"), 500))+"> endbfchar"), []byte("<01010101>"))
	f.Fuzz(func(t *testing.T, cmap, shown []byte) {
		data := pdftexttest.RawPDF("",
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R /F2 7 0 R >> >> /Contents 4 0 R >>",
			pdftexttest.Stream(append(append([]byte("BT /F1 12 Tf 72 700 Td "), shown...), " Tj /F2 10 Tf "+string(shown)+" Tj ET"...), ""),
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 0 /LastChar 2 /Widths [500 500 500] /ToUnicode 6 0 R >>",
			pdftexttest.Stream(cmap, ""),
			"<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /W [0 [500 600] 10 20 700] >>] /ToUnicode 6 0 R >>",
		)
		checkExtraction(t, data)
	})
}

// fuzzFilterDicts are the filters and parameters FuzzFilterData decodes
// its data with.
var fuzzFilterDicts = []string{
	"/Filter /LZWDecode",
	"/Filter /LZWDecode /DecodeParms << /EarlyChange 0 >>",
	"/Filter /ASCIIHexDecode",
	"/Filter /ASCII85Decode",
	"/Filter /RunLengthDecode",
	"/Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors 3 /Columns 5 >>",
	"/Filter /LZWDecode /DecodeParms << /Predictor 2 /BitsPerComponent 4 /Colors 3 /Columns 7 >>",
	"/Filter /FlateDecode /DecodeParms << /Predictor 2 /BitsPerComponent 16 /Colors 2 /Columns 3 >>",
	"/Filter [/AHx /Fl] /DecodeParms [null << /Predictor 12 /Columns 4 >>]",
	"/Filter [/A85 /LZW /RL] /DecodeParms [null << /EarlyChange 0 >> null]",
}

// FuzzFilterData mutates the encoded data of a content stream under one
// of the filters and predictors (the second input picks which).
func FuzzFilterData(f *testing.F) {
	content := filterContent(filterLines("fuzz", 4))
	for i := range fuzzFilterDicts {
		var enc []byte
		switch i {
		case 0:
			enc = lzwEncode(content, 1)
		case 1:
			enc = lzwEncode(content, 0)
		case 2:
			enc = hexEncode(content)
		case 3:
			enc = a85Encode(content)
		case 4:
			enc = rlEncode(content)
		case 5:
			enc = flate(pred{15, 3, 8, 5}.encode(content))
		case 6:
			enc = lzwEncode(pred{2, 3, 4, 7}.encode(content), 1)
		case 7:
			enc = flate(pred{2, 2, 16, 3}.encode(content))
		case 8:
			enc = hexEncode(flate(pred{12, 1, 8, 4}.encode(content)))
		case 9:
			enc = a85Encode(lzwEncode(rlEncode(content), 0))
		}
		f.Add(enc, uint8(i))
	}
	f.Add(lzwBombContent(1<<20, 1), uint8(0))
	f.Add(rlBomb(1<<20), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		checkExtraction(t, filteredPages(pdftexttest.Stream(data, fuzzFilterDicts[int(which)%len(fuzzFilterDicts)])))
	})
}
