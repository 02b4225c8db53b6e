package brief

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// sentence is one sentence of a page, with the paragraph it came from.
type sentence struct {
	text      string
	para      int // index of the paragraph on the page
	paraStart bool
}

// abbreviations that end with a period but do not end a sentence.
var abbreviations = map[string]bool{
	"inc": true, "ltd": true, "co": true, "corp": true, "llc": true, "llp": true, "plc": true,
	"v": true, "vs": true, "no": true, "nos": true, "mr": true, "mrs": true, "ms": true, "dr": true,
	"esq": true, "jr": true, "sr": true, "st": true, "para": true, "paras": true, "ex": true,
	"e.g": true, "i.e": true, "u.s": true, "art": true, "sec": true, "cl": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

// numberedPara matches a paragraph number such as "12. " at the start of a paragraph.
var numberedPara = regexp.MustCompile(`^\(?\d{1,3}[.)]\s+`)

// splitSentences splits a cleaned page's text (doctext.Clean: paragraphs
// separated by "\n") into sentences. A sentence ends at '.', '?' or '!'
// followed by white space and an
// upper-case letter, digit or opening quote, unless the word before the
// period is a known abbreviation, a single letter, or the paragraph number.
func splitSentences(page string) []sentence {
	var out []sentence
	for pi, para := range strings.Split(page, "\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		skip := 0
		if m := numberedPara.FindStringIndex(para); m != nil {
			skip = m[1]
		}
		start := 0
		first := true
		for i := skip; i < len(para); i++ {
			c := para[i]
			if c != '.' && c != '?' && c != '!' {
				continue
			}
			j := i + 1
			for j < len(para) && (para[j] == '"' || para[j] == '\'' || para[j] == ')') {
				j++
			}
			if j >= len(para) || para[j] != ' ' {
				continue
			}
			k := j + 1
			for k < len(para) && para[k] == ' ' {
				k++
			}
			if k >= len(para) {
				continue
			}
			next, _ := utf8.DecodeRuneInString(para[k:])
			if !(unicode.IsUpper(next) || unicode.IsDigit(next) || next == '"' || next == '\u201c') {
				continue
			}
			if c == '.' && isAbbreviation(para[start:i]) {
				continue
			}
			out = append(out, sentence{text: strings.TrimSpace(para[start:j]), para: pi, paraStart: first})
			first = false
			start = k
			i = k - 1
		}
		if s := strings.TrimSpace(para[start:]); s != "" {
			out = append(out, sentence{text: s, para: pi, paraStart: first})
		}
	}
	return out
}

// isAbbreviation reports whether the last word of s (which precedes a
// period) is an abbreviation or a single letter (an initial).
func isAbbreviation(s string) bool {
	i := strings.LastIndexAny(s, " (\"")
	w := strings.ToLower(s[i+1:])
	if utf8.RuneCountInString(w) == 1 {
		return true
	}
	return abbreviations[w]
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
	"sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

const monthRE = `((?i:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec))`

const monthRECased = `(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)`

var (
	// March 3, 2025 / Mar. 3rd 2025
	mdyRE = regexp.MustCompile(`\b` + monthRE + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
	// 3 March 2025 / 3rd of March, 2025
	dmyRE = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRE + `\.?,?\s+(\d{4})\b`)
	// 2025-03-03
	isoRE = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	// 03/03/2025, read as month/day/year unless the first number exceeds 12
	slashRE = regexp.MustCompile(`\b(\d{1,2})/(\d{1,2})/(\d{4})\b`)
)

// dateMatch is a date found in text, normalised to YYYY-MM-DD.
type dateMatch struct {
	date string
	pos  int
}

// findDates returns the distinct dates in s, in order of appearance.
func findDates(s string) []dateMatch {
	if !hasYear(s) {
		return nil // every form has a four-digit year: skip the regexps
	}
	var found []dateMatch
	add := func(pos, y int, m time.Month, d int) {
		if y < 1900 || y > 2199 || m < 1 || m > 12 || d < 1 || d > 31 {
			return
		}
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if t.Day() != d || t.Month() != m {
			return // e.g. 31 April
		}
		found = append(found, dateMatch{date: t.Format(time.DateOnly), pos: pos})
	}
	for _, m := range mdyRE.FindAllStringSubmatchIndex(s, -1) {
		add(m[0], atoi(s[m[6]:m[7]]), months[strings.ToLower(s[m[2]:m[3]])], atoi(s[m[4]:m[5]]))
	}
	for _, m := range dmyRE.FindAllStringSubmatchIndex(s, -1) {
		add(m[0], atoi(s[m[6]:m[7]]), months[strings.ToLower(s[m[4]:m[5]])], atoi(s[m[2]:m[3]]))
	}
	for _, m := range isoRE.FindAllStringSubmatchIndex(s, -1) {
		add(m[0], atoi(s[m[2]:m[3]]), time.Month(atoi(s[m[4]:m[5]])), atoi(s[m[6]:m[7]]))
	}
	for _, m := range slashRE.FindAllStringSubmatchIndex(s, -1) {
		a, b := atoi(s[m[2]:m[3]]), atoi(s[m[4]:m[5]])
		if a > 12 {
			a, b = b, a
		}
		add(m[0], atoi(s[m[6]:m[7]]), time.Month(a), b)
	}
	// Order by position and drop repeats of the same date.
	sortByPos(found)
	seen := map[string]bool{}
	out := found[:0]
	for _, f := range found {
		if !seen[f.date] {
			seen[f.date] = true
			out = append(out, f)
		}
	}
	return out
}

// hasYear reports whether s has a run of four digits starting 19, 20 or 21.
func hasYear(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			run++
			if run == 4 && (s[i-3] == '1' && s[i-2] == '9' || s[i-3] == '2' && (s[i-2] == '0' || s[i-2] == '1')) {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

func sortByPos(ds []dateMatch) {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j].pos < ds[j-1].pos; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// isHeading reports whether a paragraph looks like a heading: short, and all
// its letters upper case.
func isHeading(s string) bool {
	if len(s) > 90 {
		return false
	}
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsLower(r) {
				return false
			}
		}
	}
	return letters > 0
}

// clip shortens s to at most n bytes at a word boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	return strings.ToValidUTF8(s[:cut], "") + " …"
}

// citationParenRE finds a parenthesis holding a date (its content is
// checked by citationDate).
var (
	reporterRE = regexp.MustCompile(`\b(?:[A-Z][A-Za-z]{0,5}\.|Cir\b|WL\b|LEXIS\b|U\.\s?S\.|S\.\s?Ct|F\.\s?(?:\d|Supp)|slip\s+op|No\.)`)
	wlRE       = regexp.MustCompile(`\b(?:WL|LEXIS)\s+\d+`)
)

// citationDate reports whether the date at dm sits in a legal citation
// rather than stating an event of the matter: inside a parenthesis that also
// names a court or reporter ("(U.S. Nov. 25, 2020)", "(9th Cir. Jan. 5,
// 2021)"), or right after a Westlaw or Lexis cite.
func citationDate(s string, dm dateMatch) bool {
	open := strings.LastIndexByte(s[:dm.pos], '(')
	if open >= 0 && !strings.Contains(s[open:dm.pos], ")") {
		end := strings.IndexByte(s[dm.pos:], ')')
		if end >= 0 {
			inside := s[open+1 : dm.pos]
			if reporterRE.MatchString(inside) {
				return true
			}
		}
	}
	before := s[max(0, dm.pos-40):dm.pos]
	return wlRE.MatchString(before)
}

// eventSentence reports whether a sentence can state an event: long enough,
// with lower-case words (not a heading, a caption or a date line), and not
// only a citation.
func eventSentence(s string) bool {
	if len(s) < 20 {
		return false
	}
	lower, words := 0, 0
	for _, w := range strings.Fields(s) {
		words++
		r, _ := utf8.DecodeRuneInString(w)
		if unicode.IsLower(r) {
			lower++
		}
	}
	return words >= 5 && lower*3 >= words
}
