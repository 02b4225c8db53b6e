package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
	"github.com/pramaan/brief-rail/pkg/record"
)

// rawPDF assembles a minimal PDF (header, objects, xref, trailer); object 1
// is the catalog.
func rawPDF(objs ...string) []byte { return pdftexttest.RawPDF("", objs...) }

// sampleFiles writes the sample PDFs to dir and returns their paths by name.
func sampleFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range samples.PDFs() {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		out[f.Name] = p
	}
	return out
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// written counts what an upload can write: documents, and outbox facts once
// the outbox table exists.
func written(t *testing.T, url string) (docs, facts int) {
	t.Helper()
	pool := railtest.Pool(t, url, 2)
	ctx := context.Background()
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM app.documents`).Scan(&docs); err != nil {
		t.Fatal(err)
	}
	var hasOutbox bool
	pool.QueryRow(ctx, `SELECT to_regclass('ops.domain_event_outbox') IS NOT NULL`).Scan(&hasOutbox)
	if hasOutbox {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox WHERE event_name = 'document.uploaded'`).Scan(&facts); err != nil {
			t.Fatal(err)
		}
	}
	return docs, facts
}

func TestUploadRefusesBadFilesAndWritesNothing(t *testing.T) {
	c, firm, matter := newCLI(t)
	dir := t.TempDir()
	good := sampleFiles(t, dir)[samples.ComplaintName]
	sample := samples.PDFs()[0].Data
	bad := map[string]struct {
		data []byte
		says string
	}{
		"notes.pdf":     {[]byte("these are my notes, not a PDF\n"), "not a PDF"},
		"zero.pdf":      {nil, "file is empty"},
		"nopages.pdf":   {rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"), "no pages"},
		"truncated.pdf": {sample[:len(sample)/2], "corrupt"},
		"login.pdf":     {pdftexttest.HTML(), "is HTML, not a PDF"},
		"sealed.pdf":    {pdftexttest.Encrypted(), "encrypted"},
		"huge.pdf":      {pdftexttest.ManyPages(10_000), "extraction limit on pages"},
		"bomb.pdf":      {pdftexttest.Bomb(64 << 20), "extraction limit on decompressed content"},
	}
	for name, b := range bad {
		p := writeFile(t, dir, name, b.data)
		// Alone, and together with a good file: either way nothing is written.
		for _, files := range [][]string{{p}, {good, p}} {
			// --max-decoded-mib 8: the 64 MiB bomb is refused at 8 MiB, so
			// the test does not spend its time inflating 256 MiB.
			code, out, errOut := c.run(append([]string{"upload", "--firm", firm, "--matter", matter, "--max-decoded-mib", "8"}, files...)...)
			if code != exitError {
				t.Fatalf("upload %v: exit %d, want %d\n%s%s", files, code, exitError, out, errOut)
			}
			if !strings.Contains(errOut, p+": ") || !strings.Contains(errOut, b.says) || !strings.Contains(errOut, "nothing uploaded") {
				t.Errorf("upload %s: stderr %q should name the file and say %q", name, errOut, b.says)
			}
			if strings.Contains(errOut, good+":") {
				t.Errorf("the good file was blamed: %s", errOut)
			}
			if docs, facts := written(t, c.url); docs != 0 || facts != 0 {
				t.Fatalf("upload %v failed but wrote %d documents and %d facts", files, docs, facts)
			}
		}
	}
	// Every bad file is reported at once.
	var all []string
	for name := range bad {
		all = append(all, filepath.Join(dir, name))
	}
	_, _, errOut := c.run(append([]string{"upload", "--firm", firm, "--matter", matter, "--max-decoded-mib", "8", good}, all...)...)
	for _, p := range all {
		if !strings.Contains(errOut, p+": ") {
			t.Errorf("stderr does not name %s:\n%s", p, errOut)
		}
	}
	// An unknown matter writes nothing either.
	if code, _, errOut := c.run("upload", "--firm", firm, "--matter", uuid.NewString(), good); code != exitError ||
		!strings.Contains(errOut, "unknown matter") {
		t.Errorf("upload to an unknown matter: exit %d %s", code, errOut)
	}
	if docs, _ := written(t, c.url); docs != 0 {
		t.Fatalf("wrote %d documents", docs)
	}
}

func TestUploadScannedPDFStoredWithNote(t *testing.T) {
	c, firm, matter := newCLI(t)
	files := sampleFiles(t, t.TempDir())
	out := c.must("upload", "--firm", firm, "--matter", matter, files[samples.ScannedName], files[samples.ComplaintName])
	if !strings.Contains(out, "uploaded "+samples.ScannedName) || !strings.Contains(out, "no text layer") {
		t.Fatalf("upload output should carry the no-text note:\n%s", out)
	}
	pool := railtest.Pool(t, c.url, 2)
	var note, sum string
	var pages []string
	if err := pool.QueryRow(context.Background(), `SELECT note, content_sha256, pages FROM app.documents WHERE name = $1`,
		samples.ScannedName).Scan(&note, &sum, &pages); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "no text layer") || len(pages) == 0 || strings.TrimSpace(strings.Join(pages, "")) != "" {
		t.Errorf("scanned document stored with note %q and pages %q", note, pages)
	}
	raw, _ := os.ReadFile(files[samples.ScannedName])
	if want := record.SHA256Hex(raw); sum != want {
		t.Errorf("content_sha256 %s, want the sha256 of the uploaded bytes %s", sum, want)
	}
	if docs, facts := written(t, c.url); docs != 2 || facts != 2 {
		t.Errorf("wrote %d documents and %d facts, want 2 and 2 (one fact per document)", docs, facts)
	}
}

func TestBriefCommand(t *testing.T) {
	c, firm, matter := newCLI(t)
	files := sampleFiles(t, t.TempDir())
	m := []string{"--firm", firm, "--matter", matter}
	if out := c.must(append([]string{"brief"}, m...)...); !strings.Contains(out, "No Brief yet") {
		t.Fatalf("brief before any build: %s", out)
	}
	c.must(append(append([]string{"upload"}, m...), files[samples.ComplaintName], files[samples.AnswerName], files[samples.ExhibitAName])...)
	c.must(append([]string{"demand"}, m...)...)
	c.must(append([]string{"build", "--builder", "extractive"}, m...)...)

	out := c.must(append([]string{"brief"}, m...)...)
	for _, want := range []string{"status CURRENT", "PARTIES", "CHRONOLOGY", "DOCUMENTS (3)",
		samples.ComplaintName, samples.AnswerName, samples.ExhibitAName, "plaintiff", "defendant", "Harlow", "Penmark", " p.1]"} {
		if !strings.Contains(out, want) {
			t.Errorf("brief output lacks %q:\n%s", want, out)
		}
	}

	var v briefView
	if err := json.Unmarshal([]byte(c.must(append([]string{"brief", "--json"}, m...)...)), &v); err != nil {
		t.Fatal(err)
	}
	var b struct {
		Documents []struct{ Name string } `json:"documents"`
	}
	json.Unmarshal(v.Brief, &b)
	if !v.Current || v.Frame == nil || v.Frame.Token != 1 || len(b.Documents) != 3 {
		t.Fatalf("brief --json: %+v, documents %+v", v, b.Documents)
	}

	c.must(append([]string{"demand"}, m...)...)
	out = c.must(append([]string{"brief"}, m...)...)
	if !strings.Contains(out, "NOT CURRENT: behind by 1 demand(s)") {
		t.Errorf("brief after a new demand should say it is not current:\n%s", out)
	}
	json.Unmarshal([]byte(c.must(append([]string{"brief", "--json"}, m...)...)), &v)
	if v.Current || v.RequestedGeneration != 2 || v.BuiltGeneration != 1 {
		t.Errorf("brief --json after a new demand: current %v requested %d built %d", v.Current, v.RequestedGeneration, v.BuiltGeneration)
	}
}

// Real court filings upload, including one with bytes before its %PDF-
// header (as mail gateways leave them) and a scan without a text layer.
func TestUploadRealFilings(t *testing.T) {
	c, firm, matter := newCLI(t)
	dir := t.TempDir()
	corpus := filepath.Join("..", "..", "testdata")
	read := func(p string) []byte {
		data, err := os.ReadFile(filepath.Join(corpus, p))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	files := []string{
		writeFile(t, dir, "opinion.pdf", read("filings/ca2-08-6301-opinion.pdf")),
		writeFile(t, dir, "order-with-junk.pdf", pdftexttest.JunkBefore(read("filings/ca1-12-2209-order.pdf"), 200)),
		writeFile(t, dir, "scan.pdf", read("scans/scan-in-re-motion-no-text.pdf")),
		// Encrypted for its permissions only (AES-256, no user password):
		// every viewer opens it, so it is uploaded, with its note.
		writeFile(t, dir, "exhibit-secured.pdf", pdftexttest.EncryptedPDF(pdftexttest.EncryptionNamed("aes256-r6"), "", "owner-secret", []string{"Exhibit 7: the lease."})),
	}
	out := c.must(append([]string{"upload", "--firm", firm, "--matter", matter}, files...)...)
	for _, name := range []string{"opinion.pdf", "order-with-junk.pdf", "scan.pdf", "exhibit-secured.pdf"} {
		if !strings.Contains(out, "uploaded "+name) {
			t.Errorf("upload output does not report %s:\n%s", name, out)
		}
	}
	pool := railtest.Pool(t, c.url, 2)
	var pages []string
	if err := pool.QueryRow(context.Background(), `SELECT pages FROM app.documents WHERE name = 'order-with-junk.pdf'`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || !strings.Contains(pages[1], "ORDER OF COURT") {
		t.Errorf("order stored with %d pages: %q", len(pages), pages)
	}
	var note string
	if err := pool.QueryRow(context.Background(), `SELECT pages, note FROM app.documents WHERE name = 'exhibit-secured.pdf'`).Scan(&pages, &note); err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 || pages[0] != "Exhibit 7: the lease." || !strings.Contains(note, "encrypted with permissions only") {
		t.Errorf("secured exhibit stored with pages %q, note %q", pages, note)
	}
	if docs, facts := written(t, c.url); docs != 4 || facts != 4 {
		t.Errorf("wrote %d documents and %d facts, want 4 and 4", docs, facts)
	}
}
