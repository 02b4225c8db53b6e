package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// Every hostile shape, uploaded with the default limits, ends by itself
// within 30 s, with a typed refusal or as text, and writes nothing when
// refused; a real filing then uploads normally in the same process. The
// extraction runs in a worker process with a 512 MiB limit (the default).
func TestUploadHostileShapes(t *testing.T) {
	c, firm, matter := newCLI(t)
	dir := t.TempDir()
	for _, s := range pdftexttest.Hostile() {
		p := writeFile(t, dir, s.Name+".pdf", s.Make())
		start := time.Now()
		code, out, errOut := c.run("upload", "--firm", firm, "--matter", matter, p)
		took := time.Since(start)
		t.Logf("%s: exit %d in %v: %s%s", s.Name, code, took.Round(time.Millisecond), strings.TrimSpace(out), strings.TrimSpace(errOut))
		if took > 30*time.Second {
			t.Errorf("%s: upload took %v", s.Name, took)
		}
		switch code {
		case 0:
			if !strings.Contains(out, "uploaded "+s.Name+".pdf") {
				t.Errorf("%s: exit 0 without an upload: %s", s.Name, out)
			}
		case exitError:
			if !strings.Contains(errOut, "nothing uploaded") || !strings.Contains(errOut, "the PDF") {
				t.Errorf("%s: refusal does not say why: %s", s.Name, errOut)
			}
		default:
			t.Errorf("%s: exit %d: %s", s.Name, code, errOut)
		}
	}
	real, err := os.ReadFile(filepath.Join("..", "..", "testdata", "filings", "ca1-12-2209-order.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	out := c.must("upload", "--firm", firm, "--matter", matter, writeFile(t, dir, "order.pdf", real))
	if !strings.Contains(out, "uploaded order.pdf") || !strings.Contains(out, "2 page(s)") {
		t.Fatalf("real filing after the hostile ones: %s", out)
	}
}
