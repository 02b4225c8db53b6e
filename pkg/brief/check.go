package brief

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// A citation is faithful when its quote occurs on the page it cites, in the
// cleaned text of the document (doctext.Clean). Quotes are compared after
// folding case, curly quotes, dashes and runs of white space; a quote that
// ends with " …" (clipped) must match up to the cut. A party's citation is
// faithful when the page names the party (its name's letters and digits, in
// order, as whole words).

// docPages is one document's cleaned pages, folded for matching on demand.
type docPages struct {
	id, name string
	pages    []string
	folded   []string
	keys     []string
	clauses  []string // folded paragraph by paragraph, "\n" between (strict check)
}

func newDocPages(id, name string, pages []string) *docPages {
	return &docPages{id: id, name: name, pages: pages, folded: make([]string, len(pages)), keys: make([]string, len(pages)), clauses: make([]string, len(pages))}
}

func (d *docPages) foldedPage(i int) string {
	if d.folded[i] == "" && d.pages[i] != "" {
		d.folded[i] = fold(d.pages[i])
	}
	return d.folded[i]
}

func (d *docPages) keyPage(i int) string {
	if d.keys[i] == "" && d.pages[i] != "" {
		d.keys[i] = " " + partyKey(d.pages[i]) + " "
	}
	return d.keys[i]
}

func (d *docPages) clausePage(i int) string {
	if d.clauses[i] == "" && d.pages[i] != "" {
		paras := strings.Split(d.pages[i], "\n")
		for j := range paras {
			paras[j] = fold(paras[j])
		}
		d.clauses[i] = strings.Join(paras, "\n")
	}
	return d.clauses[i]
}

// has reports whether page i (0-based) holds the quote (or, for a name, the
// name); strict, it must hold it as a whole sentence or clause (hasClause).
func (d *docPages) has(i int, quote string, name, strict bool) bool {
	if i < 0 || i >= len(d.pages) {
		return false
	}
	if strict && !name {
		return hasClause(d.clausePage(i), quote)
	}
	if name {
		k := partyKey(quote)
		return k != "" && (strings.Contains(d.keyPage(i), " "+k+" ") || d.wrapped(i, k))
	}
	q := fold(strings.TrimSuffix(strings.TrimSpace(quote), "…"))
	return q != "" && strings.Contains(d.foldedPage(i), q)
}

// fold lowers case, straightens quotes and dashes and collapses white space.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch r {
		case '\u2018', '\u2019', '\u201a', '\u2032', '`':
			r = '\''
		case '\u201c', '\u201d', '\u201e', '\u2033':
			r = '"'
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212':
			r = '-'
		case '\u00a0':
			r = ' '
		case '\u2039': // the prompt's fence for '<' and '>' (fenceText)
			r = '<'
		case '\u203a':
			r = '>'
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// checker applies the rule to citations and keeps the counts.
type checker struct {
	docs   map[string]*docPages // by lower-case id
	checks *Checks
	// strict is the check of a model's reply: a quote must be a whole
	// sentence or clause of the page that keeps its negation (hasClause),
	// and notes name what failed without repeating the model's text.
	strict bool
}

func (k *checker) note(format string, args ...any) {
	if len(k.checks.Notes) < MaxCheckNotes {
		k.checks.Notes = append(k.checks.Notes, fmt.Sprintf(format, args...))
	}
}

// cite checks one citation whose quote is quote (a name when name is true).
// A citation whose page lacks the quote is moved to the first page of the
// same document that has it (repaired) or, failing that, dropped.
func (k *checker) cite(c *Citation, quote, what string, name bool) bool {
	k.checks.Checked++
	d, ok := k.docs[strings.ToLower(c.DocumentID)]
	if !ok {
		k.checks.DroppedCitations++
		k.note("%s: cites unknown document %q", what, c.DocumentID)
		return false
	}
	c.DocumentID, c.DocumentName = d.id, d.name
	if d.has(c.Page-1, quote, name, k.strict) {
		return true
	}
	for i := range d.pages {
		if d.has(i, quote, name, k.strict) {
			k.checks.Repaired++
			k.note("%s: %s is on page %d of %s, not page %d", what, k.quoted(quote, name), i+1, d.name, c.Page)
			c.Page = i + 1
			return true
		}
	}
	k.checks.DroppedCitations++
	if c.Page < 1 || c.Page > len(d.pages) {
		k.note("%s: cites page %d of %s, which has %d pages", what, c.Page, d.name, len(d.pages))
	} else {
		k.note("%s: %s is not on any page of %s", what, k.quoted(quote, name), d.name)
	}
	return false
}

// quoted is how a note names a quote: the quote itself (clipped), or in a
// strict check its length only.
func (k *checker) quoted(quote string, name bool) string {
	switch {
	case k.strict && name:
		return fmt.Sprintf("the name (%d characters)", len([]rune(quote)))
	case k.strict:
		return fmt.Sprintf("the quote (%d characters, as a whole sentence or clause)", len([]rune(quote)))
	}
	return fmt.Sprintf("%q", clip(quote, 60))
}

// CheckCitations enforces faithful citations on b, given each document's
// cleaned pages by document id: unfaithful citations are repaired or
// dropped, items left without a citation are dropped, and b.Checks counts
// what was done. Every builder runs it (the extractive builder one document
// at a time) before it returns a Brief.
func CheckCitations(b *Brief, pages map[string][]string) {
	k := &checker{docs: map[string]*docPages{}, checks: &b.Checks}
	if b.Checks.Notes == nil {
		b.Checks.Notes = []string{}
	}
	names := map[string]string{}
	for _, d := range b.Documents {
		names[strings.ToLower(d.DocumentID)] = d.Name
	}
	for id, p := range pages {
		k.docs[strings.ToLower(id)] = newDocPages(id, names[strings.ToLower(id)], p)
	}
	for _, d := range b.Documents {
		if dp, ok := k.docs[strings.ToLower(d.DocumentID)]; ok {
			dp.id, dp.name = d.DocumentID, d.Name
		}
	}
	k.brief(b)
}

func (k *checker) brief(b *Brief) {
	caps := b.Caption.Citations[:0]
	for i := range b.Caption.Citations {
		c := b.Caption.Citations[i]
		if _, ok := k.docs[strings.ToLower(c.DocumentID)]; ok && c.Page >= 1 && c.Page <= len(k.docs[strings.ToLower(c.DocumentID)].pages) {
			c.DocumentName = k.docs[strings.ToLower(c.DocumentID)].name
			caps = append(caps, c)
		} else {
			k.checks.Checked++
			k.checks.DroppedCitations++
			k.note("caption: cites page %d of unknown document or page %q", c.Page, c.DocumentID)
		}
	}
	b.Caption.Citations = caps

	parties := b.Parties[:0]
	for _, p := range b.Parties {
		p.Citations = k.citations(p.Citations, p.Name, "party "+p.Name, true)
		if len(p.Citations) == 0 {
			k.checks.DroppedItems++
			continue
		}
		parties = append(parties, p)
	}
	b.Parties = parties

	events := b.Chronology[:0]
	for _, e := range b.Chronology {
		e.Citations = k.citations(e.Citations, e.Text, "chronology "+e.Date, false)
		if len(e.Citations) == 0 {
			k.checks.DroppedItems++
			continue
		}
		if e.Citations[0].Quote != "" {
			e.Text = e.Citations[0].Quote
		}
		events = append(events, e)
	}
	b.Chronology = events

	for i := range b.Documents {
		d := &b.Documents[i]
		as := d.Assertions[:0]
		for _, a := range d.Assertions {
			q := a.Citation.Quote
			if q == "" {
				q = a.Text
			}
			if strings.ToLower(a.Citation.DocumentID) != strings.ToLower(d.DocumentID) {
				k.checks.Checked++
				k.checks.DroppedCitations++
				k.checks.DroppedItems++
				k.note("assertion of %s cites another document", d.Name)
				continue
			}
			if !k.cite(&a.Citation, q, "assertion of "+d.Name, false) {
				k.checks.DroppedItems++
				continue
			}
			as = append(as, a)
		}
		d.Assertions = as
	}
}

// citations checks an item's citations in place and returns those kept,
// without repeats; a citation without a quote is checked for the item's own
// text (fallback: a party's name, an event's sentence).
func (k *checker) citations(cs []Citation, fallback, what string, name bool) []Citation {
	kept := cs[:0]
	for _, c := range cs {
		q := c.Quote
		if q == "" {
			q = fallback
		}
		if k.cite(&c, q, what, name) {
			kept = appendCitation(kept, c)
		}
	}
	return kept
}

func appendCitation(cs []Citation, c Citation) []Citation {
	for _, have := range cs {
		if have.DocumentID == c.DocumentID && have.Page == c.Page && have.Quote == c.Quote {
			return cs
		}
	}
	return append(cs, c)
}

// hasClause reports whether the folded paragraphs of a page (joined by
// "\n") hold quote as a whole sentence or clause: it starts where a
// paragraph or sentence starts, or after a ';' or ':' (or an enumerator
// such as "(a)") in a sentence with no denial or negation before it, and
// it ends where a paragraph, sentence or clause ends (or where the quote
// says it was cut, "…"). "it refused to carry the third shipment" is not a
// clause of "Penmark denies that it refused to carry the third shipment."
func hasClause(page, quote string) bool {
	q := strings.TrimSpace(quote)
	cut := strings.HasSuffix(q, "…")
	q = fold(strings.TrimSpace(strings.TrimSuffix(q, "…")))
	if q == "" || page == "" {
		return false
	}
	for from := 0; from < len(page); {
		i := strings.Index(page[from:], q)
		if i < 0 {
			return false
		}
		start := from + i
		end := start + len(q)
		from = start + 1
		if clauseStart(page, start) && (cut || clauseEnd(page, end, q)) {
			return true
		}
	}
	return false
}

// negationRE finds a denial or negation in the part of a sentence before a
// quoted clause.
var negationRE = regexp.MustCompile(`\b(?:not|no|never|neither|nor|none|nothing|without|deny|denies|denied|denying|disputes?|disputed|contests?|rejects?|refutes?|false|lacks?|except|unless|n't)\b|n't\b`)

// enumeratorRE is a list marker just before a clause: "(a)", "ii.", "3)".
var enumeratorRE = regexp.MustCompile(`(?:^|[\s(])\(?(?:[a-z]|[ivx]{1,5}|\d{1,3})[.)]$`)

func clauseStart(page string, start int) bool {
	ls := strings.LastIndexByte(page[:start], '\n') + 1 // the paragraph's start
	before := strings.TrimRight(page[ls:start], " \"'([")
	if before == "" {
		return true
	}
	sentence := before
	if j := strings.LastIndexAny(before, ".!?"); j >= 0 {
		sentence = before[j+1:]
	}
	switch last := before[len(before)-1]; {
	case last == '.' || last == '!' || last == '?':
		return true
	case last == ';' || last == ':' || enumeratorRE.MatchString(before):
		return !negationRE.MatchString(sentence)
	}
	return false
}

func clauseEnd(page string, end int, q string) bool {
	if strings.ContainsRune(".!?;:,", rune(q[len(q)-1])) {
		return true
	}
	rest := strings.TrimLeft(page[end:], "\"')]")
	if rest == "" || rest[0] == '\n' {
		return true
	}
	return strings.ContainsRune(".!?;:,", rune(rest[0]))
}

// wrapped reports whether page i names a party whose name a two-column
// caption wraps in its left column: the name's first words, in capitals,
// begin one line and the right column's words end it, and the next line
// holds the rest of the name alone, in capitals (with at most "et al."),
// the first words beginning the line or following its ";" in a list:
// "CHINA FORTUNE LAND Case No. 19-cv-07043-VC" / "DEVELOPMENT, et al.,";
// "THE SUPERIOR COURT OF FRESNO OPINION" / "COUNTY,". k is the name's
// partyKey.
func (d *docPages) wrapped(i int, k string) bool {
	words := strings.Fields(k)
	if len(words) < 2 || !strings.Contains(d.keyPage(i), " "+words[0]+" ") {
		return false
	}
	lines := strings.Split(d.pages[i], "\n")
	for l := 0; l+1 < len(lines); l++ {
		rest := etAlTailRE.ReplaceAllString(strings.TrimSpace(lines[l+1]), "")
		rk := wrappedTail(rest, words)
		if rk == nil {
			// In a list of names the next line holds the name's tail, a
			// ";" and the next name's head ("CARMAX AUTO : Civil Action" /
			// "SUPERSTORES, INC; CARMAX AUTO : ORDER"): the tail ends at
			// the first ";" (round 17).
			if head, _, ok := strings.Cut(rest, ";"); ok {
				rk = wrappedTail(strings.TrimSpace(head), words)
			}
		}
		if rk == nil {
			continue
		}
		head := strings.Join(words[:len(words)-len(rk)], " ")
		// The head begins the line, or follows a ";" or an "and" in a list
		// of names ("PROOFPOINT, INC.; CLOUDMARK Case No. …" / "LLC,";
		// "ACME CANADA, INC., and ACMETEC Judge …" / "S.A.").
		line := lines[l]
		starts := []string{line}
		if i := strings.LastIndex(line, ";"); i >= 0 {
			starts = append(starts, line[i+1:])
		}
		if m := wrappedAndRE.FindAllStringIndex(line, -1); len(m) > 0 {
			starts = append(starts, line[m[len(m)-1][1]:])
		}
		for _, line := range starts {
			f := strings.Fields(line)
			for n := 1; n < len(f); n++ {
				part := strings.Join(f[:n], " ")
				if pk := partyKey(part); pk == head {
					if isAllCaps(part) {
						return true // and the right column's words follow
					}
					break
				} else if len(pk) > len(head) {
					break
				}
			}
		}
	}
	return false
}

// wrappedTail: the words of rest, a line in capitals, when they end the
// name's words and leave at least one before them; else nil.
func wrappedTail(rest string, words []string) []string {
	if !isAllCaps(rest) {
		return nil
	}
	rk := strings.Fields(partyKey(rest))
	if len(rk) == 0 || len(rk) >= len(words) || strings.Join(rk, " ") != strings.Join(words[len(words)-len(rk):], " ") {
		return nil
	}
	return rk
}

// wrappedAndRE: the "and" before a list's last name, in a caption in
// capitals ("…, INC., and NESTEC").
var wrappedAndRE = regexp.MustCompile(`(?:,\s+|\s)(?:and|AND)\s+`)

var etAlTailRE = regexp.MustCompile(`(?i)[,\s]*\bet\.?\s*al\.?[,.;]?$`)
