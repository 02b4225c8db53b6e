package doctext

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStampsRemovedAndKeptAsMeta(t *testing.T) {
	cases := []struct {
		line              string
		caseNo, entry, on string
		rest              string
	}{
		{"Case: 20-16276, 08/05/2020, ID: 11778722, DktEntry: 19, Page 7 of 15", "20-16276", "19", "2020-08-05", ""},
		{"Case 1:20-cv-01234-ABC Document 12 Filed 05/01/20 Page 3 of 9", "1:20-cv-01234-ABC", "12", "2020-05-01", ""},
		{"Case 1:20-cv-01234-ABC Document 12 Filed 05/01/20 Page 3 of 9 PageID #: 45", "1:20-cv-01234-ABC", "12", "2020-05-01", ""},
		{"Case: 12-2209 Document: 00116475093 Page: 1 Date Filed: 01/03/2013 Entry ID: 5700979", "12-2209", "00116475093", "2013-01-03", ""},
		{"Case 18-53173-jwc Doc 35 Filed 01/30/19 Entered 01/30/19 11:51:34 Desc Main Document Page 3 of 42", "18-53173-jwc", "35", "2019-01-30", ""},
		{"USCA11 Case: 20-13809 Date Filed: 06/16/2021 Page: 1 of 21", "20-13809", "", "2021-06-16", ""},
		{"USCA Case #19-5331 Document #1844950 Filed: 06/05/2020 Page 1 of 19", "19-5331", "1844950", "2020-06-05", ""},
		{"USCA4 Appeal: 19-1234 Doc: 45 Filed: 01/02/2020 Pg: 1 of 10", "19-1234", "45", "2020-01-02", ""},
		{"Case 4:17-cv-04709-JST Document 229-4 Filed 10/29/19 Page 7 of 38 7 a document that was", "4:17-cv-04709-JST", "229-4", "2019-10-29", "a document that was"},
		{"Document Page 3 of 42", "", "", "", ""},
		// A note after the entry number: an ex parte application's papers.
		{"Case 8:15-cv-01228-DOC-MRW Document 132 (Ex Parte) Filed 10/08/18 Page 1 of 8", "8:15-cv-01228-DOC-MRW", "132", "2018-10-08", ""},
	}
	for _, c := range cases {
		rest, s, ok := cutStamp(c.line)
		if !ok {
			t.Errorf("%q: not a stamp", c.line)
			continue
		}
		if s.caseNo != c.caseNo || s.entry != c.entry || NormDate(s.filed) != c.on || rest != c.rest {
			t.Errorf("%q: case %q entry %q filed %q rest %q", c.line, s.caseNo, s.entry, s.filed, rest)
		}
	}
	for _, l := range []string{
		"Case No. 2:18-cv-10166-JAK (AFM)",
		"Page 3 of the Agreement sets out the price.",
		"Document 12 was filed late.",
		"Filed on 3/9/2010 by the debtor.",
		"Case law supports the claim.",
	} {
		if _, _, ok := cutStamp(l); ok {
			t.Errorf("%q taken for a stamp", l)
		}
	}
}

// A state court's e-filing stamp begins with its docket number, not
// "Case": the number and the date filed are kept (New Jersey's Superior
// Court prints "ATL-DC-007956-25 10/08/2025 01:01:36 PM Pg 1 of 6 Trans
// ID: SCP20254267681" on every page).
func TestStateEFilingStamp(t *testing.T) {
	cases := []struct{ line, caseNo, on string }{
		{"ATL-DC-007956-25 10/08/2025 01:01:36 PM Pg 1 of 6 Trans ID: SCP20254267681", "ATL-DC-007956-25", "2025-10-08"},
		{"ATL-DC-007956-25 11/05/2025 9:11:46 AM Pg 1 of 4 Trans ID: SCP20254714229", "ATL-DC-007956-25", "2025-11-05"},
		{"MID-L-001234-24 03/02/2024 4:05:01 PM Pg 2 of 10 Trans ID: LCV2024123456", "MID-L-001234-24", "2024-03-02"},
	}
	for _, c := range cases {
		rest, s, ok := cutStamp(c.line)
		if !ok || rest != "" || s.caseNo != c.caseNo || NormDate(s.filed) != c.on {
			t.Errorf("%q: stamp %v, case %q, filed %q, rest %q", c.line, ok, s.caseNo, s.filed, rest)
		}
	}
	res := Clean([]string{cases[0].line + "\nThe Authority sued.", "ATL-DC-007956-25 10/08/2025 01:01:36 PM Pg 2 of 6 Trans ID: SCP20254267681\nIt answered."})
	if res.Meta.FiledOn != "2025-10-08" || len(res.Meta.CaseNumbers) != 1 || res.Meta.CaseNumbers[0] != "ATL-DC-007956-25" {
		t.Errorf("meta %+v", res.Meta)
	}
	for _, l := range []string{
		"ATL-DC-007956-25 is the docket number of this action.",
		"I-95-N 10/08/2025 is the date the toll was charged, page 4 of the notice.",
		"DOCKET NO.: ATL-DC-007956-25",
	} {
		if _, _, ok := cutStamp(l); ok {
			t.Errorf("%q taken for a stamp", l)
		}
	}
}

// page builds a page of body text with a stamp on top and a page number at
// the bottom.
func page(n, of int, body ...string) string {
	head := fmt.Sprintf("Case: 20-16276, 08/05/2020, ID: 11778722, DktEntry: 19, Page %d of %d", n, of)
	return head + "\n" + strings.Join(body, "\n") + "\n" + fmt.Sprint(n)
}

func TestCleanKeepsPagesAndRemovesNoise(t *testing.T) {
	pages := []string{
		page(1, 4, "UNITED STATES COURT OF APPEALS", "FOR THE NINTH CIRCUIT", "CALVARY CHAPEL DAYTON VALLEY,", "Plaintiff-Appellant,", "v.", "STEVE SISOLAK,", "Defendant-Appellee."),
		page(2, 4, "CALVARY CHAPEL v. SISOLAK", "The district court denied the motion for a prelim-", "inary injunction on July 2, 2020, and the church", "appealed the next day."),
		page(3, 4, "CALVARY CHAPEL v. SISOLAK", "A short line.", "Another paragraph starts here."),
		"",
		page(4, 4, "CALVARY CHAPEL v. SISOLAK", "REVERSED."),
	}
	pages[3], pages[4] = pages[4], ""
	r := Clean(pages)
	if len(r.Pages) != len(pages) {
		t.Fatalf("%d pages out, %d in", len(r.Pages), len(pages))
	}
	want := []string{
		"UNITED STATES COURT OF APPEALS\nFOR THE NINTH CIRCUIT\nCALVARY CHAPEL DAYTON VALLEY,\nPlaintiff-Appellant,\nv.\nSTEVE SISOLAK,\nDefendant-Appellee.",
		"The district court denied the motion for a preliminary injunction on July 2, 2020, and the church appealed the next day.",
		"A short line.\nAnother paragraph starts here.",
		"REVERSED.",
		"",
	}
	if !reflect.DeepEqual(r.Pages, want) {
		t.Errorf("pages:\n%q\nwant\n%q", r.Pages, want)
	}
	wantMeta := Meta{CaseNumbers: []string{"20-16276"}, FiledOn: "2020-08-05", DocketEntry: "19", StampedPages: 4}
	if !reflect.DeepEqual(r.Meta, wantMeta) {
		t.Errorf("meta %+v, want %+v", r.Meta, wantMeta)
	}
}

func TestPleadingLineNumbers(t *testing.T) {
	// Line-structured pleading paper: numbers alone and at line starts.
	var lines []string
	for i := 1; i <= 12; i++ {
		switch {
		case i == 5:
			lines = append(lines, "5 At the July 25, 2016, hearing the court granted")
		case i == 6:
			lines = append(lines, "6 the motion in part and denied it in part, and set")
		case i == 7:
			lines = append(lines, "7 trial for 3 days in March.")
		default:
			lines = append(lines, fmt.Sprint(i))
		}
	}
	r := Clean([]string{strings.Join(lines, "\n")})
	want := "At the July 25, 2016, hearing the court granted the motion in part and denied it in part, and set trial for 3 days in March."
	if r.Pages[0] != want {
		t.Errorf("got %q\nwant %q", r.Pages[0], want)
	}
	// The same numbers inside a paragraph that extraction already joined.
	joined := "1 a document that was not cited 2 in a document that was, that 3 document talks about News, and 4 Bing should have to read the 5 tea leaves on page 12."
	r = Clean([]string{joined})
	want = "a document that was not cited in a document that was, that document talks about News, and Bing should have to read the tea leaves on page 12."
	if r.Pages[0] != want {
		t.Errorf("got %q\nwant %q", r.Pages[0], want)
	}
	// Numbers that do not count up are text.
	text := "The parties met 3 times, then 2 more, then 7 and 9 and 4 more."
	if r := Clean([]string{text}); r.Pages[0] != text {
		t.Errorf("got %q", r.Pages[0])
	}
}

// A filing numbered line by line through the whole document (a pro se
// counterclaim on pleading paper) passes 99 on page 4: the numbers from 100
// on are line numbers like the ones before them, and a heading that starts
// such a line is a heading again ("RELIEF SOUGHT", not "103 RELIEF SOUGHT").
func TestPleadingLineNumbersPastNinetyNine(t *testing.T) {
	page := strings.Join([]string{
		"97 Prevent NJTA from interfering with lawful private travel;",
		"",
		"98 Establish a new legal safeguard; and",
		"",
		"99 Promote public confidence in lawful tolls.",
		"",
		"100 Defendant prays for injunctive and declaratory relief.",
		"",
		"101 RELIEF SOUGHT",
		"",
		"102 WHEREFORE, Defendant requests relief.",
	}, "\n")
	r := Clean([]string{page})
	for _, want := range []string{"\nRELIEF SOUGHT\n", "\nWHEREFORE, Defendant requests relief.", "\nDefendant prays for"} {
		if !strings.Contains("\n"+r.Pages[0], want) {
			t.Errorf("%q not in %q", want, r.Pages[0])
		}
	}
	if strings.Contains(r.Pages[0], "10") {
		t.Errorf("a line number is left: %q", r.Pages[0])
	}
	// Three-digit numbers that do not count up are text.
	text := "The tolls were 204 dollars, the fees 490 dollars, over 136 trips and 512 more."
	if r := Clean([]string{text}); r.Pages[0] != text {
		t.Errorf("got %q", r.Pages[0])
	}
}

func TestRunningHeadersByRepetition(t *testing.T) {
	var pages []string
	bodies := []string{"The compact was signed.", "Texas sued.", "The court dismissed.", "Tarrant appealed.", "We affirm.", "So ordered."}
	for i := 1; i <= 6; i++ {
		head := "Cite as: 569 U. S. ____ (2013)"
		if i%2 == 0 {
			head = "TARRANT REGIONAL WATER DIST. v. HERRMANN"
		}
		pages = append(pages, fmt.Sprintf("%s %d\nOpinion of the Court\n%s", head, i, bodies[i-1]))
	}
	r := Clean(pages)
	for i, p := range r.Pages {
		if want := bodies[i]; p != want {
			t.Errorf("page %d: %q, want %q", i+1, p, want)
		}
	}
	// Two pages are not enough to call a line a running header.
	r = Clean([]string{"No. 12-2207\nFirst.", "No. 12-2209\nSecond."})
	if r.Pages[0] != "No. 12-2207\nFirst." || r.Pages[1] != "No. 12-2209\nSecond." {
		t.Errorf("pages %q", r.Pages)
	}
}

func TestNormDate(t *testing.T) {
	for in, want := range map[string]string{"08/05/2020": "2020-08-05", "5/1/20": "2020-05-01", "2020-02-30": "", "1/30/99": "1999-01-30", "x": ""} {
		if got := NormDate(in); got != want {
			t.Errorf("NormDate(%q) = %q, want %q", in, got, want)
		}
	}
}

// linearBound is what the linear cleaning tests allow: the quadratic code
// took minutes; the linear one takes well under a second (a few under the
// race detector).
var linearBound = map[bool]time.Duration{false: 10 * time.Second, true: 30 * time.Second}[raceEnabled]

// numberedLine is one line of n bytes of small numbers in runs 1 2 3 … 99,
// as ToUnicode tricks put thousands of glyphs on one extracted line: every
// run looks like pleading line numbers, so tens of thousands are removed
// from the same line.
func numberedLine(n int) string {
	var b strings.Builder
	for v := 1; b.Len() < n; v = v%99 + 1 {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String()[:n])
}

// Removing line numbers rebuilds each line once: a page whose one 1 MiB
// line holds 350,000 removable numbers cleans in well under a second (as
// it was, each removal copied the whole line: 13.5 s for a 256 KiB line,
// minutes for 1 MiB).
func TestCleanLongNumberedLineLinear(t *testing.T) {
	// One page (the same line on two pages would be a running header),
	// whose line ends in a word: every number removed is inside the line.
	pages := []string{numberedLine(1<<20) + " end."}
	done := make(chan Result, 1)
	go func() { done <- Clean(pages) }()
	select {
	case res := <-done:
		if res.Removed < 100_000 {
			t.Fatalf("removed %d numbers", res.Removed)
		}
	case <-time.After(linearBound):
		t.Fatalf("cleaning a 1 MiB line of numbers did not end in %v", linearBound)
	}
}

// Undoing hyphens appends in place: a paragraph of 100,000 hyphenated
// lines joins in linear time.
func TestJoinManyHyphensLinear(t *testing.T) {
	lines := make([]string, 0, 100_000)
	for i := 0; i < 100_000; i++ {
		lines = append(lines, "concern-")
	}
	lines = append(lines, "ing")
	done := make(chan string, 1)
	go func() { done <- joinLines(lines) }()
	select {
	case s := <-done:
		if !strings.HasSuffix(s, "concernconcerning") {
			t.Fatalf("joined: %q", s[len(s)-40:])
		}
	case <-time.After(linearBound):
		t.Fatalf("joining 100,000 hyphenated lines did not end in %v", linearBound)
	}
}

// A document over the work budget is a typed error; Clean returns it
// uncleaned.
func TestCleanBudget(t *testing.T) {
	pages := []string{numberedLine(64 << 10)}
	_, err := CleanWithin(pages, 100_000)
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrBudget) || be.Max != 100_000 {
		t.Fatalf("err = %v, want a BudgetError", err)
	}
	if res, err := CleanWithin(pages, DefaultBudget); err != nil || res.Removed == 0 {
		t.Fatalf("within the default budget: %v, removed %d", err, res.Removed)
	}
}

// CPU per byte of line is flat from 1 KB to 1 MB lines: cpu-ns/byte is
// the process's CPU time (user and system) per byte of line, which a
// loaded machine does not inflate as it does wall time (ns/byte).
func BenchmarkCleanLine(b *testing.B) {
	for _, n := range []int{1 << 10, 16 << 10, 256 << 10, 1 << 20} {
		pages := []string{numberedLine(n) + " end."}
		b.Run(strconv.Itoa(n>>10)+"KiB", func(b *testing.B) {
			b.SetBytes(int64(n))
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				Clean(pages)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/byte")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/byte")
		})
	}
}

// FuzzClean asserts what cleaning must do with any pages: end within its
// budget (a typed error past it), keep one page per page, never panic.
func FuzzClean(f *testing.F) {
	f.Add("Case 1:25-cv-01482 Document 12 Filed 06/02/25 Page 1 of 3\n1 The parties\n2 agreed to the\n3 terms of the\n4 agree-\n5 ment", "2\nPage 2")
	f.Add(numberedLine(4096), "concern-\ning")
	f.Add("", "\n\n\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		pages := []string{a, b, a}
		start := time.Now()
		res, err := CleanWithin(pages, 1<<20)
		if time.Since(start) > 5*time.Second {
			t.Fatalf("cleaning took %v", time.Since(start))
		}
		if err != nil {
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if len(res.Pages) != len(pages) {
			t.Fatalf("%d pages out of %d", len(res.Pages), len(pages))
		}
	})
}

// cpuTime is this process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
