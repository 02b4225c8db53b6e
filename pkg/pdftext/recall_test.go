package pdftext_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/pkg/pdftext"
)

// minRecall is the word recall every corpus filing must reach, per file,
// against poppler's pdftotext.
const minRecall = 0.995

// corpusDir holds the real court filings (see its SOURCES.md).
const corpusDir = "../../testdata/filings"

// corpus lists the PDFs of the real-filings corpus, sorted by name.
func corpus(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 14 {
		t.Fatalf("corpus has %d PDFs under %s, want at least 14", len(paths), corpusDir)
	}
	sort.Strings(paths)
	return paths
}

// needPdftotext returns the path of poppler's pdftotext. Without it the test
// skips, except in CI (CI=true), where a missing reference tool is a
// failure (pkg/ci): `make test` installs poppler-utils first.
func needPdftotext(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("pdftotext")
	if err != nil {
		ci.MissingTool(t, "pdftotext not found: install poppler-utils (make tools does) to measure word recall")
	}
	return p
}

// referencePages runs pdftotext on one file and returns its text per page
// (pdftotext ends every page with a form feed).
func referencePages(t testing.TB, tool, path string) []string {
	t.Helper()
	var out, stderr bytes.Buffer
	cmd := exec.Command(tool, "-enc", "UTF-8", path, "-")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pdftotext %s: %v: %s", path, err, stderr.String())
	}
	pages := strings.Split(out.String(), "\f")
	if n := len(pages); n > 0 && strings.TrimSpace(pages[n-1]) == "" {
		pages = pages[:n-1]
	}
	return pages
}

var ligatures = strings.NewReplacer("ﬀ", "ff", "ﬁ", "fi", "ﬂ", "fl", "ﬃ", "ffi", "ﬄ", "ffl", "ﬅ", "st", "ﬆ", "st")

// tokens returns the words of s in order: maximal runs of letters and
// digits, after expanding typographic ligatures. Punctuation and spacing do
// not count, so recall measures which words came out, not how they were
// laid out.
func tokens(s string) []string {
	return strings.FieldsFunc(ligatures.Replace(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// lineEndHyphen is a word hyphenated across a line break.
var lineEndHyphen = regexp.MustCompile(`(\pL)[-\x{00AD}\x{2010}]\n+(\p{Ll})`)

// dehyphenate joins words hyphenated at line ends, as pdftotext does in its
// output; our extraction keeps lines as they are on the page (the Brief's
// text cleaning joins them), so the measure does the same to our text.
func dehyphenate(s string) string { return lineEndHyphen.ReplaceAllString(s, "$1$2") }

// pageRecall is the share of the reference's words that our text has on
// the same page: a word counts at most as often as it occurs on that page
// of ours, so a word moved to another page is a miss. Two adjacent
// reference words that our text has as one word both count as found:
// pdftotext splits words where the font size changes (small capitals:
// "F EBRUARY") and glues a few across line ends ("ofjustice").
func pageRecall(ours, ref []string) (hit, total int) {
	for i, r := range ref {
		want := tokens(r)
		got := map[string]int{}
		if i < len(ours) {
			for _, w := range tokens(dehyphenate(ours[i])) {
				got[w]++
			}
		}
		total += len(want)
		var missed []int
		used := map[string]int{}
		for j, w := range want {
			if used[w] < got[w] {
				used[w]++
				hit++
			} else {
				missed = append(missed, j)
			}
		}
		// Joined pairs. (The reverse, a reference word that our text has
		// in two parts, is not credited.)
		for k := 0; k+1 < len(missed); k++ {
			j := missed[k]
			if missed[k+1] != j+1 {
				continue
			}
			joined := want[j] + want[j+1]
			if used[joined] < got[joined] {
				used[joined]++
				hit += 2
				k++
			}
		}
	}
	return hit, total
}

func TestCorpusRecall(t *testing.T) {
	tool := needPdftotext(t)
	var sumHit, sumTotal int
	t.Logf("%-40s %6s %8s %8s  %s", "file", "pages", "words", "recall", "note")
	for _, path := range corpus(t) {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ref := referencePages(t, tool, path)
		doc, err := pdftext.Extract(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(doc.Pages) != len(ref) {
			t.Errorf("%s: %d pages, pdftotext has %d", name, len(doc.Pages), len(ref))
		}
		hit, total := pageRecall(doc.Pages, ref)
		sumHit += hit
		sumTotal += total
		recall := 1.0
		if total > 0 {
			recall = float64(hit) / float64(total)
		}
		t.Logf("%-40s %6d %8d %7.2f%%  work %d  %s", name, len(ref), total, 100*recall, doc.Work, doc.Note)
		if recall < minRecall {
			t.Errorf("%s: word recall %.2f%% against pdftotext, want >= %.0f%%", name, 100*recall, 100*minRecall)
		}
	}
	if sumTotal > 0 {
		t.Logf("%-40s %6s %8d %7.2f%%", "overall", "", sumTotal, 100*float64(sumHit)/float64(sumTotal))
	}
}

// TestRecallMeasureFails is the negative control of the recall measure: a
// text that lost words or moved them to another page scores below the bar.
func TestRecallMeasureFails(t *testing.T) {
	ref := []string{strings.Repeat("alpha beta gamma delta ", 30), "epsilon zeta eta theta"}
	if hit, total := pageRecall(ref, ref); hit != total {
		t.Fatalf("identical text: recall %d/%d", hit, total)
	}
	lost := []string{strings.Replace(ref[0], "gamma", "", 2), ref[1]}
	if hit, total := pageRecall(lost, ref); float64(hit)/float64(total) >= minRecall {
		t.Errorf("two lost words still reach %d/%d", hit, total)
	}
	moved := []string{ref[0] + ref[1], ""}
	if hit, total := pageRecall(moved, ref); float64(hit)/float64(total) >= minRecall {
		t.Errorf("words on the wrong page still reach %d/%d", hit, total)
	}
}
