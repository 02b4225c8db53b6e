// Package pdftexttest builds the bad and oversized inputs that tests and
// benchmarks feed to pdftext: a decompression bomb, a document of many
// pages, HTML saved as .pdf, encrypted PDFs (each kind of the standard
// security handler, with or without a user password), and junk before the
// header.
// Everything is generated; nothing here is read from disk.
package pdftexttest

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// RawPDF assembles a classic PDF (header, numbered objects, xref table,
// trailer) from object bodies; object i+1 is objs[i] and object 1 is the
// catalog. Offsets count from the start of prefix, which comes before the
// header.
func RawPDF(prefix string, objs ...string) []byte {
	return rawPDF(prefix+"%PDF-1.4\n", "", objs)
}

// rawPDF writes head, the numbered objects, their xref table and a
// trailer with trailerExtra after its /Root entry.
func rawPDF(head, trailerExtra string, objs []string) []byte {
	var b bytes.Buffer
	b.WriteString(head)
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, trailerExtra, xref)
	return b.Bytes()
}

// Stream is the body of a stream object holding data, with extra
// dictionary entries.
func Stream(data []byte, dict string) string {
	return fmt.Sprintf("<< /Length %d %s >>\nstream\n%s\nendstream", len(data), dict, data)
}

const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 32 /LastChar 126 /Widths [" +
	"278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556 556 " +
	"278 278 584 584 584 556 1015 667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 667 778 722 667 " +
	"611 722 667 944 667 667 611 278 278 278 469 556 333 556 556 500 556 556 278 556 556 222 222 500 222 833 " +
	"556 556 556 556 333 500 278 556 500 722 500 500 500 334 260 334 584] >>"

// Pages builds a PDF of n pages from a page template: page i shows
// text(i) as a few lines of 11-point Helvetica. Page objects are distinct;
// content streams are uncompressed.
func Pages(n int, text func(i int) []string) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", helvetica}
	kids := make([]string, n)
	for i := 0; i < n; i++ {
		page := len(objs) + 1
		kids[i] = fmt.Sprintf("%d 0 R", page)
		var c strings.Builder
		c.WriteString("BT /F1 11 Tf 72 760 Td 14 TL\n")
		for _, l := range text(i) {
			fmt.Fprintf(&c, "(%s) Tj T*\n", escape(l))
		}
		c.WriteString("ET")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", page+1),
			Stream([]byte(c.String()), ""))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return RawPDF("", objs...)
}

var escaper = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)

func escape(s string) string { return escaper.Replace(s) }

// FilingPage is the text of page i of a generated filing: a docket stamp
// and numbered paragraphs, about 40 lines.
func FilingPage(i int) []string {
	lines := []string{fmt.Sprintf("Case 1:25-cv-01482 Document 12 Filed 06/02/25 Page %d", i+1)}
	for l := 0; l < 40; l++ {
		lines = append(lines, fmt.Sprintf("%d. On 14 January 2025 the parties signed the agreement at issue, clause %d.", 40*i+l+1, l+1))
	}
	return lines
}

// ManyPages is a valid PDF of n short pages.
func ManyPages(n int) []byte {
	return Pages(n, func(i int) []string { return []string{fmt.Sprintf("Page %d of %d.", i+1, n)} })
}

// Bomb is a one-page PDF whose content stream is a few hundred kilobytes of
// FlateDecode data that inflate to decoded bytes: a string being shown,
// made of one repeated letter.
func Bomb(decoded int64) []byte {
	head, tail := []byte("BT /F1 12 Tf 72 700 Td ("), []byte(") Tj ET")
	run := decoded - int64(len(head)+len(tail))
	z := zlibRun(head, 'A', max(run, 1), tail)
	return RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		Stream(z, "/Filter /FlateDecode"),
		helvetica,
	)
}

// zlibRun writes a zlib stream of head, n copies of c, and tail, by hand:
// one fixed-Huffman block whose run is length-258, distance-1 copies (13
// bits per 258 bytes), so building a gigabyte bomb takes milliseconds.
func zlibRun(head []byte, c byte, n int64, tail []byte) []byte {
	var w bitWriter
	w.buf = append(w.buf, 0x78, 0x01)
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE = fixed Huffman
	lit := func(b byte) {
		if b < 144 {
			w.code(0x30+uint32(b), 8)
		} else {
			w.code(0x190+uint32(b-144), 9)
		}
	}
	for _, b := range head {
		lit(b)
	}
	lit(c)
	left := n - 1
	for left >= 258 {
		w.code(0xC5, 8) // length code 285: 258 bytes
		w.code(0, 5)    // distance code 0: distance 1
		left -= 258
	}
	for ; left > 0; left-- {
		lit(c)
	}
	for _, b := range tail {
		lit(b)
	}
	w.code(0, 7) // end of block
	w.flush()
	a, b := adler(1, 0, head)
	a, b = adlerRun(a, b, c, n)
	a, b = adler(a, b, tail)
	sum := b<<16 | a
	return append(w.buf, byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum))
}

const mod = 65521

func adler(a, b uint32, p []byte) (uint32, uint32) {
	for _, x := range p {
		a = (a + uint32(x)) % mod
		b = (b + a) % mod
	}
	return a, b
}

// adlerRun updates an Adler-32 state with n copies of c in closed form.
func adlerRun(a, b uint32, c byte, n int64) (uint32, uint32) {
	nm := uint64(n % mod)
	var tri uint64 // n(n+1)/2 mod m
	if n%2 == 0 {
		tri = (uint64(n/2) % mod) * (uint64(n+1) % mod) % mod
	} else {
		tri = (uint64(n) % mod) * (uint64((n+1)/2) % mod) % mod
	}
	nb := (uint64(b) + nm*uint64(a) + uint64(c)*tri) % mod
	na := (uint64(a) + nm*uint64(c)) % mod
	return uint32(na), uint32(nb)
}

type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc uint
}

// bits writes v's n low bits, least significant first.
func (w *bitWriter) bits(v uint32, n uint) {
	w.acc |= uint64(v) << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes a Huffman code of n bits, most significant bit first.
func (w *bitWriter) code(v uint32, n uint) {
	var r uint32
	for i := uint(0); i < n; i++ {
		r = r<<1 | (v>>i)&1
	}
	w.bits(r, n)
}

func (w *bitWriter) flush() {
	if w.nacc > 0 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc, w.nacc = 0, 0
	}
}

// HTML is an error page saved with a .pdf name, as a browser does when a
// court website returns a login or error page instead of the document.
func HTML() []byte {
	return []byte("<!DOCTYPE html>\n<html><head><title>PACER: Login</title></head>\n<body><p>Your session has expired. Please log in again.</p></body></html>\n")
}

// Encrypted is a PDF that needs a user password to open.
func Encrypted() []byte {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	pdf.SetModificationDate(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	pdf.SetProtection(fpdf.CnProtectPrint, "user-secret", "owner-secret")
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 11)
	pdf.MultiCell(0, 5, "Sealed exhibit.", "", "L", false)
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// JunkBefore puts n bytes of junk (a mail gateway's banner, say) before
// the %PDF- header of data, leaving the file's offsets as they were:
// counted from the header.
func JunkBefore(data []byte, n int) []byte {
	junk := bytes.Repeat([]byte("X-Junk: scanned by gateway\r\n"), n/28+1)[:n]
	return append(junk, data...)
}
