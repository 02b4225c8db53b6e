package brief

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/pramaan/brief-rail/pkg/doctext"
)

// Limits on the size of an extractive Brief. Each document's extraction is
// bounded on its own, so memory grows with the number of documents, not
// with their pages.
const (
	MaxAssertionsPerDocument = 40
	MaxEventsPerDocument     = 120
	MaxChronologyEvents      = 500
	MaxCitationsPerParty     = 12
	MaxCitationsPerEvent     = 12
	MaxParties               = 200
	maxItemText              = 600 // bytes of one event or assertion text
)

// Extractive builds a Brief by rules over the documents' cleaned text
// (doctext.Clean). It is deterministic (the same Input, in any document
// order, gives byte-identical JSON) and makes no network calls.
//
// Each document is read on its own into bounded accumulators (Assembly.Add)
// and the accumulators are merged at the end (Assembly.Finish), so a caller
// that streams documents holds one document's text at a time.
type Extractive struct{}

// NewExtractive returns the extractive builder.
func NewExtractive() Extractive { return Extractive{} }

// Name identifies the builder and its rules version in Brief.Builder. It
// changes with the schema version and with rules that change what a Brief
// says (v3: the responses list; v6: caption round 4 and the responses'
// rules for real answers; v7: caption round 15, and a glyph drawn twice
// read once; v8: caption round 16, whose rules read state trial courts'
// place lines, forms and letters differently), so the rail rebuilds older
// frames.
func (Extractive) Name() string { return "extractive/v15" }

// Build implements Builder. It reads the documents through in.Each, one
// at a time (in order of id), into the Assembly's bounded accumulators; a
// first pass checks the documents and computes the fingerprint, so that a
// streamed input's text is never held whole.
func (e Extractive) Build(ctx context.Context, in Input) (Brief, error) {
	if err := in.validateHeader(); err != nil {
		return Brief{}, err
	}
	var dc docChecker
	f := newFingerprint(in, e.Identity())
	for d, err := range in.Each(ctx) {
		if err != nil {
			return Brief{}, err
		}
		if err := dc.check(d); err != nil {
			return Brief{}, err
		}
		addToFingerprint(f, d)
	}
	a := e.Begin(in.FirmID, in.MatterID, in.Title, f.Sum())
	for d, err := range in.Each(ctx) {
		if err != nil {
			return Brief{}, err
		}
		a.Add(d)
	}
	return a.Finish()
}

// Begin starts an Assembly: add documents in a stable order (Build adds
// them in order of id, as Input.Each yields them), then Finish.
func (e Extractive) Begin(firmID, matterID, title, fingerprint string) *Assembly {
	return &Assembly{
		brief: Brief{
			SchemaVersion:    SchemaVersion,
			Matter:           Matter{FirmID: firmID, MatterID: matterID, Title: title},
			Documents:        []DocumentSummary{},
			Checks:           Checks{Notes: []string{}},
			Builder:          e.Name(),
			InputFingerprint: fingerprint,
		},
		parties: &partySet{},
	}
}

// Assembly is an extractive Brief being built one document at a time.
type Assembly struct {
	brief    Brief
	captions []citedCaption
	events   []eventItem
	parties  *partySet
	docs     int
	pleads   []*pleading // complaints and answers, for the responses
}

type citedCaption struct {
	docCaption
	doc Document // without pages
}

type eventItem struct {
	date  string
	text  string
	cite  Citation
	words map[string]bool
	doc   int // order of the document in the assembly
	page  int
	n     int // sentence on the page
}

// Add reads one document: cleans its pages, reads its caption, kind and
// filed date, parties, dated sentences and assertions, and checks every
// citation against the cleaned pages. The document's text is not kept.
func (a *Assembly) Add(d Document) {
	clean := doctext.Clean(d.Pages)
	pages := clean.Pages
	dc := readCaption(pages, clean.Meta.CaseNumbers)
	sum := DocumentSummary{
		DocumentID: d.ID, Name: d.Name, SHA256: d.SHA256,
		PageCount: len(d.Pages), Note: d.Note, Assertions: []Assertion{},
		Kind: appellateDecision(classifyKind(pages, clean.Meta), pages, dc), FiledOn: filedOn(pages, clean.Meta), DocketEntry: clean.Meta.DocketEntry,
	}
	// A partial Brief holding only this document's items, so that the
	// same citation check as every builder's runs on it.
	part := Brief{Documents: []DocumentSummary{sum}, Caption: Caption{Citations: []Citation{}}, Checks: a.brief.Checks}
	if pl := readPleading(d, sum.Kind, sum.FiledOn, pages); pl != nil {
		a.pleads = append(a.pleads, pl)
	}
	docParties := &partySet{}
	// A name the caption rules joined from lines that do not stand
	// together on any page ("Super. Ct. JANE ROE" from two columns) is
	// not a party: the citation check would drop it, and the builder
	// cites only what it can show.
	onPages := newDocPages(d.ID, d.Name, pages)
	for _, p := range dc.parties {
		if !anyPageHas(onPages, p.name) {
			continue
		}
		docParties.add(p.name, p.role, p.capacity, true, Citation{DocumentID: d.ID, DocumentName: d.Name, Page: p.page + 1})
	}
	hasText := false
	var evs []eventItem
	for p, page := range pages {
		if page == "" {
			continue
		}
		hasText = true
		c := cite(d, p)
		paras := strings.Split(page, "\n")
		counselParties(docParties, paras, c)
		for si, s := range splitSentences(page) {
			if len(evs) >= MaxEventsPerDocument {
				break
			}
			text := strings.TrimSpace(numberedPara.ReplaceAllString(s.text, ""))
			if !eventSentence(text) {
				continue
			}
			for _, dm := range findDates(s.text) {
				if citationDate(s.text, dm) {
					continue
				}
				q := clip(text, maxItemText)
				cc := c
				cc.Quote = q
				evs = append(evs, eventItem{date: dm.date, text: q, cite: cc, page: p, n: si})
			}
		}
		sum.Assertions = appendAssertions(sum.Assertions, paras, page, c)
	}
	docParties.citeMentions(d, pages)
	if !hasText && sum.Note == "" {
		sum.Note = "no text was extracted from this document"
	}
	if len(sum.Assertions) > MaxAssertionsPerDocument {
		sum.Assertions = sum.Assertions[:MaxAssertionsPerDocument]
	}
	part.Documents[0].Assertions = sum.Assertions
	part.Parties = docParties.parties()
	for _, e := range evs {
		part.Chronology = append(part.Chronology, Event{Date: e.date, Text: e.text, Citations: []Citation{e.cite}})
	}
	k := &checker{docs: map[string]*docPages{strings.ToLower(d.ID): newDocPages(d.ID, d.Name, pages)}, checks: &part.Checks}
	k.brief(&part)
	a.brief.Checks = part.Checks

	a.brief.Documents = append(a.brief.Documents, part.Documents[0])
	for _, p := range part.Parties {
		for _, c := range p.Citations {
			a.parties.addParty(p, c)
		}
	}
	for i, e := range part.Chronology {
		a.events = append(a.events, eventItem{date: e.Date, text: e.Text, cite: e.Citations[0], words: contentWords(e.Text), doc: a.docs, page: e.Citations[0].Page, n: i})
	}
	dc.parties = nil
	d.Pages = nil
	a.captions = append(a.captions, citedCaption{docCaption: dc, doc: d})
	a.docs++
}

// Finish merges the documents' accumulators into the Brief and validates it.
func (a *Assembly) Finish() (Brief, error) {
	b := a.brief
	b.Documents = sortedSummaries(b.Documents)
	b.Caption = mergeCaptions(a.captions)
	b.Parties = a.parties.parties()
	b.Chronology = mergeEvents(a.events)
	b.Responses = pairResponses(a.pleads)
	if err := b.Validate(); err != nil {
		return Brief{}, fmt.Errorf("extractive builder produced an invalid brief (a bug): %w", err)
	}
	return b, nil
}

// mergeCaptions: the court and title most documents give (the first
// document's on a tie), every case number once, and the pages they came
// from.
func mergeCaptions(cs []citedCaption) Caption {
	out := Caption{CaseNumbers: []string{}, Citations: []Citation{}}
	courtVotes, titleVotes := map[string]int{}, map[string]int{}
	for _, c := range cs {
		if c.court != "" {
			courtVotes[partyKey(c.court)]++
		}
		if c.title != "" {
			titleVotes[partyKey(c.title)]++
		}
	}
	bestCourt, bestTitle := 0, 0
	seenCase := map[string]bool{}
	for _, c := range cs {
		if n := courtVotes[partyKey(c.court)]; c.court != "" && n > bestCourt {
			out.Court, bestCourt = c.court, n
		}
		if n := titleVotes[partyKey(c.title)]; c.title != "" && n > bestTitle {
			out.Title, bestTitle = c.title, n
		}
		for _, n := range c.caseNumbers {
			if k := CaseKey(n); !seenCase[k] {
				seenCase[k] = true
				out.CaseNumbers = append(out.CaseNumbers, n)
			}
		}
	}
	for _, c := range cs {
		if len(out.Citations) >= MaxCitationsPerParty {
			break
		}
		switch {
		case c.title != "" && partyKey(c.title) == partyKey(out.Title):
			out.Citations = append(out.Citations, cite(c.doc, c.titlePage))
		case c.court != "" && partyKey(c.court) == partyKey(out.Court):
			out.Citations = append(out.Citations, cite(c.doc, c.courtPage))
		}
	}
	return out
}

// mergeEvents sorts dated sentences and makes one entry per event: on the
// same date, sentences that share most of their content words are one
// event, cited by every document and page that states it.
func mergeEvents(items []eventItem) []Event {
	sort.SliceStable(items, func(i, j int) bool {
		a, c := items[i], items[j]
		if a.date != c.date {
			return a.date < c.date
		}
		if a.doc != c.doc {
			return a.doc < c.doc
		}
		if a.page != c.page {
			return a.page < c.page
		}
		return a.n < c.n
	})
	out := []Event{}
	var groupWords []map[string]bool
	dayStart := 0
	for _, it := range items {
		if len(out) > 0 && out[len(out)-1].Date != it.date {
			dayStart = len(out)
		}
		merged := false
		for g := dayStart; g < len(out); g++ {
			if sameEvent(groupWords[g], it.words) || fold(out[g].Text) == fold(it.text) {
				if len(out[g].Citations) < MaxCitationsPerEvent {
					out[g].Citations = appendCitation(out[g].Citations, it.cite)
				}
				merged = true
				break
			}
		}
		if merged {
			continue
		}
		if len(out) == MaxChronologyEvents {
			break
		}
		out = append(out, Event{Date: it.date, Text: it.text, Citations: []Citation{it.cite}})
		groupWords = append(groupWords, it.words)
	}
	return out
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or of to in on at by for from with that this its it is was were be been has have had
		not no as which who whom on upon into than then there their they he she his her him we our us you your
		january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
		court plaintiff defendant appellant appellee petitioner respondent party parties day`) {
		stopWords[w] = true
	}
}

// contentWords are a sentence's words that carry meaning: no stop words,
// month names or numbers.
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(partyKey(s)) {
		if len(w) < 3 || stopWords[w] || unicode.IsDigit(rune(w[0])) {
			continue
		}
		out[strings.TrimSuffix(w, "s")] = true
	}
	return out
}

// sameEvent: the smaller word set shares at least half its words with the
// other (and at least two).
func sameEvent(a, b map[string]bool) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	small, big := a, b
	if len(b) < len(a) {
		small, big = b, a
	}
	common := 0
	for w := range small {
		if big[w] {
			common++
		}
	}
	return common >= 2 && common*2 >= len(small)
}

// sortedSummaries orders document summaries by name, then id.
func sortedSummaries(in []DocumentSummary) []DocumentSummary {
	sort.SliceStable(in, func(i, j int) bool {
		if in[i].Name != in[j].Name {
			return in[i].Name < in[j].Name
		}
		return strings.ToLower(in[i].DocumentID) < strings.ToLower(in[j].DocumentID)
	})
	return in
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
	key      string
	name     string
	role     Role
	capacity string
	explicit bool // the role came from a caption's role words or a counsel line
	cites    []Citation
}

type partySet struct {
	list []*partyAcc
}

// add records a mention of name in role at c. A name whose key equals, or
// extends or is extended word-wise by, the key of a party already known in
// the same role is the same party. A party named in two roles keeps the one
// the caption's words gave (the first such).
func (ps *partySet) add(name string, role Role, capacity string, explicit bool, c Citation) {
	name = cleanName(name)
	key := partyKey(name)
	if key == "" || stopName[key] || roleOnlyRE.MatchString(name) {
		return
	}
	if (role == RoleCounsel || role == RoleWitness) && notAPersonRE.MatchString(name) {
		return // "Second Floor", "Assistant United States Attorney", "Witness Convenience Favors Transfer"
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
		if p.key == key && explicit && !p.explicit {
			p.role, p.capacity, p.explicit = role, capacity, true
		}
		if p.capacity == "" {
			p.capacity = capacity
		}
		p.cite(c)
		return
	}
	if len(ps.list) >= MaxParties {
		return
	}
	p := &partyAcc{key: key, name: name, role: role, capacity: capacity, explicit: explicit}
	p.cite(c)
	ps.list = append(ps.list, p)
}

// addParty merges a document's party (already checked) into the matter's.
func (ps *partySet) addParty(p Party, c Citation) {
	ps.add(p.Name, p.Role, p.Capacity, true, c)
}

func (p *partyAcc) cite(c Citation) {
	for _, have := range p.cites {
		if have.DocumentID == c.DocumentID && have.Page == c.Page {
			return
		}
	}
	p.cites = append(p.cites, c)
}

// citeMentions cites every page of d on which a party's full name appears,
// and replaces an all-capitals name (from a caption) by a mixed-case
// spelling found in the text.
func (ps *partySet) citeMentions(d Document, pages []string) {
	for _, p := range ps.list {
		re := regexp.MustCompile(`(?i)\b` + nameToPattern(p.name))
		for pi, page := range pages {
			if len(p.cites) >= MaxCitationsPerParty {
				break
			}
			for _, m := range re.FindAllString(page, 3) {
				p.cite(cite(d, pi))
				if isAllCaps(p.name) && !isAllCaps(m) {
					p.name = cleanName(m)
				}
			}
		}
		if isAllCaps(p.name) {
			p.name = titleCase(p.name)
		}
	}
}

func (ps *partySet) parties() []Party {
	rank := map[Role]int{RolePlaintiff: 0, RoleDefendant: 1, RoleOther: 2, RoleCounsel: 3, RoleWitness: 4}
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
		out = append(out, Party{Name: p.name, Role: p.role, Capacity: p.capacity, Citations: cites})
	}
	return out
}

var (
	person       = `[A-Z][a-z'-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-z'-]+){1,3}`
	esqRE        = regexp.MustCompile(`(` + person + `),?\s+Esq\b`)
	inlineForRE  = regexp.MustCompile(`(` + person + `),\s+(?:Esq\.,?\s+)?(?:Attorneys?|Counsel|Solicitors?) for\b`)
	forLineRE    = regexp.MustCompile(`^(?:Attorneys?|Counsel|Solicitors?) for\b`)
	personLineRE = regexp.MustCompile(`^(` + person + `)(?:,?\s+Esq\.?)?,?$`)
	witnessRE    = regexp.MustCompile(`\b(?i:witness|deponent|declarant)\s+(` + person + `)`)
)

// counselParties finds counsel (signature blocks, "…, Esq.") and witnesses.
// Litigants come from captions only: a role word in running text ("the
// Appellees") never becomes a name.
func counselParties(ps *partySet, lines []string, c Citation) {
	for i, l := range lines {
		if strings.Contains(l, "Esq") {
			for _, m := range esqRE.FindAllStringSubmatch(l, -1) {
				ps.add(m[1], RoleCounsel, "", true, c)
			}
		}
		if strings.Contains(l, " for") {
			for _, m := range inlineForRE.FindAllStringSubmatch(l, -1) {
				ps.add(m[1], RoleCounsel, "", true, c)
			}
		}
		if forLineRE.MatchString(l) {
			// Signature block: the nearest person-like line above.
			for j := i - 1; j >= 0 && j >= i-3; j-- {
				if m := personLineRE.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil && !firmWord(m[1]) && !notAPersonRE.MatchString(m[1]) {
					ps.add(m[1], RoleCounsel, "", true, c)
					break
				}
			}
		}
		if low := strings.ToLower(l); strings.Contains(low, "witness") || strings.Contains(low, "deponent") || strings.Contains(low, "declarant") {
			for _, m := range witnessRE.FindAllStringSubmatch(l, -1) {
				ps.add(m[1], RoleWitness, "", true, c)
			}
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
		if abbreviations[strings.ToLower(last)] || strings.Contains(last, ".") {
			break // "Inc.", and an initialism's last stop: "Nestec S.A.", "Acme L.P."
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
		switch strings.Trim(w, ".,;") {
		case "llp", "llc", "plc", "usa", "uk", "ii", "iii", "iv", "n.a", "l.l.c", "l.p", "lp", "pllc", "p.c", "p.a", "sas", "sasu":
			words[i] = strings.ToUpper(w)
			continue
		case "of", "and", "the", "for", "in", "on", "at", "by", "to", "et", "al", "a", "an", "d/b/a", "a/k/a", "f/k/a", "n/k/a", "dba":
			// (A trade name begins after its "d/b/a": "d/b/a The Gazette".)
			if i > 0 && !tradeMark(words[i-1]) || tradeMark(w) {
				continue
			}
		}
		// An organisation's initials in parentheses stay capitals:
		// "International Union (UGA)" (round 19).
		if parenInitialsRE.MatchString(w) {
			words[i] = strings.ToUpper(w)
			continue
		}
		r := []rune(w)
		up := true
		for j, c := range r {
			if up && unicode.IsLetter(c) {
				r[j] = unicode.ToUpper(c)
			}
			up = c == '.' || c == '-' || c == '\'' || c == '’' || c == '('
		}
		// A possessive's "s" stays small: "AJ'S" is "Aj's", "INC.'S" "Inc.'s".
		if n := len(r); n > 2 && r[n-1] == 'S' && (r[n-2] == '\'' || r[n-2] == '’') {
			r[n-1] = 's'
		}
		if len(r) > 2 && r[0] == 'M' && r[1] == 'c' {
			r[2] = unicode.ToUpper(r[2])
		}
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// tradeMark: the small word that joins a name to its trade name or alias.
func tradeMark(w string) bool {
	switch w {
	case "d/b/a", "a/k/a", "f/k/a", "n/k/a", "dba":
		return true
	}
	return false
}

// anyPageHas says whether a name stands, as a name, on some page.
func anyPageHas(d *docPages, name string) bool {
	for i := range d.pages {
		if d.has(i, name, true, false) {
			return true
		}
	}
	return false
}

var parenInitialsRE = regexp.MustCompile(`^\([a-z]{2,6}\)[,;.]?$`)
