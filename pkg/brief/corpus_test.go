package brief_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/pdftext"
)

// expectation is a hand-written reading of one real filing
// (testdata/filings/<name>.expect.json).
type expectation struct {
	// Set is "dev" (the default: the filings the rules are written
	// against) or "test" (filings of other courts, scored, never tuned
	// against). The split is by court: every filing of a court is in one
	// set (SOURCES.md).
	Set         string   `json:"set"`
	Court       string   `json:"court"`
	CaseNumbers []string `json:"case_numbers"`
	Title       string   `json:"title"`
	Parties     []struct {
		Name string     `json:"name"`
		Role brief.Role `json:"role"`
	} `json:"parties"`
	Kind    brief.Kind `json:"kind"`
	FiledOn string     `json:"filed_on"`
	Noise   []string   `json:"noise"`
	// PDF, when set, is the filing's path relative to testdata/filings
	// ("pairs/….pdf"): a reference to a file the corpus already holds for
	// another test, instead of a second copy beside the expectation.
	PDF string `json:"pdf"`
}

// tally counts matches for precision (of what the Brief says) and recall
// (of what the filing says).
type tally struct{ tp, predicted, expected int }

func (t *tally) add(tp, predicted, expected int) {
	t.tp += tp
	t.predicted += predicted
	t.expected += expected
}

func (t tally) precision() float64 {
	if t.predicted == 0 {
		return 1
	}
	return float64(t.tp) / float64(t.predicted)
}

func (t tally) recall() float64 {
	if t.expected == 0 {
		return 1
	}
	return float64(t.tp) / float64(t.expected)
}

// Thresholds the corpus must meet (issue 14's "done when").
const (
	minRecall    = 0.90
	minPrecision = 0.90
)

// Shapes of noise no Brief may contain, whatever the filing: a docket stamp
// and a run of pleading-paper line numbers.
var (
	stampShapeRE = regexp.MustCompile(`(?i)\bCase:?\s+\S+.{0,40}\b(?:Document|Doc|DktEntry|ID)\b:?\s*#?\s*[\d.-]+.{0,40}\bPage:?\s*\d+`)
	pageOfRE     = regexp.MustCompile(`\bPage:?\s+\d+\s+of\s+\d+\b`)
	lineNumsRE   = regexp.MustCompile(`(?:^|\s)(\d{1,2})\s+\S+(?:\s+\S+){0,12}?\s+(\d{1,2})\s+\S+(?:\s+\S+){0,12}?\s+(\d{1,2})\s+\S+(?:\s+\S+){0,12}?\s+(\d{1,2})\s`)
)

// TestRealFilings builds a Brief from each real filing under
// testdata/filings (one document per matter) and scores it against the
// hand-written expectations: precision and recall per field, printed, and
// thresholds on caption, case numbers and party names; no noise string and
// no docket stamp or line-number run may appear in any Brief.
func TestRealFilings(t *testing.T) {
	files, err := filepath.Glob("../../testdata/filings/*.expect.json")
	if err != nil || len(files) < 12 {
		t.Fatalf("labelled corpus: %d files (%v)", len(files), err)
	}
	sort.Strings(files)
	sets := map[string]*scores{"dev": {}, "test": {}}
	byCourt := map[string]*scores{} // "test/calctapp": one court's tallies
	var noise []string
	for i, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".expect.json")
		var want expectation
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if want.Set == "" {
			want.Set = "dev"
		}
		sc := sets[want.Set]
		if sc == nil {
			t.Fatalf("%s: set %q, want dev or test", f, want.Set)
		}
		sc.files++
		before := *sc
		court, title, cases, parties, roles, kind, filed := &sc.court, &sc.title, &sc.cases, &sc.parties, &sc.roles, &sc.kind, &sc.filed
		pdfPath := strings.TrimSuffix(f, ".expect.json") + ".pdf"
		if want.PDF != "" {
			pdfPath = filepath.Join(filepath.Dir(f), filepath.FromSlash(want.PDF))
		}
		pdf, err := os.ReadFile(pdfPath)
		if err != nil {
			t.Fatal(err)
		}
		var b brief.Brief
		doc, err := pdftext.Extract(pdf)
		if err != nil {
			sc.misses = append(sc.misses, fmt.Sprintf("%s: extraction failed: %v", name, err))
		} else {
			sum := sha256.Sum256(pdf)
			in := brief.Input{
				FirmID: firmID, MatterID: matterID, Title: name,
				Documents: []brief.Document{{ID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", i+1), Name: name + ".pdf",
					SHA256: hex.EncodeToString(sum[:]), Pages: doc.Pages, Note: doc.Note}},
			}
			b, err = brief.NewExtractive().Build(context.Background(), in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if b.Checks.DroppedCitations != 0 {
				t.Errorf("%s: the extractive builder's own citations failed the check: %v", name, b.Checks.Notes)
			}
			js, _ := json.Marshal(b)
			raw := strings.Join(doc.Pages, "\n")
			for _, n := range want.Noise {
				// The check can fail: the noise is in the extracted text.
				if !strings.Contains(raw, n) {
					t.Errorf("%s: noise %q is not in the extracted text; the expectation checks nothing", name, n)
				}
				if strings.Contains(string(js), n) {
					noise = append(noise, fmt.Sprintf("%s: %q", name, n))
				}
			}
			for _, s := range briefTexts(b) {
				for _, re := range []*regexp.Regexp{stampShapeRE, pageOfRE} {
					if m := re.FindString(s); m != "" {
						noise = append(noise, fmt.Sprintf("%s: stamp %q in %q", name, m, clipText(s)))
					}
				}
				if m := lineNumsRE.FindStringSubmatch(s); m != nil && ascending(m[1:]) {
					noise = append(noise, fmt.Sprintf("%s: line numbers %v in %q", name, m[1:], clipText(s)))
				}
			}
		}
		var d brief.DocumentSummary
		if len(b.Documents) > 0 {
			d = b.Documents[0]
		}
		miss := func(field string, got, want any) {
			sc.misses = append(sc.misses, fmt.Sprintf("%s: %s = %v, want %v", name, field, got, want))
		}
		// Court and title: a set of zero or one.
		score1 := func(tl *tally, field, got, want string, same func(a, b string) bool) {
			tp := 0
			if got != "" && want != "" && same(got, want) {
				tp = 1
			}
			tl.add(tp, b2i(got != ""), b2i(want != ""))
			if tp == 0 && (got != "" || want != "") {
				miss(field, fmt.Sprintf("%q", got), fmt.Sprintf("%q", want))
			}
		}
		score1(court, "court", b.Caption.Court, want.Court, func(a, b string) bool { return courtKey(a) == courtKey(b) })
		score1(title, "title", b.Caption.Title, want.Title, sameTitle)
		score1(filed, "filed_on", d.FiledOn, want.FiledOn, func(a, b string) bool { return a == b })
		// Case numbers by brief.CaseKey.
		gotCases := map[string]bool{}
		for _, c := range b.Caption.CaseNumbers {
			gotCases[brief.CaseKey(c)] = true
		}
		tp := 0
		for _, c := range want.CaseNumbers {
			if gotCases[brief.CaseKey(c)] {
				tp++
			}
		}
		cases.add(tp, len(gotCases), len(want.CaseNumbers))
		if tp != len(want.CaseNumbers) || tp != len(gotCases) {
			miss("case_numbers", b.Caption.CaseNumbers, want.CaseNumbers)
		}
		// Party names (litigants only: counsel and witnesses are not in the
		// expectations), and the roles of those found.
		var got []brief.Party
		for _, p := range b.Parties {
			if p.Role == brief.RolePlaintiff || p.Role == brief.RoleDefendant || p.Role == brief.RoleOther {
				got = append(got, p)
			}
		}
		used := map[int]bool{}
		tp = 0
		for _, w := range want.Parties {
			found := -1
			for j, p := range got {
				if !used[j] && sameName(p.Name, w.Name) {
					found = j
					break
				}
			}
			if found < 0 {
				miss("party", "nothing", fmt.Sprintf("%q (%s)", w.Name, w.Role))
				continue
			}
			used[found] = true
			tp++
			roles.add(b2i(got[found].Role == w.Role), 1, 1)
			if got[found].Role != w.Role {
				miss("role of "+w.Name, got[found].Role, w.Role)
			}
		}
		for j, p := range got {
			if !used[j] {
				miss("party", fmt.Sprintf("%q (%s)", p.Name, p.Role), "nothing")
			}
		}
		parties.add(tp, len(got), len(want.Parties))
		kind.add(b2i(d.Kind == want.Kind), 1, 1)
		if d.Kind != want.Kind {
			miss("kind", d.Kind, want.Kind)
		}
		key := want.Set + "/" + courtID(name)
		if byCourt[key] == nil {
			byCourt[key] = &scores{}
		}
		bc := byCourt[key]
		bc.files++
		for _, f := range []struct{ to, now, was *tally }{
			{&bc.court, &sc.court, &before.court}, {&bc.title, &sc.title, &before.title},
			{&bc.cases, &sc.cases, &before.cases}, {&bc.parties, &sc.parties, &before.parties},
		} {
			f.to.add(f.now.tp-f.was.tp, f.now.predicted-f.was.predicted, f.now.expected-f.was.expected)
		}
	}
	for _, n := range noise {
		t.Error("noise in a Brief: " + n)
	}
	for _, set := range []string{"dev", "test"} {
		sc := sets[set]
		t.Logf("%s set: %d labelled documents from %d courts", set, sc.files, len(courtsOf(t, files, set)))
		t.Logf("%-14s %9s %9s  (matched / in Brief / in filing)", "field", "precision", "recall")
		row := func(field string, tl tally) {
			t.Logf("%-14s %8.1f%% %8.1f%%  (%d / %d / %d)", field, 100*tl.precision(), 100*tl.recall(), tl.tp, tl.predicted, tl.expected)
		}
		row("court", sc.court)
		row("title", sc.title)
		row("case numbers", sc.cases)
		row("party names", sc.parties)
		row("party roles", sc.roles)
		row("kind", sc.kind)
		row("filed_on", sc.filed)
		var keys []string
		for k := range byCourt {
			if strings.HasPrefix(k, set+"/") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		t.Logf("%s set by court (recall, matched / in filing): court, title, case numbers, party names", set)
		for _, k := range keys {
			bc := byCourt[k]
			cell := func(tl tally) string { return fmt.Sprintf("%d/%d", tl.tp, tl.expected) }
			t.Logf("  %-14s %2d files  court %-6s title %-6s cases %-6s parties %s", strings.TrimPrefix(k, set+"/"), bc.files, cell(bc.court), cell(bc.title), cell(bc.cases), cell(bc.parties))
		}
		// The test set's individual misses stay hidden unless asked for:
		// the set is held out, and a printed miss is a hint to tune
		// against. Its aggregate and per-court rows are always printed.
		if set == "test" && os.Getenv("BRIEF_SHOW_TEST_MISSES") != "1" {
			if len(sc.misses) > 0 {
				t.Logf("  %d test-set misses not shown (held out; BRIEF_SHOW_TEST_MISSES=1 prints them)", len(sc.misses))
			}
			continue
		}
		for _, m := range sc.misses {
			t.Log("  miss: " + m)
		}
	}
	// The thresholds hold on the development set, the filings the rules
	// are written against. The test set is scored and reported, never
	// tuned against (docs/brief-schema.md gives its scores); its goal is
	// 95% on court, case numbers, title and parties.
	dev := sets["dev"]
	caption := tally{dev.court.tp + dev.title.tp, dev.court.predicted + dev.title.predicted, dev.court.expected + dev.title.expected}
	for _, c := range []struct {
		field string
		tl    tally
	}{{"caption (court and title)", caption}, {"case numbers", dev.cases}, {"party names", dev.parties}} {
		if c.tl.recall() < minRecall || c.tl.precision() < minPrecision {
			t.Errorf("dev set: %s: precision %.1f%%, recall %.1f%%; want both >= %.0f%%", c.field, 100*c.tl.precision(), 100*c.tl.recall(), 100*minRecall)
		}
	}
}

// scores are one set's tallies and misses.
type scores struct {
	files                                            int
	court, title, cases, parties, roles, kind, filed tally
	misses                                           []string
}

// courtsOf lists the courts of a set's filings by the court prefix of
// their file names ("ca9", "cdcal", "bankr-ndill", "tn-wcab").
func courtsOf(t *testing.T, files []string, set string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e expectation
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e.Set == "" {
			e.Set = "dev"
		}
		if e.Set == set {
			out[courtID(filepath.Base(f))] = true
		}
	}
	return out
}

// courtID is a filing's court as its file name begins: one segment
// ("ca9-07-55393-opinion"), two for a bankruptcy or Tennessee court
// ("bankr-ndill-…", "tn-cwc-…").
func courtID(name string) string {
	seg := strings.Split(name, "-")
	if len(seg) > 1 && (seg[0] == "bankr" || seg[0] == "tn") {
		return seg[0] + "-" + seg[1]
	}
	return seg[0]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// briefTexts are the texts a reader sees: names, events, assertions, caption.
func briefTexts(b brief.Brief) []string {
	out := []string{b.Caption.Court, b.Caption.Title}
	for _, p := range b.Parties {
		out = append(out, p.Name)
	}
	for _, e := range b.Chronology {
		out = append(out, e.Text)
		for _, c := range e.Citations {
			out = append(out, c.Quote)
		}
	}
	for _, d := range b.Documents {
		for _, a := range d.Assertions {
			out = append(out, a.Text)
		}
	}
	return out
}

func ascending(nums []string) bool {
	prev := -1
	for _, s := range nums {
		var n int
		fmt.Sscan(s, &n)
		if prev >= 0 && n != prev+1 {
			return false
		}
		prev = n
	}
	return true
}

func clipText(s string) string {
	if len(s) > 90 {
		return s[:90] + "…"
	}
	return s
}

// words of a name or title, lower case, without punctuation.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// courtKey ignores case, punctuation, "the", "for", "of", "in" and a
// plural "Appeals".
func courtKey(s string) string {
	var out []string
	for _, w := range words(s) {
		switch w {
		case "the", "for", "of", "in":
			continue
		}
		out = append(out, strings.TrimSuffix(w, "s"))
	}
	return strings.Join(out, " ")
}

// nameKey ignores case, punctuation, "et al" and a leading "the".
func nameKey(s string) string {
	ws := words(s)
	var out []string
	for i, w := range ws {
		if w == "et" || w == "al" || i == 0 && w == "the" {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// sameName: equal keys, or keys within two edits of each other (a letter
// lost or doubled by a PDF producer) when both are long.
func sameName(a, b string) bool {
	ka, kb := nameKey(a), nameKey(b)
	if ka == kb {
		return true
	}
	return len(ka) >= 10 && len(kb) >= 10 && editDistance(ka, kb) <= 2
}

// sameTitle: both sides of the "v." name the same party.
func sameTitle(a, b string) bool {
	sa, sb := strings.SplitN(a, " v. ", 2), strings.SplitN(b, " v. ", 2)
	if len(sa) != len(sb) {
		return false
	}
	for i := range sa {
		if !sameName(sa[i], sb[i]) {
			return false
		}
	}
	return true
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
