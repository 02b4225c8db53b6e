// Package doctext cleans the page text of a court filing before anything
// reads it: it removes docket stamps and other running headers and footers,
// page numbers and pleading-paper line numbers, undoes hyphenation at line
// ends and joins lines back into paragraphs. It never moves text from one
// page to another, so a citation of page N of the cleaned text points at
// page N of the filing.
//
// What the docket stamps say (case number, filed date, docket entry) is kept
// as Meta. Clean is pure: no I/O, no global state, deterministic.
package doctext

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Meta is what a document's docket stamps and running headers say.
type Meta struct {
	// CaseNumbers are the case numbers the stamps name, in order of first
	// appearance (e.g. "20-16276", "1:20-cv-01234-ABC").
	CaseNumbers []string `json:"case_numbers,omitempty"`
	// FiledOn is the date the stamps say the document was filed, YYYY-MM-DD,
	// or "" when no stamp carries one.
	FiledOn string `json:"filed_on,omitempty"`
	// DocketEntry is the docket entry or document number the stamps give
	// ("19", "12-2", "00116475093"), or "".
	DocketEntry string `json:"docket_entry,omitempty"`
	// StampedPages counts pages on which a docket stamp was found.
	StampedPages int `json:"stamped_pages,omitempty"`
}

// Result is a cleaned document.
type Result struct {
	// Pages has one entry per input page, in order; paragraphs are separated
	// by "\n" and the lines of a paragraph are joined by single spaces.
	Pages []string
	Meta  Meta
	// Removed counts the lines (or line prefixes) removed as noise.
	Removed int
}

// DefaultBudget is the work CleanWithin may do for one document, in bytes
// of text scanned by its passes: every pass is linear, so a document at the
// record layer's limit (32 MiB of text) costs about a sixth of it.
const DefaultBudget = 1 << 30

// ErrBudget matches every *BudgetError.
var ErrBudget = errors.New("text cleaning over its work budget")

// BudgetError is a document whose cleaning would take more than Max units
// of work (bytes scanned).
type BudgetError struct{ Max int64 }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("text cleaning needs more than %d bytes of work", e.Max)
}
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// meter counts the work of one document's cleaning.
type meter struct{ left, max int64 }

func (m *meter) lines(ls []string) error {
	for _, l := range ls {
		m.left -= int64(len(l)) + 1
	}
	if m.left < 0 {
		return &BudgetError{Max: m.max}
	}
	return nil
}

// Clean cleans the pages of one document. Each input page is text whose
// lines (or paragraphs) are separated by "\n"; a blank line is a paragraph
// break. It is CleanWithin with DefaultBudget; a document over the budget
// (over 100 MiB of text, far past what the record layer stores) comes back
// as it was, uncleaned.
func Clean(pages []string) Result {
	res, err := CleanWithin(pages, DefaultBudget)
	if err != nil {
		return Result{Pages: append([]string(nil), pages...)}
	}
	return res
}

// CleanWithin is Clean with a work budget (bytes scanned, summed over the
// passes); a document over it returns a *BudgetError.
func CleanWithin(pages []string, budget int64) (Result, error) {
	m := &meter{left: budget, max: budget}
	res := Result{Pages: make([]string, len(pages))}
	doc := make([][]string, len(pages))
	var st stampAcc
	for i, p := range pages {
		if m.left -= int64(len(p)); m.left < 0 {
			return Result{}, &BudgetError{Max: m.max}
		}
		lines := splitLines(p)
		out := lines[:0]
		stamped := false
		for li, l := range lines {
			if l == "" {
				out = append(out, l)
				continue
			}
			// Docket stamps: at the top or bottom of a page, whole lines or
			// the prefix of a line that extraction joined to the stamp.
			if li < edgeZone || li >= len(lines)-edgeZone || looksLikeStamp(l) {
				if rest, s, ok := cutStamp(l); ok {
					st.add(s)
					stamped = true
					res.Removed++
					l = rest
					if l == "" {
						continue
					}
				}
			}
			out = append(out, l)
		}
		if stamped {
			st.pages++
		}
		doc[i] = out
	}
	res.Removed += dropRunning(doc)
	for i := range doc {
		var n int
		doc[i], n = dropPageNumbers(doc[i])
		res.Removed += n
		if err := m.lines(doc[i]); err != nil {
			return Result{}, err
		}
		doc[i], n = dropLineNumbers(doc[i])
		res.Removed += n
		if err := m.lines(doc[i]); err != nil {
			return Result{}, err
		}
		res.Pages[i] = joinLines(doc[i])
		if err := m.lines(doc[i]); err != nil {
			return Result{}, err
		}
	}
	res.Meta = st.meta()
	return res, nil
}

// edgeZone is how many lines at the top and at the bottom of a page are
// searched for running headers, footers and page numbers.
const edgeZone = 4

func splitLines(p string) []string {
	raw := strings.Split(strings.ReplaceAll(p, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(raw))
	for _, l := range raw {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// ---- docket stamps ----

// A stamp is a line made of docket fields: "Case: 20-16276, 08/05/2020,
// ID: 11778722, DktEntry: 19, Page 7 of 15", "Case 1:20-cv-01234 Document 12
// Filed 05/01/20 Page 3 of 9 PageID #: 45", "Case 18-53173-jwc Doc 35 Filed
// 01/30/19 Entered 01/30/19 11:51:34 Desc Main Document Page 3 of 42".
const (
	dateTok  = `(\d{1,2}/\d{1,2}/\d{2,4}|\d{4}-\d{2}-\d{2})`
	caseTok  = `([0-9][0-9A-Za-z:.\-]*[0-9A-Za-z]|[0-9])`
	fieldSep = `[\s,;|]*`
)

var (
	stampHeadRE = regexp.MustCompile(`^(?:USCA\d*\s+|Appellate\s+)?(?:Case|Appeal)\s*(?:#|No\.?)?\s*:?\s*` + caseTok)
	// A state court's e-filing stamp names no "Case": its docket number
	// comes first, then the date and time filed ("ATL-DC-007956-25
	// 10/08/2025 01:01:36 PM Pg 1 of 6 Trans ID: SCP20254267681"). The
	// number has letters and at least two hyphened parts, and the date
	// must follow it, so a body line is not read as one.
	stateStampRE = regexp.MustCompile(`^([A-Z]{1,5}(?:-[A-Z0-9]{1,8}){2,4})\s+` + dateTok + `\b`)
	fieldSepRE   = regexp.MustCompile(`^` + fieldSep)
	stampFields  = []*regexp.Regexp{
		regexp.MustCompile(`^(?i:date\s+filed|filed)\s*:?\s*` + dateTok),                                   // 1 filed
		regexp.MustCompile(`^(?i:entered)\s*:?\s*` + dateTok + `(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?`),         // 2
		regexp.MustCompile(`^(?i:dkt\s*entry|dktentry)\s*:?\s*([0-9][0-9.\-]*)`),                           // 3 entry
		regexp.MustCompile(`^(?:Document|Doc|DOC|Dkt|ECF\s+No\.?)\s*(?:#|No\.?)?\s*:?\s*([0-9][0-9.\-]*)`), // 4 entry
		regexp.MustCompile(`^(?:Entry\s+)?ID\s*:?\s*(\d+)`),                                                // 5
		regexp.MustCompile(`^(?i:page\s*id|pageid)\s*#?\s*:?\s*\d+`),                                       // 6
		regexp.MustCompile(`^(?i:page|pg)\s*:?\s*(\d+)(?:\s+(?i:of)\s+(\d+))?`),                            // 7 page
		regexp.MustCompile(`^(?:Desc|Main|Document|Exhibit|Pg|Filed|Date)\b\.?`),                           // 8 words of two-line stamps
		regexp.MustCompile(`^#\s*:?\s*\d+`),                                                                // 9 "#: 28982"
		regexp.MustCompile(`^` + dateTok),                                                                  // 10 bare date after the case number
		regexp.MustCompile(`^\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?[Mm]\b\.?)?`),                          // 11 time
		regexp.MustCompile(`^(?:Trans(?:action)?|Envelope)\s*(?:ID|No\.?|#)\s*:?\s*[A-Z]{0,6}\d+`),         // 12 e-filing transaction
		regexp.MustCompile(`^[A-Z]\b`),                                                                     // 13 exhibit letter ("Exhibit A")
		regexp.MustCompile(`^\((?i:ex\s+parte|court\s+only)\)`),                                            // 14 "Document 132 (Ex Parte)"
	}
)

// stamp is what one stamp line says.
type stamp struct {
	caseNo, entry, filed string
	page, of             int
}

// looksLikeStamp is a cheap test for a line in the middle of a page that may
// still be a stamp (extraction sometimes orders the stamp after body text).
func looksLikeStamp(l string) bool {
	return strings.HasPrefix(l, "Case") || strings.HasPrefix(l, "USCA") || strings.HasPrefix(l, "Appe")
}

// cutStamp removes a docket stamp at the start of l and returns the rest.
// A line that is only stamp fields with no "Case" head ("Document Page 3 of
// 42", "#: 28982", "Page 2 of 9") is also a stamp.
func cutStamp(l string) (rest string, s stamp, ok bool) {
	pos := 0
	fields := 0
	strong := false // a page, filed or entry field: enough to call it a stamp
	if m := stampHeadRE.FindStringSubmatchIndex(l); m != nil {
		s.caseNo = strings.TrimRight(l[m[2]:m[3]], ".,:-")
		pos = m[1]
		fields++
	} else if m := stateStampRE.FindStringSubmatchIndex(l); m != nil {
		s.caseNo, s.filed = l[m[2]:m[3]], l[m[4]:m[5]]
		pos = m[1]
		fields += 2
	}
	for {
		adv := fieldSepRE.FindStringIndex(l[pos:])[1]
		matched := false
		for fi, re := range stampFields {
			m := re.FindStringSubmatchIndex(l[pos+adv:])
			if m == nil {
				continue
			}
			if fi >= 8 && fields == 0 {
				continue // loose tokens only continue a stamp
			}
			sub := func(k int) string {
				if m[2*k] < 0 {
					return ""
				}
				return l[pos+adv+m[2*k] : pos+adv+m[2*k+1]]
			}
			switch fi {
			case 0:
				if s.filed == "" {
					s.filed = sub(1)
				}
				strong = true
			case 1:
				strong = true
			case 2, 3:
				if s.entry == "" {
					s.entry = strings.TrimRight(sub(1), ".-")
				}
				strong = true
			case 4, 5:
				strong = strong || fields > 0
			case 6:
				s.page, _ = strconv.Atoi(sub(1))
				s.of, _ = strconv.Atoi(sub(2))
				strong = true
			case 9:
				if s.filed == "" && fields == 1 && s.caseNo != "" {
					s.filed = sub(1) // "Case: 20-16276, 08/05/2020, ID: …"
				}
			}
			pos += adv + m[1]
			fields++
			matched = true
			break
		}
		if !matched {
			break
		}
	}
	if !strong || fields < 2 && !(fields == 1 && s.page > 0 && s.of > 0) {
		return l, stamp{}, false
	}
	rest = strings.TrimLeft(l[pos:], " ,;|")
	// "Page 7 of 38 7": the page number printed again right after the stamp.
	if s.page > 0 {
		n := strconv.Itoa(s.page)
		if rest == n {
			rest = ""
		} else if strings.HasPrefix(rest, n+" ") {
			rest = rest[len(n)+1:]
		}
	}
	return rest, s, true
}

type stampAcc struct {
	cases   []string
	entries map[string]int
	filed   map[string]int
	pages   int
}

func (a *stampAcc) add(s stamp) {
	if s.caseNo != "" && !contains(a.cases, s.caseNo) && len(a.cases) < 8 {
		a.cases = append(a.cases, s.caseNo)
	}
	if a.entries == nil {
		a.entries, a.filed = map[string]int{}, map[string]int{}
	}
	if s.entry != "" {
		a.entries[s.entry]++
	}
	if d := NormDate(s.filed); d != "" {
		a.filed[d]++
	}
}

func (a *stampAcc) meta() Meta {
	return Meta{CaseNumbers: a.cases, FiledOn: mostCommon(a.filed), DocketEntry: mostCommon(a.entries), StampedPages: a.pages}
}

func mostCommon(m map[string]int) string {
	best, n := "", 0
	for k, c := range m {
		if c > n || c == n && k < best {
			best, n = k, c
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// NormDate turns "08/05/2020", "5/1/20" or "2020-08-05" into YYYY-MM-DD, or
// returns "" if s is not such a date. Two-digit years are 19xx above 69.
func NormDate(s string) string {
	var y, m, d int
	if p := strings.Split(s, "/"); len(p) == 3 {
		m, d, y = atoi(p[0]), atoi(p[1]), atoi(p[2])
		if len(p[2]) == 2 {
			y += 2000
			if y > 2069 {
				y -= 100
			}
		}
	} else if p := strings.Split(s, "-"); len(p) == 3 && len(p[0]) == 4 {
		y, m, d = atoi(p[0]), atoi(p[1]), atoi(p[2])
	} else {
		return ""
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if y < 1900 || t.Month() != time.Month(m) || t.Day() != d {
		return ""
	}
	return t.Format(time.DateOnly)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// ---- running headers and footers ----

// dropRunning removes lines near the top or bottom of pages that repeat, up
// to their digits, on at least three pages and a third of the pages with
// text (running heads often alternate between odd and even pages).
func dropRunning(doc [][]string) int {
	textPages := 0
	count := map[string]int{}
	for _, lines := range doc {
		if len(lines) == 0 {
			continue
		}
		textPages++
		seen := map[string]bool{}
		for _, li := range edgeIndexes(lines) {
			k := runningKey(lines[li])
			if k != "" && !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	need := max(3, (textPages+2)/3)
	removed := 0
	for pi, lines := range doc {
		drop := map[int]bool{}
		for _, li := range edgeIndexes(lines) {
			if k := runningKey(lines[li]); k != "" && count[k] >= need {
				drop[li] = true
			}
		}
		if len(drop) == 0 {
			continue
		}
		out := make([]string, 0, len(lines))
		for li, l := range lines {
			if drop[li] {
				removed++
				continue
			}
			out = append(out, l)
		}
		doc[pi] = out
	}
	return removed
}

// edgeIndexes are the indexes of the first and last edgeZone non-blank lines.
func edgeIndexes(lines []string) []int {
	var idx []int
	for i, n := 0, 0; i < len(lines) && n < edgeZone; i++ {
		if lines[i] != "" {
			idx = append(idx, i)
			n++
		}
	}
	for i, n := len(lines)-1, 0; i >= 0 && n < edgeZone; i-- {
		if lines[i] != "" {
			if len(idx) == 0 || i > idx[len(idx)-1] {
				idx = append(idx, i)
			}
			n++
		}
	}
	return idx
}

// runningKey is a line's identity for repetition: lower case, digits as #.
func runningKey(l string) string {
	if len(l) < 2 {
		return ""
	}
	var b strings.Builder
	for _, r := range strings.ToLower(l) {
		if unicode.IsDigit(r) {
			r = '#'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ---- page numbers ----

var pageNumRE = regexp.MustCompile(`^(?:[-–—]\s*\d{1,4}\s*[-–—]|\(?\d{1,4}\)?|(?i:page)\s*\d{1,4}(?:\s*(?i:of)\s*\d{1,4})?|\d{1,4}\s+(?i:of)\s+\d{1,4}|[ivxlc]{1,6})$`)

// dropPageNumbers removes a line that is only a page number ("7", "- 7 -",
// "Page 7 of 15", "iii") among the first and last two lines of a page.
func dropPageNumbers(lines []string) ([]string, int) {
	var idx []int
	for i, n := 0, 0; i < len(lines) && n < 2; i++ {
		if lines[i] != "" {
			idx = append(idx, i)
			n++
		}
	}
	for i, n := len(lines)-1, 0; i >= 0 && n < 2; i-- {
		if lines[i] != "" {
			idx = append(idx, i)
			n++
		}
	}
	drop := map[int]bool{}
	for _, i := range idx {
		if pageNumRE.MatchString(lines[i]) {
			drop[i] = true
		}
	}
	if len(drop) == 0 {
		return lines, 0
	}
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
		}
	}
	return out, len(drop)
}

// ---- pleading-paper and transcript line numbers ----

// dropLineNumbers removes the margin numbers of pleading paper and
// transcripts: bare whole numbers on the page that count up by one (1, 2,
// 3, …) through at least five steps, wherever extraction put them (alone on
// a line, at the start of a line, or inside a joined paragraph). A filing
// that numbers its lines through the whole document reaches three digits
// by page 4 or 5 (… 99, 100, 101): those are line numbers too.
func dropLineNumbers(lines []string) ([]string, int) {
	type tok struct{ line, start, end, val int }
	var toks []tok
	for li, l := range lines {
		for i := 0; i < len(l); {
			j := i
			for j < len(l) && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j > i && j-i <= 3 && (i == 0 || l[i-1] == ' ') && (j == len(l) || l[j] == ' ') {
				toks = append(toks, tok{li, i, j, atoi(l[i:j])})
			}
			next := strings.IndexByte(l[max(j, i+1):], ' ')
			if next < 0 {
				break
			}
			i = max(j, i+1) + next + 1
		}
	}
	if len(toks) < 5 {
		return lines, 0
	}
	// Longest chains of values v, v+1, v+2, … in page order. Values have
	// one to three digits, so the chain ends are an array, not a map.
	length := make([]int, len(toks))
	prev := make([]int, len(toks))
	var bestAt [1000]int // value -> index+1 of the longest chain ending with it
	for i, t := range toks {
		length[i], prev[i] = 1, -1
		if t.val > 0 {
			if j := bestAt[t.val-1] - 1; j >= 0 {
				length[i], prev[i] = length[j]+1, j
			}
		}
		if j := bestAt[t.val] - 1; j < 0 || length[i] >= length[j] {
			bestAt[t.val] = i + 1
		}
	}
	// Chain ends from the longest chain down, stable (a bucket per length:
	// linear, where a comparison sort of 100,000 tokens was most of the
	// cost).
	buckets := make([][]int, len(toks)+1)
	for i, n := range length {
		if n >= 5 {
			buckets[n] = append(buckets[n], i)
		}
	}
	drop := make([]bool, len(toks))
	used := make([]bool, len(toks))
	dropped := 0
	for n := len(buckets) - 1; n >= 5; n-- {
		for _, end := range buckets[n] {
			if used[end] {
				continue
			}
			for i := end; i >= 0; i = prev[i] {
				if used[i] {
					break
				}
				used[i] = true
				drop[i] = true
				dropped++
			}
		}
	}
	if dropped == 0 {
		return lines, 0
	}
	// Remove the tokens: each line is rebuilt once, from its kept spans
	// (tokens are in line order, and in order within a line), so the work
	// is linear in the page's length however many numbers a line holds.
	out := append([]string(nil), lines...)
	var b strings.Builder
	for i := 0; i < len(toks); {
		li := toks[i].line
		j := i
		for j < len(toks) && toks[j].line == li {
			j++
		}
		l := lines[li]
		b.Reset()
		at := 0 // start of the span not yet copied
		removed := false
		for k := i; k < j; k++ {
			if !drop[k] {
				continue
			}
			t := toks[k]
			b.WriteString(l[at:t.start])
			at = t.end
			if t.start > 0 && t.end < len(l) {
				at++ // the space after an inner number goes with it
			}
			removed = true
		}
		if removed {
			b.WriteString(l[at:])
			out[li] = strings.Trim(b.String(), " ")
		}
		i = j
	}
	kept := out[:0]
	for i, l := range out {
		if l == "" && lines[i] != "" {
			continue // a line that held only a line number
		}
		kept = append(kept, l)
	}
	return kept, dropped
}

// ---- joining lines into paragraphs ----

// joinLines joins wrapped lines into paragraphs. A line continues the one
// before it when that one was cut by wrapping: it ends with a hyphenated
// word part and this one starts in lower case (the hyphen is removed), or it
// is "full" (close to the page's usual line length) and does not end a
// heading, or it does not end a sentence and this line starts in lower case.
// A blank line always ends a paragraph.
func joinLines(lines []string) string {
	width := lineWidth(lines)
	// A byte slice, not a strings.Builder: undoing a hyphen drops the last
	// byte in place instead of copying the paragraph so far.
	var b []byte
	for i, l := range lines {
		if l == "" {
			continue
		}
		if len(b) == 0 {
			b = append(b, l...)
			continue
		}
		prev := lines[i-1]
		switch {
		case prev == "":
			b = append(b, '\n')
		case hyphenated(prev) && startsLower(l):
			b = append(b[:len(b)-1], l...)
			continue
		case continues(prev, l, width):
			b = append(b, ' ')
		default:
			b = append(b, '\n')
		}
		b = append(b, l...)
	}
	return string(b)
}

// lineWidth is the page's usual length of a full line, in runes, or 0 when
// the page's "lines" are already paragraphs (too long to be printed lines).
func lineWidth(lines []string) int {
	var ns []int
	for _, l := range lines {
		if l != "" {
			ns = append(ns, utf8.RuneCountInString(l))
		}
	}
	if len(ns) < 4 {
		return 0
	}
	sort.Ints(ns)
	w := ns[len(ns)*9/10]
	if w > 140 {
		return 0
	}
	return w
}

func continues(prev, l string, width int) bool {
	if isVersus(l) || isVersus(prev) || isVersus(strings.TrimRight(prev, ",")) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(prev)
	ends := strings.ContainsRune(".?!:;", last) || last == '"' || last == '”' || last == ')'
	if startsLower(l) && !ends && last != ',' {
		return true
	}
	if width == 0 {
		return false
	}
	if isHeadingLine(l) != isHeadingLine(prev) {
		return false // a heading starts or ends here
	}
	full := utf8.RuneCountInString(prev) >= width*3/4
	return full && last != ':' && !isHeadingLine(prev)
}

func isVersus(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "v", "v.", "vs", "vs.", "versus", "against", "- against -", "-against-", "-v-", "- v -":
		return true
	}
	return false
}

func hyphenated(s string) bool {
	if len(s) < 3 || s[len(s)-1] != '-' {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:len(s)-1])
	return unicode.IsLetter(r) && unicode.IsLower(r)
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// isHeadingLine: every letter upper case (a caption or section heading).
func isHeadingLine(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if unicode.IsLower(r) {
				return false
			}
			letters++
		}
	}
	return letters > 0
}
