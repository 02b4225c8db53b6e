package brief

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pramaan/brief-rail/pkg/doctext"
)

// kindRules are tried in order against a document's heading lines (short
// lines near the top of page 1); the first that matches decides the kind.
var kindRules = []struct {
	re   *regexp.Regexp
	kind Kind
}{
	// A declaration or affidavit is evidence, whatever motion it supports:
	// "DECLARATION OF ANNICK M." / "PERSINGER IN SUPPORT OF" / "PLAINTIFF'S
	// MOTION FOR …" (its title begins the line or follows the caption's
	// column rule).
	// A certificate or proof of service is none of the kinds, whatever
	// paper it says was served ("NOTICE OF MOTION TO REOPEN …" /
	// "CERTIFICATE OF SERVICE", round 16).
	{regexp.MustCompile(`(?i)^(?:\S+\s+)?(?:certificate|proof)\s+of\s+(?:electronic\s+)?(?:service|mailing)\b`), KindOther},
	// ... also one "IN SUPPORT OF ENTRY OF DEFAULT JUDGMENT", "IN
	// OPPOSITION TO ORDER TO SHOW CAUSE" (round 16).
	{regexp.MustCompile(`(?i)(?:^|[,)]\s+)(?:supplemental\s+|reply\s+)?(?:declaration|affidavit)\s+(?:of|in\s+(?:support|opposition)|re:?|regarding)\b`), KindExhibit},
	// An order on a motion is an order: "[PROPOSED] ORDER GRANTING
	// PLAINTIFFS' MOTION TO STRIKE" (beginning the title, or after the
	// caption's column rule).
	{regexp.MustCompile(`(?i)(?:^|[,)]\s+)(?:\[proposed\]\s*)?(?:stipulated\s+|amended\s+|final\s+)?order\s+(?:granting|denying|on|re|regarding)\b`), KindOrder},
	// A court's findings of fact and conclusions of law decide what is
	// before it, whatever motion or statement they are on: "FINDINGS OF
	// FACT AND CONCLUSIONS OF LAW REGARDING DEBTOR'S … DISCLOSURE
	// STATEMENT" (round 17).
	{regexp.MustCompile(`(?i)^(?:\[proposed\]\s*)?(?:proposed\s+|amended\s+|supplemental\s+)?findings\s+of\s+fact\s+and\s+conclusions\s+of\s+law\b`), KindOrder},
	// A party's response to the court's own order is none of the kinds,
	// whatever motion the order decided: "DEFENDANTS’ RESPONSE TO COURT’S
	// ORDER (ECF NO. 214)" on an order "GRANTING IN PART … ADMINISTRATIVE
	// MOTION TO FILE UNDER SEAL" (round 20).
	{regexp.MustCompile(`(?i)^(?:\S+\s+){0,3}response\s+to\s+(?:the\s+)?court['’]s\s+(?:\S+\s+)?order\b`), KindOther},
	{regexp.MustCompile(`(?i)\b(?:motion|memorandum\s+of\s+points|in\s+support\s+of|in\s+opposition|objection|opposition\s+to|reply\s+(?:brief|in\s+support))\b`), KindMotion},
	// A request to the clerk or the court: "REQUEST FOR (Application)
	// Entry of Default … Judgment" (a Judicial Council form, round 16).
	{regexp.MustCompile(`(?i)\brequest\s+for\b.{0,40}\bentry\s+of\s+default\b`), KindMotion},
	// An answer before a complaint: "DEFENDANT'S ANSWER TO PLAINTIFF'S
	// COMPLAINT" answers one, and so do "ANSWER OF DEFENDANT …",
	// "DEFENDANTS' ANSWER, AFFIRMATIVE DEFENSES, AND COUNTERCLAIMS" (not an
	// appellate "ANSWER BRIEF").
	{regexp.MustCompile(`(?i)^(?:.*\b)?answer\b(?:\s*[,;].*|\s+(?:and|to|of|in\s+response)\b.*)?$`), KindAnswer},
	// "RESPONSE TO PLAINTIFF'S COMPLAINT", "REPLY TO COUNTERCLAIM", and a
	// title's second line "TO PLAINTIFF'S COMPLAINT" (its first, "ANSWER
	// OF DEFENDANT …", names the paper): a response, not the complaint.
	{regexp.MustCompile(`(?i)^(?:.*\b(?:response|reply|answer)\s+)?to\s+(?:the\s+)?(?:\S+\s+){0,4}(?:complaint|counter[\s-]?claims?)\b`), KindAnswer},
	{regexp.MustCompile(`(?i)^(?:.*\b)?(?:amended\s+|verified\s+)?complaint\b`), KindComplaint},
	// A state court's complaint by its other name: "PLAINTIFF'S ORIGINAL
	// PETITION" (Texas), "PETITION FOR DAMAGES" (Louisiana, Missouri).
	{regexp.MustCompile(`(?i)^(?:.*\b)?(?:original|amended|verified)\s+petition\b(?:\s+(?:and|for\s+damages)\b.*)?$|^(?:.*\b)?petition\s+for\s+damages\b`), KindComplaint},
	{regexp.MustCompile(`(?i)\b(?:opinion|per\s+curiam|slip\s+op|memorandum\s+(?:and\s+)?(?:decision|findings))\b`), KindOpinion},
	{regexp.MustCompile(`(?i)\b(?:order|judge?ment|minutes|decree)\b`), KindOrder},
	{regexp.MustCompile(`(?i)^(?:.*\b)?notice\s+of\b`), KindNotice},
	{regexp.MustCompile(`(?i)^(?:exhibit|attachment|appendix|declaration|affidavit)\b`), KindExhibit},
}

// sectionHeadRE: a heading numbered as a section of the body ("I.
// MOTION TO AMEND", "IV. MOTION FOR A PROTECTIVE ORDER").
var sectionHeadRE = regexp.MustCompile(`^(?:[IVX]{1,4}|[A-H]|\d{1,2})\.\s+\S`)

var (
	courtNoticeRE = regexp.MustCompile(`(?i)^(?:the\s+following\s+notice\s+is\b|generic\s+(?:proceeding|schedule)\b)`)
	entryReRE     = regexp.MustCompile(`(?im)^Re:\s*(?:Dkt|ECF|Doc|Docket)\.?\s*(?:Entry\s+)?(?:Nos?\.?\s*)?\d[\d,\s&and-]*$`)
	letterRE      = regexp.MustCompile(`(?m)^(?:Dear\s+\S|Re:\s|RE:\s)|(?i)\bOffice\s+of\s+the\s+Clerk\b`)
	beforeRE      = regexp.MustCompile(`(?i)^Before:?\s.*\b(?:Circuit|Chief|District|Senior)\s+Judges?\b|^(?:[A-Z][A-Za-z'’.\- ]+),\s+(?:Circuit|Chief|District)\s+Judge[.:]`)
	exhibitRE     = regexp.MustCompile(`^\d+-\d+$`)
	transcriptRE  = regexp.MustCompile(`(?i)^(?:\d+\s+)?(?:(?:reporter'?s|official|certified|partial)\s+)?transcript\s+of\b`)
	exhibitHeadRE = regexp.MustCompile(`^(?i:exhibit|attachment|appendix)\s+[A-Z0-9][A-Z0-9.-]{0,5}$`)
)

// classifyKind says what a document is from its first page's headings: a
// motion, a complaint, an answer, an opinion, an order, a notice or an
// exhibit by its title words; a letter by its salutation or letterhead; a
// panel's decision of several pages (a "Before … Circuit Judges" line) is
// an opinion; an attachment to a docket entry ("12-2") an exhibit.
func classifyKind(pages []string, meta doctext.Meta) Kind {
	if len(pages) == 0 {
		return KindOther
	}
	first := firstN(strings.Split(pages[0], "\n"), captionParas)
	if exhibitHeadRE.MatchString(strings.TrimSpace(first[0])) {
		return KindExhibit // "EXHIBIT A" atop the first page: filed as an exhibit, whatever it is
	}
	// (A court's order names the docket entries it decides on a "Re:"
	// line of its caption, "Re: Dkt. Nos. 12, 18": no letter's "Re:",
	// round 21.)
	if letterRE.MatchString(entryReRE.ReplaceAllString(strings.Join(first, "\n"), "")) {
		return KindLetter
	}
	// A transcript of a hearing or a deposition is none of the kinds, however
	// many motions its pages speak of ("REPORTER'S TRANSCRIPT OF
	// PROCEEDINGS").
	for _, p := range first {
		if p = strings.TrimSpace(p); isTitleLine(p) && transcriptRE.MatchString(p) {
			return KindOther
		}
	}
	if reportedTranscript(pages) {
		return KindOther
	}
	// A court's own notice, however many motions it speaks of: "GENERIC
	// PROCEEDING" (a scheduling notice), "The following notice is being
	// sent from eCourts:" (a sentence, not a heading).
	for _, p := range firstN(first, 12) {
		if courtNoticeRE.MatchString(strings.TrimSpace(p)) {
			return KindNotice
		}
	}
	panel, appeal := false, false
	for pi := 0; pi < len(pages) && pi < 2; pi++ {
		for _, p := range firstN(strings.Split(pages[pi], "\n"), captionParas) {
			p = strings.TrimSpace(p)
			panel = panel || beforeRE.MatchString(p)
			appeal = appeal || pi == 0 && lowerCourtRE.MatchString(p)
		}
	}
	// "DEFENDANTS’ RESPONSE TO THE" / "v. COURT’S ORDER (ECF NO. 214)": the
	// response-to-order title over two lines of a two-column caption
	// (round 20; one line: the kind rule).
	for i := 0; i+1 < len(first); i++ {
		if !responseToRE.MatchString(strings.TrimSpace(first[i])) {
			continue
		}
		j := i + 1
		for j+1 < len(first) && strings.TrimSpace(first[j]) == "" {
			j++
		}
		if courtsOrderRE.MatchString(strings.TrimSpace(first[j])) {
			return KindOther
		}
	}
	// Title words on page 1 first, then pages 2 and 3 (a cover page or a
	// long caption can push the title down).
	for pi := 0; pi < len(pages) && pi < 3; pi++ {
		var paras []string
		for _, p := range firstN(strings.Split(pages[pi], "\n"), captionParas) {
			paras = append(paras, p)
			// Pleading paper's right column, after the ")" rule, holds the
			// title: "corporation, ) [PROPOSED] ORDER GRANTING".
			if parts := strings.Split(p, " ) "); len(parts) > 1 {
				paras = append(paras, parts[1:]...)
			}
		}
		for _, rule := range kindRules {
			for _, p := range paras {
				p = strings.TrimSpace(unspace(p))
				if !isTitleLine(p) || lowerCourtRE.MatchString(p) {
					continue
				}
				// A numbered section heading is the body's, naming what
				// the paper takes up ("I. MOTION TO AMEND" in a court's
				// "ORDER" on eleven motions), not the paper's title (round
				// 22).
				if sectionHeadRE.MatchString(p) {
					continue
				}
				if rule.re.MatchString(p) {
					if rule.kind == KindOrder && panel && len(pages) >= 2 {
						return KindOpinion
					}
					return rule.kind
				}
			}
		}
	}
	if panel || appeal && len(pages) >= 2 {
		return KindOpinion
	}
	if exhibitRE.MatchString(meta.DocketEntry) {
		return KindExhibit
	}
	return KindOther
}

// isTitleLine: a heading-like line: short, and either all capitals or
// without a sentence's end.
func isTitleLine(p string) bool {
	if len(p) < 4 || len(p) > 120 {
		return false
	}
	if isHeading(p) || mostlyCaps(p) {
		return true
	}
	// Title case: every word of four letters or more capitalised.
	if len(p) > 80 || strings.HasSuffix(p, ".") {
		return false
	}
	for _, w := range strings.Fields(p) {
		if r, _ := utf8.DecodeRuneInString(w); len(w) >= 4 && !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

var (
	otherPaperRE = regexp.MustCompile(`(?i)\b(?:motion|complaint|answer|petition|application|brief|appeal|notice|(?:will|to|shall)\s+be)\s+$`)
	filedRE      = regexp.MustCompile(`(?i)\b(?:date\s+filed|filed(?:\s+on)?|decided(?:\s+and\s+filed)?|entered|announced|released\s*:|f\s?i\s?l\s?e\s?d)\s*:?\s*`)
	// A signature or form date: "Dated: May 6, 2025", "DATED this 5th day
	// of …", "Date October 13, 2017" (a capitalised label, not "letter dated").
	filedLineRE = regexp.MustCompile(`(?i)^\(\s*filed\s*:?\s*(` + monthRE + `\.?\s+\d{1,2},?\s+\d{4})\s*\)$`)
	datedRE     = regexp.MustCompile(`(?m)(?:^\s*|\s)(?:Dated|DATED|Date|DATE|Signed|SIGNED|Entered|ENTERED)\b\s*:?\s*(?:at\s+[^,]{1,40},\s*)?(?:this\s+)?`)
	anyDateR    = regexp.MustCompile(`^(?:.{0,90}?)\b(` + monthRE + `\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?` + monthRE + `,?\s+\d{4})`)
)

// filedOn is the date the document was filed: the docket stamp's, else a
// "Filed"/"Decided"/"Entered"/"Announced"/"Released:" date on the first page (an
// agency's order is released, round 17), else the signature
// date ("Dated: …") on the last page with text, else "".
func filedOn(pages []string, meta doctext.Meta) string {
	if meta.FiledOn != "" {
		return meta.FiledOn
	}
	if len(pages) == 0 {
		return ""
	}
	head := strings.Join(firstN(strings.Split(pages[0], "\n"), 40), " ")
	if d := dateAfter(filedRE, head, 90); d != "" {
		return d
	}
	// An appellate opinion's own "(Filed: February 5, 2010)" line, alone
	// under its "Argued …" line, on the caption's first or second page
	// (round 17); a parenthesis within a line is another paper's date.
	for pi := 0; pi < len(pages) && pi < 2; pi++ {
		for _, p := range firstN(strings.Split(pages[pi], "\n"), 40) {
			if m := filedLineRE.FindStringSubmatch(strings.TrimSpace(p)); m != nil {
				if ds := findDates(m[1]); len(ds) > 0 {
					return ds[0].date
				}
			}
		}
	}
	cert := false
	for i := len(pages) - 1; i >= 0; i-- {
		if pages[i] == "" {
			continue
		}
		// A certificate of service on the last page is its own paper:
		// its "DATED" is the day of service, not the paper's signature,
		// which is on the page before (round 20).
		if !cert && certPageRE.MatchString(strings.TrimSpace(pages[i])) {
			cert = true
			continue
		}
		if d := dateAfter(datedRE, pages[i], 0); d != "" {
			return d
		}
		break
	}
	return ""
}

// certPageRE: a page that opens with a certificate or proof of service's
// heading.
var certPageRE = regexp.MustCompile(`(?i)^(?:\S+\s+)?(?:certificate|proof)\s+of\s+(?:electronic\s+)?(?:service|mailing)\b`)

// dateAfter is the first date that follows a label in text, at most gap
// bytes after it (a stamp box puts other words between "FILED" and its
// date; a signature line does not).
func dateAfter(label *regexp.Regexp, text string, gap int) string {
	for _, loc := range label.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && text[loc[0]-1] == '(' {
			continue // "(Filed 10/11/17)": another paper's date
		}
		if otherPaperRE.MatchString(text[:loc[0]]) {
			continue // "The motion filed on 11/26/2025 will be decided …": the motion's date
		}
		rest := text[loc[1]:]
		if m := anyDateR.FindStringSubmatchIndex(rest); m != nil && m[2] <= gap {
			if ds := findDates(rest[m[2]:m[3]]); len(ds) > 0 {
				return ds[0].date
			}
			if d := doctext.NormDate(rest[m[2]:m[3]]); d != "" {
				return d
			}
		}
	}
	return ""
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

var (
	appellateCourtRE = regexp.MustCompile(`(?i)\b(?:court\s+of\s+appeals?|supreme\s+court|appellate\s+(?:division|court)|appeals\s+board)\b`)
	// What else an appellate court's file holds: the parties' papers.
	// A brief's title: "REPLY BRIEF OF APPELLANT", "BRIEF OF RESPONDENT",
	// "APPELLEE'S RESPONDING BRIEF", "CROSS-APPELLANTS' REPLY BRIEF".
	appellateBriefRE = regexp.MustCompile(`(?i)^(?:[a-z'’-]+\s+){0,4}brief(?:\s+of\s+(?:the\s+)?(?:cross[- ])?(?:appellants?|appellees?|respondents?|petitioners?|amic(?:us|i)(?:\s+curiae)?)\b.*)?$`)
	partyPaperRE     = regexp.MustCompile(`(?i)\b(?:brief|petition|application|stipulation|response|reply|designation|statement|transcript|record|appendix|notice)\b`)
)

// appellateDecision: a document with no title word of its kind, of two
// pages or more, whose caption names an appellate court and both sides of
// a case, and none of whose first page's title lines names a party's
// paper, is the court's decision — an opinion ("IN THE COURT OF APPEAL OF
// THE STATE OF CALIFORNIA … X v. Y", then the text).
func appellateDecision(k Kind, pages []string, dc docCaption) Kind {
	// A party's brief in a court of appeals ("REPLY BRIEF OF APPELLANT",
	// "APPELLEE'S RESPONDING BRIEF") is no motion and no decision, whatever
	// its title's other words or its "On appeal from" line.
	// (Also one that urges "AFFIRMANCE OF THE JUDGMENT": an amicus brief,
	// round 16.)
	if (k == KindMotion || k == KindOpinion || k == KindOrder) && len(pages) > 0 && appellateCourtRE.MatchString(dc.court) {
		for _, p := range firstN(strings.Split(pages[0], "\n"), captionParas) {
			if p = strings.TrimSpace(p); isTitleLine(p) && appellateBriefRE.MatchString(p) {
				return KindOther
			}
		}
	}
	if k != KindOther || len(pages) < 2 || !appellateCourtRE.MatchString(dc.court) || !strings.Contains(dc.title, " v. ") || reportedTranscript(pages) {
		return k
	}
	for _, p := range firstN(strings.Split(pages[0], "\n"), captionParas) {
		if p = strings.TrimSpace(p); isTitleLine(p) && partyPaperRE.MatchString(p) {
			return k
		}
	}
	return KindOpinion
}

// reporterCoverRE: a court reporter's cover or the record of a hearing's
// opening ("Official Reporters" under the reporting firm's name; "The
// above-entitled matter came on for oral argument before …").
var reporterCoverRE = regexp.MustCompile(`(?i)^(?:official|court)\s+(?:court\s+)?reporters?$|\bcame\s+on\s+for\s+(?:oral\s+argument|hearing)\b`)

// reportedTranscript reports whether the first two pages show a reporter's
// transcript of a hearing or an argument: an appellate court's argument
// transcript names the court and the sides as its opinion does, and is
// none of the kinds.
func reportedTranscript(pages []string) bool {
	for pi := 0; pi < len(pages) && pi < 2; pi++ {
		for _, p := range strings.Split(pages[pi], "\n") {
			if reporterCoverRE.MatchString(strings.TrimSpace(p)) {
				return true
			}
		}
	}
	return false
}

var (
	responseToRE  = regexp.MustCompile(`(?i)^(?:\S+\s+){0,3}response\s+to(?:\s+the)?$`)
	courtsOrderRE = regexp.MustCompile(`(?i)^(?:v\.\s+)?court['’]s\s+(?:\S+\s+)?order\b`)
)
