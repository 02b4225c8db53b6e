package pdftext_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// rawPDF assembles a classic PDF (header, numbered objects, xref table,
// trailer) from object bodies; object i+1 is objs[i] and object 1 is the
// catalog.
func rawPDF(objs ...string) []byte { return pdftexttest.RawPDF("", objs...) }

func textPage(content string) string {
	return fmt.Sprintf("stream\n%s\nendstream", content)
}

// onePagePDF is a one-page PDF whose page draws content with font F1, the
// standard Type 1 font baseFont.
func onePagePDF(content, baseFont string) []byte {
	return rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\n%s", len(content), textPage(content)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /"+baseFont+" >>",
	)
}

// fpdfDoc renders pages with fpdf; an empty string is a page with no text.
func fpdfDoc(t testing.TB, protect bool, pages ...string) []byte {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	pdf.SetModificationDate(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if protect {
		pdf.SetProtection(fpdf.CnProtectPrint, "", "owner-secret")
	}
	for _, p := range pages {
		pdf.AddPage()
		pdf.SetFont("Helvetica", "", 11)
		if p != "" {
			pdf.MultiCell(0, 5, p, "", "L", false)
		} else {
			pdf.Rect(20, 20, 100, 100, "D")
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExtractPages(t *testing.T) {
	data := fpdfDoc(t, false,
		"First page. It says the contract was signed on 14 January 2025.",
		"",
		"Third   page\twith    odd spacing.",
		"",
		"",
	)
	doc, err := pdftext.Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"First page. It says the contract was signed on 14 January 2025.",
		"",
		"Third page with odd spacing.",
		"",
		"",
	}
	if len(doc.Pages) != len(want) {
		t.Fatalf("got %d pages, want %d", len(doc.Pages), len(want))
	}
	for i := range want {
		if doc.Pages[i] != want[i] {
			t.Errorf("page %d = %q, want %q", i+1, doc.Pages[i], want[i])
		}
	}
	if wantNote := "no text layer on pages 2, 4-5; they may be scanned images"; doc.Note != wantNote {
		t.Errorf("note = %q, want %q", doc.Note, wantNote)
	}
}

func TestExtractWrappedParagraph(t *testing.T) {
	long := strings.Repeat("The carrier shall deliver each shipment within twenty-one days of booking. ", 6)
	data := fpdfDoc(t, false, "HEADING\n"+long+"\nShort closing line.")
	doc, err := pdftext.Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	// One line of the page per line of text; empty lines around the
	// wrapped paragraph, whose lines are kept as laid out.
	paras := strings.Split(doc.Pages[0], "\n\n")
	if len(paras) != 3 || paras[0] != "HEADING" || paras[2] != "Short closing line." {
		t.Fatalf("paragraphs = %q", paras)
	}
	lines := strings.Split(paras[1], "\n")
	if len(lines) < 3 {
		t.Errorf("wrapped paragraph has %d lines, want several: %q", len(lines), paras[1])
	}
	if got := strings.Join(lines, " "); got != strings.TrimSpace(long) {
		t.Errorf("paragraph lines joined =\n%q\nwant\n%q", got, strings.TrimSpace(long))
	}
}

func TestExtractScannedNote(t *testing.T) {
	for _, f := range samples.PDFs() {
		if f.Name != samples.ScannedName {
			continue
		}
		doc, err := pdftext.Extract(f.Data)
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.Pages) != 1 || doc.Pages[0] != "" {
			t.Errorf("pages = %q, want one empty page", doc.Pages)
		}
		if !strings.Contains(doc.Note, "whole document") {
			t.Errorf("note = %q", doc.Note)
		}
	}
}

func TestExtractErrors(t *testing.T) {
	sample := samples.PDFs()[0].Data
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"nil", nil, pdftext.ErrNotPDF},
		{"text", []byte("Dear Sir, please find attached."), pdftext.ErrNotPDF},
		{"docx-like zip", []byte("PK\x03\x04rest"), pdftext.ErrNotPDF},
		{"header only", []byte("%PDF-1.4\n"), pdftext.ErrCorrupt},
		{"truncated", sample[:len(sample)/2], pdftext.ErrCorrupt},
		{"missing tail", sample[:len(sample)-10], pdftext.ErrCorrupt},
		{"garbage body", append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0xff, 0x00, '(', '<'}, 500)...), pdftext.ErrCorrupt},
		{"no page tree", rawPDF("<< /Type /Catalog >>"), pdftext.ErrCorrupt},
		{"zero pages", rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"), pdftext.ErrEmpty},
		{"cyclic page tree", rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"), pdftext.ErrCorrupt},
		{"only page unreadable", rawPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
			"<< /Length 8 /Filter /FlateDecode >>\n"+textPage("notflate"),
		), pdftext.ErrCorrupt},
		{"encrypted, user password", pdftexttest.Encrypted(), pdftext.ErrEncrypted},
		{"too large", append([]byte("%PDF-1.4\n"), make([]byte, pdftext.MaxSize)...), pdftext.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := pdftext.Extract(c.data)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "pdftext: ") {
				t.Errorf("error lacks context: %q", err)
			}
			if doc.Pages != nil || doc.Note != "" {
				t.Errorf("document returned with error: %+v", doc)
			}
		})
	}
}

func TestExtractRawContent(t *testing.T) {
	// Hand-written content stream: two text objects on one baseline written
	// right-to-left in the stream, then a line below, using Tm and TJ.
	content := "BT /F1 12 Tf 1 0 0 1 300 700 Tm (world.) Tj ET " +
		"BT /F1 12 Tf 1 0 0 1 100 700 Tm (Hello) Tj ET " +
		"BT /F1 12 Tf 1 0 0 1 100 640 Tm [(Second) -250 (line)] TJ ET"
	data := onePagePDF(content, "Helvetica")
	doc, err := pdftext.Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Hello world.\n\nSecond line"; doc.Pages[0] != want {
		// Helvetica is a standard font: without /Widths its widths are
		// still known, so the quarter-em gap inside the TJ array is a
		// space.
		t.Errorf("page = %q, want %q", doc.Pages[0], want)
	}
}

// A producer that draws the same text twice at the same place (a pleading
// paper's column of line numbers run twice, a word overprinted for bold)
// shows it once, and pdftotext reads it once: "16", not "1616". The same
// letter drawn again one advance on ("...", "ll") is text, and a repeat
// one point off is another drawing.
func TestExtractOverprintedGlyphs(t *testing.T) {
	column := "BT /F1 12 Tf 1 0 0 1 70 700 Tm (15) Tj 1 0 0 1 70 676 Tm (16) Tj ET "
	content := column +
		"BT /F1 12 Tf 1 0 0 1 100 700 Tm (Hello...) Tj 1 0 0 1 100 676 Tm (Bold) Tj 1 0 0 1 100 676 Tm (Bold) Tj ET " +
		column +
		"BT /F1 12 Tf 1 0 0 1 100 640 Tm (Shadow) Tj 1 0 0 1 101 640 Tm (Shadow) Tj ET"
	data := onePagePDF(content, "Courier")
	doc, err := pdftext.Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(doc.Pages[0])
	want := []string{"15", "Hello...", "16", "Bold"}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("page = %q, want it to begin with %q", doc.Pages[0], want)
	}
	if rest := strings.Join(got[len(want):], " "); strings.Count(rest, "S") != 2 {
		t.Errorf("a repeat a point off was taken for an overprint: %q", rest)
	}
}

// An OCR text layer in a standard font without /Widths (Times-Roman, one
// Tm per word) writes "CEV" and "A" as two words with a space between,
// the second drawn back over the end of the first: on the page there is
// no gap, and pdftotext reads "CEVA". A space followed by a word at the
// space's own width stays a space, and so does a gap the font's widths
// show inside one string of a font with no /Widths.
func TestExtractStandardFontWidths(t *testing.T) {
	// Times-Roman at 12: C .667 + E .611 + V .722 = 2 em = 24; "of" .5 + .333;
	// the space .25.
	content := "BT /F1 12 Tf 1 0 0 1 100 700 Tm (CEV ) Tj 1 0 0 1 123.4 700 Tm (A has) Tj ET " +
		"BT /F1 12 Tf 1 0 0 1 100 660 Tm (of ) Tj 1 0 0 1 113 660 Tm (the) Tj ET " +
		"BT /F2 12 Tf 1 0 0 1 100 620 Tm [(Second) -250 (line)] TJ ET"
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\n%s", len(content), textPage(content)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding /WinAnsiEncoding >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Bold /Encoding /WinAnsiEncoding >>",
	)
	doc, err := pdftext.Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := "CEVA has\n\nof the\n\nSecond line"; doc.Pages[0] != want {
		t.Errorf("page = %q, want %q", doc.Pages[0], want)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range samples.PDFs() {
		f.Add(s.Data)
		f.Add(s.Data[:len(s.Data)/3])
		f.Add(s.Data[:len(s.Data)-1])
		f.Add(bytes.Replace(s.Data, []byte("/Kids"), []byte("/Kidz"), 1))
		f.Add(bytes.Replace(s.Data, []byte("/Type /Page\n"), []byte("/Type /Pages\n"), 1))
	}
	f.Add([]byte{})
	f.Add([]byte("%PDF-"))
	f.Add([]byte("%PDF-1.4\n%%EOF"))
	f.Add([]byte("%PDF-1.4\nstartxref\n9\n%%EOF\n"))
	f.Add([]byte("not a pdf at all"))
	f.Add(rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"))
	f.Add(rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"))
	f.Add(fpdfDoc(f, true, "x"))

	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := pdftext.Extract(data)
		if err != nil {
			for _, typed := range []error{pdftext.ErrNotPDF, pdftext.ErrCorrupt, pdftext.ErrEncrypted, pdftext.ErrEmpty, pdftext.ErrTooLarge} {
				if errors.Is(err, typed) {
					return
				}
			}
			t.Fatalf("untyped error: %v", err)
		}
		if len(doc.Pages) == 0 {
			t.Fatal("no pages and no error")
		}
		for i, p := range doc.Pages {
			if len(p) > pdftext.MaxPageText {
				t.Fatalf("page %d: %d bytes of text", i+1, len(p))
			}
			if strings.TrimSpace(p) != p {
				t.Fatalf("page %d not trimmed: %q", i+1, p)
			}
		}
	})
}
