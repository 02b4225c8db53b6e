package samples_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/pdftext"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from the current extraction")

func TestDeterministic(t *testing.T) {
	a, b := samples.PDFs(), samples.PDFs()
	if len(a) != 4 {
		t.Fatalf("got %d samples, want 4", len(a))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s differs between calls", a[i].Name)
		}
	}
}

// TestExtractedText checks each sample's text as pdftext extracts it against
// testdata/<name>.txt, pages separated by a form feed line.
func TestExtractedText(t *testing.T) {
	for _, f := range samples.PDFs() {
		t.Run(f.Name, func(t *testing.T) {
			doc, err := pdftext.Extract(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(doc.Pages, "\n\f\n") + "\n"
			if doc.Note != "" {
				got += "NOTE: " + doc.Note + "\n"
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(f.Name, ".pdf")+".txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("extracted text differs from %s:\n%s", golden, got)
			}
		})
	}
}

func TestPageCounts(t *testing.T) {
	want := map[string]int{
		samples.ComplaintName: 2,
		samples.AnswerName:    2,
		samples.ExhibitAName:  1,
		samples.ScannedName:   1,
	}
	for _, f := range samples.PDFs() {
		doc, err := pdftext.Extract(f.Data)
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.Pages) != want[f.Name] {
			t.Errorf("%s: %d pages, want %d", f.Name, len(doc.Pages), want[f.Name])
		}
		scannedLike := f.Name == samples.ScannedName
		if scannedLike != (doc.Note != "") {
			t.Errorf("%s: note %q", f.Name, doc.Note)
		}
	}
}
