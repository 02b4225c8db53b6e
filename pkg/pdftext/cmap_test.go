package pdftext

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// cjkPDF is a one-page PDF whose two lines are shown in a composite font
// (Type0, a CIDFontType0 of the given character collection, not embedded,
// as a Japanese word processor writes it) with the given /Encoding and no
// /ToUnicode; code turns each line into the font's character codes.
func cjkPDF(encoding, ordering string, lines []string, code func(string) []byte) []byte {
	var c strings.Builder
	c.WriteString("BT /F1 12 Tf 72 700 Td\n")
	for i, l := range lines {
		if i > 0 {
			c.WriteString("0 -24 Td\n")
		}
		fmt.Fprintf(&c, "<%s> Tj\n", hex.EncodeToString(code(l)))
	}
	c.WriteString("ET")
	return pdftexttest.RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		pdftexttest.Stream([]byte(c.String()), ""),
		"<< /Type /Font /Subtype /Type0 /BaseFont /HeiseiMin-W3 /Encoding /"+encoding+" /DescendantFonts [6 0 R] >>",
		"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /HeiseiMin-W3 /CIDSystemInfo << /Registry (Adobe) /Ordering ("+ordering+") /Supplement 2 >> "+
			"/FontDescriptor 7 0 R /DW 1000 /W [1 95 500 231 325 500] >>",
		"<< /Type /FontDescriptor /FontName /HeiseiMin-W3 /Flags 6 /FontBBox [0 -141 1000 859] /ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 709 /StemV 69 >>",
	)
}

func ucs2(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.BigEndian.AppendUint16(b, u)
	}
	return b
}

func utf32(s string) []byte {
	var b []byte
	for _, r := range s {
		b = binary.BigEndian.AppendUint32(b, uint32(r))
	}
	return b
}

// TestPredefinedUnicodeCMaps: a composite font whose /Encoding is one of
// the predefined Unicode CMaps (UniJIS-UCS2-H and its kin, PDF 32000-1
// Table 118) shows Unicode codes, and needs no /ToUnicode to be read.
// Japanese, Chinese and Korean word processors write such fonts without
// embedding them; before, every page of such a file came out empty with a
// note calling it a scan.
func TestPredefinedUnicodeCMaps(t *testing.T) {
	lines := []string{"東京地方裁判所 令和5年(ワ)第1234号", "Case No. 2:24-cv-01234 原告 山田太郎"}
	cases := []struct {
		encoding, ordering string
		lines              []string
		code               func(string) []byte
	}{
		{"UniJIS-UCS2-H", "Japan1", lines, ucs2},
		{"UniJIS-UCS2-HW-H", "Japan1", lines, ucs2},
		{"UniJIS-UTF16-H", "Japan1", []string{lines[0] + " 𠮷野家", lines[1]}, ucs2}, // a surrogate pair
		{"UniGB-UCS2-H", "GB1", []string{"北京市第一中级人民法院 民事判决书", "(2023)京01民初123号"}, ucs2},
		{"UniCNS-UTF16-H", "CNS1", []string{"臺灣臺北地方法院 民事判決", "112年度訴字第123號"}, ucs2},
		{"UniKS-UCS2-H", "Korea1", []string{"서울중앙지방법원 판결", "사건 2023가합12345"}, ucs2},
		{"UniJIS-UTF8-H", "Japan1", lines, func(s string) []byte { return []byte(s) }},
		{"UniJIS-UTF32-H", "Japan1", lines, utf32},
	}
	pdftotext, _ := exec.LookPath("pdftotext")
	for _, c := range cases {
		t.Run(c.encoding, func(t *testing.T) {
			data := cjkPDF(c.encoding, c.ordering, c.lines, c.code)
			checkLines(t, pdftotext, data, c.encoding, c.lines)
		})
	}
}

// checkLines requires the one page of data to read as lines, with no
// note, and holds the generated file to poppler's reading of it.
func checkLines(t *testing.T, pdftotext string, data []byte, encoding string, lines []string) {
	t.Helper()
	doc, err := Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(lines, "\n")
	if got := doc.Pages[0]; got != want {
		t.Errorf("page text\n got %q\nwant %q", got, want)
	}
	if doc.Note != "" {
		t.Errorf("note %q, want none", doc.Note)
	}
	crossCheck(t, pdftotext, data, encoding, want)
}

// crossCheck holds a generated file to poppler's reading of it, where
// poppler has the CMap (poppler-data), so that a generator bug cannot
// make the extractor look right.
func crossCheck(t *testing.T, pdftotext string, data []byte, encoding, want string) {
	t.Helper()
	if pdftotext == "" {
		return
	}
	path := filepath.Join(t.TempDir(), "cjk.pdf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, "-q", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	// poppler reads a code through its CID back to Unicode, where
	// Japan1's half-width hyphen is U+2011; the code itself says '-'.
	// GBK-EUC-H's single-byte codes select CIDs poppler maps back to
	// full-width forms; the codes themselves are ASCII. Both are folded.
	ref := strings.Join(strings.Fields(narrow(strings.ReplaceAll(string(out), "\u2011", "-"))), " ")
	if ref == "" {
		t.Logf("pdftotext read no text (no CMap data for %s here); the cross-check is skipped", encoding)
		return
	}
	if w := strings.Join(strings.Fields(narrow(want)), " "); ref != w {
		t.Errorf("pdftotext reads the generated file as %q, want %q: the generator is wrong", ref, w)
	}
}

// narrow maps full-width ASCII forms (U+FF01-U+FF5E) to ASCII.
func narrow(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0xFF01 && r <= 0xFF5E {
			return r - 0xFEE0
		}
		return r
	}, s)
}

// TestPredefinedCharsetCMaps: the predefined CMaps whose codes are a
// national character set's bytes (Shift-JIS, EUC-JP, GBK, GB 18030, Big
// Five, EUC-KR/UHC), as older CJK word processors write them, are read
// through that character set.
func TestPredefinedCharsetCMaps(t *testing.T) {
	pdftotext, _ := exec.LookPath("pdftotext")
	ja := []string{"東京地方裁判所 平成15年(ワ)第1234号", "Case No. 12 原告 山田太郎 ｶﾀｶﾅ"}
	for _, c := range []struct {
		encoding, ordering string
		enc                encoding.Encoding
		lines              []string
	}{
		{"90ms-RKSJ-H", "Japan1", japanese.ShiftJIS, ja},
		{"90msp-RKSJ-H", "Japan1", japanese.ShiftJIS, ja},
		{"EUC-H", "Japan1", japanese.EUCJP, []string{ja[0], "Case No. 12 原告 山田太郎"}},
		{"GBK-EUC-H", "GB1", simplifiedchinese.GBK, []string{"北京市第一中级人民法院 民事判决书", "(2003)京01民初123号"}},
		{"GBK2K-H", "GB1", simplifiedchinese.GB18030, []string{"北京市第一中级人民法院", "判决书 No. 5"}},
		{"B5pc-H", "CNS1", traditionalchinese.Big5, []string{"臺灣臺北地方法院 民事判決", "92年度訴字第123號"}},
		{"KSCms-UHC-H", "Korea1", korean.EUCKR, []string{"서울중앙지방법원 판결", "사건 2003가합12345"}},
	} {
		t.Run(c.encoding, func(t *testing.T) {
			data := cjkPDF(c.encoding, c.ordering, c.lines, func(s string) []byte {
				b, err := c.enc.NewEncoder().Bytes([]byte(s))
				if err != nil {
					t.Fatalf("encode %q: %v", s, err)
				}
				return b
			})
			checkLines(t, pdftotext, data, c.encoding, c.lines)
		})
	}
}

// TestUnmappedCompositeFontNoted: a composite font with neither a
// Unicode CMap nor /ToUnicode (Identity-H) shows glyphs whose characters
// only the font program knows. The page is not a scan, and the note says
// what it is instead.
func TestUnmappedCompositeFontNoted(t *testing.T) {
	data := cjkPDF("Identity-H", "Japan1", []string{"東京地方裁判所"}, ucs2)
	doc, err := Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages[0] != "" {
		t.Fatalf("page text %q, want none (Identity-H codes are glyph ids, not Unicode)", doc.Pages[0])
	}
	want := "page 1 shows text in a font with /Encoding Identity-H and no /ToUnicode map, so its characters cannot be read without OCR"
	if doc.Note != want {
		t.Errorf("note\n got %q\nwant %q", doc.Note, want)
	}
	if strings.Contains(doc.Note, "scan") {
		t.Errorf("note %q calls a page with a text layer a scan", doc.Note)
	}
	// A page with no text shown at all is still the scan note's.
	scan := cjkPDF("Identity-H", "Japan1", nil, ucs2)
	doc, err = Extract(scan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Note, "no text layer") {
		t.Errorf("a page that shows nothing: note %q", doc.Note)
	}
}

// TestUnicodeCMapCodes holds the decoder to the forms' edge cases: a
// lone surrogate, a truncated code, an invalid UTF-8 byte and a control
// code are no text, and each cuts as many bytes as its form says.
func TestUnicodeCMapCodes(t *testing.T) {
	for _, c := range []struct {
		encoding string
		in       []byte
		want     string
	}{
		{"UniJIS-UTF16-H", []byte{0xD8, 0x42, 0xDF, 0xB7, 0x30, 0x42}, "𠮷あ"},
		{"UniJIS-UTF16-H", []byte{0xDC, 0x00, 0x30, 0x42}, "あ"}, // a lone low surrogate
		{"UniJIS-UTF16-H", []byte{0xD8, 0x42, 0x30}, ""},        // a high surrogate, truncated
		{"UniJIS-UCS2-H", []byte{0x00, 0x09, 0x00, 0x41}, "A"},  // a control code
		{"UniJIS-UCS2-H", []byte{0x30, 0x42, 0x30}, "あ"},        // an odd trailing byte
		{"UniJIS-UTF8-H", []byte{0xE3, 0x81, 0x82, 0xFF, 'A'}, "あA"},
		{"UniJIS-UTF8-H", []byte{0xE3, 0x81}, ""},
		{"UniJIS-UTF32-H", []byte{0x00, 0x11, 0x00, 0x00, 0, 0, 0, 'A'}, "A"}, // beyond Unicode
	} {
		m := predefinedUnicodeCMap(c.encoding)
		if m == nil {
			t.Fatalf("%s: not recognised", c.encoding)
		}
		var got bytes.Buffer
		for s := string(c.in); len(s) > 0; {
			n := m.codeLen(s)
			got.WriteString(m.text(s[:n]))
			s = s[n:]
		}
		if got.String() != c.want {
			t.Errorf("%s % x: got %q, want %q", c.encoding, c.in, got.String(), c.want)
		}
	}
	for _, name := range []string{"Identity-H", "90ms-RKSJ-H", "UniJIS-X-H", "GBK-EUC-H", "Uni", "UniJIS-UCS2"} {
		if predefinedUnicodeCMap(name) != nil {
			t.Errorf("%s read as a Unicode CMap", name)
		}
	}
}

// FuzzUnicodeCMap shows arbitrary codes in a font on each form of
// predefined Unicode CMap and on each character-set CMap: the extraction never fails or panics, every
// code cut is at least a byte, and the text is valid UTF-8.
func FuzzUnicodeCMap(f *testing.F) {
	f.Add([]byte{0xD8, 0x42, 0xDF, 0xB7, 0x30, 0x42}, uint8(0))
	f.Add([]byte{0xE3, 0x81, 0x82, 0xFF, 0xF4, 0x90, 0x80, 0x80}, uint8(2))
	f.Add([]byte{0x00, 0x11, 0x00, 0x00, 0xDC}, uint8(3))
	f.Add([]byte{0x93, 0x8C, 0x8B, 0x9E, 0xB6, 0x81}, uint8(5))
	f.Add([]byte{0x8F, 0xA1, 0xA1, 0x8E}, uint8(6))
	f.Add([]byte{0x81, 0x30, 0x81, 0x30, 0x81, 0x30}, uint8(8))
	encodings := []string{"UniJIS-UTF16-H", "UniJIS-UCS2-H", "UniJIS-UTF8-H", "UniJIS-UTF32-H", "UniJIS-UCS2-HW-V",
		"90ms-RKSJ-H", "EUC-H", "GBK-EUC-H", "GBK2K-H", "B5pc-H", "KSCms-UHC-H"}
	f.Fuzz(func(t *testing.T, shown []byte, which uint8) {
		enc := encodings[int(which)%len(encodings)]
		m := predefinedCMap(enc)
		for s := string(shown); len(s) > 0; {
			n := m.codeLen(s)
			if n < 1 || n > len(s) {
				t.Fatalf("%s: code length %d of %d bytes left", enc, n, len(s))
			}
			s = s[n:]
		}
		doc, err := Extract(cjkPDF(enc, "Japan1", []string{string(shown)}, func(s string) []byte { return []byte(s) }))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(doc.Pages[0]) {
			t.Fatalf("%s: invalid UTF-8 %q", enc, doc.Pages[0])
		}
	})
}
