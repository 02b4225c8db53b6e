package pdftext_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The generated bomb inflates to exactly the bytes it claims, with a valid
// zlib checksum.
func TestBombGenerator(t *testing.T) {
	const n = 5_000_000
	data := pdftexttest.Bomb(n)
	i := bytes.Index(data, []byte("stream\n")) + len("stream\n")
	j := bytes.Index(data, []byte("\nendstream"))
	zr, err := zlib.NewReader(bytes.NewReader(data[i:j]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	if len(got) != n || !bytes.HasPrefix(got, []byte("BT /F1 12 Tf")) || !bytes.HasSuffix(got, []byte("AAA) Tj ET")) {
		t.Fatalf("inflated %d bytes: %q...%q", len(got), got[:20], got[len(got)-20:])
	}
	if j-i > n/100 {
		t.Errorf("compressed size %d is not a bomb", j-i)
	}
}

func limitOf(t *testing.T, err error) pdftext.Limit {
	t.Helper()
	var le *pdftext.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LimitError", err)
	}
	if !errors.Is(err, pdftext.ErrTooLarge) {
		t.Errorf("LimitError does not match ErrTooLarge: %v", err)
	}
	return le.Limit
}

func TestBadInput(t *testing.T) {
	scan, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scans", "scan-opinion-no-text.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want error
		says string
	}{
		{"empty file", []byte{}, pdftext.ErrNotPDF, "empty"},
		{"html named .pdf", pdftexttest.HTML(), pdftext.ErrNotPDF, "HTML"},
		{"header after 1024 bytes", pdftexttest.JunkBefore(pdftexttest.ManyPages(1), 1100), pdftext.ErrNotPDF, "first 1024 bytes"},
		{"encrypted, user password", pdftexttest.Encrypted(), pdftext.ErrEncrypted, "encrypt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := pdftext.Extract(c.data)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want %v saying %q", err, c.want, c.says)
			}
			if doc.Pages != nil {
				t.Errorf("pages returned with an error")
			}
		})
	}
	t.Run("scan without text layer", func(t *testing.T) {
		doc, err := pdftext.Extract(scan)
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.Pages) != 1 || doc.Pages[0] != "" || !strings.Contains(doc.Note, "no text layer") {
			t.Errorf("pages %q, note %q", doc.Pages, doc.Note)
		}
	})
}

func TestHeaderWithinFirstKilobyte(t *testing.T) {
	clean := pdftexttest.ManyPages(2)
	want, err := pdftext.Extract(clean)
	if err != nil {
		t.Fatal(err)
	}
	absolute := pdftexttest.RawPDF("GARBAGE FROM A MAIL GATEWAY\r\n\r\n",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		pdftexttest.Stream([]byte("BT /F1 12 Tf 72 700 Td (Offsets count from the junk.) Tj ET"), ""),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for name, c := range map[string]struct {
		data []byte
		page string
	}{
		"3 bytes, offsets from header":    {pdftexttest.JunkBefore(clean, 3), want.Pages[1]},
		"1000 bytes, offsets from header": {pdftexttest.JunkBefore(clean, 1000), want.Pages[1]},
		"offsets from start of file":      {absolute, "Offsets count from the junk."},
		"PDF 2.0 header":                  {append([]byte("%PDF-2.0\n"), clean[9:]...), want.Pages[1]},
		"NUL padding after %%EOF":         {append(bytes.Clone(clean), make([]byte, 4096)...), want.Pages[1]},
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := pdftext.Extract(c.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Pages[len(doc.Pages)-1]; got != c.page {
				t.Errorf("last page = %q, want %q", got, c.page)
			}
		})
	}
}

// One unreadable page does not fail the document: the others are
// extracted and the note names it.
func TestBadPageNoted(t *testing.T) {
	good := func(s string) string {
		return pdftexttest.Stream([]byte("BT /F1 12 Tf 72 700 Td ("+s+") Tj ET"), "")
	}
	data := pdftexttest.RawPDF("",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 9 0 R >> >> /Contents 6 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 9 0 R >> >> /Contents 7 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 9 0 R >> >> /Contents 8 0 R >>",
		good("First page."),
		pdftexttest.Stream([]byte("this is not deflate data"), "/Filter /FlateDecode"),
		good("Third page."),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	doc, err := pdftext.Extract(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != 3 || doc.Pages[0] != "First page." || doc.Pages[1] != "" || doc.Pages[2] != "Third page." {
		t.Errorf("pages = %q", doc.Pages)
	}
	if !strings.Contains(doc.Note, "could not read the content of page 2 (") || strings.Contains(doc.Note, "no text layer") {
		t.Errorf("note = %q", doc.Note)
	}
}

func TestPageLimit(t *testing.T) {
	data := pdftexttest.ManyPages(10_000)
	_, err := pdftext.Extract(data)
	if limitOf(t, err) != pdftext.LimitPages || !strings.Contains(err.Error(), "more than 2000 pages") {
		t.Fatalf("err = %v", err)
	}
	// The same kind of document within the limit extracts.
	doc, err := pdftext.Extract(pdftexttest.ManyPages(pdftext.MaxPages))
	if err != nil || len(doc.Pages) != pdftext.MaxPages || doc.Pages[pdftext.MaxPages-1] != "Page 2000 of 2000." {
		t.Fatalf("%d pages: err %v", len(doc.Pages), err)
	}
}

func TestSizeLimit(t *testing.T) {
	data := pdftexttest.ManyPages(3)
	_, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{Size: int64(len(data) - 1)})
	if limitOf(t, err) != pdftext.LimitSize {
		t.Fatalf("err = %v", err)
	}
}

func TestTimeLimit(t *testing.T) {
	data := pdftexttest.ManyPages(50)
	_, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{Time: time.Nanosecond})
	if limitOf(t, err) != pdftext.LimitTime || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = pdftext.ExtractContext(ctx, data, pdftext.Limits{})
	if limitOf(t, err) != pdftext.LimitTime || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: err = %v", err)
	}
}

// allocated returns the bytes allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A decompression bomb stops at the decoded-bytes limit: a typed error,
// and allocation far below what the bomb inflates to. The control run,
// with the limit lifted, shows that the same input does allocate its size
// when nothing stops it.
func TestDecompressionBomb(t *testing.T) {
	const inflated = 96 << 20
	bomb := pdftexttest.Bomb(inflated)
	var err error
	alloc := allocated(func() {
		_, err = pdftext.ExtractContext(context.Background(), bomb, pdftext.Limits{Decoded: 8 << 20})
	})
	if limitOf(t, err) != pdftext.LimitDecoded {
		t.Fatalf("err = %v", err)
	}
	t.Logf("bomb of %d MiB (%d bytes compressed) stopped after %.1f MiB allocated", inflated>>20, len(bomb), float64(alloc)/(1<<20))
	if alloc > 16<<20 {
		t.Errorf("allocated %d bytes for a bomb stopped at 8 MiB", alloc)
	}

	if testing.Short() || raceEnabled {
		// Inflating 256 MiB under the race detector takes minutes.
		return
	}
	// The default decoded limit (256 MiB; the time limit raised so that a
	// slow machine cannot change which limit is met first).
	big := pdftexttest.Bomb(pdftext.MaxDecoded + 1<<20)
	if _, err := pdftext.ExtractContext(context.Background(), big, pdftext.Limits{Time: time.Hour}); limitOf(t, err) != pdftext.LimitDecoded {
		t.Fatalf("default decoded limit: err = %v", err)
	}

	const small = 24 << 20
	alloc = allocated(func() {
		pdftext.ExtractContext(context.Background(), pdftexttest.Bomb(small), pdftext.Limits{Decoded: 1 << 40})
	})
	t.Logf("control, a %d MiB bomb with the limit lifted: %.1f MiB allocated", small>>20, float64(alloc)/(1<<20))
	if alloc < small {
		t.Errorf("control allocated only %d bytes: the measure cannot tell a stopped bomb from a running one", alloc)
	}
}

// Extraction stops once the document's text passes its limit (by default
// rail.MaxDocumentBytes, what the record layer accepts), instead of
// building text that will be refused.
func TestTextLimit(t *testing.T) {
	if pdftext.MaxText != rail.MaxDocumentBytes {
		t.Fatalf("MaxText %d, rail.MaxDocumentBytes %d", pdftext.MaxText, rail.MaxDocumentBytes)
	}
	data := pdftexttest.Pages(20, pdftexttest.FilingPage) // about 3 KB of text a page
	doc, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{Text: 20_000})
	if limitOf(t, err) != pdftext.LimitText || doc.Pages != nil {
		t.Fatalf("err = %v, pages %d", err, len(doc.Pages))
	}
	if _, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{}); err != nil {
		t.Fatalf("default limit: %v", err)
	}
}
