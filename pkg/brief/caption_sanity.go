package brief

import (
	"regexp"
	"slices"
	"strings"
)

// The last word on a caption's names (issue 22, round 14): whatever rule
// read a "party", a name that is plainly no name is dropped, and a title
// built on it is cleared. Two-column pleading paper interleaves the
// paper's own title with the names ("KATHERYN ELIZABETH PLAINTIFFS’
// UNOPPOSED" / "HUDSON, et al.,"), and a hearing's furniture, a form's
// labels and a description sit where names do. A wrong party in a
// litigator's Brief is worse than a missing one, so these are left out
// even when a real name is lost with them.

var (
	// A role word's possessive ("PLAINTIFFS’ UNOPPOSED", "DEFENDANT
	// APPLE INC.’S REPLY") begins a paper's title, never a name.
	rolePossessiveRE = regexp.MustCompile(`(?i)\b(?:plaintiffs?|defendants?|petitioners?|respondents?|appellants?|appellees?|debtors?|movants?)(?:['’]s?|s['’])(?:\s|$)`)
	// A paper's words, a hearing's or a form's furniture: no name holds
	// them. (titleFragRE holds the rest of a paper's title words.)
	notNameRE = regexp.MustCompile(`(?i)\bdecl\.|\bdamages\s+expert\b|\bexpert\s+(?:report|witness|testimony)\b|\bcertificate\s+of\s+service\b|\binterrogator(?:y|ies)\b|\bfed\.\s*r\b|\bbriefing\b|\brespond\s+to\b|\bconnection\s+with\b|\bsupport\s+of\b|\bin\s+support\b|\bcourtroom\b|\bctrm\b|\b(?:\d+(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|ground)\s+floor\b|\bmonth\s+day\s+year\b|\bprivilege\s+dispute\b|\b(?:revised|supplemental|unopposed|amended|concurrently)\b|\bexhibit\b|\bversion\s+of\b|\bproduction\s+of\b|\bdocuments\b|\bvicinage\b|^district\s+of\b|\b(?:respectfully|received|clarification|clarifying|submission|restraints|modification|enforcing|index)\b|\bforma\s+pauperis\b|\bpro\s+se\b|\bthis\s+matter\b|\b(?:interim|immediate)\s+relief\b|\breturn\s+on\b|\[external\]`)
	// A street address ("350 West First Street") or a numbered line of a
	// list ("2 Allow the Filing of …"); a name may begin with a number
	// ("1955 Capital Fund I GP LLC").
	numberFirstRE = regexp.MustCompile(`(?i)^\d+\s+(?:[a-z.]+\s+){0,3}(?:street|st\.?|avenue|ave\.?|boulevard|blvd\.?|road|rd\.?|drive|dr\.?|suite|plaza|lane|way)(?:\s|,|$)|^\d+\s+(?:allow|grant|deny|extend|continue|set|file|permit)\b`)
	// A party's description standing alone ("A Delaware Corporation",
	// "An Unincorporated Association").
	descriptionRE = regexp.MustCompile(`(?i)^an?\s+(?:[a-z.'’-]+\s+){0,3}(?:corporation|company|association|partnership|entity|individual|municipality|limited\s+liability\s+company)$`)
	// A company's suffix alone, or a country's last word ("Corporation",
	// "Inc.", "America"): the rest of the name was lost.
	bareSuffix = map[string]bool{"corporation": true, "corp": true, "inc": true, "incorporated": true, "llc": true, "l l c": true, "ltd": true, "limited": true, "lp": true, "llp": true, "co": true, "company": true, "america": true, "n a": true, "plc": true, "ag": true, "sa": true, "gmbh": true,
		"state": true, "commission": true, "county": true, "city": true, "township": true}
	// Role words only, joined by slashes or hyphens
	// ("Plaintiffs/Counterclaim-Defendants", "Defendants/Counterclaim-
	// Plaintiffs. Amended").
	roleTokenRE = regexp.MustCompile(`(?i)^(?:plaintiffs?|defendants?|counter|counterclaim|counterclaimants?|cross|third|party|claimants?|petitioners?|respondents?|appellants?|appellees?|amended|and)$`)
	// A role word inside a name is a title's ("Defendant Innowi['s …]",
	// "Plaintiff Finjan, Inc.['s …]") or a form's ("United States of
	// America Sa Cr Plaintiff S"): a caption's names carry their role
	// after them, on their own.
	roleFirstRE = regexp.MustCompile(`(?i)\b(?:plaintiffs?|defendants?)\b`)
	// A magistrate judge's initials after the district judge's ("AB
	// JCx", "JVS DFMx") are the case number's, not a name's.
	initialsRE = regexp.MustCompile(`\b[A-Z]{2,4}x\b`)
	// A name does not begin or end with a small word of a sentence ("On
	// Written Description From …", "The United States to File a").
	connectorEndsRE = regexp.MustCompile(`(?i)^(?:of|on|in|to|for|from|with|by)\s|\s(?:a|an|the|to|of|for|and|with|from|in|on|by)$`)
	// A form's label before a name ("CASE NAME: …", "Short Title: …").
	companySuffixRE = regexp.MustCompile(`(?i)[\s,](?:inc|incorporated|corp|corporation|co|company|llc|l\.l\.c|ltd|limited|lp|llp|plc|n\.a|group)\.?$`)
	// notAPersonRE: the words of an address, an office or a heading,
	// which a counsel's or a witness's name never holds (a signature
	// block's "Second Floor" or "Assistant United States Attorney" above
	// "Attorneys for …"; a heading's "Witness Convenience Favors
	// Transfer").
	notAPersonRE = regexp.MustCompile(`(?i)\b(?:floor|suite|street|avenue|boulevard|plaza|attorneys?|general|court|objections?|use|favors|transfer|convenience|office|department|division|section|district|united\s+states)\b`)
	nameLabelRE  = regexp.MustCompile(`(?i)^(?:case\s+name|short\s+title|case\s+title|caption)\s*:\s*`)
)

// notAName reports a caption party's name that is plainly none.
func notAName(name string) bool {
	n := strings.TrimSpace(name)
	if n == "" {
		return true
	}
	if strings.Contains(n, ":") || numberFirstRE.MatchString(n) || roleFirstRE.MatchString(n) || initialsRE.MatchString(n) || connectorEndsRE.MatchString(n) {
		return true
	}
	if rolePossessiveRE.MatchString(n) || notNameRE.MatchString(n) || descriptionRE.MatchString(n) {
		return true
	}
	// A paper's title word in a company's name ("The Application Group,
	// Inc.") is the company's; one that begins the name ("Hearing VADE
	// SECURE, INCORPORATED"), or in any other name, is a title's.
	if loc := titleFragRE.FindStringIndex(n); loc != nil && (loc[0] == 0 || !companySuffixRE.MatchString(n)) {
		return true
	}
	// A parenthesis opened and not closed ("Return on OTSC (Barber"): a
	// sentence's or a subject line's words, cut.
	if strings.Count(n, "(") != strings.Count(n, ")") {
		return true
	}
	// A name ending in a possessive ("Q Cyber Technologies Limited’s"):
	// the paper's title goes on from it.
	if strings.HasSuffix(n, "’s") || strings.HasSuffix(n, "'s") || strings.HasSuffix(n, "’S") || strings.HasSuffix(n, "'S") {
		return true
	}
	key := partyKey(n)
	if bareSuffix[key] || len(key) <= 2 {
		return true
	}
	toks := strings.FieldsFunc(n, func(r rune) bool { return r == '/' || r == '-' || r == ' ' || r == '.' || r == ',' })
	all := len(toks) > 0
	for _, t := range toks {
		if !roleTokenRE.MatchString(t) {
			all = false
			break
		}
	}
	return all
}

// dropNonNames takes out of dc the parties notAName reports, and clears
// the title when either of its sides is one of them (or itself no name),
// unless the caption names that side otherwise: a two-column caption whose
// right-column title runs on past the "v." ("MOTION FOR STAY OF CASE DUE" /
// "v. TO FEDERAL GOVERNMENT" / "SHUTDOWN" / "ROE MINING CO., et al.,")
// titles its case by the side's next name, the one under the title's lines
// (round 22).
func dropNonNames(dc *docCaption) {
	kept := dc.parties[:0]
	var dropped []string
	for _, p := range dc.parties {
		p.name = nameLabelRE.ReplaceAllString(p.name, "")
		if notAName(p.name) {
			dropped = append(dropped, p.name)
			continue
		}
		kept = append(kept, p)
	}
	dc.parties = kept
	if a, b, ok := strings.Cut(dc.title, " v. "); ok && !notAName(a) && notAName(b) && slices.Contains(dropped, b) {
		if n := nextSideName(dc.parties, a); n != "" {
			dc.title = a + " v. " + n
		}
	}
	dc.title = nameLabelRE.ReplaceAllString(dc.title, "")
	if dc.title == "" {
		return
	}
	t := dc.title
	for _, pre := range []string{"In re: ", "Ex parte "} {
		if strings.HasPrefix(t, pre) {
			if notAName(strings.TrimPrefix(t, pre)) {
				dc.title = ""
			}
			return
		}
	}
	if a, b, ok := strings.Cut(t, " v. "); ok && (notAName(a) || notAName(b)) {
		dc.title = ""
	}
}

// dropCaseFragments drops a case number that is a part of another the
// document gives: a transcript's caption printing the stamp's
// "3:19-cr-00377-WHA" as "CR-00377 WHA" names one case, not two.
func dropCaseFragments(nums []string) []string {
	alnum := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	keys := make([]string, len(nums))
	for i, n := range nums {
		keys[i] = alnum(n)
	}
	out := nums[:0:0]
	for i, n := range nums {
		part := false
		for j, k := range keys {
			if j != i && len(keys[i]) >= 5 && len(k) > len(keys[i]) && strings.Contains(k, keys[i]) {
				part = true
				break
			}
		}
		if !part {
			out = append(out, n)
		}
	}
	return out
}

// nextSideName is the first party after the one named a whose role is not
// a's: the other side's first name once a title's line has been dropped.
func nextSideName(parties []captionParty, a string) string {
	for i, p := range parties {
		if p.name != a {
			continue
		}
		for _, q := range parties[i+1:] {
			if q.role != p.role && (q.role == RolePlaintiff || q.role == RoleDefendant) {
				return q.name
			}
		}
		return ""
	}
	return ""
}
