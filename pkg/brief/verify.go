package brief

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A model's reply is checked field by field against the documents before
// any of it lands (verifier.brief, run by Prompt.Assemble). What the model
// wrote is a claim; the documents and their deterministic reading (the
// extractive builder's, over the same cleaned text) are the evidence:
//
//   - a field carrying markup, a link or a URL is refused (hasMarkup);
//   - caption fields are quotes of the pages the caption cites (or equal to
//     the caption as the documents give it); a case number found on no page
//     is dropped; a court or title that is not a quote is kept but marked
//     model_asserted; a title whose sides contradict the caption's roles is
//     refused;
//   - a party's role and capacity must match the caption (or the signature
//     block) that names it: a contradicted role is replaced by the
//     caption's; a party no caption names keeps its role marked
//     model_asserted;
//   - an event's and an assertion's text is a quote of the cited page, as a
//     whole sentence or clause that keeps its negation (hasClause); an
//     event's date must parse out of each quote that cites it;
//   - a document's kind and filing date must agree with what the document
//     says (its title, its stamp or signature date); a contradicted value
//     is replaced by the document's; a value the document neither confirms
//     nor contradicts is marked model_asserted;
//
// and every refusal or mark is counted in Checks (Refused, ModelAsserted,
// and the citation counts) with a note that names the field, never the
// model's text.

type verifier struct {
	k   *checker
	ref Brief // the extractive reading of the same documents
}

func (v *verifier) refuse(format string, args ...any) {
	v.k.checks.Refused++
	v.k.note(format, args...)
}

func (v *verifier) mark(format string, args ...any) {
	v.k.checks.ModelAsserted++
	v.k.note(format, args...)
}

func (v *verifier) dropItem(format string, args ...any) {
	v.k.checks.DroppedItems++
	v.refuse(format, args...)
}

// sameText reports whether a and b say the same words (partyKey).
func sameText(a, b string) bool {
	ka := partyKey(a)
	return ka != "" && ka == partyKey(b)
}

// refParty finds the party the documents' own reading knows by name: the
// same key, or one extending the other word by word.
func (v *verifier) refParty(name string) (Party, bool) {
	key := partyKey(name)
	if key == "" {
		return Party{}, false
	}
	for _, p := range v.ref.Parties {
		pk := partyKey(p.Name)
		if pk == key || strings.HasPrefix(pk+" ", key+" ") || strings.HasPrefix(key+" ", pk+" ") {
			return p, true
		}
	}
	return Party{}, false
}

type pageRef struct {
	d *docPages
	i int
}

func (v *verifier) brief(b *Brief, given map[string]*modelDoc) {
	v.caption(&b.Caption)
	v.parties(b)
	v.chronology(b)
	v.documents(b, given)
}

// captionPages are the pages the caption cites that exist, or else the
// first page of every document.
func (v *verifier) captionPages(c *Caption) []pageRef {
	var out []pageRef
	kept := c.Citations[:0]
	for i, cc := range c.Citations {
		d, ok := v.k.docs[strings.ToLower(cc.DocumentID)]
		if !ok || cc.Page < 1 || cc.Page > len(d.pages) {
			v.k.checks.Checked++
			v.k.checks.DroppedCitations++
			v.k.note("caption.citations[%d]: cites an unknown document or page", i)
			continue
		}
		if cc.Quote != "" && (hasMarkup(cc.Quote) || !d.has(cc.Page-1, cc.Quote, false, false)) {
			cc.Quote = ""
		}
		cc.DocumentID, cc.DocumentName = d.id, d.name
		kept = appendCitation(kept, cc)
		out = append(out, pageRef{d, cc.Page - 1})
	}
	c.Citations = kept
	if len(out) == 0 {
		for _, d := range v.k.docs {
			if len(d.pages) > 0 {
				out = append(out, pageRef{d, 0})
			}
		}
	}
	return out
}

func (v *verifier) caption(c *Caption) {
	ref := v.ref.Caption
	pages := v.captionPages(c)
	quoted := func(s string) bool {
		for _, p := range pages {
			if p.d.has(p.i, s, false, false) {
				return true
			}
		}
		return false
	}
	named := func(s string) bool {
		for _, p := range pages {
			if p.d.has(p.i, s, true, false) {
				return true
			}
		}
		return false
	}
	c.ModelAsserted = nil

	switch court := strings.TrimSpace(c.Court); {
	case court == "":
		c.Court = ""
	case hasMarkup(court):
		c.Court = ref.Court
		v.refuse("caption.court refused: markup or a URL; the documents' caption is used")
	case quoted(court) || sameText(court, ref.Court):
		c.Court = court
	default:
		c.Court = court
		c.ModelAsserted = append(c.ModelAsserted, "court")
		v.mark("caption.court is not a quote of the caption's pages: marked model_asserted")
	}

	token := func(s string) bool {
		for _, p := range pages {
			if p.i < len(p.d.pages) && hasToken(p.d.foldedPage(p.i), fold(s)) {
				return true
			}
		}
		return false
	}
	nums := []string{}
	for i, n := range c.CaseNumbers {
		n = strings.TrimSpace(n)
		// A case number has a case number's shape and stands on the page
		// as a whole token ("1" is on every page, and no case).
		ok := n != "" && !hasMarkup(n) && CaseKey(n) != "" && token(n)
		for _, r := range ref.CaseNumbers {
			ok = ok || (n != "" && !hasMarkup(n) && CaseKey(n) != "" && CaseKey(n) == CaseKey(r))
		}
		if !ok {
			v.refuse("caption.case_numbers[%d] refused: on no page the caption cites", i)
			continue
		}
		if !containsCase(nums, n) {
			nums = append(nums, n)
		}
	}
	c.CaseNumbers = nums

	switch title := strings.TrimSpace(c.Title); {
	case title == "":
		c.Title = ""
	case hasMarkup(title):
		c.Title = ref.Title
		v.refuse("caption.title refused: markup or a URL; the documents' caption is used")
	case quoted(title) || sameText(title, ref.Title):
		c.Title = title
	case v.reversedTitle(title):
		c.Title = ref.Title
		v.refuse("caption.title refused: its sides contradict the caption's roles; the documents' caption is used")
	default:
		c.Title = title
		if a, b, ok := splitTitle(title); !ok || !named(a) || !named(b) {
			c.ModelAsserted = append(c.ModelAsserted, "title")
			v.mark("caption.title is not a quote of the caption's pages: marked model_asserted")
		}
	}
}

// hasToken reports whether page holds s with no letter or digit just
// before or after it.
func hasToken(page, s string) bool {
	if s == "" {
		return false
	}
	for from := 0; from < len(page); {
		i := strings.Index(page[from:], s)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(s)
		before, after := rune(' '), rune(' ')
		if start > 0 {
			before, _ = utf8.DecodeLastRuneInString(page[:start])
		}
		if end < len(page) {
			after, _ = utf8.DecodeRuneInString(page[end:])
		}
		if !unicode.IsLetter(before) && !unicode.IsDigit(before) && !unicode.IsLetter(after) && !unicode.IsDigit(after) {
			return true
		}
		from = start + 1
	}
	return false
}

func containsCase(list []string, n string) bool {
	for _, have := range list {
		if CaseKey(have) == CaseKey(n) {
			return true
		}
	}
	return false
}

var titleSplitRE = regexp.MustCompile(`(?i)\s+(?:v\.?|vs\.?|versus)\s+`)

func splitTitle(t string) (string, string, bool) {
	parts := titleSplitRE.Split(t, 2)
	if len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// reversedTitle: "A v. B" where the documents' caption has A as a
// defendant or B as a plaintiff.
func (v *verifier) reversedTitle(t string) bool {
	a, b, ok := splitTitle(t)
	if !ok {
		return false
	}
	pa, okA := v.refParty(a)
	pb, okB := v.refParty(b)
	return okA && pa.Role == RoleDefendant || okB && pb.Role == RolePlaintiff
}

func (v *verifier) parties(b *Brief) {
	out := b.Parties[:0]
	for i, p := range b.Parties {
		where := fmt.Sprintf("parties[%d]", i)
		p.Role = Role(strings.ToLower(strings.TrimSpace(string(p.Role))))
		p.Name, p.Capacity = strings.TrimSpace(p.Name), strings.ToLower(strings.TrimSpace(p.Capacity))
		p.ModelAsserted = false
		switch {
		case !p.Role.Valid():
			v.dropItem("%s refused: role is not plaintiff, defendant, counsel, witness or other", where)
			continue
		case p.Name == "":
			v.dropItem("%s refused: no name", where)
			continue
		case hasMarkup(p.Name) || hasMarkup(p.Capacity):
			v.dropItem("%s refused: markup or a URL in its name or capacity", where)
			continue
		}
		// The page must name the party itself: a citation's quote of some
		// other name on the page vouches for nothing.
		cs := p.Citations[:0]
		for _, c := range p.Citations {
			if !sameText(c.Quote, p.Name) {
				c.Quote = ""
			}
			cs = append(cs, c)
		}
		p.Citations = v.k.citations(nonNil(cs), p.Name, where, true)
		if len(p.Citations) == 0 {
			v.k.checks.DroppedItems++
			continue
		}
		if r, ok := v.refParty(p.Name); ok && r.Role == p.Role {
			if p.Capacity != r.Capacity {
				v.refuse("%s: capacity does not match the caption's role words; the caption's is used", where)
				p.Capacity = r.Capacity
			}
		} else if ok {
			v.refuse("%s: role %s contradicts the caption, which makes it %s; the caption's role is used", where, p.Role, r.Role)
			p.Role, p.Capacity = r.Role, r.Capacity
		} else {
			if p.Capacity != "" && !capacityRE.MatchString(p.Capacity) {
				v.refuse("%s: capacity is not a caption role word; dropped", where)
				p.Capacity = ""
			}
			p.ModelAsserted = true
			v.mark("%s: no caption or signature block gives this party a role: marked model_asserted", where)
		}
		out = append(out, p)
	}
	b.Parties = out
}

var capacityRE = regexp.MustCompile(`^(?:(?:cross|counter|third[- ]party)[- ]?)?(?:appellant|appellee|petitioner|respondent|debtor|creditor|movant|intervenor|relator|garnishee|claimant|subject|trustee)s?$`)

func (v *verifier) chronology(b *Brief) {
	out := b.Chronology[:0]
	for i, e := range b.Chronology {
		where := fmt.Sprintf("chronology[%d]", i)
		if !isDate(e.Date) {
			v.dropItem("%s refused: date is not YYYY-MM-DD", where)
			continue
		}
		if hasMarkup(e.Text) {
			v.dropItem("%s refused: markup or a URL in its text", where)
			continue
		}
		var kept []Citation
		for j, c := range e.Citations {
			q := c.Quote
			if strings.TrimSpace(q) == "" {
				q = e.Text
			}
			switch {
			case hasMarkup(q):
				v.k.checks.Checked++
				v.k.checks.DroppedCitations++
				v.refuse("%s.citations[%d] refused: markup or a URL in its quote", where, j)
				continue
			case !dateIn(q, e.Date):
				v.k.checks.Checked++
				v.k.checks.DroppedCitations++
				v.refuse("%s.citations[%d] refused: the entry's date does not parse out of its quote", where, j)
				continue
			}
			c.Quote = q
			if v.k.cite(&c, q, where, false) {
				kept = appendCitation(kept, c)
			}
		}
		if len(kept) == 0 {
			v.k.checks.DroppedItems++
			continue
		}
		e.Citations, e.Text = kept, kept[0].Quote
		out = append(out, e)
	}
	b.Chronology = out
	sort.SliceStable(b.Chronology, func(i, j int) bool { return b.Chronology[i].Date < b.Chronology[j].Date })
}

// dateIn reports whether date (YYYY-MM-DD) is a date written in s.
func dateIn(s, date string) bool {
	for _, d := range findDates(s) {
		if d.date == date {
			return true
		}
	}
	return false
}

// modelDoc is what the model said of one document.
type modelDoc struct {
	kind       string
	filedOn    string
	assertions []Assertion
}

// documents completes each document's summary from the documents' own
// reading and what the model said of it (given, by lower-case id).
func (v *verifier) documents(b *Brief, given map[string]*modelDoc) {
	refDocs := map[string]DocumentSummary{}
	for _, d := range v.ref.Documents {
		refDocs[strings.ToLower(d.DocumentID)] = d
	}
	for i := range b.Documents {
		sum := &b.Documents[i]
		rd := refDocs[strings.ToLower(sum.DocumentID)]
		md := given[strings.ToLower(sum.DocumentID)]
		sum.Kind, sum.FiledOn, sum.ModelAsserted = rd.Kind, rd.FiledOn, nil
		if !sum.Kind.Valid() {
			sum.Kind = KindOther
		}
		if md == nil {
			continue
		}
		where := fmt.Sprintf("documents[%d] (%s)", i, sum.Name)
		switch kind := Kind(strings.ToLower(strings.TrimSpace(md.kind))); {
		case kind == "":
		case !kind.Valid():
			v.refuse("%s: kind refused: not one of the kinds", where)
		case kind == sum.Kind:
		case sum.Kind != KindOther:
			v.refuse("%s: kind %s contradicts the document's own title or form (%s); the document's is used", where, kind, sum.Kind)
		default:
			sum.Kind = kind
			sum.ModelAsserted = append(sum.ModelAsserted, "kind")
			v.mark("%s: kind %s is not confirmed by the document's title or form: marked model_asserted", where, kind)
		}
		switch f := strings.TrimSpace(md.filedOn); {
		case f == "" || f == sum.FiledOn:
		case !isDate(f):
			v.refuse("%s: filed_on refused: not YYYY-MM-DD", where)
		case sum.FiledOn != "":
			v.refuse("%s: filed_on contradicts the document's stamp or signature date (%s); the document's is used", where, sum.FiledOn)
		case docHasDate(v.k.docs[strings.ToLower(sum.DocumentID)], f):
			sum.FiledOn = f
			sum.ModelAsserted = append(sum.ModelAsserted, "filed_on")
			v.mark("%s: filed_on is a date of the document but no stamp or signature says it was filed then: marked model_asserted", where)
		default:
			v.refuse("%s: filed_on refused: the date is on no page of the document", where)
		}
		as := []Assertion{}
		for j, a := range md.assertions {
			awhere := fmt.Sprintf("%s.assertions[%d]", where, j)
			if !strings.EqualFold(a.Citation.DocumentID, sum.DocumentID) {
				v.k.checks.Checked++
				v.k.checks.DroppedCitations++
				v.k.checks.DroppedItems++
				v.k.note("%s cites another document", awhere)
				continue
			}
			if strings.TrimSpace(a.Text) == "" || hasMarkup(a.Text) {
				v.dropItem("%s refused: empty, or markup or a URL in its text", awhere)
				continue
			}
			// The assertion's text is the quote: a citation's own quote
			// cannot vouch for a text the page does not say.
			a.Text = strings.TrimSpace(a.Text)
			a.Citation.Quote = ""
			if !v.k.cite(&a.Citation, a.Text, awhere, false) {
				v.k.checks.DroppedItems++
				continue
			}
			as = append(as, a)
			if len(as) == MaxAssertionsPerDocument {
				break
			}
		}
		sum.Assertions = as
	}
}

// docHasDate reports whether some page of d writes date.
func docHasDate(d *docPages, date string) bool {
	if d == nil {
		return false
	}
	for _, p := range d.pages {
		if dateIn(p, date) {
			return true
		}
	}
	return false
}
