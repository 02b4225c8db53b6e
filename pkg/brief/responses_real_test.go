package brief_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/pdftext"
)

// realPair is a hand-written reading of one real pleading and the
// response to it (testdata/filings/pairs/<name>.pair.json; provenance in
// testdata/filings/SOURCES.md): every allegation of the pleading, as
// numbered, lettered or named there, with the status its response gives
// it and the pages of both.
type realPair struct {
	Court       string   `json:"court"`
	Case        string   `json:"case"`
	Documents   []string `json:"documents"`
	Allegations string   `json:"allegations"` // the document whose allegations are paired
	Response    string   `json:"response"`    // the document that answers them
	Expected    []struct {
		Paragraph      string               `json:"paragraph"`
		Status         brief.ResponseStatus `json:"status"`
		AllegationPage int                  `json:"allegation_page"`
		ResponsePage   int                  `json:"response_page"` // 0: no response
	} `json:"expected"`
	// Unpaired are documents of the matter whose allegations must not be
	// listed: no readable response to them is in the matter.
	Unpaired []string `json:"unpaired"`
	// Floor is the share of expected entries the test requires right (1
	// when omitted): the score is reported either way.
	Floor float64 `json:"floor"`
}

// TestResponsesRealPairs builds the Brief of a matter holding a real
// pleading and its response through the rail's own path (the PDF text
// extraction, then the extractive builder) and scores its responses
// against the hand-written reading: an entry is right when its paragraph,
// status, allegation page and response page (and documents) all match;
// an entry the reading does not have counts against the score.
func TestResponsesRealPairs(t *testing.T) {
	files, err := filepath.Glob("../../testdata/filings/pairs/*.pair.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("real pairs: %d files (%v)", len(files), err)
	}
	sort.Strings(files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pair.json")
		t.Run(name, func(t *testing.T) {
			var want realPair
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			in := brief.Input{FirmID: firmID, MatterID: matterID, Title: want.Case}
			for i, doc := range want.Documents {
				pdf, err := os.ReadFile(filepath.Join(filepath.Dir(f), doc))
				if err != nil {
					t.Fatal(err)
				}
				ex, err := pdftext.Extract(pdf)
				if err != nil {
					t.Fatalf("%s: %v", doc, err)
				}
				sum := sha256.Sum256(pdf)
				in.Documents = append(in.Documents, brief.Document{
					ID: fmt.Sprintf("%08x-0000-4000-8000-%012d", i+1, len(f)), Name: doc,
					SHA256: hex.EncodeToString(sum[:]), Pages: ex.Pages, Note: ex.Note,
				})
			}
			b, err := brief.NewExtractive().Build(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			got := map[string]brief.Response{}
			for _, r := range b.Responses {
				for _, u := range want.Unpaired {
					if r.Allegation.DocumentName == u {
						t.Errorf("%s paragraph %s listed (%s), but no readable response to it is in the matter", u, r.Paragraph, r.Status)
					}
				}
				if r.Allegation.DocumentName == want.Allegations {
					if _, dup := got[r.Paragraph]; dup {
						t.Errorf("paragraph %q paired twice", r.Paragraph)
					}
					got[r.Paragraph] = r
				}
			}
			right := 0
			var misses []string
			for _, e := range want.Expected {
				r, ok := got[e.Paragraph]
				delete(got, e.Paragraph)
				if !ok {
					misses = append(misses, fmt.Sprintf("%s: not listed", e.Paragraph))
					continue
				}
				rp, rdoc := 0, ""
				if r.Response != nil {
					rp, rdoc = r.Response.Page, r.Response.DocumentName
				}
				switch {
				case r.Status != e.Status:
					misses = append(misses, fmt.Sprintf("%s: %s, want %s (%.100q)", e.Paragraph, r.Status, e.Status, textOf(r.Response)))
				case r.Allegation.Page != e.AllegationPage:
					misses = append(misses, fmt.Sprintf("%s: allegation on page %d, want %d", e.Paragraph, r.Allegation.Page, e.AllegationPage))
				case rp != e.ResponsePage || rp != 0 && rdoc != want.Response:
					misses = append(misses, fmt.Sprintf("%s: response %s page %d, want %s page %d", e.Paragraph, rdoc, rp, want.Response, e.ResponsePage))
				default:
					right++
				}
			}
			for p, r := range got {
				misses = append(misses, fmt.Sprintf("%s: listed (%s) but no allegation of that name: %.80q", p, r.Status, r.Allegation.Text))
			}
			sort.Strings(misses)
			score := float64(right) / float64(len(want.Expected)+len(got))
			t.Logf("%s (%s): %d of %d allegations paired with the right status and pages (%d listed that are not allegations): %.0f%%",
				want.Case, want.Court, right, len(want.Expected), len(got), 100*score)
			for _, m := range misses {
				t.Logf("  miss: %s", m)
			}
			floor := want.Floor
			if floor == 0 {
				floor = 1
			}
			if score < floor {
				t.Errorf("score %.3f under the floor %.3f: %v", score, floor, misses)
			}
		})
	}
}

func textOf(p *brief.Passage) string {
	if p == nil {
		return ""
	}
	return p.Text
}
