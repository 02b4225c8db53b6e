package brief

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Allegations and responses: when a matter holds a complaint and an answer,
// the Brief pairs each numbered allegation with the answer's response to it,
// citing both pages, and says what the response does. It is deterministic
// (no model), and every builder's Brief carries the same list.
//
// Reading a complaint: its numbered paragraphs ("12. …", "(12) …", with
// the unnumbered paragraphs that continue them), except a prayer for relief
// (WHEREFORE, PRAYER FOR RELIEF, JURY DEMAND) and its numbered items; a
// later count whose paragraphs continue the numbering is read on. A number used twice keeps
// both paragraphs (each is paired with the responses to that number, and
// noted); a number skipped is simply absent.
//
// Reading an answer: its numbered paragraphs up to the defences, and any
// paragraph that names paragraphs ("Paragraphs 10 through 12 are denied").
// A response answers the paragraphs it names ("paragraph 6", "paragraphs 9
// through 11", "¶¶ 3-5", "paragraphs 2, 4 and 7"), clause by clause; one
// that names none answers the complaint paragraph of its own number when the
// answer has not yet passed it, else the next allegation after the last
// one answered. A paragraph that restates the allegation and is followed by
// an "ANSWER:" or "RESPONSE:" paragraph is answered by that paragraph. A
// paragraph that incorporates earlier responses answers its own number.
//
// Several answers (an amended answer): the newest (by filing date, then an
// "amended" title, then name) wins, and the superseded responses are kept
// in the entry's history. The newest complaint (the same order) gives the
// allegations.

// ResponseStatus is what a response does with an allegation.
type ResponseStatus string

// Statuses of a response.
const (
	StatusAdmitted ResponseStatus = "admitted"
	StatusDenied   ResponseStatus = "denied"
	// StatusNoKnowledge: the responding party lacks knowledge or information
	// sufficient to form a belief; under Fed. R. Civ. P. 8(b)(5) it has the
	// effect of a denial.
	StatusNoKnowledge    ResponseStatus = "no_knowledge"
	StatusPartlyAdmitted ResponseStatus = "partly_admitted"
	// StatusNoResponseRequired: the response says the allegation is a legal
	// conclusion (or otherwise needs no response).
	StatusNoResponseRequired ResponseStatus = "no_response_required"
	// StatusNotAnswered: no response reaches the allegation, or the response
	// neither admits nor denies it. Under Rule 8(b)(6) an allegation that
	// required a response and is not denied is admitted: flagged.
	StatusNotAnswered ResponseStatus = "not_answered"
)

// Valid reports whether s is one of the statuses.
func (s ResponseStatus) Valid() bool {
	switch s {
	case StatusAdmitted, StatusDenied, StatusNoKnowledge, StatusPartlyAdmitted, StatusNoResponseRequired, StatusNotAnswered:
		return true
	}
	return false
}

// Passage is a paragraph of a document, cited and quoted.
type Passage struct {
	DocumentID   string `json:"document_id"`
	DocumentName string `json:"document_name"`
	Page         int    `json:"page"` // 1-based
	Text         string `json:"text"` // the paragraph as the page has it (clipped " …" past 600 bytes)
}

// Response pairs one numbered allegation with the response to it.
type Response struct {
	Paragraph  string         `json:"paragraph"` // the allegation's number, as written
	Allegation Passage        `json:"allegation"`
	Response   *Passage       `json:"response"` // null when no response reaches the allegation
	Status     ResponseStatus `json:"status"`
	// Note says how the status was read where a reader should know: the
	// Rule 8(b)(5) and 8(b)(6) effects, a general denial, a grouped
	// response, "the document speaks for itself", a repeated number.
	Note string `json:"note,omitempty"`
	// History holds the responses of superseded answers, oldest first.
	History []PriorResponse `json:"history,omitempty"`
}

// PriorResponse is a superseded answer's response to an allegation.
type PriorResponse struct {
	Response Passage        `json:"response"`
	Status   ResponseStatus `json:"status"`
}

// MaxResponses bounds Brief.Responses (and the paragraphs read from one
// pleading).
const MaxResponses = 400

// pleadingPara is one numbered (or paragraph-naming) paragraph of a
// pleading, kept from Assembly.Add until Finish.
type pleadingPara struct {
	num  int // 0: unnumbered
	text string
	page int // 0-based
	// restated: an answer's paragraph followed by its "ANSWER:" paragraph
	// (text is then the response only).
	restated bool
	// labelled: "ANSWER TO PARAGRAPH NO. 5:" — the response to that
	// paragraph, with the paragraphs that follow it.
	labelled bool
}

// pleading is a complaint or an answer as the pairing needs it.
type pleading struct {
	doc     Document // without pages
	kind    Kind
	filedOn string
	amended int // 0, 1 for "amended", 2 for "second amended", …
	paras   []pleadingPara
	general *pleadingPara // an answer's general denial
	// counter: an answer to a counterclaim, whose numbers are the
	// counterclaim's paragraphs, not the complaint's.
	counter bool
}

var (
	numParaRE = regexp.MustCompile(`^(?:¶\s*)?\(?(\d{1,3})[.):]\s+(\S.*)$`)
	// "ANSWER TO PARAGRAPH NO. 5:", "RESPONSE TO ¶ 5."
	answerToParaRE = regexp.MustCompile(`(?i)^(?:answer|response)\s+to\s+(?:paragraph|¶)\s*(?:no\.?\s*)?(\d{1,3})\b\s*[:.]?`)
	// Where a complaint's allegations end and an answer's responses end.
	complaintEndRE  = regexp.MustCompile(`(?i)^(?:wherefore\b|prayer\s+for\s+relief|request\s+for\s+relief|relief\s+requested|demand\s+for\s+(?:a\s+)?jury|jury\s+(?:trial\s+)?demand)`)
	answerEndRE     = regexp.MustCompile(`(?i)^(?:(?:first|second|third|[a-z]+)?\s*(?:affirmative|additional|separate|other)?\s*defen[cs]es?\b|affirmative\s+defen|counterclaims?\b|wherefore\b|prayer\s+for\s+relief)`)
	inlineLabelRE   = regexp.MustCompile(`\s(?:ANSWER|RESPONSE)(?:\s+TO\s+(?:PARAGRAPH|¶)\s*\d{1,3})?\s*:\s`)
	answerLabelRE   = regexp.MustCompile(`(?i)^(?:answer|response)(?:\s+to\s+(?:paragraph|¶)\s*\d{1,3})?\s*[:.-]\s*`)
	counterAnswerRE = regexp.MustCompile(`(?i)\banswer\s+to\s+(?:the\s+|defendants?['’]?s?\s+)*counterclaims?\b`)
	amendedRE       = regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth)?\s*amended\s+(?:complaint|answer)`)
	// A reference to paragraphs of the complaint: "paragraph 6",
	// "paragraphs 9 through 11", "¶¶ 3-5", "Paragraphs 2, 4 and 7".
	paraRefRE = regexp.MustCompile(`(?i)(?:\bparagraphs?|¶¶?)\s*((?:\d{1,3}(?:\s*\([a-z]\))?(?:\s*(?:-|–|—|through|thru|to)\s*\d{1,3})?(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|or\s+))?)+)`)
	rangeRE   = regexp.MustCompile(`(?i)(\d{1,3})(?:\s*\([a-z]\))?(?:\s*(?:-|–|—|through|thru|to)\s*(\d{1,3}))?`)
	// A paragraph that incorporates earlier responses or allegations.
	incorporateRE = regexp.MustCompile(`(?i)\b(?:incorporat|re-?alleg|re-?assert|repeats?\s+and\s+re|restates?\s+(?:its|their|his|her)\s+(?:responses|answers))`)
	generalDenyRE = regexp.MustCompile(`(?i)(?:\bdeni(?:es|ed)\s+(?:each\s+and\s+)?(?:every|all|any)\s+(?:other\s+)?(?:allegations?|averments?)\b.*\bnot\s+(?:expressly|specifically|otherwise)?\s*admitted|\b(?:all|any|each)\s+(?:other\s+)?(?:allegations?|averments?)\b.*\bnot\s+(?:expressly|specifically|otherwise)?\s*admitted\b.*\bdenied|\bgeneral(?:ly)?\s+den(?:y|ies|ial))`)
)

var amendedRank = map[string]int{"": 1, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}

// readPleading reads a complaint's or an answer's paragraphs (nil for
// other kinds).
func readPleading(d Document, kind Kind, filed string, pages []string) *pleading {
	if kind != KindComplaint && kind != KindAnswer {
		return nil
	}
	pl := &pleading{doc: d, kind: kind, filedOn: filed}
	pl.doc.Pages = nil
	for _, p := range firstN(pages, 1) {
		for _, line := range firstN(strings.Split(p, "\n"), 40) {
			if kind == KindAnswer && counterAnswerRE.MatchString(line) && !strings.Contains(strings.ToLower(line), "complaint") {
				pl.counter = true
			}
			if m := amendedRE.FindStringSubmatch(line); m != nil {
				pl.amended = amendedRank[strings.ToLower(m[1])]
				break
			}
		}
	}
	endRE := complaintEndRE
	if kind == KindAnswer {
		endRE = answerEndRE
	}
	var cur *pleadingPara
	started := false
	last := 0 // the last paragraph number read
	maxNum := 0
	prayer := false // in a complaint's prayer for relief
Pages:
	for pi, page := range pages {
		for _, para := range splitInlineNumbers(strings.Split(page, "\n"), &last) {
			para = strings.TrimSpace(para)
			if para == "" {
				continue
			}
			if started && endRE.MatchString(para) {
				if kind == KindAnswer {
					break Pages // the defences and any counterclaim follow
				}
				// A count's prayer: its numbered items are not allegations,
				// but the next count's paragraphs continue the numbering.
				prayer, cur = true, nil
				continue
			}
			if kind == KindAnswer && generalDenyRE.MatchString(para) && pl.general == nil {
				pl.general = &pleadingPara{text: clip(para, maxItemText), page: pi}
			}
			if m := numParaRE.FindStringSubmatch(para); m != nil {
				if len(pl.paras) >= MaxResponses {
					break Pages
				}
				n, _ := strconv.Atoi(m[1])
				if prayer && n <= maxNum {
					cur = nil
					continue
				}
				prayer = false
				last, maxNum = n, max(maxNum, n)
				pl.paras = append(pl.paras, pleadingPara{num: n, text: para, page: pi})
				cur = &pl.paras[len(pl.paras)-1]
				started = true
				if kind == KindAnswer {
					// "1. <the allegation restated> ANSWER: Admitted." on one line.
					if loc := inlineLabelRE.FindStringIndex(para); loc != nil {
						cur.text, cur.restated = para[loc[0]+1:], true
					}
				}
				continue
			}
			if m := answerToParaRE.FindStringSubmatch(para); m != nil && kind == KindAnswer && len(pl.paras) < MaxResponses {
				n, _ := strconv.Atoi(m[1])
				pl.paras = append(pl.paras, pleadingPara{num: n, text: para, page: pi, labelled: true})
				cur = &pl.paras[len(pl.paras)-1]
				started = true
				continue
			}
			if isHeading(para) {
				cur = nil
				continue
			}
			if kind == KindAnswer {
				if cur != nil && answerLabelRE.MatchString(para) {
					// The numbered paragraph restated the allegation;
					// this one responds to it.
					cur.text, cur.page, cur.restated = para, pi, true
					continue
				}
				// "Paragraphs 10 through 12 are denied." on its own.
				if paraRefRE.MatchString(para) && responseStatus(para) != StatusNotAnswered && len(pl.paras) < MaxResponses {
					pl.paras = append(pl.paras, pleadingPara{text: para, page: pi})
					cur = nil
					started = true
					continue
				}
				if cur == nil || cur.restated {
					continue
				}
			}
			if cur != nil && len(cur.text) < maxItemText {
				cur.text += " " + para
			}
		}
	}
	for i := range pl.paras {
		pl.paras[i].text = clip(pl.paras[i].text, maxItemText)
	}
	return pl
}

var (
	noResponseRE  = regexp.MustCompile(`\bno\s+(?:further\s+)?(?:response|answer)\s+(?:is\s+)?(?:required|necessary|needed)|\blegal\s+conclusions?\b|\bconclusions?\s+of\s+law\b`)
	noKnowledgeRE = regexp.MustCompile(`\b(?:without|lacks?|lacking|insufficient|not\s+have)\s+(?:sufficient\s+)?(?:knowledge|information)\b|\bknowledge\s+or\s+information\s+sufficient\b`)
	partlyRE      = regexp.MustCompile(`\badmit(?:s|ted)?\s+in\s+part\b|\bdenied\s+in\s+part\b|\badmits?\s+only\b|\badmit(?:s|ted)?\b[^.;]*\bexcept\b`)
	// Phrases that name admission without admitting.
	notAdmissionRE = regexp.MustCompile(`\b(?:not|neither|never|nor)\s+(?:expressly\s+|specifically\s+|otherwise\s+)?admit(?:s|ted)?\b|\bexcept\s+as\s+(?:expressly\s+|specifically\s+|otherwise\s+)?(?:herein\s+)?admitted\b|\bunless\s+(?:expressly\s+)?admitted\b`)
	admitRE        = regexp.MustCompile(`\badmit(?:s|ted)?\b`)
	deniedInPartRE = regexp.MustCompile(`\bdenied\s+in\s+part\b`)
	denyRE         = regexp.MustCompile(`\bden(?:y|ies|ied|ying)\b`)
	extentDeniedRE = regexp.MustCompile(`(?i)\bto\s+the\s+extent\b.*\b(?:den|deemed)`)
)

var inlineNumRE = regexp.MustCompile(`\s\(?(\d{1,3})[.)]\s+["“(]?[A-Z]`)

// splitInlineNumbers splits a paragraph where extraction joined the next
// numbered paragraph onto it ("… company. 2. Defendant …"): at " N. X"
// where N follows the paragraph number before it and the text before ends
// a sentence. last is the last paragraph number seen, kept across pages.
func splitInlineNumbers(paras []string, last *int) []string {
	var out []string
	for _, p := range paras {
		n := *last
		if m := numParaRE.FindStringSubmatch(strings.TrimSpace(p)); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		for {
			cut := -1
			for _, m := range inlineNumRE.FindAllStringSubmatchIndex(p, -1) {
				k, _ := strconv.Atoi(p[m[2]:m[3]])
				before := strings.TrimRight(p[:m[0]], " ")
				if k >= n && k <= n+3 && before != "" && strings.ContainsRune(".:;\")”", rune(before[len(before)-1])) {
					cut, n = m[0]+1, k
					break
				}
			}
			if cut < 0 {
				break
			}
			out = append(out, p[:cut])
			p = p[cut:]
		}
		out = append(out, p)
		if m := numParaRE.FindStringSubmatch(strings.TrimSpace(p)); m != nil {
			k, _ := strconv.Atoi(m[1])
			n = k
		}
		*last = n
	}
	return out
}

// responseStatus reads what a response does.
func responseStatus(text string) ResponseStatus {
	t := fold(text)
	noResp := noResponseRE.MatchString(t)
	noKnow := noKnowledgeRE.MatchString(t)
	admit := admitRE.MatchString(notAdmissionRE.ReplaceAllString(t, " "))
	partly := admit && partlyRE.MatchString(t) || deniedInPartRE.MatchString(t)
	deny := denyRE.MatchString(t)
	switch {
	case partly || admit && (deny || noKnow):
		return StatusPartlyAdmitted
	case noResp:
		return StatusNoResponseRequired
	case noKnow:
		return StatusNoKnowledge
	case admit:
		return StatusAdmitted
	case deny:
		return StatusDenied
	}
	return StatusNotAnswered
}

var speaksRE = regexp.MustCompile(`(?i)\bspeaks?\s+for\s+(?:itself|themselves)\b`)

// statusNote says what a reader should know of a status.
func statusNote(s ResponseStatus, text string) string {
	var notes []string
	switch s {
	case StatusNoKnowledge:
		notes = append(notes, "lacks knowledge or information sufficient to form a belief: a denial under Rule 8(b)(5)")
	case StatusNoResponseRequired:
		notes = append(notes, "the response calls the allegation a legal conclusion needing no response")
		if extentDeniedRE.MatchString(text) {
			notes = append(notes, "to the extent a response is required, denied")
		}
	case StatusNotAnswered:
		notes = append(notes, "the response neither admits nor denies: under Rule 8(b)(6) an allegation that required a response and is not denied is admitted")
	}
	if speaksRE.MatchString(text) {
		notes = append(notes, `"the document speaks for itself" is neither an admission nor a denial`)
	}
	return strings.Join(notes, "; ")
}

// paraRefs returns the paragraph numbers a response names, in order, and
// for each the clause that names it.
func paraRefs(text string) (nums []int, clauses []string) {
	if incorporateRE.MatchString(text) {
		return nil, nil
	}
	for _, clause := range splitClauses(text) {
		for _, loc := range paraRefRE.FindAllStringSubmatchIndex(clause, -1) {
			if otherDocRef(clause[loc[1]:]) {
				continue // "paragraph 3 of the Agreement"
			}
			m := []string{clause[loc[0]:loc[1]], clause[loc[2]:loc[3]]}
			for _, r := range rangeRE.FindAllStringSubmatch(m[1], -1) {
				a, _ := strconv.Atoi(r[1])
				b := a
				if r[2] != "" {
					b, _ = strconv.Atoi(r[2])
				}
				if b < a || b-a > MaxResponses {
					b = a
				}
				for n := a; n <= b; n++ {
					nums = append(nums, n)
					clauses = append(clauses, clause)
				}
			}
		}
	}
	return nums, clauses
}

// ofDocRE is what follows a paragraph reference that names its document.
var ofDocRE = regexp.MustCompile(`(?i)^\s*of\s+(?:the\s+|this\s+|said\s+|[a-z]+['’]s?\s+){0,3}([a-z]+)`)

// otherDocRef reports whether the text after a paragraph reference says
// the paragraph is another document's ("of the Agreement", "of Exhibit
// A"), not the pleading's.
func otherDocRef(after string) bool {
	m := ofDocRE.FindStringSubmatch(after)
	if m == nil {
		return false
	}
	switch strings.ToLower(m[1]) {
	case "complaint", "petition", "counterclaim", "amended", "first", "second", "third", "original", "verified", "plaintiff", "plaintiffs":
		return false
	}
	return true
}

// splitClauses splits a response at sentence ends and semicolons.
func splitClauses(text string) []string {
	var out []string
	for _, s := range splitSentences(text) {
		for _, c := range strings.Split(s.text, ";") {
			if strings.TrimSpace(c) != "" {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		out = []string{text}
	}
	return out
}

func passage(pl *pleading, p pleadingPara) Passage {
	return Passage{DocumentID: pl.doc.ID, DocumentName: pl.doc.Name, Page: p.page + 1, Text: p.text}
}

// newer orders pleadings oldest first: filing date, then amendment, then
// name and id.
func pleadingOrder(a, b *pleading) int {
	if a.filedOn != b.filedOn && a.filedOn != "" && b.filedOn != "" {
		return strings.Compare(a.filedOn, b.filedOn)
	}
	if a.amended != b.amended {
		return a.amended - b.amended
	}
	if a.doc.Name != b.doc.Name {
		return strings.Compare(a.doc.Name, b.doc.Name)
	}
	return strings.Compare(strings.ToLower(a.doc.ID), strings.ToLower(b.doc.ID))
}

type answered struct {
	resp   Passage
	status ResponseStatus
	note   string
}

// pairResponses pairs the newest complaint's allegations with the answers'
// responses.
func pairResponses(pls []*pleading) []Response {
	var complaints, answers []*pleading
	for _, p := range pls {
		if p.kind == KindComplaint && len(p.paras) > 0 {
			complaints = append(complaints, p)
		} else if p.kind == KindAnswer && !p.counter {
			answers = append(answers, p)
		}
	}
	if len(complaints) == 0 || len(answers) == 0 {
		return []Response{}
	}
	sort.SliceStable(complaints, func(i, j int) bool { return pleadingOrder(complaints[i], complaints[j]) < 0 })
	sort.SliceStable(answers, func(i, j int) bool { return pleadingOrder(answers[i], answers[j]) < 0 })
	cp := complaints[len(complaints)-1]

	exists := map[int]bool{}
	count := map[int]int{}
	var order []int
	for _, p := range cp.paras {
		if !exists[p.num] {
			order = append(order, p.num)
		}
		exists[p.num] = true
		count[p.num]++
	}
	sort.Ints(order)

	// Each answer's responses by allegation number, oldest answer first.
	perAnswer := make([]map[int]answered, len(answers))
	for ai, an := range answers {
		got := map[int]answered{}
		explicit := map[int]bool{}
		refs := make([][]int, len(an.paras))
		for i, p := range an.paras {
			if !p.restated && !p.labelled {
				refs[i], _ = paraRefs(p.text)
				for _, n := range refs[i] {
					explicit[n] = true
				}
			}
		}
		cursor := 0
		next := func(after int) int {
			for _, n := range order {
				if n > after {
					return n
				}
			}
			return 0
		}
		for i, p := range an.paras {
			resp := passage(an, p)
			if len(refs[i]) > 0 {
				nums, clauses := paraRefs(p.text)
				whole := responseStatus(p.text)
				grouped := len(nums) > 1
				for j, n := range nums {
					st := responseStatus(clauses[j])
					if st == StatusNotAnswered {
						st = whole
					}
					note := statusNote(st, p.text)
					if grouped {
						note = joinNote("a grouped response to paragraphs "+rangeText(nums), note)
					}
					if _, dup := got[n]; !dup {
						got[n] = answered{resp, st, note}
					}
					cursor = max(cursor, n)
				}
				continue
			}
			if p.num == 0 {
				continue
			}
			target := 0
			switch {
			case p.restated || p.labelled || incorporateRE.MatchString(p.text):
				target = p.num
			case p.num > cursor && exists[p.num] && !explicit[p.num]:
				target = p.num
			default:
				target = next(cursor)
				for target != 0 && explicit[target] {
					target = next(target)
				}
			}
			if target == 0 {
				continue
			}
			text := p.text
			if p.restated {
				text = answerLabelRE.ReplaceAllString(p.text, "")
			}
			st, note := responseStatus(text), ""
			if incorporateRE.MatchString(text) && st == StatusNotAnswered {
				st, note = StatusNoResponseRequired, "incorporates the answer's earlier responses"
			} else {
				note = statusNote(st, text)
			}
			if _, dup := got[target]; !dup {
				got[target] = answered{resp, st, note}
			}
			cursor = max(cursor, target)
		}
		if an.general != nil {
			gp := passage(an, *an.general)
			for _, n := range order {
				if a, ok := got[n]; !ok || a.status == StatusNotAnswered {
					got[n] = answered{gp, StatusDenied, joinNote("denied by the answer's general denial of every allegation not expressly admitted", a.note)}
				}
			}
		}
		perAnswer[ai] = got
	}

	out := []Response{}
	for _, p := range cp.paras {
		if len(out) >= MaxResponses {
			break
		}
		r := Response{Paragraph: strconv.Itoa(p.num), Allegation: passage(cp, p), Status: StatusNotAnswered}
		newest := perAnswer[len(answers)-1]
		if a, ok := newest[p.num]; ok {
			resp := a.resp
			r.Response, r.Status, r.Note = &resp, a.status, a.note
		} else {
			r.Note = "no response reaches this paragraph: under Rule 8(b)(6) an allegation that required a response and is not denied is admitted"
		}
		if count[p.num] > 1 {
			r.Note = joinNote(fmt.Sprintf("the complaint numbers %d paragraphs %d; a response to paragraph %d is paired with each", count[p.num], p.num, p.num), r.Note)
		}
		for ai := 0; ai < len(answers)-1; ai++ {
			if a, ok := perAnswer[ai][p.num]; ok {
				r.History = append(r.History, PriorResponse{Response: a.resp, Status: a.status})
			}
		}
		out = append(out, r)
	}
	return out
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// rangeText is "9 through 11" or "2, 4, 7".
func rangeText(nums []int) string {
	contiguous := true
	for i := 1; i < len(nums); i++ {
		contiguous = contiguous && nums[i] == nums[i-1]+1
	}
	if contiguous && len(nums) > 2 {
		return fmt.Sprintf("%d through %d", nums[0], nums[len(nums)-1])
	}
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

// validateResponses checks the responses' structure and citations.
func validateResponses(rs []Response, bad func(string, ...any), cite func(string, Citation)) {
	for i, r := range rs {
		where := fmt.Sprintf("responses[%d]", i)
		if strings.TrimSpace(r.Paragraph) == "" {
			bad("%s: empty paragraph", where)
		}
		if !r.Status.Valid() {
			bad("%s: status %q", where, r.Status)
		}
		check := func(w string, p Passage) {
			if strings.TrimSpace(p.Text) == "" {
				bad("%s: empty text", w)
			}
			cite(w, Citation{DocumentID: p.DocumentID, DocumentName: p.DocumentName, Page: p.Page})
		}
		check(where+".allegation", r.Allegation)
		if r.Response == nil && r.Status != StatusNotAnswered {
			bad("%s: status %s without a response", where, r.Status)
		}
		if r.Response != nil {
			check(where+".response", *r.Response)
		}
		for j, h := range r.History {
			check(fmt.Sprintf("%s.history[%d]", where, j), h.Response)
		}
	}
}
