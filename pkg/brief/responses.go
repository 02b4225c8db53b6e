package brief

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Allegations and responses: when a matter holds a complaint and an answer,
// the Brief pairs each numbered allegation with the answer's response to it,
// citing both pages, and says what the response does. It is deterministic
// (no model), and every builder's Brief carries the same list.
//
// Reading a complaint: its numbered paragraphs ("12. …", "(12) …", with
// the unnumbered paragraphs that continue them), except a prayer for relief
// (WHEREFORE, PRAYER FOR RELIEF, JURY DEMAND) and its numbered items; a
// later count is read on, whether it continues the numbering or numbers
// its paragraphs from 1 again (each run of numbers is keyed apart). A
// number used twice in one run keeps both paragraphs (each is paired with
// the responses to that number, and noted); a number skipped is simply
// absent. Page furniture (running heads and footers, footnotes) is set
// aside first (dropFurniture), and a number alone on its line is joined to
// its text (joinBareLabels).
//
// Reading an answer: its numbered paragraphs up to a counterclaim,
// crossclaim or third-party complaint, and any paragraph that names
// paragraphs ("Paragraphs 10 through 12 are denied"). Headings of defences
// open sections, and only sections of responses are kept
// (responseSections); where the numbering starts again at 1, runs that
// are not responses are dropped (unresponsiveRuns). A response answers the
// paragraphs it names ("paragraph 6", "paragraphs 9 through 11", "¶¶ 3-5",
// "paragraphs 2, 4 and 7"), clause by clause; one that names none answers
// the complaint paragraph of its own number when the answer has not yet
// passed it (and numbers as the complaint does), else the next allegation
// after the last one answered. A paragraph that restates the allegation
// and is followed by an "ANSWER:" or "RESPONSE:" paragraph is answered by
// that paragraph, and one that quotes it and then gives its status with
// no label by what follows the quotation (restatedRest). A paragraph that
// incorporates earlier responses answers its own number. A general denial
// denies what nothing else answers.
//
// Several answers (an amended answer): the newest (by filing date, then an
// "amended" title, then name) wins, and the superseded responses are kept
// in the entry's history. The complaint it answers gives the allegations
// (answeredComplaint).
//
// A counterclaim (an answer whose title carries one) is paired the same
// way with the answers to the counterclaim. A pleading that numbers no
// paragraph may letter them (A., B., …); a count of unnumbered prose is
// answered as a whole ("Count I"), and unnumbered allegations under a
// heading by the response under the same heading.

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

// Keys of the paragraphs a pairing matches on: a paragraph number is its
// own key (1–999); a lettered paragraph ("A.") is letterKey plus its place
// in the alphabet; a count answered as a whole is countKey plus its
// number; a headed section of unnumbered allegations is sectionKey plus
// its place in the pleading.
const (
	letterKey  = 1000
	countKey   = 2000
	sectionKey = 3000
	// segKey: a complaint that numbers each count from 1 again ("FIRST
	// COUNT 1. 2. … SECOND COUNT 1. …") keys the paragraphs of its n-th
	// run of numbers n*segKey plus the number.
	segKey = 100000
)

// numKey reports whether a key is a numbered paragraph's.
func numKey(k int) bool { return k > 0 && k < letterKey || k >= segKey }

// pleadingPara is one numbered (or paragraph-naming) paragraph of a
// pleading, kept from Assembly.Add until Finish.
type pleadingPara struct {
	num   int    // the key (above); 0: unnumbered
	label string // the paragraph's number, letter or name as the pleading writes it
	text  string
	page  int // 0-based
	// restated: an answer's paragraph followed by its "ANSWER:" paragraph
	// (text is then the response only).
	restated bool
	// labelled: "ANSWER TO PARAGRAPH NO. 5:" — the response to that
	// paragraph, with the paragraphs that follow it.
	labelled bool
	// section: an answer's unnumbered response under a heading, the
	// heading's key (sectionName); it answers the complaint's section of
	// that heading.
	section string
	// numbered: a count or section candidate of a complaint that holds
	// numbered paragraphs (those are the allegations, not the count).
	numbered bool
	// pending: an answer's paragraph that names paragraphs but whose
	// status is on the wrapped line after it.
	pending bool
	// takes: a label naming paragraphs ("AS TO PARAGRAPH 1:") that takes
	// the paragraphs below it as its response.
	takes bool
	body  int // paragraphs joined to it after its first line
	// generalDenial: an answer's numbered paragraph that is its general
	// denial ("1. Beta denies each and every allegation … except as
	// expressly admitted"): it answers no paragraph in particular.
	generalDenial bool
	// defence: the answer's section the paragraph is in, counted from 0 at
	// each heading of defences ("FIRST DEFENSE", "AFFIRMATIVE DEFENSES").
	defence int
	// seg: the run of numbers the paragraph is in (0, then 1 where the
	// numbering starts again at 1, …); segHead: the heading that run
	// starts under.
	seg     int
	segHead string
	// inCount: the key of the count a numbered paragraph is under (0 if
	// none).
	inCount int
	span    [2]int // an answer's range-numbered paragraph: the paragraphs it answers
}

// pleading is a complaint or an answer as the pairing needs it.
type pleading struct {
	doc     Document // without pages
	kind    Kind
	filedOn string
	amended int // 0, 1 for "amended", 2 for "second amended", …
	// answers: the complaint an answer's title says it answers (0 the
	// complaint, 1 the first amended, …; -1 when the title does not say).
	answers int
	// party: the first word of the answering party's name ("gamma" of
	// "Defendant Gamma Logistics LLC's Answer"), "" when the answer does
	// not say; partyName: the name as written.
	party, partyName string
	paras            []pleadingPara
	general          *pleadingPara // an answer's general denial
	// counter: an answer to a counterclaim, whose numbers are the
	// counterclaim's paragraphs, not the complaint's.
	counter bool
	// claim: the counterclaim an answer carries ("Answer and
	// Counterclaim"), read as allegations for the answers to it.
	claim *pleading
	// sections: a complaint's headed sections of unnumbered allegations,
	// by sectionName, with their keys.
	sections map[string]int
	// members: a count's numbered paragraphs, by the count's key ("denies
	// the allegations of Count II" answers each of them).
	members map[int][]int
}

var (
	numParaRE = regexp.MustCompile(`^(?:¶\s*)?\(?(\d{1,3})[.):]\s+(\S.*)$`)
	// A telephone number at a line's start ("(609) 665-9350") is not a
	// paragraph numbered 609.
	phoneRE = regexp.MustCompile(`^\(\d{3}\)\s*\d{3}[-.\s]\d{4}\b`)
	// An answer's paragraph numbered with the range it answers: "2-3.
	// Admitted.", "5.–7. Denied.", "8 through 10. Denied."
	rangeParaRE = regexp.MustCompile(`^\(?(\d{1,3})\.?\s*(?:-|–|—|through|to)\s*(\d{1,3})[.):]\s+(\S.*)$`)
	// A lettered paragraph: "A. Statutory Character of NJTA", "(B) …".
	letterParaRE = regexp.MustCompile(`^\(?([A-Z])[.)]\s+(\S.*)$`)
	// A count's heading: "COUNT I – DECLARATORY JUDGMENT", "FIRST COUNT",
	// "SECOND CAUSE OF ACTION", "CLAIM 3".
	countHeadRE = regexp.MustCompile(`(?i)^(?:(?:count|claim)\s+([ivxlc]+|\d{1,2})\b|(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\s+(?:count|cause\s+of\s+action|claim(?:\s+for\s+relief)?)\b)`)
	// "ANSWER TO PARAGRAPH NO. 5:", "RESPONSE TO ¶ 5."
	answerToParaRE = regexp.MustCompile(`(?i)^(?:answer|response)\s+to\s+(?:paragraph|¶)\s*(?:no\.?\s*)?(\d{1,3})\b\s*[:.]?`)
	// Where a complaint's allegations end and an answer's responses end.
	// Headings of what follows a complaint's allegations.
	trailerHeadRE  = regexp.MustCompile(`(?i)^(?:verification|verified\s+by|certificat(?:e|ion)\b|exhibit\s+[a-z0-9]{1,4}\b|declaration\s+of\b|designation\s+of\s+trial\s+counsel|demand\s+for\s+(?:production|discovery|answers|insurance))`)
	complaintEndRE = regexp.MustCompile(`(?i)^(?:wherefore\b|prayer\s+for\s+relief|request\s+for\s+relief|relief\s+requested|demand\s+for\s+(?:a\s+)?jury|jury\s+(?:trial\s+)?demand)`)
	answerEndRE    = regexp.MustCompile(`(?i)^(?:(?:first|second|third|[a-z]+)?\s*(?:affirmative|additional|separate|other)?\s*defen[cs]es?\b|affirmative\s+defen|counterclaims?\b|wherefore\b|prayer\s+for\s+relief)`)
	inlineLabelRE  = regexp.MustCompile(`\s(?:ANSWER|RESPONSE|Answer|Response)(?:\s+(?:TO|to)\s+(?:PARAGRAPH|Paragraph|¶)\s*\d{1,3})?\s*:\s`)
	// An answer's paragraph labelled by the number it answers: "COMPLAINT
	// ¶ 1: …", "PARAGRAPH 1: …", "Paragraph No. 2. …".
	paraLabelRE     = regexp.MustCompile(`(?i)^(?:complaint\s+|allegation\s+)?(?:paragraph|¶)\s*(?:no\.?\s*)?(\d{1,3})\s*[:.]\s+\S`)
	answerLabelRE   = regexp.MustCompile(`(?i)^(?:answer|response)(?:\s+to\s+(?:paragraph|¶)\s*\d{1,3})?\s*[:.-]\s*`)
	counterAnswerRE = regexp.MustCompile(`(?i)\b(?:answer|response|reply)\s+to\s+(?:the\s+|defendants?['’]?s?\s+|[a-z]+['’]s\s+)*(?:amended\s+)?counter[\s-]?claims?\b`)
	// A title that carries a counterclaim ("ANSWER AND COUNTER CLAIM"), and
	// the heading its counterclaim starts under.
	counterclaimRE = regexp.MustCompile(`(?i)\bcounter[\s-]?claims?\b`)
	// A crossclaim or a third-party complaint after the answer: its
	// allegations are not responses.
	otherClaimRE       = regexp.MustCompile(`(?i)\bcross[\s-]?claims?\b|\bthird[\s-]party\s+(?:complaint|claims?)\b`)
	counterclaimHeadRE = regexp.MustCompile(`(?i)^(?:(?:defendants?['’]?s?|[a-z]+['’]s)\s+)?(?:first\s+)?(?:amended\s+)?counter[\s-]?claims?\b`)
	// An answer's title naming the complaint it answers: "ANSWER TO
	// PLAINTIFF'S FIRST AMENDED COMPLAINT", "… TO THE COMPLAINT".
	answersWhatRE = regexp.MustCompile(`(?i)\b(?:answer|response)\b[^.]{0,80}?\bto\s+(?:the\s+|plaintiffs?['’]?s?\s+|[a-z]+['’]s\s+)*(?:(first|second|third|fourth|fifth)\s+)?(amended\s+)?(?:class\s+action\s+|verified\s+)?complaint\b`)
	amendedRE     = regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth)?\s*amended\s+(?:complaint|answer)`)
	// A reference to paragraphs of the complaint: "paragraph 6",
	// "paragraphs 9 through 11", "¶¶ 3-5", "Paragraphs 2, 4 and 7".
	paraRefRE = regexp.MustCompile(`(?i)(?:\bparagraphs?|¶¶?)\s*((?:\d{1,3}(?:\s*\([a-z]\))?(?:\s*(?:-|–|—|through|thru|to)\s*\d{1,3})?(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|or\s+))?)+)`)
	rangeRE   = regexp.MustCompile(`(?i)(\d{1,3})(?:\s*\([a-z]\))?(?:\s*(?:-|–|—|through|thru|to)\s*(\d{1,3}))?`)
	// A reference to lettered paragraphs: "paragraph A", "Paragraphs B
	// through D", "paragraphs A and C" (capital letters only).
	letterRefRE   = regexp.MustCompile(`(?:\b[Pp]aragraphs?|¶¶?)\s*([A-Z](?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|-|–|—|through\s+|to\s+)\s*[A-Z])*)\b`)
	letterRangeRE = regexp.MustCompile(`([A-Z])(?:\s*(?:-|–|—|through|to)\s*([A-Z]))?`)
	// A reference to a count: "Count I", "Counts II and III", "Count 4".
	countRefRE   = regexp.MustCompile(`(?i)\bcounts?\s+((?:[ivxlc]+|\d{1,2})\b(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|-|–|—|through\s+|to\s+)\s*(?:[ivxlc]+|\d{1,2})\b)*)`)
	countRangeRE = regexp.MustCompile(`(?i)\b([ivxlc]+|\d{1,2})\b(?:\s*(?:-|–|—|through|to)\s*([ivxlc]+|\d{1,2})\b)?`)
	// A paragraph that incorporates earlier responses or allegations.
	incorporateRE = regexp.MustCompile(`(?i)\b(?:incorporat|re-?alleg|re-?assert|repeats?\s+and\s+re|(?:restates?|repeats?|reiterates?)\s+(?:each\s+of\s+|all\s+of\s+)?(?:its|their|his|her)\s+(?:prior\s+|previous\s+|foregoing\s+)?(?:responses|answers|denials))`)
	generalDenyRE = regexp.MustCompile(`(?i)(?:\bdeni(?:es|ed)\s+(?:each\s+and\s+)?(?:every|all|any)\s+(?:other\s+)?(?:allegations?|averments?)\b.*\bnot\s+(?:expressly|specifically|otherwise)?\s*admitted|\b(?:all|any|each)\s+(?:other\s+)?(?:allegations?|averments?)\b.*\bnot\s+(?:expressly|specifically|otherwise)?\s*admitted\b.*\bdenied|\bgeneral(?:ly)?\s+den(?:y|ies|ial)|\bden(?:y|ies|ied)\s+(?:each\s+and\s+)?(?:every|all|any)\s+(?:other\s+|remaining\s+)?(?:allegations?|averments?)\b.*\b(?:except|unless|save)\s+(?:as\s+)?(?:(?:expressly|specifically|otherwise)\s+)?(?:herein\s+|above\s+)?admitted|\b(?:except|unless)\s+(?:as\s+)?(?:(?:expressly|specifically|otherwise)\s+)?admitted\b.*\bden(?:y|ies|ied)\s+(?:each\s+and\s+)?(?:every|all|any)\s+(?:other\s+|remaining\s+)?(?:allegations?|averments?)\b)`)
)

var amendedRank = map[string]int{"": 1, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}

var ordinalCount = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}

// romanOrNumber reads "IV" or "4" (0 if neither).
func romanOrNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	val := map[byte]int{'i': 1, 'v': 5, 'x': 10, 'l': 50, 'c': 100}
	s = strings.ToLower(s)
	n := 0
	for i := 0; i < len(s); i++ {
		v := val[s[i]]
		if v == 0 {
			return 0
		}
		if i+1 < len(s) && val[s[i+1]] > v {
			n -= v
		} else {
			n += v
		}
	}
	return n
}

// countOf reads a count heading's number and label ("Count I", "First
// Count"); 0 when para is not one.
func countOf(para string) (int, string) {
	m := countHeadRE.FindStringSubmatch(para)
	if m == nil || !isHeading(para) {
		return 0, ""
	}
	if m[1] != "" {
		n := romanOrNumber(m[1])
		if n <= 0 || n > 99 {
			return 0, ""
		}
		return n, "Count " + strings.ToUpper(m[1])
	}
	w := strings.ToLower(m[2])
	return ordinalCount[w], strings.ToUpper(w[:1]) + w[1:] + " Count"
}

// sectionName is the key a heading is matched on across pleadings: its
// words, lower case, "&" read as "and" ("FACTUAL & LEGAL GROUNDS" and
// "Factual and Legal Grounds" are one section).
func sectionName(h string) string {
	h = strings.ReplaceAll(strings.ToLower(h), "&", " and ")
	return strings.Join(strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}

// readPleading reads a complaint's or an answer's paragraphs (nil for
// other kinds). An answer whose title carries a counterclaim also reads
// the counterclaim's allegations (claim): from its COUNTERCLAIM heading, or
// the whole document when it answers no paragraph (a counterclaim filed as
// "Answer and Counter Claim" that responds to nothing).
func readPleading(d Document, kind Kind, filed string, pages []string) *pleading {
	if kind != KindComplaint && kind != KindAnswer {
		return nil
	}
	pl := &pleading{doc: d, kind: kind, filedOn: filed}
	pl.doc.Pages = nil
	carries := false // the title names a counterclaim the document makes
	for _, p := range firstN(pages, 1) {
		for _, line := range firstN(strings.Split(p, "\n"), 40) {
			if kind == KindAnswer && counterAnswerRE.MatchString(line) && !strings.Contains(strings.ToLower(line), "complaint") {
				pl.counter = true
			}
			if kind == KindAnswer && counterclaimRE.MatchString(line) && !counterAnswerRE.MatchString(line) && isHeading(line) {
				carries = true
			}
		}
		for _, line := range firstN(strings.Split(p, "\n"), 40) {
			if m := amendedRE.FindStringSubmatch(line); m != nil {
				pl.amended = amendedRank[strings.ToLower(m[1])]
				break
			}
		}
		pl.answers = -1
		if kind == KindAnswer {
			pl.partyName = answeringParty(firstN(strings.Split(p, "\n"), 40))
			if f := strings.FieldsFunc(strings.ToLower(pl.partyName), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); len(f) > 0 {
				pl.party = f[0]
				if honorific[f[0]] && len(f) > 1 {
					pl.party += " " + f[1] // "officer smith", not every officer
				}
			}
			// The title may run over lines: "ANSWER TO PLAINTIFF'S FIRST" /
			// "AMENDED COMPLAINT".
			head := strings.Join(strings.Fields(strings.Join(firstN(strings.Split(p, "\n"), 40), " ")), " ")
			if m := answersWhatRE.FindStringSubmatch(head); m != nil {
				pl.answers = 0
				if m[2] != "" {
					pl.answers = amendedRank[strings.ToLower(m[1])]
				}
			}
		}
	}
	pages = dropFurniture(pages)
	pl.paras, pl.general, pl.sections = readParas(pages, kind, 0, 0)
	pl.members = countMembers(pl.paras)
	if carries && !pl.counter {
		claim := &pleading{doc: pl.doc, kind: KindComplaint, filedOn: filed, amended: pl.amended}
		from, at := -1, 0
	Find:
		for pi, page := range pages {
			for li, para := range strings.Split(page, "\n") {
				if para = strings.TrimSpace(para); isHeading(para) && counterclaimHeadRE.MatchString(para) && (pi > 0 || li > 0) {
					from, at = pi, li
					break Find
				}
			}
		}
		if from < 0 && !answersAny(pl.paras) {
			from = 0
		}
		if from >= 0 {
			claim.paras, _, claim.sections = readParas(pages, KindComplaint, from, at)
			claim.members = countMembers(claim.paras)
			if len(claim.paras) > 0 {
				pl.claim = claim
			}
		}
	}
	return pl
}

// headingLine reports whether a pleading's paragraph is a heading: a line
// in capitals (isHeading) that is not a sentence's or a list's piece — a
// citation set on its own line ("N.J.A.C. 19:9-9.2;", "(N.J.S.A.
// 27:23-17).") or a caption's name ("DEVON TYLER BARBER,").
func headingLine(para string) bool {
	if !isHeading(para) {
		return false
	}
	switch para[len(para)-1] {
	case ';', ',':
		return false
	case '.':
		return !strings.ContainsAny(para, "0123456789")
	}
	return true
}

// answersAny reports whether an answer's paragraphs respond to any
// numbered paragraph (by number or by naming one).
func answersAny(ps []pleadingPara) bool {
	for _, p := range ps {
		if p.num > 0 && p.num < letterKey || p.restated || p.labelled {
			return true
		}
		if nums, _ := paraRefs(p.text); len(nums) > 0 {
			return true
		}
	}
	return false
}

// hasParaRef reports whether a paragraph names paragraphs or counts.
func hasParaRef(s string) bool {
	return paraRefRE.MatchString(s) || letterRefRE.MatchString(s) || countRefRE.MatchString(s)
}

// wrapped reports whether para continues the line before it (it starts
// in lower case: extraction kept a wrapped line apart).
func wrapped(para string) bool {
	for _, r := range para {
		return unicode.IsLower(r)
	}
	return false
}

// readParas reads the paragraphs of one pleading from page from, line at:
// a complaint's allegations (kind KindComplaint) or an answer's responses.
func readParas(pages []string, kind Kind, from, at int) (paras []pleadingPara, general *pleadingPara, sections map[string]int) {
	endRE := complaintEndRE
	if kind == KindAnswer {
		endRE = answerEndRE
	}
	var cur *pleadingPara    // the paragraph continuation lines join
	var letter *pleadingPara // a complaint's lettered paragraph being read
	started := false
	last := 0 // the last paragraph number read
	maxNum := 0
	prayer := false // in a complaint's prayer for relief
	heading := ""   // the heading the next unnumbered paragraph is under
	var count *pleadingPara
	lastLetter := -1 // the last lettered paragraph read: 0 for A
	numbers := 0     // a complaint's numbered paragraphs
	sections = map[string]int{}
	defence := 0 // an answer's section of defences
	seg, segHead, lastHead, prevNum := 0, "", "", 0
	add := func(p pleadingPara) *pleadingPara {
		p.defence = defence
		paras = append(paras, p)
		return &paras[len(paras)-1]
	}
	// Pointers into paras stay valid: its capacity is set before reading.
	paras = make([]pleadingPara, 0, MaxResponses+1)
Pages:
	for pi, page := range pages {
		if pi < from {
			continue
		}
		lines := strings.Split(page, "\n")
		if pi == from {
			lines = lines[min(at, len(lines)):]
		}
		paraList := splitInlineNumbers(joinBareLabels(lines), &last)
		prevPara := ""
		for li, para := range paraList {
			para = strings.TrimSpace(para)
			if para == "" {
				continue
			}
			before := prevPara
			prevPara = para
			if len(paras) >= MaxResponses {
				break Pages
			}
			head := headingLine(para) || titleHeading(para, before, nextPara(paraList, li))
			if head && strings.HasSuffix(para, ".") && before != "" && !endsSentence(before) {
				// "… under the TELEPHONE CONSUMER" / "PROTECTION ACT.": the
				// end of a sentence in capitals, not a heading.
				head = false
			}
			if kind == KindAnswer && head && paraRefRE.MatchString(para) && !answerToParaRE.MatchString(para) {
				head = false // "AS TO PARAGRAPH 1:": a label, its response below
			}
			if kind == KindAnswer && started && (head || titleShape(para) && endsSentence(before)) && (counterclaimRE.MatchString(para) || otherClaimRE.MatchString(para)) && !notEndHeadRE.MatchString(para) {
				break Pages // "BETA'S COUNTER-CLAIMS AGAINST ACME": the counterclaim follows
			}
			if kind == KindAnswer && !counterclaimRE.MatchString(para) && (endRE.MatchString(para) && defenceHeadRE.MatchString(para) || (head || titleShape(para) && endsSentence(before)) && defenceHeading(para)) {
				// A heading of defences opens a section: the defences, or
				// (in answers that open with them, "FOURTH DEFENSE …
				// responds to the numbered paragraphs as follows") the
				// responses. The pairing keeps the sections of responses.
				defence++
				cur, letter, heading = nil, nil, ""
				continue
			}
			if kind == KindComplaint && started && head && trailerHeadRE.MatchString(para) {
				// The verification, the certificates and the exhibits after
				// the complaint: their numbered paragraphs (a declarant's, a
				// contract's clauses) are no allegations.
				break Pages
			}
			if started && endRE.MatchString(para) {
				if kind == KindAnswer {
					if counterclaimRE.MatchString(para) {
						break Pages // the answer's counterclaim follows
					}
					// "WHEREFORE, Beta demands judgment dismissing the
					// First Count": the answer to the next count may
					// follow (New Jersey answers end each count so), under
					// its heading; the prayer's numbered items are no
					// responses.
					prayer, cur, letter, heading = true, nil, nil, ""
					continue
				}
				// A count's prayer: its numbered items are not allegations,
				// but the next count's paragraphs continue the numbering.
				prayer, cur, letter, count, heading = true, nil, nil, nil, ""
				continue
			}
			// A general denial denies what the answer does not admit; one
			// that names a paragraph ("denies all other allegations of
			// paragraph 5 not expressly admitted") is that paragraph's.
			// A heading ("GENERAL DENIAL") names the denial that follows it.
			isGeneral := kind == KindAnswer && generalDenyRE.MatchString(para) && !hasParaRef(para) && !headingLine(para)
			if isGeneral && general == nil {
				general = &pleadingPara{text: clip(para, maxItemText), page: pi}
			}
			if m := rangeParaRE.FindStringSubmatch(para); m != nil && kind == KindAnswer {
				a, _ := strconv.Atoi(m[1])
				z, _ := strconv.Atoi(m[2])
				if a > 0 && z > a && z-a <= MaxResponses {
					last, maxNum = z, max(maxNum, z)
					cur = add(pleadingPara{num: a, label: m[1] + "-" + m[2], text: para, page: pi, span: [2]int{a, z}})
					started, letter, heading = true, nil, ""
					continue
				}
			}
			// "COMPLAINT ¶ 1: <the allegation>" or "PARAGRAPH 1: …" with its
			// "ANSWER:" below: the answer's paragraph 1, restated.
			if m := paraLabelRE.FindStringSubmatch(para); m != nil && kind == KindAnswer {
				n, _ := strconv.Atoi(m[1])
				last, maxNum, prevNum = n, max(maxNum, n), n
				cur = add(pleadingPara{num: n, label: m[1], text: para, page: pi, seg: seg, segHead: segHead})
				started, letter, heading = true, nil, ""
				continue
			}
			// A numbered line in capitals that ends no sentence is a
			// caption's list of causes of action ("(1) BREACH OF
			// CONTRACT;") or a numbered heading ("1. PARTIES"), not a
			// paragraph (a pleading written all in capitals keeps its
			// sentences).
			if m := numParaRE.FindStringSubmatch(para); m != nil && !phoneRE.MatchString(para) && !(isHeading(m[2]) && !endsStatement(m[2])) {
				n, _ := strconv.Atoi(m[1])
				if prayer && (n <= maxNum || kind == KindAnswer) {
					cur = nil
					continue
				}
				prayer, letter, heading = false, nil, ""
				last, maxNum = n, max(maxNum, n)
				if count != nil {
					count.numbered = true
				}
				if n == 1 && prevNum > 1 {
					seg, segHead = seg+1, lastHead // the numbering starts again
				}
				prevNum = n
				cur = add(pleadingPara{num: n, label: strconv.Itoa(n), text: para, page: pi, generalDenial: isGeneral, seg: seg, segHead: segHead})
				numbers++
				started = true
				if kind == KindAnswer {
					// "1. <the allegation restated> ANSWER: Admitted." on one line.
					if loc := inlineLabelRE.FindStringIndex(para); loc != nil {
						cur.text, cur.restated = para[loc[0]+1:], true
					}
				}
				continue
			}
			// Letters run A, B, C, …: "R. 4:5-4" (a court rule) starting a
			// line is not paragraph R.
			// In an answer, a lettered line inside a numbered response is
			// an item of that response ("5. Beta admits that: A. … B. …").
			inNumbered := kind == KindAnswer && cur != nil && cur.num > 0 && cur.num < letterKey
			if inNumbered && letterParaRE.MatchString(para) && !cur.restated {
				if len(cur.text) < maxItemText {
					cur.text += " " + para
				}
				continue
			}
			if m := letterParaRE.FindStringSubmatch(para); m != nil && int(m[1][0]-'A') == lastLetter+1 && (!isHeading(para) || kind == KindComplaint) {
				lastLetter++
				if prayer {
					cur, letter = nil, nil
					continue
				}
				k := letterKey + int(m[1][0]-'A') + 1
				if kind == KindAnswer {
					cur = add(pleadingPara{num: k, label: m[1], text: para, page: pi})
					started, heading = true, ""
					continue
				}
				// A complaint's lettered paragraph is an allegation only
				// if the complaint numbers none (otherwise it is a
				// heading or an item of the numbered paragraph it is in).
				if cur != nil && cur.num > 0 && cur.num < letterKey {
					cur.text += " " + para
				} else {
					cur = nil
				}
				letter = add(pleadingPara{num: k, label: m[1], text: para, page: pi})
				heading = ""
				started = true
				continue
			}
			if m := answerToParaRE.FindStringSubmatch(para); m != nil && kind == KindAnswer {
				n, _ := strconv.Atoi(m[1])
				cur = add(pleadingPara{num: n, label: m[1], text: para, page: pi, labelled: true})
				started, heading = true, ""
				continue
			}
			if n, label := countOf(para); n > 0 && kind == KindComplaint {
				lastHead = label
				// A count's heading ends the prayer of the count before
				// it: its paragraphs may be numbered from 1 again.
				prayer = false
				// A count's allegations may be unnumbered prose: the
				// count is then answered as a whole ("denies the
				// allegations of Count I").
				cur, letter = nil, nil
				count = add(pleadingPara{num: countKey + n, label: label, text: para, page: pi})
				cur, heading = count, ""
				continue
			}
			if head {
				if count != nil && cur == count && count.body == 0 {
					// The count's heading on two lines ("COUNT IV
					// PROTECTION OF …" / "(NEW JERSEY PRECEDENT)").
					count.text += " " + para
					continue
				}
				cur, letter, heading, lastHead = nil, nil, para, para
				if kind == KindComplaint {
					count = nil
				} else {
					prayer = false // the answer to the next count
				}
				continue
			}
			if kind == KindAnswer {
				if cur != nil && cur.num > 0 && !cur.restated && wrapped(para) {
					// A numbered response's wrapped line, on the next
					// page too ("… and" / "denies the remaining …").
					if len(cur.text) < maxItemText {
						cur.text += " " + para
					}
					continue
				}
				if cur != nil && cur.restated && !answerLabelRE.MatchString(para) && (!hasParaRef(para) || namesOnly(para, cur.num)) {
					// The "ANSWER:" paragraph's further lines, on the next
					// page too (naming no paragraph but its own): the
					// answer goes on to the next number.
					if len(cur.text) < maxItemText {
						cur.text += " " + para
					}
					continue
				}
				if cur != nil && answerLabelRE.MatchString(para) {
					// The numbered paragraph restated the allegation;
					// this one responds to it.
					cur.text, cur.page, cur.restated, cur.pending = para, pi, true, false
					continue
				}
				if cur != nil && (cur.pending || cur.num == 0 && cur.section == "") && wrapped(para) {
					cur.text += " " + para // a response's wrapped line
					continue
				}
				// "AS TO PARAGRAPH 1:" / "Admitted.": a label naming the
				// paragraph, its response on the lines below it (up to the
				// next label, number or heading).
				if cur != nil && cur.num == 0 && cur.section == "" && (cur.pending && !endsStatement(cur.text) || cur.takes) && !hasParaRef(para) {
					if len(cur.text) < maxItemText {
						cur.text += " " + para
					}
					cur.takes = true
					continue
				}
				// "2. Beta admits that it is a corporation." / "Beta denies
				// the remaining allegations of paragraph 2.": the numbered
				// response goes on.
				if cur != nil && cur.num > 0 && cur.num < letterKey && cur.span[1] == 0 && !cur.restated && namesOnly(para, append(paraRefsOf(cur.text), cur.num)...) {
					if len(cur.text) < maxItemText {
						cur.text += " " + para
					}
					continue
				}
				// "Paragraphs 10 through 12 are denied." on its own.
				if hasParaRef(para) && !incorporateRE.MatchString(para) {
					cur = add(pleadingPara{text: para, page: pi, pending: responseStatus(para) == StatusNotAnswered})
					started, heading = true, ""
					continue
				}
				if heading != "" && (cur == nil || cur.section != "") {
					// An unnumbered response under a heading answers the
					// complaint's section of that heading.
					if cur != nil && cur.section == sectionName(heading) && wrapped(para) {
						cur.text += " " + para
						continue
					}
					if cur == nil {
						cur = add(pleadingPara{text: para, page: pi, section: sectionName(heading)})
						continue
					}
				}
				// Only a numbered (or lettered, or labelled) response
				// takes the paragraphs after it.
				if cur == nil || cur.restated || cur.num == 0 {
					continue
				}
			}
			if kind == KindComplaint && cur == nil && letter == nil && heading != "" && !prayer {
				// Unnumbered allegations under a heading: a section,
				// paired when an answer responds under the same heading.
				name := sectionName(heading)
				if _, dup := sections[name]; !dup && name != "" {
					sections[name] = sectionKey + len(sections) + 1
					cur = add(pleadingPara{num: sections[name], label: heading, text: para, page: pi})
					heading = ""
					continue
				}
			}
			if letter != nil && len(letter.text) < maxItemText {
				letter.text += " " + para
			}
			if cur != nil && len(cur.text) < maxItemText {
				cur.text += " " + para
				cur.body++
			}
		}
	}
	// Drop what is not an allegation or a response: an answer's paragraph
	// naming paragraphs whose status never came, a complaint's lettered
	// paragraphs when it numbers its paragraphs, a count whose allegations
	// are numbered.
	// A count is numbered when a numbered paragraph follows it before the
	// next count, whatever headings stand between ("COUNT II" / "(Against
	// Beta)" / "28. …").
	if kind == KindComplaint {
		var open *pleadingPara
		for i := range paras {
			switch p := &paras[i]; {
			case p.num > countKey && p.num < sectionKey:
				open = p
			case open != nil && p.num > 0 && p.num < letterKey:
				open.numbered = true
				p.inCount = open.num
			}
		}
	}
	kept := paras[:0]
	for _, p := range paras {
		switch {
		case p.pending && responseStatus(p.text) == StatusNotAnswered:
			continue
		case kind == KindComplaint && p.num > letterKey && p.num < countKey && numbers > 0:
			continue
		case p.numbered:
			continue
		}
		p.pending = false
		p.text = clip(p.text, maxItemText)
		kept = append(kept, p)
	}
	return kept, general, sections
}

var (
	// "no response is required", "requires no response", "does not
	// require a response", a legal conclusion.
	noResponseRE = regexp.MustCompile(`\bno\s+(?:further\s+)?(?:response|answer)\s+(?:is\s+)?(?:required|necessary|needed)|\brequires?\s+no\s+(?:further\s+)?(?:response|answer)|\b(?:does|do)\s+not\s+require\s+(?:a\s+|any\s+)?(?:further\s+)?(?:response|answer)|\blegal\s+conclusions?\b|\bconclusions?\s+of\s+law\b|\bnot\s+required\s+to\s+(?:respond|answer|admit\s+or\s+deny)\b|\bneed\s+not\s+(?:respond|answer)\b|\bno\s+responsive\s+pleading\s+is\s+(?:required|necessary)\b`)
	// "lacks knowledge or information", "without sufficient
	// information", "denied for lack of knowledge".
	// "is without personal knowledge", "lacks the knowledge necessary",
	// "does not possess sufficient information", "has no knowledge",
	// "denied for want of knowledge".
	noKnowledgeRE = regexp.MustCompile(`\b(?:without|lacks?|lacking|insufficient|not\s+(?:have|possess)|(?:lack|want)\s+of)\s+(?:(?:the|sufficient|adequate|personal|enough|requisite|any|firsthand|first-hand)\s+)*(?:knowledge|information)\b|\bha(?:s|ve)\s+no\s+(?:personal\s+)?knowledge\b|\bknowledge\s+or\s+information\s+sufficient\b`)
	// "to admit or deny", "cannot admit or deny", "neither admit nor deny":
	// words of admission and denial that neither admit nor deny.
	admitOrDenyRE = regexp.MustCompile(`\badmit\s+(?:or|nor)\s+deny\b`)
	// Phrases that name denial without denying: "neither admits nor
	// denies", "does not deny".
	notDenialRE = regexp.MustCompile(`\b(?:not|nor|never|neither)\s+den(?:y|ies|ied)\b`)
	partlyRE    = regexp.MustCompile(`\badmit(?:s|ted)?\s+in\s+part\b|\bdenied\s+in\s+part\b|\badmits?\s+only\b|\badmit(?:s|ted)?\b[^.;]*\bexcept\b`)
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
	// "Paragraph 1 characterizes the action and requires no response. To
	// the extent a response is required, Beta admits … and denies …": a
	// response that needs none, whatever its hedge says (noted).
	if primary, _, ok := hedged(t); ok && bareStatus(primary) == StatusNoResponseRequired {
		return StatusNoResponseRequired
	}
	return bareStatus(t)
}

// hedgeRE is the hedge of a response that says none is required: "to the
// extent a response is required", "to the extent that any further
// response may be deemed necessary".
var hedgeRE = regexp.MustCompile(`(?i)\bto\s+the\s+extent\s+(?:that\s+)?(?:(?:a\s+|any\s+)?(?:further\s+)?(?:response|answer)|one)\s+(?:is|may\s+be|be|are|were)\s+(?:deemed\s+)?(?:required|necessary|needed)`)

// hedged splits a response at its hedge: what it says before, and what
// it says to the extent a response is required.
func hedged(t string) (primary, hedge string, ok bool) {
	loc := hedgeRE.FindStringIndex(t)
	if loc == nil {
		return t, "", false
	}
	return t[:loc[0]], t[loc[1]:], true
}

// bareStatus reads a response's status from its words alone (text folded).
func bareStatus(t string) ResponseStatus {
	noResp := noResponseRE.MatchString(t)
	noKnow := noKnowledgeRE.MatchString(t)
	bare := admitOrDenyRE.ReplaceAllString(t, " ")
	admit := admitRE.MatchString(notAdmissionRE.ReplaceAllString(bare, " "))
	partly := admit && partlyRE.MatchString(bare) || deniedInPartRE.MatchString(bare)
	deny := denyRE.MatchString(notDenialRE.ReplaceAllString(bare, " "))
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
		notes = append(notes, "the response says no response is required (a legal conclusion, or an allegation not directed at the answering party)")
		if _, hedge, ok := hedged(fold(text)); ok {
			switch bareStatus(hedge) {
			case StatusDenied:
				notes = append(notes, "to the extent a response is required, denied")
			case StatusAdmitted:
				notes = append(notes, "to the extent a response is required, admitted")
			case StatusPartlyAdmitted:
				notes = append(notes, "to the extent a response is required, admitted in part and denied in part")
			case StatusNoKnowledge:
				notes = append(notes, "to the extent a response is required, denied for lack of knowledge (Rule 8(b)(5))")
			}
		} else if extentDeniedRE.MatchString(text) {
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
			for _, r := range rangeRE.FindAllStringSubmatch(clause[loc[2]:loc[3]], -1) {
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
		// "paragraph A", "paragraphs B through D".
		for _, loc := range letterRefRE.FindAllStringSubmatchIndex(clause, -1) {
			if otherDocRef(clause[loc[1]:]) {
				continue // "paragraph A of the Lease"
			}
			for _, r := range letterRangeRE.FindAllStringSubmatch(clause[loc[2]:loc[3]], -1) {
				a, b := r[1][0], r[1][0]
				if r[2] != "" && r[2][0] >= a {
					b = r[2][0]
				}
				for c := a; c <= b; c++ {
					nums = append(nums, letterKey+int(c-'A')+1)
					clauses = append(clauses, clause)
				}
			}
		}
		// "Count I", "Counts II and III": a count answered as a whole.
		for _, loc := range countRefRE.FindAllStringSubmatchIndex(clause, -1) {
			if otherDocRef(clause[loc[1]:]) {
				continue
			}
			for _, r := range countRangeRE.FindAllStringSubmatch(clause[loc[2]:loc[3]], -1) {
				a := romanOrNumber(r[1])
				b := a
				if r[2] != "" {
					b = romanOrNumber(r[2])
				}
				if a <= 0 || a > 99 || b < a || b > 99 {
					continue
				}
				for n := a; n <= b; n++ {
					nums = append(nums, countKey+n)
					clauses = append(clauses, clause)
				}
			}
		}
	}
	return nums, clauses
}

// spanRefs is paraRefs for an answer's paragraph, and the range a
// range-numbered paragraph ("2-3. Admitted.") answers, each with the whole
// paragraph as its clause.
func spanRefs(p pleadingPara) (nums []int, clauses []string) {
	if p.span[1] == 0 {
		return paraRefs(p.text)
	}
	for n := p.span[0]; n <= p.span[1]; n++ {
		nums = append(nums, n)
		clauses = append(clauses, p.text)
	}
	return nums, clauses
}

// ofDocRE is what follows a paragraph reference that names its document.
var ofDocRE = regexp.MustCompile(`(?i)^\s*of\s+(?:the\s+|this\s+|said\s+|[a-z]+['’]s?\s+){0,3}["“”']?([a-z]+)`)

// sectionOfRE is a reference that names a section of the pleading itself:
// "paragraph A of the “Factual and Legal Grounds” section of the
// Counterclaim".
var sectionOfRE = regexp.MustCompile(`(?i)^[^.;]{0,80}?\bsection\s+of\s+(?:the\s+|plaintiffs?['’]?s?\s+|defendants?['’]?s?\s+)*(?:amended\s+)?(?:complaint|counter[\s-]?claim|petition)`)

// otherDocRef reports whether the text after a paragraph reference says
// the paragraph is another document's ("of the Agreement", "of Exhibit
// A"), not the pleading's.
func otherDocRef(after string) bool {
	m := ofDocRE.FindStringSubmatch(after)
	if m == nil || sectionOfRE.MatchString(after) {
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
// responses, and the newest counterclaim's allegations (an answer's
// counterclaim) with the answers to the counterclaim.
func pairResponses(pls []*pleading) []Response {
	var complaints, answers, claims, counters []*pleading
	for _, p := range pls {
		switch {
		case p.kind == KindComplaint && len(p.paras) > 0:
			complaints = append(complaints, p)
		case p.kind == KindAnswer && p.counter:
			counters = append(counters, p)
		case p.kind == KindAnswer:
			// An "answer" that responds to no paragraph (a counterclaim
			// titled as an answer, a scan whose text says nothing) does
			// not answer the complaint: pairing with it would flag every
			// allegation as deemed admitted.
			if answersAny(p.paras) || p.general != nil {
				answers = append(answers, p)
			}
			if p.claim != nil {
				claims = append(claims, p.claim)
			}
		}
	}
	out := pairByParty(complaints, answers)
	if more := pairWith(claims, counters); len(more) > 0 {
		out = append(out, more[:min(len(more), MaxResponses-len(out))]...)
	}
	return out
}

// pairWith pairs the newest of the allegation pleadings with the answers.
func pairWith(complaints, answers []*pleading) []Response {
	out := []Response{}
	if len(complaints) == 0 || len(answers) == 0 {
		return out
	}
	sort.SliceStable(complaints, func(i, j int) bool { return pleadingOrder(complaints[i], complaints[j]) < 0 })
	sort.SliceStable(answers, func(i, j int) bool { return pleadingOrder(answers[i], answers[j]) < 0 })
	cp := answeredComplaint(complaints, answers[len(answers)-1])

	// A complaint numbered from 1 again in each count keys each run of
	// numbers apart (segKey); an answer's runs of responses answer the
	// complaint's runs in order.
	maxSeg := 0
	for _, p := range cp.paras {
		maxSeg = max(maxSeg, p.seg)
	}
	cparas := cp.paras
	if maxSeg > 0 {
		cparas = make([]pleadingPara, len(cp.paras))
		for i, p := range cp.paras {
			if p.num > 0 && p.num < letterKey {
				p.num += p.seg * segKey
			}
			cparas[i] = p
		}
	}

	exists := map[int]bool{}
	count := map[int]int{}
	alleged := map[int]string{} // a number's (first) allegation text
	var order []int             // the numbered paragraphs' keys, ascending
	for _, p := range cparas {
		if !exists[p.num] && numKey(p.num) {
			order = append(order, p.num)
			alleged[p.num] = p.text
		}
		exists[p.num] = true
		count[p.num]++
	}
	sort.Ints(order)

	// Each answer's responses by allegation key, oldest answer first.
	perAnswer := make([]map[int]answered, len(answers))
	for ai, an := range answers {
		got := map[int]answered{}
		explicit := map[int]bool{}
		refs := make([][]int, len(an.paras))
		clauses := make([][]string, len(an.paras))
		withRefs, self := 0, 0 // numbered responses that name paragraphs, and name their own
		for i, p := range an.paras {
			if !p.restated && !p.labelled && p.section == "" {
				refs[i], clauses[i] = spanRefs(p)
				if p.num > 0 && p.num < letterKey && p.span[1] == 0 && len(refs[i]) > 0 {
					withRefs++
					if slices.Contains(refs[i], p.num) {
						self++
					}
				}
			}
		}
		// An answer numbered as the complaint is (its paragraphs that name
		// paragraphs mostly name their own) answers a paragraph by its
		// number even where another response also names it; one numbered
		// its own way ("2. Beta admits the allegations in Paragraph 1")
		// does not.
		mirror := self*2 >= withRefs
		skip := unresponsiveRuns(an.paras, refs)
		for i, keep := range responseSections(an.paras, refs) {
			if !keep {
				skip[i] = 1
			}
		}
		// The answer's kept runs of numbers, in order, answer the
		// complaint's runs: their numbers and references become keys.
		aseg := make([]int, len(an.paras))
		if maxSeg > 0 {
			runs, at := map[int]int{}, 0
			for i, p := range an.paras {
				if skip[i] <= 0 && p.num > 0 && p.num < letterKey {
					if _, ok := runs[p.seg]; !ok {
						runs[p.seg] = len(runs)
					}
					at = min(runs[p.seg], maxSeg)
				}
				aseg[i] = at
				for j, n := range refs[i] {
					if n > 0 && n < letterKey {
						refs[i][j] = n + at*segKey
					}
				}
			}
		}
		// A count named whose allegations are numbered ("denies the
		// allegations of Count II") answers its paragraphs; a reference to
		// nothing the complaint holds ("Count II" of no count, paragraph 45
		// of 40) is no reference: the response answers by its number.
		for i := range an.paras {
			var keep []int
			var kc []string
			for j, n := range refs[i] {
				switch {
				case exists[n]:
					keep, kc = append(keep, n), append(kc, clauses[i][j])
				case len(cp.members[n]) > 0:
					for _, k := range cp.members[n] {
						keep, kc = append(keep, k), append(kc, clauses[i][j])
					}
				}
			}
			refs[i], clauses[i] = keep, kc
			for _, n := range refs[i] {
				explicit[n] = true
			}
		}
		cursor := 0 // the last numbered paragraph answered
		next := func(after int) int {
			for _, n := range order {
				if n > after {
					return n
				}
			}
			return 0
		}
		for i, p := range an.paras {
			if skip[i] < 0 {
				cursor = aseg[i] * segKey // numbering restarted: a new run of responses
			}
			if skip[i] > 0 {
				continue
			}
			if p.num > 0 && p.num < letterKey {
				p.num += aseg[i] * segKey
				p.span[0], p.span[1] = 0, 0 // the range is in refs[i]
			}
			resp := passage(an, p)
			if p.section != "" {
				// A response under a heading answers the complaint's
				// section of that heading, if it has one.
				if k, ok := cp.sections[p.section]; ok && exists[k] {
					if st := responseStatus(p.text); st != StatusNotAnswered {
						if _, dup := got[k]; !dup {
							got[k] = answered{resp, st, joinNote("a response to the section by its heading", statusNote(st, p.text))}
						}
					}
				}
				continue
			}
			if len(refs[i]) > 0 {
				nums, clauses := refs[i], clauses[i]
				whole := responseStatus(p.text)
				grouped := len(nums) > 1
				// A response that names one paragraph only is read whole:
				// "Beta admits that … . Beta denies the remaining
				// allegations of paragraph 3." admits part of 3. Clause by
				// clause only when it answers several paragraphs
				// differently ("admits paragraph 3 and denies paragraph 4").
				single := true
				for _, n := range nums {
					single = single && n == nums[0]
				}
				for j, n := range nums {
					st := responseStatus(clauses[j])
					if st == StatusNotAnswered || single {
						st = whole
					}
					note := statusNote(st, p.text)
					if grouped {
						note = joinNote("a grouped response to paragraphs "+rangeText(nums), note)
					}
					if n > countKey && n < sectionKey {
						note = joinNote("a response to the count as a whole", note)
					}
					if _, dup := got[n]; !dup {
						got[n] = answered{resp, st, note}
					}
					if numKey(n) {
						cursor = max(cursor, n)
					}
				}
				continue
			}
			if p.num == 0 || p.generalDenial {
				continue // the general denial is applied below
			}
			target := 0
			switch {
			case p.num >= letterKey && p.num < segKey:
				// A lettered response with no reference answers its
				// own letter.
				if exists[p.num] {
					target = p.num
				}
			case (p.restated || p.labelled || incorporateRE.MatchString(p.text)) && (exists[p.num] || maxSeg == 0):
				target = p.num
			case p.num > cursor && exists[p.num] && (mirror || !explicit[p.num]):
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
			} else if rest, ok := restatedRest(p.text, alleged[target]); ok && rest != "" {
				// The allegation quoted, then its response ("Admitted.")
				// with no label: the quotation's words are not the
				// response's.
				text, resp.Text = rest, rest
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
			if numKey(target) {
				cursor = max(cursor, target)
			}
		}
		if an.general != nil {
			gp := passage(an, *an.general)
			for _, p := range cparas {
				a, ok := got[p.num]
				switch {
				case !ok:
					got[p.num] = answered{gp, StatusDenied, "denied by the answer's general denial of every allegation not expressly admitted"}
				case a.status == StatusNotAnswered:
					// The specific response ("the document speaks for
					// itself") stays cited; the general denial denies.
					note := fmt.Sprintf("the response neither admits nor denies; the answer's general denial (page %d) denies every allegation not expressly admitted", gp.Page)
					if speaksRE.MatchString(a.resp.Text) {
						note = joinNote(`"the document speaks for itself" is neither an admission nor a denial`, note)
					}
					got[p.num] = answered{a.resp, StatusDenied, note}
				}
			}
		}
		perAnswer[ai] = got
	}

	// A count or a section of unnumbered allegations is listed when an
	// answer responds to it by name; otherwise it is the complaint's prose
	// between its numbered paragraphs.
	named := func(k int) bool {
		if k < countKey || k >= segKey {
			return true
		}
		for _, got := range perAnswer {
			if a, ok := got[k]; ok && !strings.Contains(a.note, "general denial") {
				return true
			}
		}
		return false
	}
	for _, p := range cparas {
		if len(out) >= MaxResponses {
			break
		}
		if !named(p.num) {
			continue
		}
		label := p.label
		if label == "" {
			label = strconv.Itoa(p.num)
		}
		r := Response{Paragraph: label, Allegation: passage(cp, p), Status: StatusNotAnswered}
		newest := perAnswer[len(answers)-1]
		if a, ok := newest[p.num]; ok {
			resp := a.resp
			r.Response, r.Status, r.Note = &resp, a.status, a.note
		} else {
			r.Note = "no response reaches this paragraph: under Rule 8(b)(6) an allegation that required a response and is not denied is admitted"
		}
		if count[p.num] > 1 {
			r.Note = joinNote(fmt.Sprintf("the complaint numbers %d paragraphs %s; a response to paragraph %s is paired with each", count[p.num], label, label), r.Note)
		}
		if p.seg > 0 && p.segHead != "" {
			r.Note = joinNote(fmt.Sprintf("paragraph %s under %s (the complaint numbers its paragraphs from 1 again there)", label, p.segHead), r.Note)
		}
		for ai := 0; ai < len(answers)-1; ai++ {
			if answeredComplaint(complaints, answers[ai]) != cp {
				continue // it answered another version of the complaint
			}
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

// rangeText is "9 through 11" or "2, 4, 7" (letters and counts as the
// pleading names them: "A, B", "Count I").
func rangeText(nums []int) string {
	contiguous := true
	for i := 1; i < len(nums); i++ {
		contiguous = contiguous && nums[i] == nums[i-1]+1
	}
	if contiguous && len(nums) > 2 {
		return fmt.Sprintf("%s through %s", keyText(nums[0]), keyText(nums[len(nums)-1]))
	}
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = keyText(n)
	}
	return strings.Join(parts, ", ")
}

// keyText names a paragraph key: "12", "A", "Count 2".
func keyText(k int) string {
	switch {
	case k > letterKey && k <= letterKey+26:
		return string(rune('A' + k - letterKey - 1))
	case k > countKey && k < sectionKey:
		return fmt.Sprintf("Count %d", k-countKey)
	case k >= segKey:
		return strconv.Itoa(k % segKey)
	}
	return strconv.Itoa(k)
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

// defenceHeadRE is a heading that opens an answer's defences or its
// counterclaim, wherever its words stand in it ("DEFENDANT'S AFFIRMATIVE
// DEFENSES", "AFFIRMATIVE AND OTHER DEFENSES", "BETA'S COUNTERCLAIMS
// AGAINST ACME").
var (
	defenceHeadRE = regexp.MustCompile(`(?i)\b(?:defen[cs]es?|counter[\s-]?claims?)\b`)
	notEndHeadRE  = regexp.MustCompile(`(?i)\b(?:answers?|answering|responses?|reply|replies)\b`)
)

// defenceHeading reports whether an answer's heading ends its responses:
// it names defences or a counterclaim, and is not a title or a heading of
// responses ("ANSWER AND AFFIRMATIVE DEFENSES", "RESPONSE TO AFFIRMATIVE
// DEFENSES", "ANSWER TO COUNTERCLAIM").
func defenceHeading(para string) bool {
	return defenceHeadRE.MatchString(para) && !notEndHeadRE.MatchString(para)
}

// smallWords may start in lower case in a heading in title case.
var smallWords = map[string]bool{"a": true, "an": true, "and": true, "as": true, "at": true, "by": true, "for": true, "in": true, "of": true, "on": true, "or": true, "the": true, "to": true, "with": true}

// titleHeading reports whether para is a heading in title case between a
// pleading's paragraphs ("Factual Allegations", "Jurisdiction and Venue",
// "Defendant's Affirmative Defenses"): a short line of capitalised words
// with no sentence punctuation and no digits, after a paragraph that ends
// a sentence and before a numbered or lettered paragraph or a heading.
// A line of a sentence that extraction kept apart ("Acme Widgets LLC")
// sits between pieces of one sentence, so it is not one.
func titleHeading(para, before, after string) bool {
	if after == "" || !titleShape(para) || !endsSentence(before) {
		return false
	}
	a := strings.TrimSpace(after)
	return numParaRE.MatchString(a) || letterParaRE.MatchString(a) || answerToParaRE.MatchString(a) || headingLine(a)
}

// endsSentence reports whether a paragraph ends a sentence or is a heading.
func endsSentence(before string) bool {
	return before != "" && (strings.ContainsAny(before[len(before)-1:], ".;:!?)”\"") || headingLine(before))
}

// titleShape reports whether para has a title-case heading's shape: a
// short line of capitalised words (small words aside) with no sentence
// punctuation at its end and no digits.
func titleShape(para string) bool {
	if len(para) > 70 || strings.ContainsAny(para, "0123456789") {
		return false
	}
	switch para[len(para)-1] {
	case '.', ',', ';', ':':
		return false
	}
	words := strings.Fields(para)
	if len(words) > 8 {
		return false
	}
	for i, w := range words {
		r := []rune(strings.Trim(w, `"“”'‘’(),&-–—`))
		if len(r) == 0 {
			continue
		}
		if unicode.IsLower(r[0]) && (i == 0 || !smallWords[string(r)]) {
			return false
		}
	}
	return true
}

// nextPara is the first non-blank paragraph after paras[i] ("" if none).
func nextPara(paras []string, i int) string {
	for _, p := range paras[i+1:] {
		if p = strings.TrimSpace(p); p != "" {
			return p
		}
	}
	return ""
}

// edgeLines is how many non-blank lines at a page's top and bottom are
// searched for running heads and footers.
const edgeLines = 3

// noteLineRE is a footnote's first line: its number, then its text.
var noteLineRE = regexp.MustCompile(`^(\d{1,2})\s+["“(]?[A-Z]`)

// dropFurniture removes what is not a pleading's text from its pages
// before its paragraphs are read: a running head or footer that repeats,
// up to its digits, at the top or bottom of two pages or more (the paper's
// title in the footer, "DEFENDANT'S ANSWER TO COMPLAINT - 2", which the
// cleaning keeps when it is on too few pages), and the footnotes at a
// page's foot (from a line that starts with a number the page's text
// carries as a note mark, "Agreement,1 and", to the page's end). Between
// a response's lines they would cut the response in two or lend it
// another status.
func dropFurniture(pages []string) []string {
	key := func(l string) string {
		f := strings.FieldsFunc(strings.ToLower(l), func(r rune) bool { return !unicode.IsLetter(r) })
		if len(f) < 2 {
			return ""
		}
		return strings.Join(f, " ")
	}
	// A running head or footer is a title or carries a number (a page's,
	// the case's): a sentence that happens to stand at two pages' edges
	// ("To the extent a response is required, Beta denies them.") is text.
	numbered := func(l string) bool {
		return numParaRE.MatchString(l) || rangeParaRE.MatchString(l) || letterParaRE.MatchString(l) || answerToParaRE.MatchString(l) ||
			!isTitleLine(l) && !(strings.ContainsAny(l, "0123456789") && len(strings.Fields(l)) <= 6 && !endsStatement(l))
	}
	split := make([][]string, len(pages))
	onPages := map[string]int{}
	for pi, p := range pages {
		split[pi] = strings.Split(p, "\n")
		seen := map[string]bool{}
		for _, i := range edgeIndexes(split[pi]) {
			l := strings.TrimSpace(split[pi][i])
			if k := key(l); k != "" && len(l) <= 100 && !numbered(l) && !seen[k] {
				seen[k] = true
				onPages[k]++
			}
		}
	}
	out := make([]string, len(pages))
	for pi, lines := range split {
		drop := map[int]bool{}
		for _, i := range edgeIndexes(lines) {
			l := strings.TrimSpace(lines[i])
			if k := key(l); k != "" && onPages[k] >= 2 && len(l) <= 100 && !numbered(l) {
				drop[i] = true
			}
		}
		// Footnotes: from the first note line in the page's lower half.
		for i := len(lines) / 2; i < len(lines); i++ {
			l := strings.TrimSpace(lines[i])
			m := noteLineRE.FindStringSubmatch(l)
			if m == nil || numbered(l) || !hasNoteMark(lines[:i], m[1]) {
				continue
			}
			for j := i; j < len(lines); j++ {
				drop[j] = true
			}
			break
		}
		if len(drop) == 0 {
			out[pi] = pages[pi]
			continue
		}
		kept := lines[:0:0]
		for i, l := range lines {
			if !drop[i] {
				kept = append(kept, l)
			}
		}
		out[pi] = strings.Join(kept, "\n")
	}
	return out
}

// edgeIndexes are the indexes of a page's first and last edgeLines
// non-blank lines.
func edgeIndexes(lines []string) []int {
	var nb []int
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			nb = append(nb, i)
		}
	}
	if len(nb) <= 2*edgeLines {
		return nb
	}
	return append(append([]int(nil), nb[:edgeLines]...), nb[len(nb)-edgeLines:]...)
}

// hasNoteMark reports whether lines carry note mark n: the number set
// against the word or punctuation before it ("Agreement,1 and",
// "breach.2"), not a number of its own.
func hasNoteMark(lines []string, n string) bool {
	for _, l := range lines {
		for i := 1; i+len(n) <= len(l); i++ {
			if l[i:i+len(n)] != n {
				continue
			}
			prev, end := l[i-1], i+len(n)
			if end < len(l) && (l[end] >= '0' && l[end] <= '9') {
				continue
			}
			if end < len(l) && l[end] != ' ' && l[end] != '.' && l[end] != ',' && l[end] != ';' {
				continue
			}
			if prev >= 'a' && prev <= 'z' || strings.ContainsRune(".,;:)]\"", rune(prev)) || strings.HasSuffix(l[:i], "”") || strings.HasSuffix(l[:i], "’") {
				return true
			}
		}
	}
	return false
}

// unresponsiveRuns splits an answer's paragraphs into runs where its
// numbering starts again at 1 (its defences or a counterclaim numbered
// 1..n again under a heading the end rules do not know, a numbered
// preliminary statement before the responses) and marks the runs that are
// not responses: fewer than half of their numbered paragraphs admit,
// deny, name a paragraph or say no response is required. For each
// paragraph: 1 to skip it, -1 where a kept run starts again at 1, else 0.
// With one run, or no run of responses, every paragraph is kept.
func unresponsiveRuns(paras []pleadingPara, refs [][]int) []int {
	out := make([]int, len(paras))
	run := make([]int, len(paras))
	var numbered, like []int
	r, last := 0, 0
	numbered, like = append(numbered, 0), append(like, 0)
	for i, p := range paras {
		plain := p.num > 0 && p.num < letterKey && p.span[1] == 0 && !p.labelled
		if plain && p.num == 1 && last > 1 {
			r++
			numbered, like = append(numbered, 0), append(like, 0)
		}
		run[i] = r
		if plain {
			last = p.num
			numbered[r]++
			if p.restated || len(refs[i]) > 0 || p.generalDenial || responseStatus(p.text) != StatusNotAnswered || incorporateRE.MatchString(p.text) {
				like[r]++
			}
		}
	}
	if r == 0 {
		return out
	}
	usable := make([]bool, r+1)
	any := false
	for k := range usable {
		usable[k] = numbered[k] == 0 || like[k]*2 >= numbered[k]
		any = any || usable[k] && numbered[k] > 0
	}
	if !any {
		return out
	}
	for i := range paras {
		switch {
		case !usable[run[i]]:
			out[i] = 1
		case i > 0 && run[i] != run[i-1]:
			out[i] = -1
		}
	}
	return out
}

// restatedRest reads an answer's paragraph that quotes the allegation it
// answers before responding ("2. Beta denied Acme's claim. Admitted."):
// when its words after its number begin with the allegation's (a word in
// ten may differ: extraction, a corrected typo), it returns what follows
// the quotation, the response. The first three words must agree.
func restatedRest(answer, allegation string) (string, bool) {
	type word struct {
		w   string
		end int
	}
	words := func(s string) []word {
		var out []word
		start := -1
		for i, r := range s + " " {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				out = append(out, word{strings.ToLower(s[start:i]), i})
				start = -1
			}
		}
		return out
	}
	body := func(s string) string {
		if m := numParaRE.FindStringSubmatchIndex(strings.TrimSpace(s)); m != nil {
			return strings.TrimSpace(s)[m[4]:]
		}
		return s
	}
	ab, pb := body(allegation), body(answer)
	aw, pw := words(ab), words(pb)
	if len(aw) < 4 || len(pw) <= len(aw)-len(aw)/10 {
		return "", false
	}
	for k := 0; k < 3; k++ {
		if aw[k].w != pw[k].w {
			return "", false
		}
	}
	i, j, miss := 0, 0, 0
	for i < len(aw) && j < len(pw) {
		switch {
		case aw[i].w == pw[j].w:
			i, j = i+1, j+1
		case i+1 < len(aw) && aw[i+1].w == pw[j].w:
			i, miss = i+1, miss+1
		case j+1 < len(pw) && aw[i].w == pw[j+1].w:
			j, miss = j+1, miss+1
		default:
			i, j, miss = i+1, j+1, miss+1
		}
		if miss > len(aw)/10 {
			return "", false
		}
	}
	if i < len(aw) {
		return "", false
	}
	rest := ""
	if j > 0 {
		rest = pb[pw[j-1].end:]
	}
	return strings.TrimLeft(rest, ` .,;:"”’)]`), true
}

// bareLabelRE is a line that holds only a paragraph's number, letter or
// label, its text on the next line ("1." / "Acme is …", "ANSWER:" /
// "Admitted."), as extraction gives a number set in its own run.
var bareLabelRE = regexp.MustCompile(`(?i)^(?:¶\s*)?(?:\(?\d{1,3}[.):]|\(\d{1,3}\)|\(?[A-Z][.)]|(?:answer|response)(?:\s+to\s+(?:paragraph|¶)\s*(?:no\.?\s*)?\d{1,3})?\s*:)$`)

// joinBareLabels joins a line holding only a paragraph's number, letter
// or "ANSWER:" label to the next non-blank line, unless that line is
// numbered or labelled itself.
func joinBareLabels(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !bareLabelRE.MatchString(l) || len(l) > 40 {
			out = append(out, lines[i])
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || bareLabelRE.MatchString(strings.TrimSpace(lines[j])) || numParaRE.MatchString(strings.TrimSpace(lines[j])) {
			out = append(out, lines[i])
			continue
		}
		out = append(out, l+" "+strings.TrimSpace(lines[j]))
		i = j
	}
	return out
}

// responseSections reads an answer's sections (split at its headings of
// defences) and keeps those of responses: at least half of their numbered
// or paragraph-naming paragraphs admit, deny, say no response is required
// or quote the allegation, and a section after the first is one only if
// three of them do. Where no section after the first is one, the first
// is kept, whatever it holds (the responses before the defences).
func responseSections(paras []pleadingPara, refs [][]int) []bool {
	n := 0
	for _, p := range paras {
		n = max(n, p.defence+1)
	}
	keep := make([]bool, len(paras))
	total, like := make([]int, n), make([]int, n)
	for i, p := range paras {
		if p.num > 0 && p.num < letterKey || len(refs[i]) > 0 || p.restated || p.labelled {
			total[p.defence]++
			if p.restated || p.labelled || responseStatus(p.text) != StatusNotAnswered {
				like[p.defence]++
			}
		}
	}
	resp := make([]bool, n)
	later := false
	for k := range resp {
		resp[k] = like[k] >= 1 && like[k]*2 >= total[k]
		// A section after the first holds the responses only if it
		// answers several paragraphs: a defence that denies something
		// of paragraphs 10 through 12 is no section of responses.
		later = later || k > 0 && resp[k] && like[k] >= 3
	}
	for i, p := range paras {
		keep[i] = later && resp[p.defence] && (p.defence == 0 || like[p.defence] >= 3) || !later && p.defence == 0
	}
	return keep
}

// endsStatement reports whether a paragraph ends a sentence (rather than
// a label that the lines below complete: "AS TO PARAGRAPH 1:",
// "Paragraph 2").
func endsStatement(s string) bool {
	s = strings.TrimRight(s, " ”\")'")
	return s != "" && strings.ContainsAny(s[len(s)-1:], ".!?")
}

// namesOnly reports whether a response names paragraphs and every one it
// names is among ns ("Beta denies the remaining allegations of paragraph
// 2").
func namesOnly(para string, ns ...int) bool {
	nums, _ := paraRefs(para)
	for _, k := range nums {
		if !slices.Contains(ns, k) {
			return false
		}
	}
	return len(nums) > 0
}

// paraRefsOf is the paragraphs a response names.
func paraRefsOf(text string) []int {
	nums, _ := paraRefs(text)
	return nums
}

// answeredComplaint is the complaint whose allegations the newest answer
// is paired with: the one its title names ("ANSWER TO FIRST AMENDED
// COMPLAINT"), else the newest filed no later than the answer, else the
// newest (complaints oldest first). An answer to the complaint is never
// read against an amended complaint filed after it.
func answeredComplaint(complaints []*pleading, an *pleading) *pleading {
	if an.answers >= 0 {
		for i := len(complaints) - 1; i >= 0; i-- {
			if complaints[i].amended == an.answers {
				return complaints[i]
			}
		}
	}
	if an.filedOn != "" {
		for i := len(complaints) - 1; i >= 0; i-- {
			if complaints[i].filedOn != "" && complaints[i].filedOn <= an.filedOn {
				return complaints[i]
			}
		}
	}
	return complaints[len(complaints)-1]
}

// countMembers maps each count of numbered paragraphs to their keys (a
// run of numbers keyed as pairWith keys it).
func countMembers(paras []pleadingPara) map[int][]int {
	m := map[int][]int{}
	for _, p := range paras {
		if p.inCount != 0 {
			m[p.inCount] = append(m[p.inCount], p.num+p.seg*segKey)
		}
	}
	return m
}

var (
	// "DEFENDANT GAMMA LOGISTICS LLC'S ANSWER", "GAMMA LOGISTICS LLC'S
	// ANSWER AND AFFIRMATIVE DEFENSES".
	partyTitleRE = regexp.MustCompile(`(?i)^(?:defendants?\s+|defendant/counter-?plaintiff\s+)?(.{2,80}?)['’]s?\s+(?:first\s+|second\s+|third\s+)?(?:amended\s+)?(?:verified\s+)?(?:original\s+)?answer\b`)
	// "ANSWER OF DEFENDANT GAMMA LOGISTICS LLC".
	partyOfRE = regexp.MustCompile(`(?i)^(?:(?:first\s+|second\s+)?amended\s+)?answer\s+(?:and\s+[a-z ]+?\s+)?of\s+(?:defendants?\s+)?(.{2,80}?)(?:\s+to\b|\s*$)`)
	// "Defendant Gamma Logistics LLC (“Gamma”), by its counsel, answers".
	partyIntroRE = regexp.MustCompile(`\bDefendants?,?\s+([A-Z][A-Za-z0-9.&'’ ,-]{1,80}?)\s*(?:,\s*)?(?:\(|by\s+and\s+through|by\s+(?:its|his|her|their)\b|hereby\b|answers\b|responds\b|for\s+(?:its|his|her|their)\s+answer)`)
	honorific    = map[string]bool{"officer": true, "sergeant": true, "sgt": true, "detective": true, "deputy": true, "lieutenant": true, "captain": true, "dr": true, "mr": true, "mrs": true, "ms": true, "trooper": true, "warden": true, "judge": true}
	genericParty = map[string]bool{"defendant": true, "defendants": true, "plaintiff": true, "plaintiffs": true, "the": true, "all": true, "named": true}
)

// answeringParty is the name of the party an answer's first page says
// answers ("" when it does not say, or names the defendants only as
// such).
func answeringParty(lines []string) string {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		for _, re := range []*regexp.Regexp{partyTitleRE, partyOfRE} {
			if m := re.FindStringSubmatch(l); m != nil && isTitleLine(l) {
				if name := strings.Trim(m[1], " ,’'"); name != "" && !genericParty[strings.ToLower(strings.Fields(name)[0])] {
					return name
				}
			}
		}
	}
	for _, l := range lines {
		if m := partyIntroRE.FindStringSubmatch(l); m != nil {
			if name := strings.Trim(m[1], " ,’'"); name != "" && !genericParty[strings.ToLower(strings.Fields(name)[0])] {
				return name
			}
		}
	}
	return ""
}

// pairByParty pairs the complaint with the answers, answer by answering
// party: where every answer names the party it is of and they are not
// all one party (two defendants answering apart), each party's newest
// answer gives its own entry for each allegation — one defendant's
// answer does not supersede another's — noted with the party's name;
// otherwise the newest answer wins (pairWith).
func pairByParty(complaints, answers []*pleading) []Response {
	groups := map[string][]*pleading{}
	var keys []string
	for _, a := range answers {
		if a.party == "" {
			return pairWith(complaints, answers)
		}
		if _, ok := groups[a.party]; !ok {
			keys = append(keys, a.party)
		}
		groups[a.party] = append(groups[a.party], a)
	}
	if len(keys) < 2 {
		return pairWith(complaints, answers)
	}
	sort.Strings(keys)
	var lists [][]Response
	for _, k := range keys {
		g := groups[k]
		rs := pairWith(append([]*pleading(nil), complaints...), g)
		name := g[len(g)-1].partyName
		for i := range rs {
			rs[i].Note = joinNote("the answer of "+name, rs[i].Note)
		}
		lists = append(lists, rs)
	}
	// One allegation's entries together, in the pleading's order.
	ident := func(r Response) string {
		return r.Allegation.DocumentID + "\x00" + r.Paragraph + "\x00" + r.Allegation.Text
	}
	var out []Response
	used := make([][]bool, len(lists))
	for i := range lists {
		used[i] = make([]bool, len(lists[i]))
	}
	for gi, rs := range lists {
		for i, r := range rs {
			if used[gi][i] {
				continue
			}
			used[gi][i] = true
			out = append(out, r)
			for gj := gi + 1; gj < len(lists); gj++ {
				for j, o := range lists[gj] {
					if !used[gj][j] && ident(o) == ident(r) {
						used[gj][j] = true
						out = append(out, o)
						break
					}
				}
			}
		}
	}
	return out[:min(len(out), MaxResponses)]
}
