package brief

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Limits on the size of an extractive Brief.
const (
	MaxAssertionsPerDocument = 40
	MaxChronologyEvents      = 500
	MaxCitationsPerParty     = 12
	maxItemText              = 600 // bytes of one event or assertion text
)

// Extractive builds a Brief by pattern matching on the documents' text. It is
// deterministic (the same Input, in any document order, gives byte-identical
// JSON) and makes no network calls.
type Extractive struct{}

// NewExtractive returns the extractive builder.
func NewExtractive() Extractive { return Extractive{} }

// Name identifies the builder and its rules version in Brief.Builder.
func (Extractive) Name() string { return "extractive/v1" }

// Build implements Builder. It reads the documents in three passes over
// in.Each, one document at a time (captions; then assertions, dates,
// parties and the fingerprint; then party mentions), keeping only bounded
// accumulators between documents: the document summaries (at most
// MaxAssertionsPerDocument each), the first MaxChronologyEvents events,
// and at most MaxCitationsPerParty citations per party.
func (e Extractive) Build(ctx context.Context, in Input) (Brief, error) {
	if err := in.validateHeader(); err != nil {
		return Brief{}, err
	}
	b := Brief{
		SchemaVersion: SchemaVersion,
		Matter:        Matter{FirmID: in.FirmID, MatterID: in.MatterID, Title: in.Title},
		Parties:       []Party{},
		Chronology:    []Event{},
		Documents:     []DocumentSummary{},
		Builder:       e.Name(),
	}
	ps := &partySet{}
	// Pass 1. Captions first, so that the roles they give win over body
	// mentions. Checks the documents and counts them for the fingerprint.
	var dc docChecker
	for d, err := range in.Each(ctx) {
		if err != nil {
			return Brief{}, err
		}
		if err := dc.check(d); err != nil {
			return Brief{}, err
		}
		for p := 0; p < len(d.Pages) && p < 2; p++ {
			captionParties(ps, d.Pages[p], cite(d, p))
		}
	}
	// Pass 2.
	fp := newFingerprinter(in, dc.n)
	var chron chronology
	for d, err := range in.Each(ctx) {
		if err != nil {
			return Brief{}, err
		}
		fp.add(d)
		sum := DocumentSummary{
			DocumentID: d.ID, Name: d.Name, SHA256: d.SHA256,
			PageCount: len(d.Pages), Note: d.Note, Assertions: []Assertion{},
		}
		var events []keyedEvent
		hasText := false
		for p, page := range d.Pages {
			if page == "" {
				continue
			}
			hasText = true
			c := cite(d, p)
			paras := paragraphs(page)
			bodyParties(ps, paras, c)
			for si, s := range splitSentences(page) {
				for _, dm := range findDates(s.text) {
					events = append(events, keyedEvent{
						Event: Event{Date: dm.date, Text: clip(numberedPara.ReplaceAllString(s.text, ""), maxItemText), Citation: c},
						name:  d.Name, id: strings.ToLower(d.ID), page: p, n: si})
				}
			}
			sum.Assertions = appendAssertions(sum.Assertions, paras, page, c)
		}
		if !hasText && sum.Note == "" {
			sum.Note = "no text was extracted from this document"
		}
		if len(sum.Assertions) > MaxAssertionsPerDocument {
			sum.Assertions = sum.Assertions[:MaxAssertionsPerDocument]
		}
		b.Documents = append(b.Documents, sum)
		chron.merge(events)
	}
	b.InputFingerprint = fp.sum()
	// Documents by name, then id, so that output does not depend on input order.
	sort.SliceStable(b.Documents, func(i, j int) bool {
		if b.Documents[i].Name != b.Documents[j].Name {
			return b.Documents[i].Name < b.Documents[j].Name
		}
		return strings.ToLower(b.Documents[i].DocumentID) < strings.ToLower(b.Documents[j].DocumentID)
	})
	for _, ev := range chron.list {
		b.Chronology = append(b.Chronology, ev.Event)
	}

	// Pass 3.
	if err := ps.citeMentions(ctx, in); err != nil {
		return Brief{}, err
	}
	b.Parties = ps.parties()
	if err := b.Validate(); err != nil {
		return Brief{}, fmt.Errorf("extractive builder produced an invalid brief (a bug): %w", err)
	}
	return b, nil
}

// keyedEvent is a chronology event with its sort key: date, then document
// (name, id), page and position on the page.
type keyedEvent struct {
	Event
	name, id string
	page, n  int
}

func (a keyedEvent) less(c keyedEvent) bool {
	switch {
	case a.Date != c.Date:
		return a.Date < c.Date
	case a.name != c.name:
		return a.name < c.name
	case a.id != c.id:
		return a.id < c.id
	case a.page != c.page:
		return a.page < c.page
	}
	return a.n < c.n
}

// chronology keeps the first MaxChronologyEvents distinct events in key
// order. Merging one document's events at a time gives the same list as
// sorting all events at once: an event among the first distinct ones
// overall is among the first of any subset that holds it, and equal
// events (same citation, so the same document) arrive together.
type chronology struct{ list []keyedEvent }

func (c *chronology) merge(evs []keyedEvent) {
	if len(evs) == 0 {
		return
	}
	all := append(c.list, evs...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].less(all[j]) })
	seen := make(map[Event]bool, len(all))
	out := all[:0]
	for _, ev := range all {
		if seen[ev.Event] {
			continue
		}
		seen[ev.Event] = true
		out = append(out, ev)
		if len(out) == MaxChronologyEvents {
			break
		}
	}
	c.list = slices.Clone(out)
}

func cite(d Document, pageIndex int) Citation {
	return Citation{DocumentID: d.ID, DocumentName: d.Name, Page: pageIndex + 1}
}

var (
	assertVerbRE = regexp.MustCompile(`(?i)\b(alleges?|alleged that|avers?|denies|deny|denied|admits?|admitted|states? that|stated that|contends?|asserts?|demands?|demanded|claims? that|repudiat\w*)\b`)
	defenceRE    = regexp.MustCompile(`(?i)^(?:(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)?)\s+)?(?:affirmative\s+)?defen[cs]e\b`)
)

// appendAssertions adds the page's assertions: whole numbered paragraphs and
// defences, and, elsewhere, sentences with an asserting verb.
func appendAssertions(out []Assertion, paras []string, page string, c Citation) []Assertion {
	whole := map[int]bool{}
	for i, p := range paras {
		p = strings.TrimSpace(p)
		if numberedPara.MatchString(p) || defenceRE.MatchString(p) {
			whole[i] = true
		}
	}
	done := map[int]bool{}
	for _, s := range splitSentences(page) {
		if whole[s.para] {
			if !done[s.para] {
				done[s.para] = true
				out = append(out, Assertion{Text: clip(strings.TrimSpace(paras[s.para]), maxItemText), Citation: c})
			}
			continue
		}
		if isHeading(s.text) || !assertVerbRE.MatchString(s.text) {
			continue
		}
		out = append(out, Assertion{Text: clip(s.text, maxItemText), Citation: c})
	}
	return out
}

// ---- parties ----

type partyAcc struct {
	key   string
	name  string
	role  Role
	cites []Citation
}

type partySet struct {
	list []*partyAcc
}

// add records a mention of name in role at c. A name whose key equals, or
// extends or is extended word-wise by, the key of a party already known in the
// same role is the same party; the first role recorded for a key wins.
func (ps *partySet) add(name string, role Role, c Citation) {
	name = cleanName(name)
	key := partyKey(name)
	if key == "" || stopName[key] {
		return
	}
	for _, p := range ps.list {
		same := p.key == key
		if !same && p.role == role {
			same = strings.HasPrefix(p.key+" ", key+" ") || strings.HasPrefix(key+" ", p.key+" ")
		}
		if !same {
			continue
		}
		if len(key) > len(p.key) && p.role == role {
			p.key = key
			p.name = name
		} else if isAllCaps(p.name) && !isAllCaps(name) && p.key == key {
			p.name = name
		}
		p.cite(c)
		return
	}
	p := &partyAcc{key: key, name: name, role: role}
	p.cite(c)
	ps.list = append(ps.list, p)
}

// cite records c, keeping only the MaxCitationsPerParty first citations
// in the order parties() lists them (document name, id, page): the same
// citations as keeping all and truncating, with a bounded list.
func (p *partyAcc) cite(c Citation) {
	for _, have := range p.cites {
		if have == c {
			return
		}
	}
	i := sort.Search(len(p.cites), func(i int) bool { return citeLess(c, p.cites[i]) })
	if i >= MaxCitationsPerParty {
		return
	}
	p.cites = slices.Insert(p.cites, i, c)
	if len(p.cites) > MaxCitationsPerParty {
		p.cites = p.cites[:MaxCitationsPerParty]
	}
}

func citeLess(a, b Citation) bool {
	if a.DocumentName != b.DocumentName {
		return a.DocumentName < b.DocumentName
	}
	if a.DocumentID != b.DocumentID {
		return a.DocumentID < b.DocumentID
	}
	return a.Page < b.Page
}

// citeMentions cites every page on which a party's full name appears, and
// replaces an all-capitals name (from a caption) by a mixed-case spelling
// found in the text. One pass over the documents.
func (ps *partySet) citeMentions(ctx context.Context, in Input) error {
	res := make([]*regexp.Regexp, len(ps.list))
	for i, p := range ps.list {
		res[i] = regexp.MustCompile(`(?i)\b` + nameToPattern(p.name))
	}
	for d, err := range in.Each(ctx) {
		if err != nil {
			return err
		}
		for i, p := range ps.list {
			for pi, page := range d.Pages {
				for _, m := range res[i].FindAllString(page, -1) {
					p.cite(cite(d, pi))
					if isAllCaps(p.name) && !isAllCaps(m) {
						p.name = cleanName(m)
					}
				}
			}
		}
	}
	for _, p := range ps.list {
		if isAllCaps(p.name) {
			p.name = titleCase(p.name)
		}
	}
	return nil
}

func (ps *partySet) parties() []Party {
	rank := map[Role]int{RolePlaintiff: 0, RoleDefendant: 1, RoleCounsel: 2, RoleWitness: 3, RoleOther: 4}
	list := make([]*partyAcc, len(ps.list))
	copy(list, ps.list)
	sort.SliceStable(list, func(i, j int) bool {
		if rank[list[i].role] != rank[list[j].role] {
			return rank[list[i].role] < rank[list[j].role]
		}
		return list[i].key < list[j].key
	})
	out := make([]Party, 0, len(list))
	for _, p := range list {
		cites := p.cites
		sort.SliceStable(cites, func(i, j int) bool {
			if cites[i].DocumentName != cites[j].DocumentName {
				return cites[i].DocumentName < cites[j].DocumentName
			}
			if cites[i].DocumentID != cites[j].DocumentID {
				return cites[i].DocumentID < cites[j].DocumentID
			}
			return cites[i].Page < cites[j].Page
		})
		if len(cites) > MaxCitationsPerParty {
			cites = cites[:MaxCitationsPerParty]
		}
		out = append(out, Party{Name: p.name, Role: p.role, Citations: cites})
	}
	return out
}

const lineSep = "\x1f"

var (
	// A caption: "NAME, Plaintiff, v. NAME, Defendant." on one line or many
	// (lines joined by lineSep; a name never spans lines).
	captionRE = regexp.MustCompile(`([^\x1f]{2,150}?)[\s,\x1f]+(?i:plaintiffs?|petitioners?|claimants?|appellants?)[\s,.;\x1f]+(?i:v\.?|vs\.?|versus|against|-v-)[\s\x1f]+([^\x1f]{2,150}?)[\s,\x1f]+(?i:defendants?|respondents?|appellees?)\b`)
	// "Plaintiff Harlow Logistics Ltd", "Defendant Penmark Freight Inc."
	roleNameRE   = regexp.MustCompile(`\b(?i:(plaintiffs?|claimants?|petitioners?|defendants?|respondents?))\s+((?:[A-Z][\w&'.-]*)(?:\s+(?:[A-Z][\w&'.-]*|&|of|and))*)`)
	person       = `[A-Z][a-z'-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-z'-]+){1,3}`
	esqRE        = regexp.MustCompile(`(` + person + `),?\s+Esq\b`)
	inlineForRE  = regexp.MustCompile(`(` + person + `),\s+(?:Esq\.,?\s+)?(?:Attorneys?|Counsel|Solicitors?) for\b`)
	forLineRE    = regexp.MustCompile(`^(?:Attorneys?|Counsel|Solicitors?) for\b`)
	personLineRE = regexp.MustCompile(`^(` + person + `)(?:,?\s+Esq\.?)?,?$`)
	witnessRE    = regexp.MustCompile(`\b(?i:witness|deponent|declarant)\s+(` + person + `)`)
)

func captionParties(ps *partySet, page string, c Citation) {
	lines := strings.Split(page, "\n")
	if len(lines) > 60 {
		lines = lines[:60]
	}
	flat := strings.Join(lines, lineSep)
	m := captionRE.FindStringSubmatch(flat)
	if m == nil {
		return
	}
	ps.add(m[1], RolePlaintiff, c)
	ps.add(m[2], RoleDefendant, c)
}

func bodyParties(ps *partySet, lines []string, c Citation) {
	for i, l := range lines {
		for _, m := range roleNameRE.FindAllStringSubmatch(l, -1) {
			role := RoleDefendant
			switch w := strings.ToLower(m[1]); {
			case strings.HasPrefix(w, "plaintiff"), strings.HasPrefix(w, "claimant"), strings.HasPrefix(w, "petitioner"):
				role = RolePlaintiff
			}
			ps.add(m[2], role, c)
		}
		for _, m := range esqRE.FindAllStringSubmatch(l, -1) {
			ps.add(m[1], RoleCounsel, c)
		}
		for _, m := range inlineForRE.FindAllStringSubmatch(l, -1) {
			ps.add(m[1], RoleCounsel, c)
		}
		if forLineRE.MatchString(l) {
			// Signature block: the nearest person-like line above.
			for j := i - 1; j >= 0 && j >= i-3; j-- {
				if m := personLineRE.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil && !firmWord(m[1]) {
					ps.add(m[1], RoleCounsel, c)
					break
				}
			}
		}
		for _, m := range witnessRE.FindAllStringSubmatch(l, -1) {
			ps.add(m[1], RoleWitness, c)
		}
	}
}

// stopName lists keys that role patterns can catch but that are not parties.
var stopName = map[string]bool{
	"the": true, "this": true, "that": true, "it": true, "its": true, "in": true, "on": true,
	"and": true, "court": true, "complaint": true, "answer": true, "agreement": true,
	"has": true, "is": true, "was": true, "by": true, "a": true,
}

func firmWord(s string) bool {
	for _, w := range strings.Fields(strings.ToLower(s)) {
		switch strings.Trim(w, ".,") {
		case "llp", "llc", "ltd", "inc", "plc", "law", "partners", "associates", "chambers", "court", "street", "dear":
			return true
		}
	}
	return false
}

// cleanName trims punctuation around a name, keeping a final period that
// belongs to an abbreviation such as "Inc.".
func cleanName(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimLeft(s, ` ,;:"'(`)
	s = strings.TrimRight(s, ` ,;:"'(`)
	for strings.HasSuffix(s, ".") {
		words := strings.Fields(s)
		last := strings.TrimSuffix(words[len(words)-1], ".")
		if abbreviations[strings.ToLower(last)] {
			break
		}
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// partyKey is a name's identity: lower case letters and digits, single spaces.
func partyKey(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '&' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// nameToPattern matches a name's words separated by any white space or
// punctuation.
func nameToPattern(name string) string {
	words := strings.Fields(partyKey(name))
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(words, `[\s.,]+`) + `\.?`
}

func isAllCaps(s string) bool {
	hasUpper := false
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		hasUpper = hasUpper || unicode.IsUpper(r)
	}
	return hasUpper
}

func titleCase(s string) string {
	words := strings.Fields(strings.ToLower(s))
	for i, w := range words {
		switch strings.Trim(w, ".,") {
		case "llp", "llc", "plc", "usa", "uk":
			words[i] = strings.ToUpper(w)
			continue
		case "of", "and", "the":
			if i > 0 {
				continue
			}
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}
