package brief

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// docCaption is what one document's first pages say about the case.
type docCaption struct {
	court       string
	courtPage   int // 0-based page the court was read from
	caseNumbers []string
	title       string
	titlePage   int
	parties     []captionParty
	// agency: the court is an agency sitting as a tribunal ("Before the"
	// / "Federal Communications Commission"), round 17.
	agency bool
}

type captionParty struct {
	name     string
	role     Role
	capacity string
	page     int // 0-based
}

// captionPages is how many leading pages of a document are read for its
// caption, and captionParas how many paragraphs of each.
const (
	captionPages = 2
	captionParas = 60
)

var (
	roleWord   = `(?:(?:cross|counter|third[- ]party)[- ]?)?(?:plaintiffs?|defendants?|petitioners?|respondents?|appellants?|appellees?|claimants?|debtors?|movants?|intervenors?|interveners?|relators?|garnishees?|employees?|employers?|carriers?|insurers?|complainants?|objectors?|contestants?|proponents?|real\s+part(?:y|ies)\s+in\s+interest)`
	roleRun    = roleWord + `(?:\s*(?:,\s*and\b|[,/–—-]|\band\b)\s*` + roleWord + `)*`
	roleOnlyRE = regexp.MustCompile(`(?i)^` + roleRun + `(?:\s*,?\s*\band)?[\s.,;:]*$`)
	// A name with its role at the end, and perhaps the "v." that follows:
	// "Mary Beavers Appellant v.", "COMMISSIONER OF INTERNAL REVENUE, Respondent".
	nameRoleRE = regexp.MustCompile(`(?i)^(.*?[^\s,])[\s,]+(` + roleRun + `)[\s.,;:]*(v\.?|vs\.?|versus)?$`)
	// "X v." at the end of a line.
	nameVersusRE = regexp.MustCompile(`(?i)^(.*?[^\s,])[\s,]+(?:v\.?|vs\.?|versus|against)$`)
	// "X v. Y" on one line.
	oneLineRE = regexp.MustCompile(`^(?:(?:Short\s+|Case\s+)?(?:Title|Name|Caption)\s*:?\s+)?(.{2,120}?)\s+(?:v\.|vs\.|V\.|VS\.)\s+(.{2,160})$`)
	// "JOHN DOE, Defendant-Appellant, v. UNITED STATES, Plaintiff-Appellee."
	oneLineRolesRE = regexp.MustCompile(`(?i)^(.+?)[\s,]+(` + roleRun + `)[\s,]*(?:v\.?|vs\.?|versus)\s+(.+?)[\s,]+(` + roleRun + `)[\s.,;:]*$`)
	formCaseRE     = regexp.MustCompile(`(?i)\s+case\s+number\b.*$`)
	formDebtorRE   = regexp.MustCompile(`^Debtor\s+[12]\s+(\S.*)$`)
	formTailRE     = regexp.MustCompile(`(?i)\s+(?:case\s+number|\(spouse|first\s+name|check\s+if).*$`)
	formWordRE     = regexp.MustCompile(`(?i)\b(?:debtor|spouse|name|filing|employed|information)\b`)
	reTailRE       = regexp.MustCompile(`(?i)(?:,?\s*\bet\.?\s*al\.?)?(?:,|\s+(?:nos?\.|case\b|civil\b|docket\b|\()).*$`)
	exParteRE      = regexp.MustCompile(`(?i)^ex\s+parte\s+(\S.{1,150})$`)
	reLabelRE      = regexp.MustCompile(`(?i)^re\b\s*:?`)
	// What an "In the Matter of" subject's line under the name says of it.
	subjectDescRE   = regexp.MustCompile(`(?i)^(?:deceased|an?\s+(?:incapacitated|alleged\s+incapacitated)\s+(?:person|adult))[.,;]?$`)
	applicationOfRE = regexp.MustCompile(`(?i)\b(?:application|petition|complaint)\s+of\b`)
	forWhatRE       = regexp.MustCompile(`(?i)\s+for\s+(?:an?|the)\s+.*$`)
	inReRE          = regexp.MustCompile(`(?i)^(?:in\s+re\b|in\s+the\s+matter\s+of\b(?:\s+the\s+(?:application|petition|complaint)\s+of\b)?)\s*:?\s*(.*)$`)
	dividerRE       = regexp.MustCompile(`^[\s_*=~-]{3,}$`)
	stopWordRE      = regexp.MustCompile(`(?i)\b(?:certiorari|appeal(?:ed|s)?\s+(?:from|of)|on\s+appeal|before|argued|submitted|decided|opinion|order|judge?ment|memorandum|complaint|motion|notice|answer|designation|per\s+curiam|syllabus|counsel|present|proceedings|affirmed|reversed|remanded|dismissed|clerk|judge|jury|court|circuit|term|attorneys?|statement|brief|petition\s+for|filed|entered|page)\b`)
	// A case number with its label: "No. 12-2207", "Case No. 2:18-cv-10166-JAK
	// (AFM)", "Docket Nos. 19031-13, 27735-13", "Civil Action No. 1:21-cv-…".
	caseLabelRE = regexp.MustCompile(`(?i)(?:\b(d\.\s?c\.\s*(?:docket\s*)?)?\b(?:case|cause|docket|civil\s+action|criminal(?:\s+action)?|civil|index|appeal|adversary|bankruptcy|file|mdl)?\s*(?:nos?\.|numbers?|no:)\s*:?\s*)((?:(?:\d{2}\sBK?\s\d{4,6}\b)?(?:(?-i:[A-Z]{2,4} [A-Z]{1,3} \d{3,7}-\d{2}\b)|(?:MDL\s+)?(?:[A-Z]{1,5}-){0,3}[A-Z]{0,3}\d[\w:/–—-]*\d[A-Za-z]*(?:-(?-i:I{1,3})\b)?)(?:\s*\([A-Za-z]+(?:\s*[/-]\s*[A-Za-z]+)*\))?(?:\s*(?:,|and|&)\s*|\s+)?)+)`)
	caseTokRE   = regexp.MustCompile(`[A-Z]{2,4} [A-Z]{1,3} \d{3,7}-\d{2}\b|\d{2}\s[Bb][Kk]?\s\d{4,6}|(?:MDL\s+)?(?:[A-Z]{1,5}-){0,3}[A-Za-z]{0,3}\d[\w:/–—-]*\d[A-Za-z]*(?:-I{1,3}\b)?`)
	// A bare case number alone on a line ("2009-1361", "08-6301-cv") or
	// after a lone "v." ("v. 17-2543").
	bareCaseRE = regexp.MustCompile(`^(?:v\.\s+)?(\d{2,4}[-–]\d{3,6}(?:[-–][a-z]{2,3})?|\d{2}\s+(?:Cr|Civ|Cv|CV|Mag|MC|MJ|M)\.?\s+\d{1,5})(?:\s*\([A-Z]{2,4}\))?$`)
	// An all-digit case number alone on its line with its label: six or
	// seven digits (a year has four, a zip five), "No." and perhaps the
	// word for what is numbered before it; a bar, policy or claim
	// number's label is none of these.
	digitCaseLineRE = regexp.MustCompile(`(?i)^(?:v\.?\s+)?(?:(?:case|appeal|docket|cause|court\s+of\s+appeals?)\s+)?nos?(?:\.\s*|\s*:\s*)(\d{6,7})$`)
	allDigitsRE     = regexp.MustCompile(`^\d+$`)
	courtRE         = regexp.MustCompile(`(?i)\b(?:court|appeals\s+board|tribunal)\b`)
	courtContRE     = regexp.MustCompile(`(?i)^(?:for\s+the\b.*|in\s+and\s+for\b.*|(?:the\s+)?(?:northern|southern|eastern|western|central|middle)?\s*district\s+of\s+[a-z .]+|[a-z ]*\bcircuit|[a-z ]*division|appeals\s+board|(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|\d{1,2}(?:st|nd|rd|th))\s+(?:judicial\s+|appellate\s+)?(?:district|department|circuit)(?:\s+of\s+texas(?:\s*,?\s*at\s+[a-z]+(?:\s+[a-z]+)?)?)?)$`)
	// More lines that continue a court's name, read only right after it
	// ("IN THE SUPERIOR COURT OF THE" / "STATE OF CALIFORNIA", "AT
	// NASHVILLE"): as caption lines they are names ("STATE OF NORTH
	// CAROLINA").
	countyRE   = regexp.MustCompile(`(?i)^county\s+of\s+[a-z .]+$`)
	danglingRE = regexp.MustCompile(`(?i)\s(?:of|of\s+the|for|for\s+the|and|in|in\s+and\s+for)\s*$`)
	// A court's seat under its name ("AT LOUISVILLE", "AT BOWLING GREEN",
	// "At Seattle", "AT COVINGTON, KENTUCKY"): where the case sits, like
	// a division, no part of the court's name and no party (round 23).
	atPlaceRE     = regexp.MustCompile(`(?i)^at\s+[a-z.'’]+(?:\s+[a-z.'’]+){0,2}(?:\s*,\s*(?:kentucky|tennessee|washington|west\s+virginia|virginia|ohio|michigan|texas|indiana))?$`)
	oneWordCapsRE = regexp.MustCompile(`^[A-Z][A-Z'’]{2,}$`)
	courtCont2RE  = regexp.MustCompile(`(?i)^(?:(?:of\s+)?the\s+state\s+of\s+[a-z .]+|county\s+of\s+[a-z .]+|at\s+[a-z]+)$`)
	footnoteRE    = regexp.MustCompile(`,?\s*\d{1,2}$`)
)

// readCaption reads the caption of a document from its cleaned pages.
func readCaption(pages []string, stampCases []string) docCaption {
	var dc docCaption
	seenCase := map[string]bool{}
	digitsOK := false // an all-digit number is read only off its own labelled line (digitCaseLineRE)
	addCase := func(s string) {
		s = strings.TrimRight(strings.NewReplacer("–", "-", "—", "-").Replace(strings.TrimSpace(s)), ".,;:")
		if allDigitsRE.MatchString(s) && !digitsOK {
			return // a bar number, a zip, a year or a sum under some label: no case
		}
		k := CaseKey(s)
		if k == "" || seenCase[k] || seenCase[looseCaseKey(k)] {
			return
		}
		seenCase[k], seenCase[looseCaseKey(k)] = true, true
		dc.caseNumbers = append(dc.caseNumbers, s)
	}
	for _, c := range stampCases {
		addCase(c)
	}
	var left []string // a two-column caption's names beside the court's lines
	first := 0        // the caption's page: the first, or the one after a summary
	for pi := 0; pi < len(pages) && pi < first+captionPages; pi++ {
		paras := strings.Split(pages[pi], "\n")
		if len(paras) > captionParas {
			paras = paras[:captionParas]
		}
		// A published opinion's summary page before the opinion ("The
		// summaries of the Colorado Court of Appeals published opinions
		// constitute no part of the opinion …"): the caption is on the
		// next page.
		if pi == first && pi < 2 && summaryPageRE.MatchString(strings.TrimSpace(paras[0])) {
			first = pi + 1
			for _, p := range paras {
				if m := caseLabelRE.FindStringSubmatch(p); m != nil && len(p) <= 160 {
					for _, t := range caseTokRE.FindAllString(m[2], -1) {
						addCase(t)
						break // "No. 24CA2203, Keep … v. …": the case the summary is of
					}
					break
				}
			}
			continue
		}
		start := 0
		courtAt := -1 // the line of this page where the court's name begins
		for i, p := range paras {
			if i > 25 {
				break
			}
			if name, next, ok := agencyTribunal(paras, i); ok {
				// An agency's tribunal heads its papers "Before the" and
				// its name (round 17).
				if dc.court == "" {
					dc.court, dc.courtPage, dc.agency = titleCase(strings.Join(strings.Fields(name), " ")), pi, true
				}
				start, courtAt = next, i
				break
			}
			if !isCourtLine(p) {
				continue
			}
			if addresseeCourt(paras, i) {
				continue // "Hon. Sarah B. Johnson, J.S.C." / "Atlantic County Superior Court": a letter's address, no caption
			}
			if filedStampCourt(paras, i) {
				continue // the court's own FILED stamp above the caption ("FILED" / "Court of Appeals" / "Division I")
			}
			court := courtPart(p)
			court = numberedDivTailRE.ReplaceAllString(court, "") // "COURT OF APPEALS, DIVISION I": the division where the case sits
			// A court named in the right column of a two-column caption
			// shares its lines with the left column's names ("NEW JERSEY
			// TURNPIKE SUPERIOR COURT OF NEW JERSEY" / "AUTHORITY,
			// ATLANTIC COUNTY – LAW DIVISION"): the left parts are kept
			// for the party list.
			left = nil
			if loc := courtStartRE.FindStringIndex(court); loc != nil && loc[0] > 0 {
				if pre := colText(court[:loc[0]]); len(strings.Fields(inTheRE.ReplaceAllString(pre, ""))) >= 2 && mostlyCaps(pre) && !strings.HasPrefix(strings.ToLower(pre), "in the") && !stateNameRE.MatchString(pre) {
					left = []string{pre}
				}
			}
			// A state's line over a court named without its state ("STATE
			// OF MICHIGAN" / "COURT OF APPEALS"; "STATE OF MINNESOTA" / "IN
			// COURT OF APPEALS"): the state is the court's (round 23).
			if bare := strings.TrimSpace(inCourtRE.ReplaceAllString(court, "")); bareCourtRE.MatchString(bare) && i > 0 {
				if m := stateHeadRE.FindStringSubmatch(strings.TrimSpace(paras[i-1])); m != nil && stateNameRE.MatchString(m[1]) {
					court = strings.TrimSpace(paras[i-1]) + " " + bare
				}
			}
			// Short all-capital lines just above belong to the name
			// ("TENNESSEE / WORKERS' COMPENSATION / APPEALS BOARD").
			for k := i - 1; k >= 0 && k >= i-2 && !courtStartRE.MatchString(court) && courtPrefixLine(paras[k]); k-- {
				court = paras[k] + " " + court
			}
			j := i + 1
			for ; j < len(paras) && j < i+4 && court == courtPart(court); j++ {
				if l, r, ok := splitCourtCont(paras[j], left != nil); ok {
					court += " " + r
					if l != "" {
						left = append(left, l)
					}
					continue
				}
				if dividerRE.MatchString(strings.TrimSpace(paras[j])) {
					continue // a rule between the name's lines
				}
				if trialVenueLine(court, paras[j]) {
					continue // "CHATSWORTH COURTHOUSE", "NORTH VALLEY DISTRICT-CHATSWORTH-LIMITED CIVIL CASE": where the case sits
				}
				if m := countyVenueRE.FindStringSubmatch(colText(paras[j])); m != nil && j == i+1 && strings.Contains(strings.ToLower(court), "state of") && trialVenueLine(court+" "+m[1], m[2]) {
					court += " " + m[1] // "COUNTY OF LOS ANGELES, NORTH VALLEY JUDICIAL DISTRICT": the county is the court's, the district where the case sits
					continue
				}
				if venueDivision(paras[j]) {
					j++ // "SAN JOSE DIVISION", "DIVISION THREE": a part of the court, not its name
					// "COURT OF APPEAL, FOURTH APPELLATE DISTRICT" / "DIVISION
					// ONE" / "STATE OF CALIFORNIA": the state after the division
					// is the court's.
					if j < len(paras) && appealCourtRE.MatchString(court) && stateLineRE.MatchString(strings.TrimSpace(paras[j])) && !strings.Contains(strings.ToLower(court), "state of") {
						court += " " + strings.TrimSpace(paras[j])
						j++
					}
					break
				}
				part, div := cutDivision(strings.TrimLeft(courtPart(paras[j]), ".,'’·•;: ")) // ". DISTRICT OF …": a scan's stray mark before the line
				if cut := numberedDivTailRE.ReplaceAllString(part, ""); cut != part && strings.TrimSpace(cut) != "" {
					part, div = cut, true // "WASHINGTON, DIVISION I"
				}
				next := strings.TrimSpace(strings.ReplaceAll(part, ":", ""))
				if m := ofStateNameRE.FindStringSubmatch(next); m != nil && stateNameRE.MatchString(m[1]) && !strings.Contains(strings.ToLower(court), strings.ToLower(m[1])) {
					court += " " + part // "IN THE APPELLATE COURT" / "OF ILLINOIS": the state's name under the court's (round 23)
					continue
				}
				if atPlaceRE.MatchString(next) && part == paras[j] && !danglingRE.MatchString(court) {
					j++ // "AT LOUISVILLE": the court's seat (round 23)
					break
				}
				dangling := danglingRE.MatchString(court) && isHeading(next) && len(next) <= 60 && !strings.ContainsAny(next, ",0123456789")
				county := j == i+1 && countyRE.MatchString(next) && strings.Contains(strings.ToLower(court), "state of")
				if !dangling && !county && !courtContRE.MatchString(next) && !ofStateRE.MatchString(next) && !(courtCont2RE.MatchString(next) && (strings.HasSuffix(strings.ToLower(strings.TrimSpace(court)), " the") || atPlaceRE.MatchString(next))) {
					break
				}
				court += " " + part
				if div {
					j++ // "CENTRAL DISTRICT OF CALIFORNIA - WESTERN DIVISION"
					break
				}
				if part != paras[j] {
					j++
					break // the rest of the line is the caption's right column
				}
				// "TENNESSEE COURT OF" / "WORKERS' COMPENSATION" / "CLAIMS"
				if dangling && j+1 < len(paras) && oneWordCapsRE.MatchString(strings.TrimSpace(paras[j+1])) && !stopWordRE.MatchString(paras[j+1]) {
					j++
					court += " " + paras[j]
				}
			}
			if dc.court == "" {
				dc.court, dc.courtPage = normCourt(court), pi
			}
			start, courtAt = j, i
			break
		}
		if pi > first && !captionContinues(paras) {
			break
		}
		rightAppealFrom := false // the right column of a ruled caption names the court below from here on
		for pi2, p := range paras {
			if appealFromRE.MatchString(p) {
				break // what follows names the court below and its numbers
			}
			if rightAppealFromRE.MatchString(p) {
				rightAppealFrom = true
			}
			if len(p) > 160 {
				continue // running text: its numbers are other cases'
			}
			// A supreme court's caption lists the courts below with their
			// numbers under its own ("Fourth Appellate District, Division
			// One" / "D078123"; "Ct.App. 2/8 B303172"; "Ninth Circuit" /
			// "No. 21-55555"; "C.D. Cal. No. 2:20-cv-01234").
			below := supremeRE.MatchString(dc.court) && (ctAppRE.MatchString(p) || districtAbbrRE.MatchString(p) || pi2 > 0 && courtBelowRE.MatchString(strings.TrimSpace(paras[pi2-1])))
			for _, ix := range caseLabelRE.FindAllStringSubmatchIndex(p, -1) {
				if below {
					break
				}
				m := []string{p[ix[0]:ix[1]], "", p[ix[4]:ix[5]]}
				if ix[2] >= 0 {
					m[1] = p[ix[2]:ix[3]]
				}
				before := p[:ix[0]]
				if firmFile(p, ix[0], ix[1]) {
					continue // the firm's own file number under its letterhead
				}
				if rightAppealFrom && strings.Contains(before, ")") {
					continue // "MARY MAJOR, ) No. 21CF123" under the right column's "Appeal from the" / "Circuit Court of": the court below's number (round 23)
				}
				if pi2 > 0 && trialCourtLineRE.MatchString(strings.TrimSpace(paras[pi2-1])) {
					continue // "Hennepin County District Court" / "File No. 27-CR-21-1234": the court below's number (round 23)
				}
				if pi2 < courtAt && fileNoRE.MatchString(m[0]) {
					continue // "Refer to File Number: TP126445" in the attorney's block above the court's name: the firm's
				}
				if licenseNoRE.MatchString(before) {
					continue // "DFPI License No. 11444-99", "Debt Collector License Number 10795-99": a licence, not a case
				}
				if citeTailRE.MatchString(p[ix[1]:]) {
					continue // "Waetzig v. Halliburton …, No. 23-971, slip op. at 4": a cited case's number
				}
				if motionNoRE.MatchString(p[:ix[1]]) {
					continue // "MOTION NO.: M-000828-25": a motion's number in the case, not the case's
				}
				if entryNoRE.MatchString(before) {
					continue // "FILED AT ECF NO. 167-1", "Dkt. No. 45": a docket entry's number, not the case's
				}
				// An agency's docket is its bureau's ("GN Docket No.
				// 14-28", "WC Docket Nos. 17-108, 17-287"): the letters
				// before the label are the number's, not a tribunal
				// below's "W.C." (round 17).
				bureau := ""
				if b := bureauRE.FindStringSubmatch(before); b != nil && strings.HasPrefix(strings.ToLower(strings.TrimSpace(m[0])), "docket") {
					bureau = b[1]
				}
				if m[1] != "" || strings.HasPrefix(strings.TrimSpace(p), "(") || strings.Count(before, "(") > strings.Count(before, ")") || superCtRE.MatchString(before) || bureau == "" && lowerLabelRE.MatchString(before) || otherCourt(before, dc.court) {
					continue // a lower court's number
				}
				mdl := strings.HasPrefix(strings.ToLower(strings.TrimSpace(m[0])), "mdl")
				action := actionLabelRE.FindStringSubmatch(m[0])
				for _, t := range caseTokRE.FindAllString(m[2], -1) {
					if mdl {
						t = "MDL No. " + t // "MDL No. 2641"
					}
					// A district court's number without its type letters
					// ("CIVIL ACTION NO. 2:19-00019 (WOB-CJS)") keeps the
					// label that gives its type, so that it is the civil
					// case's number and not another's (round 18).
					if action != nil && untypedFedRE.MatchString(t) {
						t = strings.Join(strings.Fields(p[ix[0]:ix[4]]), " ") + " " + t
					}
					if bureau != "" {
						t = bureau + " Docket No. " + t
					}
					addCase(t)
				}
			}
			if m := bareCaseRE.FindStringSubmatch(strings.TrimSpace(p)); m != nil && !below {
				addCase(m[1])
			}
			// A state appellate court's number printed without type
			// letters or hyphens, alone on its line with its label ("No.
			// 728440": Washington's Court of Appeals prints "72844-0-I"
			// so, the division's digit run on) (round 20).
			if m := digitCaseLineRE.FindStringSubmatch(strings.TrimSpace(p)); m != nil && !below {
				digitsOK = true
				addCase(m[1])
				digitsOK = false
			}
			// A "Case" or "Civil Action" label with no "No." before a
			// federal or an agency's number: "PETER ROE, Case
			// 3:21-cv-00321-RGJ", "and Case 04-RC-123456" (round 18).
			for _, ix := range bareCaseLabelRE.FindAllStringSubmatchIndex(p, -1) {
				if below || citeTailRE.MatchString(p[ix[1]:]) || lowerLabelRE.MatchString(p[:ix[0]]) || strings.Count(p[:ix[0]], "(") > strings.Count(p[:ix[0]], ")") || otherCourt(p[:ix[0]], dc.court) {
					continue
				}
				addCase(p[ix[4]:ix[5]])
			}
			if m := appDocketRE.FindString(strings.TrimSpace(p)); m != "" && !strings.Contains(p, "(") && !below {
				for _, t := range appTokRE.FindAllString(m, -1) {
					addCase(t)
				}
			}
			// An intermediate appellate court's own number forms that no
			// label rule reads: Minnesota's alone on its line ("A23-0123"),
			// Arizona's with its division's digit and spaces ("No. 1 CA-CR
			// 23-0123") (round 23).
			if appealsCourtRE.MatchString(dc.court) && !below {
				if t := strings.TrimSpace(p); mnAppNoRE.MatchString(t) {
					addCase(t)
				}
				for _, t := range azAppNoRE.FindAllString(p, -1) {
					addCase(t)
				}
			}
			// The Merit Systems Protection Board's docket number, under a
			// "DOCKET NUMBER" label on the line above and beside the
			// appellant's role ("Appellant, DC-0752-20-0123-I-1"): its
			// office, the appeal's type, the year, the sequence, the
			// kind and the filing (round 23).
			if dc.agency && !below {
				for _, t := range mspbNoRE.FindAllString(p, -1) {
					addCase(t)
				}
			}
		}
		if pi > first && len(dc.parties) > 0 && !captionContinues(paras) {
			continue
		}
		rest := paras[start:]
		if len(left) > 0 && start > 0 {
			rest = append(append([]string{}, left...), rest...)
			left = nil
		}
		parseCaption(&dc, rest, pi)
	}
	// A bankruptcy court's official forms name the debtors on "Debtor 1"
	// and "Debtor 2" lines.
	if len(dc.parties) == 0 {
		for pi := 0; pi < len(pages) && pi < formPages; pi++ {
			for _, p := range firstN(strings.Split(pages[pi], "\n"), 12) {
				m := formDebtorRE.FindStringSubmatch(strings.TrimSpace(p))
				if m == nil {
					continue
				}
				name := strings.TrimSpace(formTailRE.ReplaceAllString(m[1], ""))
				if !looksLikeName(name) || formWordRE.MatchString(name) {
					continue
				}
				// Joint debtors on one header line: "Debtor 1 John A Doe &
				// Jane B Doe".
				var joint []string
				if parts := strings.Split(name, " & "); len(parts) == 2 && personishRE.MatchString(strings.TrimSpace(parts[0])) && personishRE.MatchString(strings.TrimSpace(parts[1])) {
					joint = []string{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])}
				} else {
					joint = []string{name}
				}
				for _, jn := range joint {
					for _, n := range splitCleanNames(jn) {
						dc.parties = append(dc.parties, captionParty{name: n, role: RoleOther, capacity: "debtor", page: pi})
					}
				}
			}
			if len(dc.parties) > 0 {
				break
			}
		}
	}
	// A letter names its case on a "Re:" line, after the addresses.
	for pi := 0; pi < len(pages) && pi < reLinePages && dc.title == ""; pi++ {
		paras := strings.Split(pages[pi], "\n")
		for i, p := range paras {
			m := reLineRE.FindStringSubmatch(strings.TrimSpace(p))
			if m == nil && reLabelRE.MatchString(strings.TrimSpace(p)) && i+1 < len(paras) {
				// "Re: Case No. 21-2728" / "John Q. Public v. City of …"
				m = oneLineRE.FindStringSubmatch(strings.TrimSpace(paras[i+1]))
				if m != nil {
					m = []string{m[0], m[1] + " v. " + m[2]}
				}
			}
			if m == nil || len(p) > 200 {
				continue
			}
			parts := strings.SplitN(m[1], " v. ", 2)
			// What follows the name on a Re: line is its number or the
			// letter's text: "Mark Nordlicht, et al., No. 16 Cr. 640".
			parts[1] = reTailRE.ReplaceAllString(parts[1], "")
			a, b := splitNames(parts[0]), splitNames(parts[1])
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			dc.title, dc.titlePage = a[0]+" v. "+b[0], pi
			// A one-word side of a Re: line is a short name ("Barber v.
			// Tumelty, et al."): the parties are the letter's own fuller
			// names for it ("Plaintiff Devon Tyler Barber", "Defendants John
			// W. Tumelty, Esq. and Law Office of John W. Tumelty, Esq."), or
			// none (round 16).
			body := strings.Join(firstN(paras[i+1:], 12), " ")
			for _, n := range fullerNames(a, body, plaintiffWordsRE) {
				dc.parties = append(dc.parties, captionParty{name: n, role: RolePlaintiff, page: pi})
			}
			for _, n := range fullerNames(b, body, defendantWordsRE) {
				dc.parties = append(dc.parties, captionParty{name: n, role: RoleDefendant, page: pi})
			}
			break
		}
	}
	// A court's notice names its case in labelled fields: "Case Caption:
	// NEW JERSEY TURNPIKE VS BARBER DEVON T", "Plaintiff Name: …",
	// "Defendant Name: …". The caption field is the title as the court's
	// system abbreviates it; the name fields, when there, are the parties.
	if dc.title == "" && len(dc.parties) == 0 {
		readLabelledCaption(&dc, pages)
	}
	// Running heads of later pages often carry the case numbers
	// ("Nos. 07-30815 & 08-30818").
	for pi := 1; pi < len(pages) && pi < 3; pi++ {
		head := pages[pi]
		if i := strings.IndexByte(head, '\n'); i >= 0 {
			head = head[:i]
		}
		if len(head) > 80 {
			head = head[:80]
		}
		if m := headCaseRE.FindStringSubmatch(head); m != nil {
			for _, t := range caseTokRE.FindAllString(m[1], -1) {
				addCase(t)
			}
		}
	}
	dc.caseNumbers = dropCaseFragments(dc.caseNumbers)
	dropNonNames(&dc)
	agencyTitle(&dc)
	return dc
}

// agencyTitle titles an agency's caption that names its parties by role
// lines with no "v." between them ("RIVERBEND PACKAGING CO." / "Employer"
// / "and" / "WAREHOUSE WORKERS UNITED" / "Petitioner"), as any caption is
// titled: the first plaintiff's side (the petitioner, the charging party)
// v. the first defendant's (the employer, the respondent), whichever the
// board prints first; of two captions stacked on one paper, the first's
// (round 19).
func agencyTitle(dc *docCaption) {
	if !dc.agency || dc.title != "" {
		return
	}
	var pl, df *captionParty
	for i := range dc.parties {
		p := &dc.parties[i]
		if p.role == RolePlaintiff && pl == nil {
			pl = p
		}
		if p.role == RoleDefendant && df == nil {
			df = p
		}
	}
	if pl != nil && df != nil {
		dc.title, dc.titlePage = pl.name+" v. "+df.name, min(pl.page, df.page)
	}
}

var (
	lowerCourtRE   = regexp.MustCompile(`(?i)^\s*(?:on\s+)?appeal(?:s|ed)?\s+from\b|^\s*certiorari\s+to\b|^\s*on\s+petition\b`)
	appealFromRE   = regexp.MustCompile(`(?i)^\s*(?:on\s+)?appeal(?:s|ed)?\s+from\b`)
	secondCourtRE  = regexp.MustCompile(`(?i)\bunited\s+states\b`)
	letterheadRE   = regexp.MustCompile(`(?i)\b(?:telephone|tel|fax|clerk|phone)\b\.?`)
	courtStartRE   = regexp.MustCompile(`(?i)\b(?:united\s+states|supreme\s+court|(?:superior|circuit|chancery|municipal)\s+court|court\s+of|district\s+court|state\s+of|commonwealth|[a-z]+\s+county)\b`)
	captionStartRE = regexp.MustCompile(`(?i)^(?:nos?\.|in\s+re\b)`)
)

// A state trial court's lines under its name: its county and division
// ("ATLANTIC COUNTY – LAW DIVISION", "LAW DIVISION SPECIAL CIVIL PART",
// "ATLANTIC COUNTY", "CHANCERY DIVISION – FAMILY PART").
var stateCourtContRE = regexp.MustCompile(`(?i)^(?:[a-z.'’]+\s+){1,3}county(?:\s*[-–—,]?\s*(?:[a-z]+\s+){0,2}(?:division|part))*$|^(?:[a-z]+\s+){0,2}(?:division(?:\s*[-–—]\s*(?:law|chancery|family|criminal|civil|general\s+equity|special\s+civil))?|part)(?:\s*[-–—,]?\s*(?:(?:[a-z]+\s+){0,2}(?:division|part)|(?:[a-z.'’]+\s+){1,3}county))*$`)

// splitCourtCont reads a line after a court's name as the name's
// continuation: the whole line, or, in a two-column caption (twoCol), its
// right part after the left column's name ("AUTHORITY, ATLANTIC COUNTY –
// LAW DIVISION" is "AUTHORITY," and "ATLANTIC COUNTY – LAW DIVISION").
// Only a county or division line continues this way; the other
// continuations are read by readCaption's loop.
func splitCourtCont(p string, twoCol bool) (left, right string, ok bool) {
	p = colText(p)
	cont := func(s string) bool { return mostlyCaps(s) && stateCourtContRE.MatchString(s) && !venueDivision(s) }
	if !twoCol {
		return "", p, cont(p)
	}
	f := strings.Fields(p)
	for k := 1; k < len(f); k++ {
		if l := strings.Join(f[:k], " "); strings.HasSuffix(l, ",") && cont(strings.Join(f[k:], " ")) {
			return l, strings.Join(f[k:], " "), true
		}
	}
	return "", p, cont(p)
}

// colText is a caption line without its column rules (":", ")", "§").
func colText(p string) string {
	return strings.Join(strings.Fields(colJunkRE.ReplaceAllString(" "+p+" ", " ")), " ")
}

// courtPrefixLine: a short all-capital line that can begin a court's name.
var (
	captionFieldRE = regexp.MustCompile(`(?i)^(?:case\s+)?caption\s*:\s*(.{2,120}?)\s+(?:v\.?|vs\.?|versus)\s+(.{2,120})$`)
	formPartyRE    = regexp.MustCompile(`(?i)^(plaintiff|defendant|petitioner|respondent)s?\s*/\s*(?:plaintiff|defendant|petitioner|respondent)s?\s*:\s*(\S.{1,120})$`)
	caseBoxRE      = regexp.MustCompile(`(?i)^case\s+number\s*:$`)
	formCaseTokRE  = regexp.MustCompile(`^(?:\d{2}[A-Z]{2,6}\d{4,8}|[A-Z0-9]{1,6}(?:-[A-Z0-9]{1,8}){1,4})$`)
	nameFieldRE    = regexp.MustCompile(`(?i)^(plaintiff|defendant|petitioner|respondent)(?:['’]s)?\s+name\s*:\s*(\S.{1,120})$`)
)

// readLabelledCaption reads a notice's labelled caption fields on its
// first page.
func readLabelledCaption(dc *docCaption, pages []string) {
	if len(pages) == 0 {
		return
	}
	var named []captionParty
	var a, b, formA, formB string
	caseBox := 0
	for _, l := range firstN(strings.Split(pages[0], "\n"), 40) {
		l = strings.TrimSpace(l)
		if m := captionFieldRE.FindStringSubmatch(l); m != nil && a == "" && looksLikeName(m[1]) && looksLikeName(m[2]) {
			a, b = strings.TrimRight(m[1], " ,"), strings.TrimRight(m[2], " ,.")
		}
		// A Judicial Council form's "PLAINTIFF/PETITIONER: …" and
		// "DEFENDANT/RESPONDENT: …" fields (round 16).
		if m := formPartyRE.FindStringSubmatch(l); m != nil {
			if name := strings.TrimRight(etAlRE.ReplaceAllString(m[2], ""), " ,.;"); looksLikeName(name) {
				if isAllCaps(name) {
					name = titleCase(name)
				}
				side := 0
				if r := strings.ToLower(m[1]); r == "defendant" || r == "respondent" {
					side = 1
				}
				role, _ := roleOf(m[1], side)
				if side == 0 && formA == "" {
					formA = name
				} else if side == 1 && formB == "" {
					formB = name
				}
				named = append(named, captionParty{name: name, role: role})
			}
			continue
		}
		// ... and its "CASE NUMBER:" box, the number on a line below.
		if caseBoxRE.MatchString(l) && len(dc.caseNumbers) == 0 {
			caseBox = 3
			continue
		}
		if caseBox > 0 {
			caseBox--
			if f := strings.Fields(l); len(f) > 0 {
				if tok := strings.TrimRight(f[len(f)-1], ".,;"); formCaseTokRE.MatchString(tok) && CaseKey(tok) != "" {
					dc.caseNumbers = append(dc.caseNumbers, tok)
					caseBox = 0
				}
			}
		}
		if m := nameFieldRE.FindStringSubmatch(l); m != nil && looksLikeName(m[2]) {
			side := 0
			if r := strings.ToLower(m[1]); r == "defendant" || r == "respondent" {
				side = 1
			}
			role, capacity := roleOf(m[1], side)
			named = append(named, captionParty{name: strings.TrimRight(m[2], " ,."), role: role, capacity: capacity})
		}
	}
	if a == "" && formA != "" && formB != "" {
		dc.title = formA + " v. " + formB
	}
	if a != "" {
		dc.title = a + " v. " + b
		if len(named) == 0 {
			named = []captionParty{{name: naturalOrder(a, pages), role: RolePlaintiff}, {name: naturalOrder(b, pages), role: RoleDefendant}}
		}
	}
	dc.parties = append(dc.parties, named...)
}

var partyRowRE = regexp.MustCompile(`^(\S.{2,80}?)\s+(?:Plaintiff|Defendant|Petitioner|Respondent)s?$`)

// naturalOrder: a court system's caption field writes a person last name
// first ("BARBER DEVON T"); a row of the notice's party list with the
// same words ("DEVON T BARBER Defendant") gives the name as written.
func naturalOrder(name string, pages []string) string {
	want := wordSet(name)
	for pi := 0; pi < len(pages) && pi < captionPages; pi++ {
		for _, l := range strings.Split(pages[pi], "\n") {
			m := partyRowRE.FindStringSubmatch(strings.TrimSpace(l))
			if m != nil && m[1] != name && sameWords(want, wordSet(m[1])) {
				return m[1]
			}
		}
	}
	return name
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(partyKey(s)) {
		out[w] = true
	}
	return out
}

func sameWords(a, b map[string]bool) bool {
	if len(a) != len(b) || len(a) < 2 {
		return false
	}
	for w := range a {
		if !b[w] {
			return false
		}
	}
	return true
}

// formPages is how many pages are searched for a bankruptcy form's
// "Debtor 1 …" header: a petition's first pages may be a cover sheet and
// forms whose header names no debtor.
const formPages = 12

func courtPrefixLine(p string) bool {
	p = strings.TrimSpace(p)
	return len(p) > 2 && len(p) <= 40 && isHeading(p) && !strings.ContainsAny(p, "0123456789") &&
		!strings.Contains(strings.ToLower(p), "filed") && !stopWordRE.MatchString(p)
}

// captionContinues: a later page starts with another caption (a
// consolidated case's number or "In re"), not with running text.
func captionContinues(paras []string) bool {
	for i, p := range paras {
		if i >= 2 {
			break
		}
		if captionStartRE.MatchString(strings.TrimSpace(p)) {
			return true
		}
	}
	return false
}

const reLinePages = 10

// entryNoRE: a docket entry's number ("ECF No. 167-1", "Dkt. No. 45",
// "Doc. No. 12", "Docket Entry No. 7") beside a caption (round 14).
var entryNoRE = regexp.MustCompile(`(?i)\b(?:ecf|dkt\.?|doc\.|docket\s+entry|entry)\s*$`)

var motionNoRE = regexp.MustCompile(`(?i)\bmotion\s+(?:nos?\.|number|no:)\s*:?\s*\S*$`)

var (
	firmFileRE  = regexp.MustCompile(`(?i)\b(?:our|firm|client|attorneys?['’]?s?|counsel['’]?s?|law\s+firm)\s+(?:file|ref(?:erence)?|matter)\b`)
	firmPhoneRE = regexp.MustCompile(`\(\d{3}\)\s*\d{3}[-.]\d{4}\b|\b\d{3}[-.]\d{3}[-.]\d{4}\b`)
)

// firmFile: the case label at p[from:to] is a law firm's own file or
// matter number ("P: (973) 244-9969 - Our File No.: 4320-73"), named as
// the firm's or on a letterhead line with a telephone number, not the
// court's.
func firmFile(p string, from, to int) bool {
	lo := max(0, from-24)
	return firmFileRE.MatchString(p[lo:to]) || firmPhoneRE.MatchString(p)
}

var (
	plaintiffWordsRE = regexp.MustCompile(`\b(?:Plaintiffs?|Petitioners?)\s+([A-Z][^()“”"]{2,140})`)
	defendantWordsRE = regexp.MustCompile(`\b(?:Defendants?|Respondents?)\s+([A-Z][^()“”"]{2,140})`)
	reEsqRE          = regexp.MustCompile(`,?\s*\bEsq(?:uire)?\b\.?`)
	roleTailCutRE    = regexp.MustCompile(`(?:['’]s\b|\s+(?:in|to|of\s+the|has|have|is|are|was|were|filed|moves?)\s).*$`)
)

// fullerNames replaces each one-word name of a Re: line by the names the
// text after it gives with the side's role word that contain that word
// ("Barber": "Plaintiff Devon Tyler Barber’s"), dropping it when there
// are none; longer names are kept as they are.
func fullerNames(short []string, body string, roleRE *regexp.Regexp) []string {
	var out []string
	for _, n := range short {
		if len(strings.Fields(n)) > 1 {
			out = append(out, n)
			continue
		}
		word := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(strings.Trim(n, " ,.")) + `\b`)
		seen := map[string]bool{}
		for _, m := range roleRE.FindAllStringSubmatch(body, -1) {
			phrase := roleTailCutRE.ReplaceAllString(reEsqRE.ReplaceAllString(m[1], ","), "")
			for _, f := range splitNames(phrase) {
				f = strings.Trim(f, " ,.")
				if len(strings.Fields(f)) > 1 && word.MatchString(f) && looksLikeName(f) && !seen[strings.ToLower(f)] {
					seen[strings.ToLower(f)] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// A number the text labels as something other than this case's (round
// 16): a "File No." in the attorney's block above the court's name (a
// court's own "State File No." comes after it), a licence's number, and a
// number in a citation of another case, followed by its slip opinion, its
// reporter or its court and year.
var (
	fileNoRE    = regexp.MustCompile(`(?i)\bfile\s*(?:nos?\.|numbers?|no:)`)
	licenseNoRE = regexp.MustCompile(`(?i)\b(?:licen[cs]e|registration|permit)\s*#?\s*$`)
	citeTailRE  = regexp.MustCompile(`(?i)^\s*,?\s*(?:slip\s+op\b|\d{4}\s+(?:WL|U\.S\.\s+(?:App\.\s+)?LEXIS)\b|\((?:U\.S\.|[^)]*\b(?:Cir|Dist|App|Ct|Bankr)\.)[^)]*\b(?:19|20)\d{2}\))`)
)

var (
	reLineRE   = regexp.MustCompile(`^(?:RE|Re):?\s+(.{3,150}\s+v\.\s+.{3,150})$`)
	headCaseRE = regexp.MustCompile(`^(?:Nos?\.|Case\s+Nos?\.)\s*((?:\d{2,4}-\d{3,6}(?:-[a-z]{2,3})?(?:\s*(?:,|&|and)\s*)?)+)`)
	orgWordRE  = regexp.MustCompile(`(?i)\b(?:services?|department|bureau|administration|agency|commission|company|corporation|bank|association|board|district|authority|office|university|county|city|states?|republic|government|church|trust|fund|group|partners|holdings)\b`)
)

func isCourtLine(p string) bool {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "(") {
		return false // "(King County Superior Court No. 23-2-09498-1 SEA)": the court below, in parentheses
	}
	if len(p) > 110 || !courtRE.MatchString(p) || strings.Contains(p, " v. ") || lowerCourtRE.MatchString(p) {
		return false
	}
	low := strings.ToLower(p)
	for _, w := range []string{"appeal from", "appeals from", "appealed from", "certiorari", "the court", "this court", "before", "judge", "filed under"} {
		if strings.Contains(low, w) && !(w == "the court" && courtOfRE.MatchString(low)) {
			return false
		}
	}
	return strings.Contains(low, "united states") || strings.Contains(low, "supreme") || strings.Contains(low, "court of") ||
		strings.Contains(low, "superior") || strings.Contains(low, "chancery") || strings.Contains(low, "claims") || strings.Contains(low, "commission") ||
		strings.Contains(low, "family") || strings.Contains(low, "probate") || strings.Contains(low, "municipal") || strings.Contains(low, "common pleas") || strings.Contains(low, "district") ||
		strings.Contains(low, "circuit") || strings.Contains(low, "county") || strings.Contains(low, "state") ||
		strings.Contains(low, "appeals") || strings.Contains(low, "bankruptcy") || strings.Contains(low, "tax") || strings.Contains(low, "board") ||
		strings.Contains(low, "appellate court") // "IN THE APPELLATE COURT" / "OF ILLINOIS" (round 23)
}

// courtPart is a court line without what follows the name on it: a rule,
// a case number, a filing stamp ("FOR THE FIFTH CIRCUIT No. 07-30815").
func courtPart(s string) string {
	return strings.TrimRight(courtTailRE.ReplaceAllString(s, ""), " ")
}

var (
	// ... or the opinion's public-domain citation beside the name
	// ("COLORADO COURT OF APPEALS 2026COA5", "2019 IL App (1st) 181234").
	courtTailRE = regexp.MustCompile(`(?i)\s*(?:[_=~*]{3,}|\s[-–—]\s+e-?courts\b|-{4,}|\bnos?\.\s*:?\s*\S*\d|\b(?:case|docket|civil\s+action)\s+(?:nos?\.|number)|\bfiled\b|\s(?:19|20)\d{2}[ -]?(?:[A-Z][A-Za-z.]{1,6}[ -]?){1,2}(?:\(\w+\)[ -]?)?\d{1,6}\b).*$`)
	courtOfRE   = regexp.MustCompile(`^(?:in\s+)?the\s+court\s+of\b`)
)

func normCourt(s string) string {
	s = formCaseRE.ReplaceAllString(s, "")
	s = limitedTailRE.ReplaceAllString(s, "") // "… COUNTY OF LOS ANGELES - LIMITED": the case's class, not the court's name
	s = strings.ReplaceAll(s, ":", " ")       // a form's "Court for the: District of: Oregon"
	s = letterheadRE.ReplaceAllString(s, " ")
	if loc := courtStartRE.FindStringIndex(s); loc != nil && loc[0] > 0 && len(strings.Fields(inTheRE.ReplaceAllString(s[:loc[0]], ""))) >= 2 && !stateNameRE.MatchString(strings.TrimSpace(inTheRE.ReplaceAllString(s[:loc[0]], ""))) {
		s = s[loc[0]:]
	}
	if locs := secondCourtRE.FindAllStringIndex(s, -1); len(locs) > 1 && strings.Contains(strings.ToLower(s[:locs[1][0]]), "court") {
		s = s[:locs[1][0]]
	}
	s = strings.Join(courtTokens(rejoinSpaced(strings.Fields(s))), " ")
	s = inTheRE.ReplaceAllString(s, "")
	s = strings.TrimRight(s, " ,.")
	return titleCase(s)
}

// courtNameWords are the words of courts' names that a heading printed
// with letter spacing is rejoined to (rejoinSpaced): the court's own words
// and the states' one-word names.
var courtNameWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("court courts appeal appeals appellate state states united america commonwealth district division circuit superior supreme county judicial department tribunal bankruptcy chancery probate family " +
		"alabama alaska arizona arkansas california colorado connecticut delaware florida georgia hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota mississippi missouri montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont virginia washington wisconsin wyoming") {
		m[w] = true
	}
	return m
}()

// rejoinSpaced joins the pieces of a word in capitals that a heading's
// letter spacing split ("ST A TE OF WASHING TON": the text layer breaks the
// spaced letters unevenly) when the pieces joined are a word of a court's
// name, and only then: "NEW JERSEY" or "OF THE" joined is no such word
// (round 20).
func rejoinSpaced(ws []string) []string {
	out := make([]string, 0, len(ws))
	for i := 0; i < len(ws); i++ {
		joined := false
		for k := 4; k >= 2 && !joined; k-- {
			if i+k > len(ws) {
				continue
			}
			w, ok := "", true
			for _, p := range ws[i : i+k] {
				if !capsLettersRE.MatchString(p) {
					ok = false
					break
				}
				w += p
			}
			if ok && courtNameWords[strings.ToLower(w)] {
				out = append(out, w)
				i += k - 1
				joined = true
			}
		}
		if !joined {
			out = append(out, ws[i])
		}
	}
	return out
}

var capsLettersRE = regexp.MustCompile(`^[A-Z]+$`)

// courtTokens drops from a court line's words what no court's name holds
// (round 14): a pleading paper's line number before it ("1 UNITED STATES
// DISTRICT COURT"), and a stamp's or a scan's stray mark beside it
// ("UNITED STATES DISTRICT COURT . W"): lone punctuation, a single
// capital letter other than a roman numeral or "A".
func courtTokens(ws []string) []string {
	out := ws[:0]
	for i, w := range ws {
		if i == 0 && len(ws) > 1 && len(w) <= 2 && strings.Trim(w, "0123456789") == "" {
			continue
		}
		if strings.Trim(w, ".,;:~'’\"") == "" {
			continue
		}
		if r := []rune(w); len(r) == 1 && unicode.IsUpper(r[0]) && !strings.ContainsRune("AIVX", r[0]) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func mostlyCaps(s string) bool {
	up, low := 0, 0
	for _, r := range s {
		if unicode.IsUpper(r) {
			up++
		} else if unicode.IsLower(r) {
			low++
		}
	}
	return up > 2*low
}

// captionLine classifies one preprocessed caption line.
type lineKind int

const (
	lkStop lineKind = iota
	lkName
	lkRole
	lkNameRole
	lkVersus
	lkNameVersus
	lkOneLine
	lkOneLineRoles
	lkInRe
	lkExParte // "Ex parte Joy Vick Graham": the petitioner
	lkDivider
	lkCaseNo
	lkSkip
	lkCont // a lower-case line: the rest of the description of the name above
	lkAnd  // "and" alone on a line: the name above ends, another follows
	// A line of the document's title ("AND AUTHORITIES IN OPPOSITION TO"):
	// beside names still waiting for their role words it is the right
	// column, read past; elsewhere it ends the caption.
	lkTitle
	lkVersusName // "v. ACME CORP.,": the "v." and the first name after it
)

var versusNameRE = regexp.MustCompile(`^(?:[Vv]\.|[Vv][Ss]\.?|VERSUS|[Vv]ersus|AGAINST|-against-)\s+(\S.*)$`)

var (
	colJunkRE = regexp.MustCompile(`[)(§üýþ*>|]+|\s[:X]\s|\s[:X]$|^[:X]\s`)
	caseRefRE = regexp.MustCompile(`(?i)\b(?:d\.\s?c\.\s*)?(?:case|cause|docket|civil\s+action|criminal(?:\s+action)?|civil|index|state\s+file|file|mdl)?\s*(?:nos?\.|no:|number)\s*:?\s*(?:\d{2}\s+BK?\s+\d{4,6}\b|(?:MDL\s+)?(?:[A-Z]{2,4}\s+)?(?:[A-Z]{1,5}-){0,3}[A-Z]{0,3}\d[\w:/–—-]*(?:\s*\([A-Za-z]+(?:\s*[/-]\s*[A-Za-z]+)*\))?)`)
	bareTokRE = regexp.MustCompile(`(?:^|\s)(?:[A-Z]{2,3}-?)?\d{2,4}[-–]\d{3,6}(?:[-–][A-Za-z]{2,4})*(?:\s|$)`)
	// The judges' initials left after a case number: "Case No. 16-CV-6794
	// AB (JCx)" (the parenthesis is gone by then).
	caseRefInitialsRE = regexp.MustCompile(caseRefRE.String() + `(?:\s+[A-Z]{2,3}x?(?:\s|$))?`)
	dcNoRE            = regexp.MustCompile(`(?i)\bd\.\s?c\.\s+no\.?`)
	footnoteOnlyRE    = regexp.MustCompile(`^\d{1,2}$`)
	// Two-column pleading paper puts the document's title, the hearing's
	// date and judge, and the causes of action beside the names:
	// "Plaintiff, PLAINTIFF'S MOTION FOR", "v. PRELIMINARY INJUNCTION",
	// "ACME, INC., a Delaware Date: March 1, 2021", "DOES 1-50, 1.
	// NEGLIGENCE". The left column ends where a name, a role word, a "v."
	// or a "DOES n" ends.
	pluralRE      = regexp.MustCompile(`\(s\)`)
	chapterRE     = regexp.MustCompile(`(?i)^chapter\s+(?:7|9|11|12|13|15)$`)
	titleColRE    = regexp.MustCompile(`^(.*?(?:,|\bv\.|\bvs\.|\bDOES\s+\d+|\b(?:[Pp]laintiffs?|[Dd]efendants?|[Pp]etitioners?|[Rr]espondents?)[.,]?))\s+(?:[A-Z][A-Z.'’]*\s+){0,4}(?:MOTION|INJUNCTION|ORDER|COMPLAINT|JUDGMENT|NOTICE|DECLARATION|MEMORANDUM|STIPULATION|REPLY|OPPOSITION|APPLICATION|PETITION|ANSWER|DEMAND|HEARING|BRIEF|REQUEST|IN\s+SUPPORT|IN\s+OPPOSITION|AUTHORITIES|RECONSIDERATION|OBJECTIONS?)\b.*$`)
	hearingColRE  = regexp.MustCompile(`\s+(?:Date|Time|Judge|Dept|Ctrm|Courtroom|Place|Hearing(?:\s+Date)?|Action\s+Filed|Complaint\s+Filed|Trial\s+Date)\s*:.*$`)
	causeColRE    = regexp.MustCompile(`,\s+\d{1,2}\.\s+[A-Z]{3,}.*$`)
	causeItemRE   = regexp.MustCompile(`^\(?\d{1,2}[.)]\s+[A-Z][A-Z'’,&/ -]{2,60}$`)
	versusCauseRE = regexp.MustCompile(`^\s*((?i:v\.|vs\.?|versus))\s+\(?\d{1,2}[.)]\s+[A-Z][A-Z'’,&/ -]{2,60}$`)
	// The fictitious defendants ("and DOES 1 through 10, inclusive,") and
	// what is left of them on the next line ("through 10,", "10,
	// inclusive,").
	// Also with what they are between the name and the numbers ("JOHN DOE
	// CORRECTIONAL OFFICERS 1-10,", round 16: numbers of three digits at
	// most, not a ZIP code after an address's words).
	doesRE     = regexp.MustCompile(`(?i)\s*;?\s*(?:and\s+)?(?:\b(?:john|jane)\s+does?(?:\s+[a-z]+){0,3}?\s+\d{1,3}\b|(?:\b(?:john|jane)\s+)?\bdoes\s+\d+)(?:\s*(?:through|thru|to|-|–)\s*\d*)?(?:\s*,?\s*inclusive)?[,.]?`)
	doesTailRE = regexp.MustCompile(`(?i)^(?:(?:through|thru|to|-)\s*)?\d{1,4}\s*,?\s*(?:inclusive)?[,.]?$|^(?:through|thru)\b.*$|^inclusive[,.;]?$`)
	rightColRE = regexp.MustCompile(`(?i)\s(?:(?:to\s+)?file\s+under\s+seal|(?:civil|criminal)\s+action|jury\s+trial\s+demanded|judgment|opinion|order|class\s+action|(?:certified\s+|official\s+)?transcript)\s*$`)
	// A state appellate court's own number, a letter and six digits, at
	// the end of a caption line or alone on it, perhaps two of a
	// consolidated appeal: "SCOT BERNSTEIN, C098443", "F086037 & F086187".
	appDocketRE = regexp.MustCompile(`(?:^|\s)([A-Z]\d{6})((?:\s*(?:&|,|and)\s*[A-Z]\d{6})*)\s*$`)
	appTokRE    = regexp.MustCompile(`[A-Z]\d{6}`)
	// The right column's parenthesised notes beside a name or role line,
	// closed or running on to the next line: "Plaintiff and Appellant,
	// (Super. Ct. No.", "Plaintiffs and Respondents, (Consolidated)"; and
	// what is left of one on the next line: "CVCS190001082)".
	parenColRE  = regexp.MustCompile(`\s+\([^()]*\)?\s*$`)
	parenTailRE = regexp.MustCompile(`^[^()\s]+\)$`)
	// ... or in the middle of a line the cleaner joined: "Plaintiff,
	// Cross-defendant and (Super. Ct. No. PC20180264) Respondent,".
	parenNoRE = regexp.MustCompile(`(?i)\s*\([^()]*\bnos?\.[^()]*\)`)
	// A note that opens a line and runs on ("(Super. Ct. No. 34-2019-"),
	// and its end after a caption's words ("v. 00248972-CU-BC-GDS)").
	parenOpenRE = regexp.MustCompile(`^\([^()]*$`)
	parenEndRE  = regexp.MustCompile(`\s+[^()\s]+\)$`)
	// A superior court's number in an appellate caption is the court
	// below's: "(Super. Ct. No. PC20180264)".
	motionColRE  = regexp.MustCompile(`(?i)\s+(?:motion\s+(?:nos?\.|number|filed)|before|judge\s*\(s\)|judges|by)\s*:.*$`)
	blankLabelRE = regexp.MustCompile(`(?i)(?:^|\s+)(?:case|cause|docket|index|civil\s+action|file)\s+(?:nos?\.|number|no:)\s*:?\s*$`)
	actionLineRE = regexp.MustCompile(`(?i)^(?:(?:civil|criminal)\s+action|jury\s+trial\s+demanded|class\s+action)[.:]?$`)
	superCtRE    = regexp.MustCompile(`(?i)\bsuper(?:ior)?\.?\s*ct\.?\s*$`)
)

func prepCaptionLine(p string) (string, bool) {
	p = unspace(p)
	// A footnote's mark set against a name's comma ("HILLTOP TRADING LTD.,
	// et al.,1") is no part of it (round 23).
	p = footMarkRE.ReplaceAllString(p, "$1$2")
	// A union local's "No." ("BOILERMAKERS, LOCAL NO. 18") is the name's,
	// no case label's: kept from the label rules below (round 19).
	p = localNoRE.ReplaceAllStringFunc(p, func(m string) string {
		return strings.Replace(strings.Replace(m, "NO.", "\uE000", 1), "No.", "\uE001", 1)
	})
	// An organisation's initials in parentheses in a name's line in
	// capitals ("… UNION (UGA)", "(SPFPA) AND ITS LOCAL 7") are the
	// name's, kept from the column rules' parentheses (round 19).
	if mostlyCaps(p) {
		p = acronymRE.ReplaceAllString(p, "\uE002$1\uE003")
	}
	// A colon-ruled caption's line: the names are left of the rule, the
	// right column (the number, the judge, the paper's title over
	// several lines) right of it; a line that opens with the rule holds
	// the right column only (round 19).
	rightCase := false
	if t := strings.TrimSpace(p); t == ":" || strings.HasPrefix(t, ": ") {
		return "", caseRefRE.MatchString(t) || bareTokRE.MatchString(t)
	}
	if i := strings.Index(p, " : "); i > 0 && strings.TrimSpace(p[:i]) != "" {
		right := p[i+3:]
		rightCase = caseRefRE.MatchString(right) || bareTokRE.MatchString(right) || bareCaseLabelRE.MatchString(" "+right)
		p = p[:i]
	}
	p, hadCase := prepCaptionLine1(p)
	hadCase = hadCase || rightCase
	return strings.NewReplacer("\uE000", "NO.", "\uE001", "No.", "\uE002", "(", "\uE003", ")").Replace(p), hadCase
}

// dateLineRE: a date alone on a caption's line; trialCourtLineRE: a court
// below named alone on its line, a county's or place's trial court
// (round 23).
var (
	dateLineRE       = regexp.MustCompile(`^(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{1,2},\s+\d{4}$`)
	trialCourtLineRE = regexp.MustCompile(`^(?:[A-Z][a-z.'’]+\s+){1,3}(?:County\s+)?(?:Circuit|District|Superior|Probate|Family|Juvenile|Municipal|Common\s+Pleas)\s+Court$`)
)

// footMarkRE: a footnote's digits set against a comma after a word
// (round 23).
var footMarkRE = regexp.MustCompile(`(\pL\.?,)\d{1,2}(\s|$)`)

// acronymRE: initials in parentheses (round 19).
var acronymRE = regexp.MustCompile(`\(([A-Z]{2,6})\)`)

// cityStateRE: a city in title case and a state's postal letters (round
// 19).
var cityStateRE = regexp.MustCompile(`^[A-Z][a-z.'’-]+(?:\s+[A-Z][a-z.'’-]+){0,2},\s*(?:AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|PR|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY)\.?$`)

// acronymTailRE: an organisation's initials in parentheses ending a line
// ("(UGA)", "(SPFPA)"), round 19.
var acronymTailRE = regexp.MustCompile(`\s\([A-Z]{2,6}\)[,;]?\s*$`)

// dotRailRE: a stop alone between spaces, a transcript caption's column
// rule (round 19).
var dotRailRE = regexp.MustCompile(`(?:^|\s)\.(?:\s|$)`)

// localNoRE: a union local's number with its "No." (round 19).
var localNoRE = regexp.MustCompile(`\b(?:LOCAL|Local|LODGE|Lodge)(?:\s+(?:UNION|Union|LODGE|Lodge))?\s+(?:NO|No)\.\s*\d+\b`)

func prepCaptionLine1(p string) (string, bool) {
	p = bureauLabelRE.ReplaceAllString(p, "$1") // "WC Docket No. 17-108": the bureau's letters go with the number
	// A party's description in parentheses and an alias are no part of
	// its name: "MUI LIANG TJOA (an individual)", "NG CHER YONG aka CY NG";
	// a description opened at a line's end ends the name there ("TJOA
	// (an" / "individual); …").
	p = descParenRE.ReplaceAllString(p, "")
	p = akaRE.ReplaceAllString(p, "")
	p = descOpenRE.ReplaceAllString(p, ",")
	p = descCloseRE.ReplaceAllString(p, "")
	if labelLineRE.MatchString(strings.TrimSpace(p)) {
		return "", false // "Date Action Filed: July 23, 2019": the right column's field alone on its line
	}
	if lowerNoInlineRE.MatchString(strings.TrimSpace(p)) {
		return "", false // "Industrial Claim Appeals Office of the State of Colorado WC No. 5-123-456": the tribunal below
	}
	if t := strings.TrimSpace(p); strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") || strings.HasPrefix(t, "[") || footnoteOnlyRE.MatchString(t) || parenTailRE.MatchString(t) || parenOpenRE.MatchString(t) {
		return "", false
	}
	if !strings.Contains(p, "(") {
		// The court below's number closing a parenthesis opened on the
		// line above ("Plaintiff and Appellant, (Los Angeles County" /
		// "Super. Ct. No. 21STCV12345)"), alone or in the right column.
		if q := superCtCloseRE.ReplaceAllString(p, ""); q != p {
			if strings.TrimSpace(q) == "" {
				return "", false
			}
			p = q
		}
		p = parenEndRE.ReplaceAllString(p, "")
	}
	if t := strings.TrimSpace(p); appDocketRE.MatchString(t) {
		if m := appDocketRE.FindStringSubmatchIndex(t); m[0] == 0 {
			return "", false // the number alone: read by readCaption
		}
		p = appDocketRE.ReplaceAllString(t, "")
	}
	if q := parenNoRE.ReplaceAllString(p, " "); strings.TrimSpace(q) != "" {
		p = q
	}
	// (A name's own initials in parentheses at its line's end,
	// "INTERNATIONAL UNION (UGA)", are the name's: round 19.)
	if q := parenColRE.ReplaceAllString(p, ""); strings.TrimSpace(q) != "" && !(acronymTailRE.MatchString(p) && mostlyCaps(q)) {
		p = q
	}
	p = pluralRE.ReplaceAllString(p, "s") // "Debtor(s)"
	if chapterRE.MatchString(strings.TrimSpace(colJunkRE.ReplaceAllString(p, " "))) {
		return "", false // a bankruptcy caption's "Chapter 11" beside the debtor
	}
	// An order-on-motion form's right column: "MOTION NO.: …", "BEFORE:
	// PART F", "JUDGE(S): …", "BY: …" beside the names.
	p = motionColRE.ReplaceAllString(p, "")
	// Michigan's Court of Appeals prints the opinion's date in the right
	// column under the first name ("PEOPLE OF THE STATE OF MICHIGAN,
	// UNPUBLISHED" / "March 14, 2024"): no name's words (round 23).
	if dateLineRE.MatchString(strings.TrimSpace(p)) {
		return "", false
	}
	hadCase := caseRefRE.MatchString(p) || bareTokRE.MatchString(p)
	// The right column's labels with nothing after them: a docket number
	// left blank for the clerk ("v. DOCKET NO.:"), the kind of action
	// alone on its line ("CIVIL ACTION").
	p = blankLabelRE.ReplaceAllString(p, "")
	if actionLineRE.MatchString(strings.TrimSpace(p)) {
		return "", hadCase
	}
	if q := bareCaseLabelRE.ReplaceAllString(p, " "); q != p {
		p, hadCase = q, true // "PETER ROE, Case 3:21-cv-00321-RGJ": the right column's number (round 18)
	}
	// A court reporter's caption rules its columns with stops (" . "):
	// "MARY ROE, et al., . Docket No. 20-CV-44", ". At Covington,
	// Kentucky", "Defendant. ."; read as a ruled caption (round 19). An
	// ellipsis is no rule.
	if !strings.Contains(p, ". . .") {
		p = dotRailRE.ReplaceAllString(p, " ) ")
	}
	p = leftColumn(p)
	p = caseRefInitialsRE.ReplaceAllString(p, " ")
	p = bareTokRE.ReplaceAllString(p, " ")
	p = dcNoRE.ReplaceAllString(p, " ")
	p = colJunkRE.ReplaceAllString(p, " ")
	p = rightColRE.ReplaceAllString(p, "")
	p = hearingColRE.ReplaceAllString(p, "")
	p = reDocketColRE.ReplaceAllString(p, "")
	p = semiTitleRE.ReplaceAllString(p, "$1")
	p = possessiveTailRE.ReplaceAllString(p, "$1")
	p = etAlColumn(p)
	p = judgeColRE.ReplaceAllString(p, "")
	if loc := judgeNameColRE.FindStringIndex(p); loc != nil && mostlyCaps(p[:loc[0]]) {
		p = p[:loc[0]] // "ACME CANADA, INC., and ACMETEC Judge John A. Doe": the right column's judge
	}
	if m := titleColRE.FindStringSubmatch(p); m != nil {
		p = m[1]
	}
	// A company's name, its suffix and comma, then the right column's
	// title words ("SOUTHWEST AIRLINES CO., UNDER SEAL PURSUANT TO THIS"):
	// the name ends at the comma.
	if m := suffixTitleRE.FindStringSubmatch(p); m != nil && mostlyCaps(m[2]) && titleFragRE.MatchString(m[2]) && !strings.Contains(m[2], ",") {
		p = m[1]
	}
	// A role line the right column's title in capitals follows
	// ("Plaintiff, PLAINTIFF ACME TECHNOLOGIES"): the role ends at its
	// comma.
	if m := roleBesideCapsRE.FindStringSubmatch(p); m != nil && mostlyCaps(m[2]) && !roleOnlyRE.MatchString(m[2]) {
		p = m[1]
	}
	p = causeColRE.ReplaceAllString(p, ",")
	// The causes of action the right column lists in capitals, alone on a
	// line or beside the "vs." ("vs. 1. ACCOUNT STATED", "2. OPEN BOOK
	// ACCOUNT"): no name (round 16).
	if causeItemRE.MatchString(strings.TrimSpace(colJunkRE.ReplaceAllString(p, " "))) {
		return "", hadCase
	}
	p = versusCauseRE.ReplaceAllString(p, "$1")
	p = doesRE.ReplaceAllString(p, "")
	if doesTailRE.MatchString(strings.TrimSpace(p)) {
		return "", hadCase
	}
	p = strings.Join(strings.Fields(p), " ")
	p = strings.Trim(p, " -–—")
	if p == ":" || p == "X" {
		p = "" // a colon-ruled column's empty line
	}
	return p, hadCase
}

func classify(p string) lineKind {
	switch {
	case p == "":
		return lkSkip
	case dividerRE.MatchString(p):
		return lkDivider
	case judgeLineRE.MatchString(p) || placeLineRE.MatchString(p) && !publicBodyRE.MatchString(p) || venueDivision(p) && compassDivRE.MatchString(p):
		// (A division named for a place is read with the court's lines,
		// right after them: elsewhere "CONSUMER PROTECTION DIVISION" can
		// be a party.)
		return lkSkip
	case trialCourtLineRE.MatchString(p):
		// An appellate caption's right column names the court below
		// ("Wayne Circuit Court", "Hennepin County District Court"):
		// no party and no stop (round 23).
		return lkSkip
	case isVersusWord(p):
		return lkVersus
	case roleOnlyRE.MatchString(p) || subjectDescRE.MatchString(p):
		return lkRole
	case isCourtLine(p) || courtContRE.MatchString(p) || atPlaceRE.MatchString(p):
		return lkStop
	case strings.EqualFold(strings.Trim(p, " ,"), "and") || p == "&":
		return lkAnd // between two parties on one side
	}
	if m := inReRE.FindStringSubmatch(p); m != nil {
		return lkInRe
	}
	if m := exParteRE.FindStringSubmatch(p); m != nil && looksLikeName(m[1]) {
		return lkExParte
	}
	if reLabelRE.MatchString(p) {
		return lkStop // a letter's "Re:" line: read on its own (readCaption)
	}
	if m := oneLineRolesRE.FindStringSubmatch(p); m != nil && looksLikeName(m[1]) && looksLikeName(firstPart(m[3])) {
		return lkOneLineRoles
	}
	if counselRE.MatchString(p) && !firmPartyLine(p) || appearanceRE.MatchString(p) {
		return lkStop
	}
	// (A name in a caption ends in a comma, "THE APPLICATION GROUP, INC.,";
	// a title's line does not.)
	if titleFragRE.MatchString(p) && mostlyCaps(p) && !strings.HasSuffix(p, ",") && (!roleWordRE.MatchString(p) || possessiveRoleRE.MatchString(p)) {
		return lkTitle
	}
	if m := nameRoleRE.FindStringSubmatch(p); m != nil && looksLikeName(m[1]) {
		return lkNameRole
	}
	if m := versusNameRE.FindStringSubmatch(p); m != nil && (possessiveWordRE.MatchString(m[1]) || suffixPossessiveRE.MatchString(m[1])) {
		return lkVersus // "v. COURT’S ORDER …": the right column's title beside the "v."
	}
	if m := versusNameRE.FindStringSubmatch(p); m != nil && looksLikeName(m[1]) && !oneLineRE.MatchString(m[1]) {
		return lkVersusName
	}
	if m := nameVersusRE.FindStringSubmatch(p); m != nil && looksLikeName(m[1]) {
		return lkNameVersus
	}
	if m := oneLineRE.FindStringSubmatch(p); m != nil && looksLikeName(m[1]) && looksLikeName(firstPart(m[2])) {
		return lkOneLine
	}
	if looksLikeName(p) {
		return lkName
	}
	// A name whose trade name or alias runs on to the next line
	// ("HILLTOP MEDIA LLC d/b/a" / "THE HILLTOP COURIER,"), round 19.
	if loc := tradeTailRE.FindStringIndex(p); loc != nil && loc[0] > 0 && looksLikeName(p[:loc[0]]) {
		return lkName
	}
	if r, _ := utf8.DecodeRuneInString(p); unicode.IsLower(r) && len(p) < 120 && !brandCase(p) {
		return lkCont
	}
	return lkStop
}

func isVersusWord(s string) bool {
	switch strings.ToLower(strings.Trim(s, " -–—:")) {
	case "v", "v.", "vs", "vs.", "versus", "against", "v.–", "–v.":
		return true
	}
	return false
}

func firstPart(s string) string {
	if i := strings.IndexAny(s, ",;"); i > 0 {
		return s[:i]
	}
	return s
}

// looksLikeName: a short line, mostly letters, whose words (before any
// comma) are capitalised, and that says none of the words of a title,
// heading or court line.
func looksLikeName(s string) bool {
	s = strings.TrimSpace(s)
	limit := 170
	if strings.Contains(s, ";") {
		limit = 400 // a list of names
	}
	if len(s) < 2 || len(s) > limit || stopWordRE.MatchString(firstPart(s)) {
		return false
	}
	letters, other := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == ' ' || r == '.' || r == ',' || r == '\'' || r == '’' || r == '&' || r == '-' || r == ';':
		default:
			other++
		}
	}
	if letters < 2 || other*4 > letters {
		return false
	}
	words := strings.Fields(firstPart(s))
	caps := 0
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if acronymRE.MatchString(w) {
			r = 'A' // a name's initials in parentheses, "(UGA)" (round 19)
		}
		if unicode.IsUpper(r) || unicode.IsDigit(r) || brandCase(w) || connector[strings.ToLower(strings.Trim(w, ".,"))] {
			caps++
		}
	}
	return caps*10 >= len(words)*8
}

// brandCase reports whether s begins with a word written with a small
// first letter before capitals, as brands write their names ("nVISION",
// "eBay", "iRobot"): a name's word, not a description's.
func brandCase(s string) bool {
	r := []rune(s)
	return len(r) >= 3 && unicode.IsLower(r[0]) && unicode.IsUpper(r[1]) && unicode.IsLetter(r[2])
}

var connector = map[string]bool{"of": true, "and": true, "the": true, "for": true, "in": true, "&": true, "et": true, "al": true, "de": true, "la": true, "du": true, "von": true, "van": true, "a": true, "an": true, "on": true, "ex": true, "rel": true}

// parseCaption reads parties (and the title) from the lines after the
// court: names, each followed by its role words, sides split by "v.".
func parseCaption(dc *docCaption, paras []string, page int) {
	paras = guardianLines(paras)
	side := 0 // 0 before "v.", 1 after
	var pending []string
	var sideNames [2][]string
	sawVersus := false
	inRe := false // an "In re:" line whose subject follows on the next lines
	// inReDone: an "In re" subject has been named with its role words; the
	// next line that is no name ends the caption (a transcript's
	// appearances follow).
	inReDone := false
	// roled: the side after the "v." has had its role words, so the
	// caption's last party is named; a name-like line after it with no
	// role words of its own is the text's first sentence ("Andrea Zack
	// sued Peter Stickells, …"), not a party.
	roled := false
	var emit func(names []string, roles string)
	emitRoleless := func(names []string) {
		if !roled {
			emit(names, "")
		}
	}
	// sinceVersus: the names read after the last "v." (a second caption's
	// "v." starts again from none).
	sinceVersus := 0
	emit = func(names []string, roles string) {
		if side == 1 && roles != "" {
			roled = true
		}
		split := splitNames(joinNameLines(names))
		// Under an agency's singular role line ("Petitioner", "Employer",
		// "Intervenor/Union") the block above is one party's name, its
		// commas its own ("SECURITY, POLICE AND FIRE PROFESSIONALS OF
		// AMERICA"); names the board joins by "and" lines stay apart
		// (round 19).
		if dc.agency && len(split) > 1 && singularAgencyRoleRE.MatchString(strings.TrimSpace(roles)) && !strings.Contains(joinNameLines(names), ";") {
			if one := oneAgencyName(joinNameLines(names)); one != "" {
				split = []string{one}
			}
		}
		for _, n := range split {
			if side == 1 {
				sinceVersus++
			}
			// An agency's "In the Matter of" over names with role lines
			// ("CITY OF RIVERBEND," / "Employer," / "and" / "…" /
			// "Petitioner."): the parties of a case between them, not a
			// subject (round 19).
			if inRe && dc.agency && roles != "" {
				if r, _ := agencyRole(roles, RoleOther, ""); r != RoleOther {
					inRe = false
				}
			}
			role, capacity := roleOf(roles, side)
			if dc.agency {
				role, capacity = agencyRole(roles, role, capacity)
			}
			if inRe {
				inReDone = true
				role, capacity = RoleOther, "subject"
				if dc.title == "" {
					dc.title, dc.titlePage = "In re: "+n, page
				}
				if topicSubject(dc, n) {
					continue // a proceeding's topic, no party (round 17)
				}
			}
			dc.parties = append(dc.parties, captionParty{name: n, role: role, capacity: capacity, page: page})
			sideNames[side] = append(sideNames[side], n)
		}
	}
	finishTitle := func() {
		if dc.title == "" && len(sideNames[0]) > 0 && len(sideNames[1]) > 0 {
			dc.title, dc.titlePage = sideNames[0][0]+" v. "+sideNames[1][0], page
		}
	}
	// boardOrder: a labor board's caption that prints its names with no
	// role lines, joined by "and" lines ("RIVERBEND PACKAGING CO." / "and"
	// / "MARY ROE" / "and" / "WAREHOUSE WORKERS UNITED"): the board prints
	// the employer first, the petitioner next and any other party after
	// them; the paper's title in capitals under them is no name (round
	// 19).
	boardOrder := func() {
		if !dc.agency || side != 0 || sawVersus || inRe || inReDone || len(dc.parties) > 0 || len(pending) < 2 || !strings.Contains(strings.Join(pending, "\n"), ";") {
			return
		}
		ls := pending
		for len(ls) > 0 && boardPaperRE.MatchString(ls[len(ls)-1]) && !strings.ContainsAny(ls[len(ls)-1], ",;") {
			ls = ls[:len(ls)-1]
		}
		names := splitNames(joinNameLines(ls))
		if len(names) < 2 {
			return
		}
		for ni, n := range names {
			role, capacity := RoleOther, ""
			switch ni {
			case 0:
				role, capacity = RoleDefendant, "employer"
			case 1:
				role, capacity = RolePlaintiff, "petitioner"
			}
			dc.parties = append(dc.parties, captionParty{name: n, role: role, capacity: capacity, page: page})
		}
	}
	stops := 0
	prepped := make([]string, len(paras))
	kinds := make([]lineKind, len(paras))
	for i, raw := range paras {
		p, hadCase := prepCaptionLine(raw)
		prepped[i], kinds[i] = p, classify(p)
		if hadCase && kinds[i] == lkSkip {
			kinds[i] = lkCaseNo
		}
		// A labor board's role lines under the names ("Union",
		// "Intervenor/Union", "Charging Party"), in an agency's caption
		// only: elsewhere "Union" can end a name's line (round 19).
		if dc.agency && (laborRoleRE.MatchString(strings.TrimSpace(p)) || compoundRoleRE.MatchString(strings.TrimSpace(p))) {
			kinds[i] = lkRole
		}
		// The place where an agency's case arose, its city and state's
		// postal letters ("Montgomeryville, PA", "Tiffin, OH"), is no
		// party's line (round 19).
		if dc.agency && cityStateRE.MatchString(strings.TrimSpace(p)) {
			kinds[i] = lkSkip
		}
	}
	// Names in capitals joined by ";" beside the right column's title
	// that runs on from the lines above them ("LTD.; XINGLE ELECTRONICS
	// REPORT OF DEFENDANTS’", "SINCOO ELECTRONICS TECHNOLOGY AND ADRIAN
	// FLEISSIG FROM", "MUI LIANG TJOA (an TESTIFYING AT TRIAL"): the line's
	// tail from the title's words on is the right column's, and the names
	// run on over the lines (round 20).
	titleSeen := false
	for i, raw := range paras {
		switch kinds[i] {
		case lkTitle:
			titleSeen = true
			continue
		case lkName:
		default:
			continue
		}
		semi := strings.Contains(raw, ";") || i > 0 && strings.Contains(paras[i-1], ";") || i+1 < len(paras) && strings.Contains(paras[i+1], ";")
		if !titleSeen || !semi || !mostlyCaps(raw) {
			continue
		}
		if loc := titleColTailRE.FindStringIndex(raw); loc != nil && loc[0] > 0 {
			p, _ := prepCaptionLine(raw[:loc[0]])
			prepped[i], kinds[i] = p, classify(p)
		}
	}
	// A title cut from a name's line that ends in a word wanting more
	// ("MARY ROE, individually, STIPULATION AND ORDER RE") runs on to the
	// next line in capitals without a comma ("BODY-WORN CAMERA FOOTAGE"):
	// the title's, no name.
	for i := 0; i+1 < len(paras); i++ {
		raw := strings.TrimSpace(paras[i])
		// (Not from a colon-ruled line that holds the right column only,
		// ": RECONSIDERATION, AND FOR": the title runs on in the right
		// column, beside the next name, round 19.)
		if titleTailRE.MatchString(raw) && titleFragRE.MatchString(raw) && strings.TrimSpace(prepped[i]) != raw && !ruledOnly(raw) && kinds[i+1] == lkName {
			next := strings.TrimSpace(prepped[i+1])
			if mostlyCaps(next) && !strings.HasSuffix(next, ",") && !strings.HasSuffix(next, ";") && !roleWordRE.MatchString(next) {
				kinds[i+1] = lkSkip
			}
		}
	}
	// An alias that runs on to the next line ("and LIEW YEW SOON aka" /
	// "MARK LIEW (an individual),"): the name ends before it, and the
	// next line's name is the alias.
	for i := 0; i+1 < len(paras); i++ {
		if t, ok := strings.CutSuffix(prepped[i], " aka"); ok && (kinds[i] == lkName || kinds[i] == lkCont) {
			prepped[i], kinds[i] = t+",", classify(t+",")
			if next := strings.TrimRight(prepped[i+1], " ,;"); kinds[i+1] == lkName && isAllCaps(next) && !strings.ContainsAny(next, ",;") {
				kinds[i+1] = lkSkip
			}
		}
	}
	// A name line that opens with a parenthesis is the middle of a name
	// ("XINGLE ELECTRONICS" / "(DONGGUAN) CO., LTD.; …"): after a line
	// whose names all ended (";"), its start belongs to a name the right
	// column's words took the rest of, and is no name of its own.
	for i := 1; i < len(paras); i++ {
		if kinds[i] != lkName || !strings.HasPrefix(strings.TrimSpace(paras[i]), "(") || !strings.HasSuffix(strings.TrimSpace(prepped[i-1]), ";") {
			continue
		}
		if _, rest, ok := strings.Cut(prepped[i], ";"); ok && strings.TrimSpace(rest) != "" {
			prepped[i], kinds[i] = strings.TrimSpace(rest), classify(strings.TrimSpace(rest))
		} else {
			kinds[i] = lkSkip
		}
	}
	// Role words that run over lines ("Plaintiff and Counter-" /
	// "Defendant,"; "Defendant, Counter-" / "Claimant, and Third Party" /
	// "Plaintiff."): one role line, on the last of them.
	for i := 0; i+1 < len(paras); i++ {
		cur, next := strings.TrimSpace(prepped[i]), strings.TrimSpace(prepped[i+1])
		if !roleHeadRE.MatchString(cur) || !(roleOnlyRE.MatchString(next) || roleHeadRE.MatchString(next)) {
			continue
		}
		sep := " "
		if roleHyphenRE.MatchString(cur) {
			sep = "-" // the hyphen the line's end took away: "Counter-" / "Defendant,"
		}
		prepped[i+1] = cur + sep + next
		kinds[i], kinds[i+1] = lkSkip, classify(prepped[i+1])
	}
	// A line of the right column's title that ends in a word wanting
	// more ("FILE CONDITIONALLY UNDER", "JUDGMENT AND SUPPORTING") or in
	// a possessive ("SEAL ACME FOODS INC.’S"), or holding a company's
	// suffix in the possessive: no name ends so. (A line
	// with a comma holds a name the title's words follow: "INC., A
	// FOREIGN CORPORATION, DEFENDANT ACME, INC.’S".)
	for i := range paras {
		if kinds[i] == lkName && (titleOpenRE.MatchString(prepped[i]) || suffixPossessiveRE.MatchString(prepped[i])) && mostlyCaps(prepped[i]) && !strings.Contains(prepped[i], ",") {
			kinds[i] = lkTitle
		}
	}
	// The right column's title run on past the "v." on lines of its own,
	// above the next side's name ("v. ORDER AUTHORIZING ALTERNATIVE" /
	// "SERVICE" / "JOHN DOE, ET AL.,"; "ORDER AUTHORIZING EXPEDITED" /
	// "v." / "DISCOVERY AND ALTERNATIVE" / "SERVICE OF PROCESS" / "JOHN
	// DOE,"): while a title is open (a title line, or a line the title's
	// words were cut from, since the last name), a line in capitals
	// without a comma whose every word is a motion's or an order's is the
	// title's, no name (round 21).
	titleOpen := false
	for i := range paras {
		raw, p := strings.TrimSpace(paras[i]), strings.TrimSpace(prepped[i])
		switch kinds[i] {
		case lkTitle:
			titleOpen = true
		case lkName:
			if titleOpen && titleWordsOnly(p) {
				kinds[i] = lkSkip
				continue
			}
			titleOpen = false
		case lkNameRole, lkNameVersus, lkVersusName, lkOneLine, lkOneLineRoles, lkStop:
			titleOpen = false
		}
		if titleFragRE.MatchString(raw) && !titleFragRE.MatchString(p) {
			titleOpen = true // "Plaintiff, PLAINTIFF’S EX PARTE MOTION TO": the title cut from the line
		}
	}
	// The tribunal below and its number above the names ("Industrial
	// Claim Appeals Office of the State of Colorado" / "WC No.
	// 5-123-456"): no name, no case of this court.
	for i := 0; i+1 < len(paras); i++ {
		if lowerNoLineRE.MatchString(strings.TrimSpace(paras[i+1])) && (kinds[i] == lkName || kinds[i] == lkStop) {
			kinds[i], kinds[i+1] = lkSkip, lkSkip
		}
	}
	// A scanned caption's OCR layer reads a clerk's RECEIVED stamp into
	// the caption's lines (", ,, RECEIVED", ". P-", ",~ lt-~ SEP O2 202J",
	// a "V" with a stray mark after it): such debris, where it would end
	// the caption, is read past, and the "v." kept (round 16).
	for i := range kinds {
		if kinds[i] != lkStop {
			continue
		}
		if p := strings.TrimSpace(prepped[i]); versusDebrisRE.MatchString(p) {
			prepped[i], kinds[i] = "v.", lkVersus
		} else if scanDebris(p) {
			kinds[i] = lkSkip
		}
	}
	// roleAhead: role words follow within a few lines, so the names above
	// them are not yet complete.
	roleAhead := func(i int) bool {
		for j := i + 1; j < len(kinds) && j <= i+8; j++ {
			switch kinds[j] {
			case lkRole, lkNameRole:
				return true
			case lkVersus, lkNameVersus, lkVersusName, lkStop:
				return false
			}
		}
		return false
	}
	// versusAhead: a "v." follows within a few lines, so an "In the
	// Matter of the Application of X" names the first side of an
	// adversary caption, not a subject ("… X, Petitioner, -against- Y").
	versusAhead := func(i int) bool {
		for j := i + 1; j < len(kinds) && j <= i+6; j++ {
			switch kinds[j] {
			case lkVersus, lkNameVersus, lkVersusName:
				return true
			case lkNameRole:
				if m := nameRoleRE.FindStringSubmatch(prepped[j]); m != nil && m[3] != "" {
					return true
				}
			case lkStop:
				return false
			}
		}
		return false
	}
	titleRun := false // the line before was a title line ending "… OF"
	for i := range paras {
		p, k := prepped[i], kinds[i]
		// A title line ending "… OF" runs on to the next name-like line
		// without a comma ("DECLARATION AND TESTIMONY OF" / "SCOTT J.
		// WITT"); a line ending in a comma is the left column's name
		// ("COMPANY,"), read between them.
		if titleRun && k == lkName && strings.HasSuffix(p, ",") {
			pending = append(pending, p)
			continue
		}
		if k == lkTitle || titleRun && k == lkName {
			waiting := len(pending) > 0 || sawVersus && !roled
			if waiting && roleAhead(i) {
				titleRun = danglingRE.MatchString(" "+p) || titleRunOnRE.MatchString(p)
				continue // the right column's title, between a name and its role
			}
			if k == lkTitle {
				k = lkStop
			}
		}
		// Under a rulemaking's topic in title case, the order's title in
		// capitals ("Restoring Internet Freedom" / "DECLARATORY RULING,
		// REPORT AND ORDER, AND ORDER") ends the caption, whatever its
		// commas make of it (round 17).
		if k == lkName && dc.agency && inRe && !inReDone && side == 0 && len(pending) > 0 && isHeading(strings.TrimSpace(paras[i])) && !mostlyCaps(strings.Join(pending, " ")) {
			k = lkStop
		}
		if k != lkSkip {
			titleRun = false
		}
		// A court named right after the "v." is a party: a writ's
		// respondent ("v. / THE SUPERIOR COURT OF KINGS / COUNTY, /
		// Respondent;").
		// (Also after the "v." of a second caption, a writ's beside the
		// appeal's: "DOLGEN …, Petitioner, F089171" / "v." / "THE SUPERIOR
		// COURT OF KERN COUNTY," / "Respondent;", round 17.)
		if k == lkStop && sawVersus && side == 1 && len(pending) == 0 && sinceVersus == 0 && isCourtLine(p) && !strings.Contains(p, ":") {
			k = lkName
		}
		switch k {
		case lkSkip:
			continue
		case lkAnd:
			if len(pending) > 0 {
				pending[len(pending)-1] += ";"
			}
		case lkCaseNo:
			// A number in the right column beside names still waiting for
			// their role words, or just after the "v.", does not end the
			// caption ("UNITED STATES OF AMERICA, ) / ) CR-18-00258 /
			// PLAINTIFF, )").
			if !sawVersus && len(pending) > 0 || sawVersus && len(pending) == 0 && len(sideNames[1]) == 0 {
				continue
			}
			if len(pending) > 0 && side == 1 {
				emitRoleless(pending)
			}
			pending = nil
			finishTitle()
			if sawVersus {
				side, sawVersus, roled = 0, false, false
			}
		case lkDivider:
			if len(pending) > 0 && side == 1 {
				emitRoleless(pending)
				pending = nil
			}
		case lkCont:
			if len(pending) == 0 {
				continue
			}
			pending = append(pending, p)
		case lkName:
			pending = append(pending, p)
			if len(pending) > 8 {
				pending = pending[len(pending)-8:]
			}
		case lkRole:
			// A caption whose text lost its "v." (an OCR layer): a
			// defendant's role words after a plaintiff's begin the other
			// side.
			// (Not in an agency's caption, whose role lines name each
			// party with no "v.", an employer's after a petitioner's in a
			// second caption stacked under the first: round 19.)
			if side == 0 && !sawVersus && !dc.agency && len(pending) > 0 && len(sideNames[0]) > 0 {
				if r, _ := roleOf(p, 0); r == RoleDefendant && plaintiffNamed(dc.parties) {
					side, sawVersus = 1, true
				}
			}
			if len(pending) > 0 {
				emit(pending, p)
				pending = nil
				inRe = false
			}
			// The "v." the cleaning joined to the role line, after the
			// right column ("Plaintiffs, ) STIPULATED ORDER v. )"): the
			// other side follows.
			if side == 0 && versusTailRE.MatchString(paras[i]) {
				side, sawVersus = 1, true
			}
		case lkNameRole:
			m := nameRoleRE.FindStringSubmatch(p)
			emit(append(pending, m[1]), m[2])
			pending = nil
			if m[3] != "" {
				side, sawVersus = 1, true
			}
		case lkVersus, lkNameVersus, lkVersusName:
			if k == lkNameVersus {
				pending = append(pending, nameVersusRE.FindStringSubmatch(p)[1])
			}
			if len(pending) > 0 {
				emit(pending, "")
				pending = nil
			}
			side, sawVersus, sinceVersus = 1, true, 0
			if k == lkVersusName {
				rest := versusNameRE.FindStringSubmatch(p)[1]
				if m := nameRoleRE.FindStringSubmatch(rest); m != nil && looksLikeName(m[1]) {
					emit([]string{m[1]}, m[2]) // "vs. ACME CORP., et al., Defendants."
				} else {
					pending = append(pending, rest)
				}
			}
		case lkOneLine:
			if page > 0 {
				continue
			}
			m := oneLineRE.FindStringSubmatch(p)
			side = 0
			emit([]string{m[1]}, "")
			side = 1
			emit([]string{m[2]}, "")
			finishTitle()
			side, sawVersus = 0, false
		case lkOneLineRoles:
			m := oneLineRolesRE.FindStringSubmatch(p)
			side = 0
			emit([]string{m[1]}, m[2])
			side = 1
			emit([]string{m[3]}, m[4])
			finishTitle()
			side, sawVersus = 0, false
		case lkExParte:
			for _, n := range splitNames(exParteRE.FindStringSubmatch(p)[1]) {
				dc.parties = append(dc.parties, captionParty{name: n, role: RolePlaintiff, capacity: "petitioner", page: page})
				if dc.title == "" {
					dc.title, dc.titlePage = "Ex parte "+n, page
				}
			}
		case lkInRe:
			m := inReRE.FindStringSubmatch(p)
			subject := strings.TrimSpace(m[1])
			if applicationOfRE.MatchString(m[0]) {
				// "In the Matter of the Application of Acme Water Company
				// for a Rate Increase": the applicant, not what it asks.
				subject = strings.TrimSpace(forWhatRE.ReplaceAllString(subject, ""))
			}
			if versusAhead(i) {
				// "In re the Estate of John Hall, deceased." over an
				// adversary caption: the estate is the matter's subject, a
				// party of its own; the sides of the "v." follow.
				if m := deceasedTailRE.FindStringSubmatch(subject); m != nil && looksLikeName(m[1]) {
					for _, n := range splitNames(m[1]) {
						if strings.HasPrefix(n, "the ") {
							n = "The" + n[3:]
						}
						dc.parties = append(dc.parties, captionParty{name: n, role: RoleOther, capacity: "subject", page: page})
					}
					continue
				}
				if subject != "" {
					pending = append(pending, subject)
				}
				continue
			}
			if subject == "" {
				inRe = true
				continue
			}
			// "IN RE: PG&E CORPORATION and" / "PACIFIC GAS AND ELECTRIC" /
			// "COMPANY," / "Debtors.": the subject runs on to its role line.
			if danglingRE.MatchString(" "+subject) || strings.HasSuffix(subject, "&") {
				inRe = true
				pending = append(pending, subject)
				continue
			}
			if topicSubject(dc, subject) {
				// "In the Matter of Protecting and Promoting the Open
				// Internet": a rulemaking's topic names the matter, not a
				// party (round 17).
				if dc.title == "" {
					dc.title, dc.titlePage = "In re: "+subject, page
				}
				inReDone = true
				continue
			}
			if looksLikeName(subject) {
				for _, n := range splitNames(subject) {
					dc.parties = append(dc.parties, captionParty{name: n, role: RoleOther, capacity: "subject", page: page})
					if dc.title == "" {
						dc.title, dc.titlePage = "In re: "+n, page
					}
				}
			}
		case lkStop:
			if len(pending) > 0 && inRe && side == 0 && !inReDone {
				// "In the Matter of )" / "Protecting and Promoting the Open
				// Internet ) GN Docket No. 14-28" / "REPORT AND ORDER": the
				// subject, with no role words, ends where the caption does
				// (round 17).
				emitRoleless(pending)
				return
			}
			if len(pending) > 0 && side == 1 {
				emitRoleless(pending)
			}
			boardOrder()
			pending = nil
			if midVersusRE.MatchString(p) && len(sideNames[0]) > 0 && !sawVersus {
				side, sawVersus = 1, true // "Appeal from the United States v. District Court": a middle column's "v."
				continue
			}
			finishTitle()
			if sawVersus && len(sideNames[1]) > 0 || inReDone && !inRe {
				return
			}
			stops++
			if stops > 12 && len(dc.parties) == 0 {
				return
			}
		}
	}
	if len(pending) > 0 && (side == 1 || inRe) {
		emitRoleless(pending)
	}
	boardOrder()
	finishTitle()
}

// boardPaperRE: the words of a board's paper's title ("DECISION AND
// DIRECTION OF SECOND ELECTION", "ORDER"), round 19.
var boardPaperRE = regexp.MustCompile(`(?i)\b(?:decision|order|direction|certification|report|recommendations?|election|objections)\b`)

// descParenRE, descOpenRE, descCloseRE: a party's description in
// parentheses ("(an individual)", "(a Delaware corporation)"), opened at a
// line's end ("(an") and closed at the next line's start ("individual);");
// akaRE: an alias in capitals within the line ("aka CY NG").
var (
	descParenRE = regexp.MustCompile(`\s*\((?:an?|the)\s+[^()]*\)`)
	descOpenRE  = regexp.MustCompile(`\s*\((?:an?|the)\s*$`)
	descCloseRE = regexp.MustCompile(`^(?:an?\s+)?individuals?\)\s*[;,]?\s*`)
	// (The alias ends at its last word in capitals, before a comma too:
	// "JOHN ROE a/k/a JACK ROE,", round 18.)
	akaRE = regexp.MustCompile(`\s+(?i:a/k/a|aka|f/k/a|fka)(?:\s+[A-Z][A-Z.'’-]*\b)+\s*`)
)

// suffixTitleRE: a name ending in a company's suffix and its comma, and
// the rest of the line.
var suffixTitleRE = regexp.MustCompile(`^(.*\b(?:INC|CO|CORP|LLC|LTD|L\.P|N\.A|COMPANY|CORPORATION)\.?,)\s+(\S.*)$`)

// roleBesideCapsRE: role words, their comma, and the rest of the line.
var roleBesideCapsRE = regexp.MustCompile(`^((?i:` + roleRun + `)[.,;])\s+(\S.*)$`)

// plaintiffNamed reports whether the caption has named a plaintiff.
func plaintiffNamed(ps []captionParty) bool {
	for _, p := range ps {
		if p.role == RolePlaintiff {
			return true
		}
	}
	return false
}

// joinNameLines joins a caption's name lines into one block, separating
// with ";" a line that ends with a comma from a next line that starts a new
// name ("Petersen Energia Inversora, S.A.U.," / "Petersen Energia S.A.U.,").
// officeEndRE: a name's line that ends with the office its bearer is sued
// in, the office's department or agency to follow ("…, Secretary,", "…,
// Acting Commissioner,").
var officeEndRE = regexp.MustCompile(`(?i)\S,\s+(?:acting\s+|deputy\s+|interim\s+)?(?:secretary|director|commissioner|administrator|attorney\s+general|postmaster\s+general|warden|superintendent|chair(?:man|person)?|sheriff),$`)

func joinNameLines(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			prev := strings.TrimSpace(lines[i-1])
			r, _ := utf8.DecodeRuneInString(l)
			// A name also ends with a company's suffix ("DAMMANN & CO., INC."
			// / "INTERNATIONAL FLAVORS & FRAGRANCES INC.") and where the
			// lines turn from capitals to mixed case ("NATIONWIDE MUTUAL
			// INSURANCE COMPANY" / "International Flavors & Fragrances
			// Inc.,", the appellant named again above its role).
			pw := strings.Fields(prev)
			ends := strings.HasSuffix(prev, ",") || len(pw) > 1 && corpSuffix.MatchString(pw[len(pw)-1]) || isAllCaps(strings.TrimPrefix(prev, "and ")) && !isAllCaps(firstPart(l))
			// ... but a line that begins with a company's suffix finishes
			// the name above ("ABANTE ROOTER AND PLUMBING," / "INC.,
			// individually …").
			if f := strings.Fields(l); len(f) > 0 && corpSuffix.MatchString(strings.TrimRight(f[0], ",;")) {
				ends = false
			}
			// ... and an officer sued in his office names it on the next
			// lines ("ROBERT F. KENNEDY, JR., Secretary," / "U.S.
			// DEPARTMENT OF HEALTH AND" / "HUMAN SERVICES, et al.,"): the
			// department is the office, no other party (round 22).
			if officeEndRE.MatchString(prev) {
				ends = false
			}
			if ends && unicode.IsUpper(r) && looksLikeName(firstPart(l)) {
				b.WriteString("; ")
			} else if listBreak(prev, l) {
				b.WriteString(", ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// roleOf maps a caption's role words to a Role: the trial role when the
// words give one, else the side of the "v." (before it: plaintiff).
func roleOf(words string, side int) (Role, string) {
	w := strings.ToLower(words)
	has := func(s string) bool { return strings.Contains(w, s) }
	capacity := ""
	for _, c := range []string{"cross-appellant", "cross-appellee", "appellant", "appellee", "petitioner", "respondent", "debtor", "intervenor", "intervener", "movant", "claimant", "relator", "garnishee"} {
		if has(c) {
			capacity = c
			break
		}
	}
	pi, di := strings.Index(w, "plaintiff"), strings.Index(w, "defendant")
	switch {
	case has("real part"):
		return RoleOther, "real party in interest" // "Real Parties in Interest and Respondents"
	case has("debtor") || has("intervenor") || has("intervener") || has("garnishee"):
		return RoleOther, capacity
	case pi >= 0 && (di < 0 || pi < di):
		return RolePlaintiff, capacity
	case di >= 0:
		return RoleDefendant, capacity
	case has("petitioner") || has("claimant") || has("movant") || has("relator") || has("employee"):
		return RolePlaintiff, capacity
	case has("respondent") && side == 0 && !has("employer") && !has("carrier") && !has("insurer"):
		// A respondent named before the "v." without trial-role words is
		// the appellee ("BTNA, LLC, Respondents v. …, Appellants";
		// "Appellants-Cross Respondents"): the side decides, below.
	case has("respondent") || has("employer") || has("carrier") || has("insurer"):
		return RoleDefendant, capacity
	}
	if side == 0 {
		return RolePlaintiff, capacity
	}
	return RoleDefendant, capacity
}

var (
	etAlRE      = regexp.MustCompile(`(?i)[,\s]*\bet\.?\s*al\.?,?`)
	corpSuffix  = regexp.MustCompile(`(?i)^(?:l\.?l\.?c\.?|inc\.?|incorporated|ltd\.?|limited|co\.?|corp\.?|corporation|n\.?a\.?|p\.?c\.?|p\.?a\.?|l\.?l\.?p\.?|l\.?p\.?|pllc|plc|jr\.?|sr\.?|ii|iii|iv|s\.?a\.?u?\.?|s\.?p\.?a\.?|gmbh|ag|n\.?v\.?|b\.?v\.?|s\.?a\.?r\.?l\.?|pty\.?(?:\s+ltd\.?)?)$`)
	corpPrefix  = regexp.MustCompile(`(?i)^(l\.?l\.?c\.?|inc\.?|ltd\.?|corp\.?|co\.?)\s`)
	andNameRE   = regexp.MustCompile(`^(?:and|AND|&)\s+(\S.*)$`)
	andSplitRE  = regexp.MustCompile(`\s+(?:and|AND|&)\s+`)
	suesAsRE    = regexp.MustCompile(`(?i)^as\s+(?:an?\s+|the\s+)?(?:assignee|successor|trustee|agent|nominee|servicer|receiver|administrat(?:or|rix)|executo(?:r|rix)|guardian|conservator|personal\s+representative|attorney[- ]in[- ]fact|subrogee)\b`)
	personishRE = regexp.MustCompile(`^[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){1,3}$`)
)

// splitNames splits a caption's name block into party names: on ";", then
// on "and" between two persons or two companies, cutting descriptions
// after a comma ("JANET T. MILLS, in her official capacity …").
func splitNames(block string) []string {
	var out []string
	for _, part := range strings.Split(block, ";") {
		part = etAlRE.ReplaceAllString(part, "")
		// Keep comma-separated parts only while they are name suffixes.
		fields := strings.Split(part, ",")
		names := []string{strings.TrimSpace(fields[0])}
		// "MOTORS, LLC; and NEW JERSEY MOTOR VEHICLE COMMISSION": the
		// last of a list joined by semicolons.
		if a := andNameRE.FindStringSubmatch(names[0]); a != nil && looksLikeName(a[1]) {
			names[0] = a[1]
		}
		caps := isAllCaps(names[0])
		// A form's list of people in mixed case, a comma between each
		// ("Robert Roe Jr,Debra Ward Lund, Kathy Dill, Clinton Pope"): every
		// part is a name (round 22).
		if list := personList(fields); list != nil {
			for _, name := range list {
				out = append(out, splitCleanNames(name)...)
			}
			continue
		}
		described := false // a description after the last name ("a Delaware corporation")
		lowerDesc := false // the description begins in lower case
		for fi, f := range fields[1:] {
			f = strings.TrimSpace(f)
			if described {
				// "WHATSAPP INC., a Delaware corporation, and FACEBOOK,
				// INC., a Delaware corporation": the "and" names another
				// party; its suffix follows.
				if a := andNameRE.FindStringSubmatch(f); a != nil && looksLikeName(a[1]) {
					names = append(names, a[1])
					described = false
					continue
				}
				// "FORMOSA BROTHERS LLC, a Washington limited liability
				// company, FU MEI CHU, an individual, and …": in a caption
				// in capitals a description in lower case ends at its
				// comma, and a part in capitals after it is the next name
				// (round 20).
				if lowerDesc && caps && isAllCaps(f) && len(strings.Fields(f)) >= 2 && looksLikeName(f) {
					names = append(names, f)
					described, lowerDesc = false, false
				}
				continue
			}
			// "CAVALRY SPV I, LLC, AS ASSIGNEE OF CITIBANK, N.A.": the
			// capacity the party sues in, and whose, is no name (round 16).
			if suesAsRE.MatchString(f) {
				described = true
				continue
			}
			if corpSuffix.MatchString(f) {
				names[len(names)-1] += ", " + f
				continue
			}
			// A union's local and its number are the union's name
			// ("WAREHOUSE WORKERS UNITED, LOCAL 353", "…, LOCAL NO. 18"),
			// never a case's number or a footnote's (round 19).
			if unionLocalRE.MatchString(f) {
				names[len(names)-1] += ", " + f
				continue
			}
			if m := corpPrefix.FindStringSubmatch(f + " "); m != nil {
				names[len(names)-1] += ", " + m[1] // "LLC TROOPER": the suffix, then overprinted text
				// "INC. and INTERNATIONAL FLAVORS & FRAGRANCES INC.": the
				// suffix, then another name.
				if a := andNameRE.FindStringSubmatch(strings.TrimSpace(f[len(m[1]):])); a != nil && looksLikeName(a[1]) {
					names = append(names, a[1])
				}
				break
			}
			// "Alpine Ridge Holdings, LLC, and Dana Fox": another name.
			if a := andNameRE.FindStringSubmatch(f); a != nil && looksLikeName(a[1]) {
				names = append(names, a[1])
				continue
			}
			// In a caption whose names are in capitals, a part in
			// capitals after a comma is another name; anything else
			// describes the name before it.
			if caps && isAllCaps(planRE.ReplaceAllString(f, "")) && len(strings.Fields(f)) >= 2 && looksLikeName(f) {
				names = append(names, f) // (a plan's "401(k)" keeps its small letter)
				continue
			}
			// In mixed case a description begins in lower case ("a
			// Colorado corporation"); a company's name in a list of names
			// begins in capitals and ends in a company's word or takes its
			// suffix next ("Industrial Claim Appeals Office of the State of
			// Colorado, Red Robin International, Inc., and Travelers
			// Insurance Company").
			if !caps && len(strings.Fields(f)) >= 2 && looksLikeName(f) && unicode.IsUpper(firstRune(f)) &&
				(orgEndRE.MatchString(f) || fi+2 < len(fields) && corpSuffix.MatchString(strings.TrimSpace(fields[fi+2]))) {
				names = append(names, f)
				continue
			}
			described = true
			lowerDesc = unicode.IsLower(firstRune(f))
		}
		for _, name := range names {
			if !unionLocalTailRE.MatchString(name) {
				name = strings.TrimSpace(footnoteRE.ReplaceAllString(name, ""))
			}
			out = append(out, splitCleanNames(name)...)
		}
	}
	return out
}

// listBreak: two lines of a list of people in mixed case, commas within
// both, the break between them falling between two whole names ("…, Kathy
// Dill" / "Clinton Pope,Candace Lee, …"), not within one ("…,Naomi
// Hixson,Jason" / "White, Brandi Benjamin, …").
func listBreak(prev, l string) bool {
	i, j := strings.LastIndex(prev, ","), strings.Index(l, ",")
	if i < 0 || j < 0 || i == len(prev)-1 || isAllCaps(prev) || isAllCaps(l) {
		return false
	}
	return personName(prev[i+1:]) && personName(l[:j])
}

// personList reads the comma parts of a block in mixed case as a list of
// people's names when there are three or more of them and each is two to
// four capitalised words with no company's, office's or description's word
// ("Debra Ward Lund", "Endreya McCabe", "Governing Body"); else nil.
func personList(fields []string) []string {
	var out []string
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !personName(f) {
			return nil
		}
		out = append(out, f)
	}
	if len(out) < 3 {
		return nil
	}
	return out
}

// personName: two to four capitalised words in mixed case, none a
// company's, an office's or a description's.
func personName(f string) bool {
	f = strings.TrimSpace(f)
	ws := strings.Fields(f)
	if len(ws) < 2 || len(ws) > 4 || isAllCaps(f) || !looksLikeName(f) || orgEndRE.MatchString(f) || officeWordRE.MatchString(f) {
		return false
	}
	for _, w := range ws {
		lw := strings.ToLower(w)
		if !unicode.IsUpper(firstRune(w)) || corpSuffix.MatchString(w) && !strings.HasPrefix(lw, "jr") && !strings.HasPrefix(lw, "sr") {
			return false
		}
	}
	return true
}

// officeWordRE: a word of an office or a description, never of a person's
// name.
var officeWordRE = regexp.MustCompile(`(?i)\b(?:secretary|director|commissioner|administrator|officer|president|chief|manager|agent|trustee|individually|capacity|county|city|state|united|states)\b`)

func splitCleanNames(name string) []string {
	var out []string
	for _, n := range splitAnd(name) {
		n = cleanName(n)
		if n == "" || roleOnlyRE.MatchString(n) || isVersusWord(n) || len(partyKey(n)) < 2 {
			continue
		}
		brand := brandCase(n)
		if brand {
			r := []rune(n)
			n = string(unicode.ToUpper(r[0])) + string(r[1:]) // "nVISION …" reads as capitals
		}
		// (A name in capitals with its trade name: "ACME LLC d/b/a THE
		// ACME GAZETTE" is in capitals, round 18.)
		if isAllCaps(tradeNameRE.ReplaceAllString(planRE.ReplaceAllString(n, " "), " ")) {
			n = titleCase(n)
		}
		if brand {
			r := []rune(n)
			n = string(unicode.ToLower(r[0])) + string(unicode.ToUpper(r[1])) + string(r[2:]) // "nVision"
		}
		out = append(out, n)
	}
	return out
}

func splitAnd(name string) []string {
	// In a caption in capitals, a small "and" joins two names, the names'
	// own words being capitals: "PG&E CORPORATION and PACIFIC GAS AND
	// ELECTRIC COMPANY".
	if parts := strings.Split(name, " and "); len(parts) == 2 && isAllCaps(parts[0]) && isAllCaps(parts[1]) && len(strings.Fields(parts[0])) > 1 && len(strings.Fields(parts[1])) > 1 {
		return []string{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])}
	}
	parts := andSplitRE.Split(name, -1)
	if len(parts) != 2 {
		return []string{name}
	}
	a, b := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	corp := func(s string) bool {
		w := strings.Fields(s)
		return len(w) > 1 && corpSuffix.MatchString(strings.Trim(w[len(w)-1], ","))
	}
	person := func(s string) bool {
		return personishRE.MatchString(s) && !strings.Contains(strings.ToLower(s), " of ") && !orgWordRE.MatchString(s)
	}
	if corp(a) && corp(b) {
		return []string{a, b}
	}
	// An ampersand joins the words of one name ("AJ'S RESTAURANT & BAR
	// LLC", "INTERNATIONAL FLAVORS & FRAGRANCES INC.", "JESS SMITH & SONS,
	// LLC"); only two companies, each with its suffix, are two names.
	if person(a) && person(b) && !strings.Contains(name, "&") {
		return []string{a, b}
	}
	// A person and a company ("Mark Cordell and Cordell Law, LLC"), the
	// company's name of two words or more before its suffix ("John Smith
	// and Sons, Inc." stays one name).
	longCorp := func(s string) bool { return corp(s) && len(strings.Fields(s)) >= 3 }
	if (person(a) && longCorp(b) || longCorp(a) && person(b)) && !strings.Contains(name, "&") {
		return []string{a, b}
	}
	// A public body and a company or person named with it as co-parties:
	// "Industrial Claim Appeals Office of the State of Colorado and Acme
	// Stores, Inc.".
	if agencyRE.MatchString(a) && (corp(b) || person(b)) && !strings.Contains(name, "&") {
		return []string{a, b}
	}
	return []string{name}
}

var agencyRE = regexp.MustCompile(`(?i)^(?:the\s+)?(?:[a-z.'’]+\s+){0,4}(?:office|board|commission|department|agency|bureau|authority|council)\s+of\s+(?:the\s+)?(?:state|city|county|commonwealth|people|united\s+states)\b`)

// CaseKey is a case number's identity, so that "2:18-cv-10166-JAK",
// "2:18-CV-10166" and "18-cv-10166" are one case, as are "2009-1361" and
// "09-1361": year (two digits), type letters if any, and number without
// leading zeros. It is "" for text that is not a case number.
func CaseKey(s string) string {
	// New Jersey's docket numbers are printed with spaces by its eCourts
	// notices ("ATL DC 007956-25") and with hyphens elsewhere.
	if m := njSpacedRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		s = m[1] + "-" + m[2] + "-" + m[3]
	}
	s = strings.ToLower(strings.NewReplacer("–", "-", "—", "-", " ", "", ".", "").Replace(s))
	// New Jersey's trial-court docket numbers are zero-padded to six digits
	// by its e-filing stamps ("ATL-L-002794-25") and often not in captions
	// ("ATL-L-2794-25"): the same case.
	if m := njDocketRE.FindStringSubmatch(s); m != nil {
		s = m[1] + "-" + m[2] + "-" + strings.Repeat("0", 6-len(m[3])) + m[3] + "-" + m[4]
	}
	if m := bureauKeyRE.FindStringSubmatch(s); m != nil {
		return m[1] + "-docket-" + m[2] // "GN Docket No. 14-28": the bureau's docket, not another "14-28"
	}
	if m := actionKeyRE.FindStringSubmatch(s); m != nil {
		typ := "cv"
		if m[1] == "criminal" {
			typ = "cr"
		}
		return m[2] + "-" + typ + "-" + m[3] // "Civil Action No. 2:19-00019": the civil case 19-cv-19
	}
	if m := mdlKeyRE.FindStringSubmatch(s); m != nil {
		return "mdl-" + strings.TrimLeft(m[1], "0")
	}
	// New Jersey's Appellate Division writes its team after the number
	// ("A-000308-25T3"); its stamps do not ("A-000308-25").
	if m := appDivTeamRE.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	m := caseKeyRE.FindStringSubmatch(s)
	if m == nil {
		if m := plainCaseRE.FindString(s); m != "" {
			return m
		}
		// Other courts' shapes ("363A14-4", "22A-CR-1234", "RG21093456",
		// "21STCV12345"): the number itself, when it mixes letters and
		// digits or has a hyphen (a bare "12" is a docket entry or a
		// footnote, not a case).
		if allDigitsRE.MatchString(s) && len(s) >= 6 && len(s) <= 7 {
			return s // "728440": a state appellate number without its hyphens (round 20)
		}
		if otherCaseRE.MatchString(s) && len(s) >= 5 && strings.ContainsFunc(s, func(r rune) bool { return r == '-' || r == '/' || unicode.IsLetter(r) }) {
			return s
		}
		return ""
	}
	year, typ, num := m[3], m[2]+m[4], strings.TrimLeft(m[5], "0")
	if typ == "b" || typ == "bk" {
		typ = "" // a bankruptcy case: "18 B 09232" is the stamp's "18-09232"
	}
	if len(year) == 4 {
		year = year[2:]
	}
	if num == "" {
		return ""
	}
	return year + "-" + typ + "-" + num
}

var (
	// The small words that join a name to its trade name or alias.
	tradeNameRE = regexp.MustCompile(`\b(?:d/b/a|a/k/a|f/k/a|n/k/a|dba)\b`)
	tradeTailRE = regexp.MustCompile(`\s+(?:d/b/a|f/k/a|n/k/a|dba|D/B/A|DBA)$`)
	// A case number after a label without "No." (round 18): a district
	// court's ("Case 3:21-cv-00321-RGJ", "Civil Action 2:19-cv-00019"),
	// or an agency's region, type and number ("Case 04-RC-128714").
	bareCaseLabelRE = regexp.MustCompile(`(?:^|\s)(?i:(case|civil\s+action|criminal\s+action))\s+(\d{1,2}:\d{2}-(?:[a-zA-Z]{2,4}-)?\d{2,6}(?:-[A-Z]{2,4})*|\d{2}-[A-Z]{2}-\d{4,7})\b`)
	// A district court's number with its office but no type letters.
	untypedFedRE  = regexp.MustCompile(`^\d{1,2}:\d{2}-\d{2,7}$`)
	actionLabelRE = regexp.MustCompile(`(?i)^\s*(civil|criminal)(?:\s+action)?\s+nos?\.`)
	// ... and its key: the type the label gives.
	actionKeyRE = regexp.MustCompile(`^(civil|criminal)(?:action)?(?:nos?|number):?\d{1,2}:(\d{2})-0*(\d{1,7})$`)
	// The type letters may lead, with or without a hyphen: "CV 18-10166"
	// (C.D. Cal.) and "CV-25-03367-PHX-SMB" (D. Ariz., its division and
	// judge after the number) are the civil case 18-cv-10166, 25-cv-3367
	// (round 22).
	caseKeyRE    = regexp.MustCompile(`^(?:(\d):)?(?:([a-z]{2,3})-?)?(\d{2}|\d{4})(?:-?([a-z]{2,3}|b)-?|-)(\d{2,7})`)
	plainCaseRE  = regexp.MustCompile(`^\d{2,6}-\d{2,6}`)
	njSpacedRE   = regexp.MustCompile(`^([A-Z]{2,4}) ([A-Z]{1,3}) (\d{3,7}-\d{2})$`)
	appDivTeamRE = regexp.MustCompile(`^(a-\d{3,6}-\d{2})t\d$`)
	njDocketRE   = regexp.MustCompile(`^([a-z]{3})-([a-z]{1,3})-0*(\d{1,6})-(\d{2})$`)
	mdlKeyRE     = regexp.MustCompile(`^mdl(?:no\.?)?(\d{3,5})$`)
	otherCaseRE  = regexp.MustCompile(`^(?:[a-z]{1,5}-){0,3}[a-z]{0,4}\d[a-z0-9]*(?:[-./][a-z0-9]+)*$`)
)

var inTheRE = regexp.MustCompile(`(?i)^\s*in\s+the\s+`)

var counselRE = regexp.MustCompile(`(?i)\bfor\s+(?:the\s+)?(?:` + roleWord + `)|\b(?:esq|llp|pllc|law\s+(?:group|firm|office))\b|\battorneys?\s+(?:for|at\s+law)\b`)

var (
	versusDebrisRE = regexp.MustCompile(`^[Vv][Ss]?\.?(?:\s+(?:[a-z]|[^\pL\pN\s]+))+$`)
	stampDebrisRE  = regexp.MustCompile(`^[^\pL\pN]+\s*(?:RECEIVED|FILED)[^\pL\pN]*$`)
	markDebrisRE   = regexp.MustCompile(`^[^\pL\pN\s]+\s*[A-Za-z]?[^\pL\pN]*$|^[A-UW-Za-uw-z][^\pL\pN]+$`)
	realWordRE     = regexp.MustCompile(`^\pL{3,}[.,;]?$`)
	junkTokenRE    = regexp.MustCompile(`[^\pL\pN.,'’&()/-]|\pL.*\pN|\pN.*\pL|^[^\pL\pN]+$`)
)

// scanDebris: a caption line that is an OCR layer's reading of a stamp or
// a mark, not text: a stamp's word after stray marks, a lone mark or
// letter with marks, or a line most of whose tokens are marks or mix
// letters and digits ("O2", "202J") with at most one word.
func scanDebris(p string) bool {
	if p == "" {
		return false
	}
	if stampDebrisRE.MatchString(p) || markDebrisRE.MatchString(p) {
		return true
	}
	junk, real := 0, 0
	for _, t := range strings.Fields(p) {
		switch {
		case realWordRE.MatchString(t):
			real++
		case junkTokenRE.MatchString(t):
			junk++
		}
	}
	return junk >= 2 && real <= 1 && junk > real
}

// firmPartyLine: a lawyer or a law firm named as a party, in capitals,
// its line ending in a comma or an "and" that joins the next name ("JOHN
// W. TUMELTY, ESQ., AND THE" / "LAW OFFICE OF JOHN W. TUMELTY,": a
// malpractice case's defendants), is a name, not a counsel's line; a line
// that says whom it appears for ("Attorneys for Plaintiff") never is
// (round 16).
func firmPartyLine(p string) bool {
	p = strings.TrimSpace(p)
	return mostlyCaps(p) && !counselForRE.MatchString(p) && (strings.HasSuffix(p, ",") || firmAndTailRE.MatchString(p))
}

var (
	counselForRE  = regexp.MustCompile(`(?i)\bfor\s+(?:the\s+)?(?:` + roleWord + `)|\battorneys?\s+(?:for|at\s+law)\b|\bcounsel\b`)
	firmAndTailRE = regexp.MustCompile(`(?i),?\s+(?:and(?:\s+the)?|&)$`)
)

var midVersusRE = regexp.MustCompile(`(?:^|\s)v\.\s`)

// Divisions of a court. A district court's statutory divisions ("SAN JOSE
// DIVISION", "EASTERN DIVISION") and an appellate district's numbered ones
// ("DIVISION THREE") are parts of the court, where the case sits, not its
// name: the court is "United States District Court Southern District of
// Indiana", "Court of Appeal … Fourth Appellate District". A division that
// names a kind of court ("APPELLATE DIVISION", "CHANCERY DIVISION",
// "COMMERCIAL DIVISION") is the court's name and stays in it (courtContRE).
// A division with its seat on one line ("NORTHERN DIVISION AT COVINGTON")
// is a division as on two ("NORTHERN DIVISION" / "AT COVINGTON"), round 19.
var (
	venueDivRE   = regexp.MustCompile(`(?i)^(?:[a-z.'’]+\s+){1,3}(?:division|vicinage)(?:\s*[-–—]\s*[a-z.'’ ]{2,30})?$|^(?:[a-z.'’]+\s+){1,3}division,?\s+at\s+[a-z.'’]+(?:\s+[a-z.'’]+)?$|^division\s+(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[ivx]{1,5}|\d{1,2})$`)
	courtKindDiv = regexp.MustCompile(`(?i)\b(?:appellate|chancery|law|family|commercial|criminal|civil|probate|juvenile|equity|tax|housing|trial|business|general|small\s+claims|domestic\s+relations|orphans'?)\s+division$`)
	compassDivRE = regexp.MustCompile(`(?i)^(?:(?:north|south|east|west)(?:ern)?|central|middle)\s+division\b|^division\s`)
	divPlaceRE   = regexp.MustCompile(`\s*[-–—].*$`) // "WESTERN DIVISION – LOS ANGELES"
	divTailRE    = regexp.MustCompile(`(?i)\s*[-–—,]\s*((?:[a-z.'’]+\s+){1,3}(?:division|vicinage))\s*$`)
)

// A state trial court's place lines under its name (round 16): the
// courthouse, branch or (judicial) district where the case sits and its
// jurisdictional class ("CHATSWORTH COURTHOUSE", "NORWALK COURTHOUSE
// SOUTHEAST DISTRICT", "NORTH VALLEY DISTRICT-CHATSWORTH-LIMITED CIVIL
// CASE", "COUNTY OF LOS ANGELES, NORTH VALLEY JUDICIAL DISTRICT"), like a
// federal court's division, are no part of its name and no party. A
// numbered judicial district ("FOURTH JUDICIAL DISTRICT") is a court's
// name and stays.
var (
	venuePlaceRE   = regexp.MustCompile(`(?i)^(?:[a-z.'’]+\s+){1,3}(?:courthouse|branch|(?:judicial\s+)?district)(?:\s*[-–—]\s*[a-z.'’ ]{2,30}?)*(?:\s+(?:[a-z]+\s+)?(?:district|division))?(?:\s*[-–—]\s*(?:un)?limited(?:\s+civil)?(?:\s+case)?)?$`)
	ordinalRE      = regexp.MustCompile(`(?i)\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|\d{1,2}(?:st|nd|rd|th))\b`)
	countyVenueRE  = regexp.MustCompile(`(?i)^(county\s+of\s+[a-z .]+?)\s*,\s*(\S.*)$`)
	limitedTailRE  = regexp.MustCompile(`(?i)\s*[-–—,]\s*(?:un)?limited(?:\s+(?:civil|jurisdiction))?(?:\s+case)?\s*$`)
	trialCourtWord = regexp.MustCompile(`(?i)\b(?:superior|county|circuit|municipal|justice)\b`)
)

func trialVenueLine(court, p string) bool {
	p = colText(p)
	return trialCourtWord.MatchString(court) && mostlyCaps(p) && venuePlaceRE.MatchString(p) && !ordinalRE.MatchString(p)
}

// venueDivision: a line that is only a court's division of place or
// number.
func venueDivision(p string) bool {
	if strings.HasSuffix(strings.TrimSpace(p), ",") {
		return false // "CONSUMER PROTECTION DIVISION,": a party's name
	}
	p = strings.Join(strings.Fields(strings.Trim(strings.TrimSpace(p), ",.;:")), " ")
	return venueDivRE.MatchString(p) && !courtKindDiv.MatchString(divPlaceRE.ReplaceAllString(p, ""))
}

// cutDivision cuts a division of place after a dash or comma from a court
// line ("CENTRAL DISTRICT OF CALIFORNIA - WESTERN DIVISION"), saying
// whether it did.
func cutDivision(p string) (string, bool) {
	m := divTailRE.FindStringSubmatchIndex(p)
	if m == nil || !venueDivision(p[m[2]:m[3]]) {
		return p, false
	}
	return p[:m[0]], true
}

// A judge's line in a caption is no party: "Honorable Jane Doe, Judge",
// "THE HONORABLE JAMES V. SELNA, JUDGE PRESIDING", "BEFORE THE HONORABLE
// …", "Trial Court Judge: …".
var judgeLineRE = regexp.MustCompile(`(?i)^(?:before\s+)?(?:the\s+)?(?:hon\.|honorable\b)|^(?:(?:trial|lower)\s+court\s+)?judges?\s*:|,\s*(?:(?:trial|district|county|circuit|superior|senior|chief|presiding|magistrate|bankruptcy|associate)\s+)*judge(?:\s+presiding)?[.,]?$`)

// ... and beside a name or role line, the right column's judge: "ERICSSON
// Hon. James V. Selna", "Defendants. Magistrate: Hon. Paul L. Abrams",
// "Assigned to the Hon. Charles R. Breyer".
var judgeColRE = regexp.MustCompile(`(?i)(?:^|\s+)(?:(?:case\s+)?assigned\s+(?:for\s+all\s+purposes\s+)?to|before|(?:(?:u\.\s?s\.|united\s+states|district|magistrate|presiding|bankruptcy)\s+)*judge|magistrate|(?:special\s+|discovery\s+)?master)?\s*:?\s*(?:the\s+)?(?:hon\.|honorable\b)\s+.*$`)

// ... and named without "Hon." or a colon, in mixed case after a left
// column in capitals: "NESTEC Judge John A. Kronstadt".
var judgeNameColRE = regexp.MustCompile(`\s+(?:(?:District|Magistrate|Bankruptcy)\s+)?Judge\s+(?:[A-Z][\p{Ll}'’-]+|[A-Z]\.)(?:\s+(?:[A-Z][\p{Ll}'’-]+|[A-Z]\.))+$`)

// A transcript caption's right column gives where the hearing was held:
// "SAN JOSE, CALIFORNIA", "Los Angeles, California".
var placeLineRE = regexp.MustCompile(`(?i)^[a-z][a-z.' -]{1,30},\s*(?:alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|georgia|hawaii|idaho|illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|minnesota|mississippi|missouri|montana|nebraska|nevada|new\s+hampshire|new\s+jersey|new\s+mexico|new\s+york|north\s+carolina|north\s+dakota|ohio|oklahoma|oregon|pennsylvania|rhode\s+island|south\s+carolina|south\s+dakota|tennessee|texas|utah|vermont|virginia|washington|west\s+virginia|wisconsin|wyoming|d\.\s?c\.|district\s+of\s+columbia|puerto\s+rico)\.?$`)

// publicBodyRE: "CITY OF FRESNO, CALIFORNIA" is a party, not a place.
var publicBodyRE = regexp.MustCompile(`(?i)^(?:the\s+)?(?:city|county|town|village|borough|township|state|port|people)\b`)

// spacedRE: a heading set in spaced capitals ("O P I N I O N", "A P P E A
// R A N C E S:"), read as the word it spells.
var spacedRE = regexp.MustCompile(`^(\s*)((?:\pL ){2,}\pL)(\s*[:.]?\s*)$`)

func unspace(p string) string {
	m := spacedRE.FindStringSubmatch(p)
	if m == nil {
		return p
	}
	return m[1] + strings.ReplaceAll(m[2], " ", "") + m[3]
}

// otherCourt: the text before a case number's label names a court other
// than the document's ("Routt County District Court No. 23CV30004" in a
// court of appeals' caption, whose own is "Court of Appeals No. 24CA2203"):
// the number is the court below's.
func otherCourt(before, court string) bool {
	before = strings.TrimSpace(before)
	if court == "" || !courtRE.MatchString(before) {
		return false
	}
	have := map[string]bool{}
	for _, w := range courtWords(court) {
		have[w] = true
	}
	for _, w := range courtWords(before) {
		if !have[w] {
			return true
		}
	}
	return false
}

func courtWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		switch w {
		case "the", "of", "for", "in", "and":
			continue
		}
		out = append(out, strings.TrimSuffix(w, "s"))
	}
	return out
}

// titleFragRE: the words of a paper's title, which a name never has.
var (
	titleFragRE = regexp.MustCompile(`(?i)\b(?:motions?|memorandum|points\s+and\s+authorities|authorities|in\s+support\s+of|in\s+opposition\s+to|opposition|declaration|designation|affirmative\s+defenses|testimony|stipulat(?:ion|ed)|\[?proposed\]?|reply|applications?|requests?|hearing|certification|notice|complaint|answer|brief|judgment|order|exclude|compel|dismiss|summary|redacted|under\s+seal|reconsideration|objections?|evidentiary|determination|entitlement|renewed|limine|sanctions|strike|granting|denying|response\s+to)\b`)
	roleWordRE  = regexp.MustCompile(`(?i)\b` + roleWord + `\b`)
	// "DEFENDANTS’ EVIDENTIARY", "PLAINTIFF’S MOTION FOR": a party's paper.
	possessiveRoleRE = regexp.MustCompile(`(?i)^(?:the\s+)?` + roleWord + `['’]s?\s`)
)

// leftColumn is a pleading-paper caption line's left column: the text
// before the ")" or "§" that rules the columns ("AARP INSURANCE PLAN, )
// Judge: Hon. Dean D. Pregerson", ") DAVIDSON IN SUPPORT OF"). A ")"
// that closes a "(" on the line is not a rule. When the cleaning joined
// two caption lines, the text between two rules is one line's right
// column and the next line's left: the capitals that end it are the
// left column's ("… Pregerson UNITEDHEALTH GROUP, INC. and )").
func leftColumn(p string) string {
	var rules []int
	depth := 0
	for i, r := range p {
		switch r {
		case '(':
			depth++
		case ')', '§':
			if r == ')' && depth > 0 {
				depth--
				continue
			}
			if i == 0 || p[i-1] == ' ' {
				rules = append(rules, i)
			}
		}
	}
	if len(rules) == 0 {
		return p
	}
	out := []string{strings.TrimSpace(p[:rules[0]])}
	for k := 1; k < len(rules); k++ {
		seg := p[rules[k-1]+1 : rules[k]]
		// The right column's case number, then the left column's line:
		// "Case No. 4:19-cv-07123-PJH and FACEBOOK, INC., a Delaware".
		if rest := strings.TrimSpace(caseRefRE.ReplaceAllString(seg, "")); rest != strings.TrimSpace(seg) {
			if rest == "" {
				// The right column's case number alone, with its judges'
				// initials in parentheses ("Civil Action No. 1:24-cv-01442
				// (LMB/IDD)"): no name's words (round 23).
				continue
			}
			if f := strings.Fields(rest)[0]; andWord(f) || isAllCaps(strings.Trim(f, ",.")) {
				out = append(out, rest)
				continue
			}
		}
		if c := trailingCaps(seg); c != "" {
			out = append(out, c)
		}
	}
	return strings.TrimSpace(strings.Join(out, " "))
}

// trailingCaps: the words in capitals (and connectors) that end s.
func trailingCaps(s string) string {
	w := strings.Fields(s)
	i := len(w)
	caps := 0
	for i > 0 {
		t := w[i-1]
		if connector[strings.ToLower(t)] {
			i--
			continue
		}
		if !isAllCaps(t) {
			break
		}
		caps++
		i--
	}
	for i < len(w) && connector[strings.ToLower(w[i])] && !andWord(w[i]) {
		i++ // not a connector first, but "and": it joins this name to the one above
	}
	if caps == 0 || i == len(w) {
		return ""
	}
	return strings.Join(w[i:], " ")
}

func andWord(w string) bool { return strings.EqualFold(w, "and") || w == "&" }

// appearanceRE: a transcript's appearance label, "For Creditor Committee
// Official Committee of Tort Claimants:", "For the Government:".
var appearanceRE = regexp.MustCompile(`(?i)^for\s+[^:]{2,120}:$`)

// looseCaseKey is a case key without its type letters: "19-05257" in a
// transcript's caption is the stamp's "3:19-cv-05257" (CaseKey "19-cv-5257").
func looseCaseKey(k string) string {
	if m := looseKeyRE.FindStringSubmatch(k); m != nil {
		return "~" + m[1] + "-" + strings.TrimLeft(m[2], "0")
	}
	return k
}

var looseKeyRE = regexp.MustCompile(`^(\d{2})-(?:[a-z]{0,3}-)?(\d{2,7})$`)

// A state court of appeals' numbered division on the court's own line or
// after the state ("COURT OF APPEALS, DIVISION I", "WASHINGTON, DIVISION
// I"): where the case sits, cut as a division line is (venueDivision).
var numberedDivTailRE = regexp.MustCompile(`(?i)\s*,?\s+division\s+(?:one|two|three|four|five|six|seven|eight|[ivx]{1,4}|\d{1,2})\s*,?\s*$`)

// "OF THE STATE OF WASHINGTON" under "COURT OF APPEALS": the court's name
// runs on.
var ofStateRE = regexp.MustCompile(`(?i)^of\s+the\s+(?:state\s+of\s+[a-z .]+|united\s+states)$`)

// filedStampCourt: a court line inside the court's own filed stamp above
// the caption that names no jurisdiction, or abbreviates its name over the
// stamp's "FILED" ("FILED" / "Court of Appeals" /
// "Division I" / "State of Washington" / "<date>"), the clerk's short
// name, not the caption's. A stamp naming the court in full ("FILED" /
// "United States Court of Appeals" / "Tenth Circuit") is read as before.
func filedStampCourt(paras []string, i int) bool {
	if i > 0 && strings.EqualFold(strings.TrimSpace(paras[i-1]), "filed") && bareCourtRE.MatchString(strings.TrimSpace(paras[i])) {
		return true
	}
	// The clerk's stamp in the court's abbreviation over its "FILED"
	// ("COURT OF APPEAL – SECOND DIST." / "F I L E D" / "Mar 14, 2023").
	return i+1 < len(paras) && stampAbbrRE.MatchString(paras[i]) && filedWordRE.MatchString(strings.TrimSpace(paras[i+1]))
}

var (
	stampAbbrRE = regexp.MustCompile(`(?i)\bdist\.\s*$`)
	filedWordRE = regexp.MustCompile(`(?i)^f\s?i\s?l\s?e\s?d$`)
)

// inCourtRE: the "IN" or "IN THE" a court's name opens with (round 23).
var inCourtRE = regexp.MustCompile(`(?i)^\s*in\s+(?:the\s+)?`)

var bareCourtRE = regexp.MustCompile(`(?i)^(?:the\s+)?(?:court\s+of\s+appeals?|supreme\s+court|superior\s+court|appellate\s+court)$`)

// A state's name before "COURT OF APPEALS" ("WASHINGTON STATE COURT OF
// APPEALS", "NEW YORK SUPREME COURT") is the court's, not a left column's
// party name sharing its line.
var stateNameRE = regexp.MustCompile(`(?i)^(?:the\s+)?(?:alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|georgia|hawai.?i|idaho|illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|minnesota|mississippi|missouri|montana|nebraska|nevada|new\s+hampshire|new\s+jersey|new\s+mexico|new\s+york|north\s+carolina|north\s+dakota|ohio|oklahoma|oregon|pennsylvania|rhode\s+island|south\s+carolina|south\s+dakota|tennessee|texas|utah|vermont|virginia|washington|west\s+virginia|wisconsin|wyoming)(?:\s+state)?$`)

// The right column's note of the motion an order decides, after the role
// words: "Respondents. Re: Dkt. No. 112".
var reDocketColRE = regexp.MustCompile(`(?i)\s+re:?\s*(?:dkt|docket|ecf|doc)\b.*$`)

var etAlColRE = regexp.MustCompile(`(?i)\bet\.?\s*al\.?,?\s+`)

// etAlColumn cuts the right column after a name's "et al.,": "1955 CAPITAL
// FUND I GP LLC, et al., INTEREST" is the name and the last word of the
// order's title. Role words after it stay ("ACME CORP., et al.,
// Defendants.").
func etAlColumn(p string) string {
	loc := etAlColRE.FindStringIndex(p)
	if loc == nil {
		return p
	}
	rest := p[loc[1]:]
	low := strings.ToLower(rest)
	if strings.HasPrefix(low, "v.") || strings.HasPrefix(low, "vs") {
		return p
	}
	if r := roleWordRE.FindStringIndex(rest); r != nil {
		if r[0] == 0 || !mostlyCaps(rest[:r[0]]) {
			return p
		}
		// "…, et al., INTEREST Respondents.": the title's word between
		// the name and its role words.
		return p[:loc[1]] + rest[r[0]:]
	}
	return strings.TrimRight(p[:loc[1]], " ")
}

var (
	// The right column's labelled field alone on a line.
	labelLineRE = regexp.MustCompile(`(?i)^(?:date|time|judge|dept|ctrm|courtroom|place|hearing(?:\s+date)?|(?:date\s+)?action\s+filed|(?:date\s+)?complaint\s+filed|trial\s+date)\s*:`)
	// A name after a semicolon and the right column's title after it:
	// "VADE SECURE SASU; OLIVIER ADMINISTRATIVE MOTION TO".
	semiTitleRE = regexp.MustCompile(`^(.*;\s*[A-Z][A-Z.'’-]+)\s+(?:(?:ADMINISTRATIVE|EMERGENCY|JOINT|EX\s+PARTE|PARTIAL|RENEWED|AMENDED|STIPULATED|SUPPLEMENTAL|UNOPPOSED)\s+)?(?:MOTION|ORDER|STIPULATION|APPLICATION|REQUEST|NOTICE|DECLARATION|MEMORANDUM)\b.*$`)
	// The right column's words ending in a possessive role word after a
	// name and its semicolon or comma: "VADE SECURE, INCORPORATED; IN
	// PART DEFENDANTS’".
	possessiveTailRE = regexp.MustCompile(`^(.*[;,])\s+(?:[A-Z]+\s+){0,4}(?:PLAINTIFFS?|DEFENDANTS?|RESPONDENTS?|PETITIONERS?|APPELLANTS?|APPELLEES?)(?:['’]S?|S['’])$`)
	// A lone possessive word: "COURT’S".
	possessiveWordRE = regexp.MustCompile(`^[A-Z][A-Z.-]*['’]S?$`)
)

var (
	supremeRE = regexp.MustCompile(`(?i)\bsupreme\s+court\b`)
	// The Court of Appeal's abbreviation in a supreme court's list of the
	// courts below: "Ct.App. 2/8 B303172".
	ctAppRE = regexp.MustCompile(`(?i)\bct\.?\s*app\b`)
	// A line naming a court below: "Fourth Appellate District, Division
	// One", "San Diego County Superior Court", "Court of Appeal".
	courtBelowRE = regexp.MustCompile(`(?i)\bappellate\s+district\b|\bsuperior\s+court\b|\bcourt\s+of\s+appeal\b|^[a-z .]+\s+county$|^(?:[a-z]+\s+)?circuit$`)
	// A federal district's abbreviation before its number: "C.D. Cal. No.".
	districtAbbrRE = regexp.MustCompile(`\b[NSEWC]\.\s?D\.\s?[A-Z][a-z]{1,5}\.`)
	// A tribunal below's number: "WC No. 5-123-456", "Agency No. …".
	lowerLabelRE  = regexp.MustCompile(`(?i)\b(?:w\.?\s?c|dowc|agency|claim|charge)\.?\s*$`)
	lowerNoLineRE = regexp.MustCompile(`(?i)^(?:w\.?\s?c\.?|dowc|agency)\s+nos?\.`)
	// ... and the tribunal's name with its number on one line.
	lowerNoInlineRE = regexp.MustCompile(`(?i)\b(?:office|board|commission|department|agency|bureau|division)\b.*\s(?:w\.?\s?c\.?|dowc|agency)\s+nos?\.\s*[\w-]+$`)
)

var superCtCloseRE = regexp.MustCompile(`(?i)\s*\bsuper(?:ior)?\.?\s*ct\.?\s*nos?\.?\s*[\w-]+\)\s*$`)

var stateLineRE = regexp.MustCompile(`(?i)^state\s+of\s+[a-z ]{4,20}$`)
var appealCourtRE = regexp.MustCompile(`(?i)\bappe(?:al|llate)\b`)

// orgEndRE: a name ending in an organization's word.
var orgEndRE = regexp.MustCompile(`(?i)\b(?:company|corporation|association|authority|district|department|office|board|commission|bank|insurance|group|partnership|trust|university|hospital|institute)$`)

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

var summaryPageRE = regexp.MustCompile(`(?i)^the\s+summaries\s+of\b`)

var versusTailRE = regexp.MustCompile(`\s(?:v|vs|V|VS)\.?\s*\)?\s*$`)

// A title's last word wanting more: "… ORDER RE", "… MOTION FOR".
// roleHeadRE: role words whose compound runs on to the next line
// ("Plaintiff and Counter-", "Claimant, and Third Party"; the line's
// hyphen is gone by then); roleHyphenRE: one that ended in a hyphen.
var (
	roleHeadRE   = regexp.MustCompile(`(?i)^(?:` + roleRun + `\s*,?\s*(?:and\s+)?)?(?:counter|cross|third[- ]party)$`)
	roleHyphenRE = regexp.MustCompile(`(?i)(?:counter|cross)$`)
)

// suffixPossessiveRE: a company's suffix in the possessive begins a
// party's paper's title ("DROPLETS INC.’S ADMINISTRATIVE"); a name may
// hold a possessive ("MCDONALD'S CORPORATION"), not this one.
var suffixPossessiveRE = regexp.MustCompile(`(?i)\b(?:inc|llc|corp|ltd|co|l\.p)\.?['’]s\b`)

// titleOpenRE: the end of a title's line that wants the next line: a
// preposition no name ends with, a participle, a possessive.
// titleRunOnRE: a title line ending in a participle runs on to the next
// line in capitals ("JUDGMENT AND SUPPORTING" / "DOCUMENTS"); one ending
// "… TO" may be followed by the left column's next name ("… IN
// OPPOSITION TO" / "GRANITE MUTUAL LIFE INSURANCE"), so it does not.
var titleRunOnRE = regexp.MustCompile(`(?i)\s(?:supporting|regarding|concerning)$`)

// titleWordsOnly: a line in capitals, without a comma or a role word, all
// of whose words are a motion's or an order's title words ("SERVICE",
// "DISCOVERY AND TO AUTHORIZE", "SERVICE OF PROCESS"), one at least not a
// small word.
func titleWordsOnly(p string) bool {
	if p == "" || strings.ContainsAny(p, ",;") || !isAllCaps(p) || roleWordRE.MatchString(p) {
		return false
	}
	big := 0
	for _, w := range strings.Fields(p) {
		w = strings.Trim(w, ".:()")
		switch {
		case titleSmallWords[w]:
		case titleBigWords[w] || titleFragRE.MatchString(w):
			big++
		default:
			return false
		}
	}
	return big > 0
}

var (
	titleSmallWords = setOf("AND", "OR", "TO", "OF", "FOR", "AN", "A", "THE", "IN", "ON", "RE", "WITH", "ITS", "THEIR", "ALL", "BY", "AS", "AT")
	titleBigWords   = setOf("DISCOVERY", "SERVICE", "PROCESS", "ALTERNATIVE", "EXPEDITE", "EXPEDITED", "AUTHORIZE", "AUTHORIZING", "RELIEF",
		"LEAVE", "FILE", "FILED", "FILING", "SEAL", "SEALED", "DOCUMENTS", "EXTENSION", "EXTEND", "TIME", "STAY", "PRELIMINARY", "TEMPORARY",
		"RESTRAINING", "INJUNCTION", "INJUNCTIVE", "PROTECTIVE", "AMEND", "AMENDED", "TRANSFER", "REMAND", "ENFORCE", "QUASH", "SUBPOENA",
		"SUBPOENAS", "PRODUCTION", "FEES", "COSTS", "DEFAULT", "ENTRY", "APPROVAL", "CONDITIONAL", "SUPPLEMENTAL", "SUPPORT", "SUPPORTING",
		"PART", "PURSUANT", "ALLOWING", "PERMITTING", "ISSUANCE", "CONTINUANCE", "SCHEDULE", "DEADLINES", "EXPEDITING", "SHORTEN", "SHORTENING")
)

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

var titleOpenRE = regexp.MustCompile(`(?i)\s(?:under|to|with|from|supporting|regarding|concerning)$|\S['’]S$`)

var titleTailRE = regexp.MustCompile(`\s(?:RE|REGARDING|OF|FOR|TO|ON|AND|THE)$`)

// A retirement plan's section letter in a name in capitals: "401(k)",
// "403(b)".
var planRE = regexp.MustCompile(`\b\d{3}\s?\(?[a-z]\)?(?:\s|$)`)

var deceasedTailRE = regexp.MustCompile(`(?i)^(.*?),?\s+deceased[.,;]?$`)

// bureauRE: an agency bureau's letters just before a "Docket No." label
// ("GN", "WC", "MB"); bureauKeyRE: such a number's key (round 17).
var (
	bureauLabelRE = regexp.MustCompile(`\b[A-Z]{2,3}\s+((?i:docket)\s+(?i:nos?\.))`)
	bureauRE      = regexp.MustCompile(`(?:^|[\s)])([A-Z]{2,3})\s+$`)
	bureauKeyRE   = regexp.MustCompile(`^([a-z]{2,3})docketnos?(\d{2}-\d{1,6})$`)
)

// topicSubjectRE: an "In the Matter of" subject that is a proceeding's
// topic, not a person or a body: it opens on a verb's "-ing" form or on a
// rulemaking's noun and "of" ("Protecting and Promoting the Open
// Internet", "Restoring Internet Freedom", "Amendment of Part 15 of the
// Commission's Rules", "Implementation of Section 224 of the Act")
// (round 17).
var (
	topicSubjectRE = regexp.MustCompile(`^(?:[A-Z][a-z]{2,}ing\b|(?:Amendments?|Implementation|Revision|Review|Reform|Modernization|Elimination|Establishment|Promotion|Inquiry|Preservation|Improvement|Expansion|Extension)\s+(?:of|into)\b)`)
	suffixWordRE   = regexp.MustCompile(`(?i)\b(?:inc|llc|l\.l\.c|corp|co|ltd|plc|l\.?p|n\.a)\b\.?`)
)

// topicSubject: only before an agency, and never a name with a company's
// suffix or ending in a body's word ("In the Matter of Sterling Bank",
// "Boeing Company"; "… of the Commission's Rules" is a topic).
func topicSubject(dc *docCaption, s string) bool {
	return dc.agency && topicSubjectRE.MatchString(s) && !suffixWordRE.MatchString(s) && !orgEndRE.MatchString(strings.TrimRight(s, " .,;"))
}

// An agency sitting as a tribunal names itself after "Before the", on the
// same line or the next ("Before the" / "Federal Communications
// Commission"; "BEFORE THE SURFACE TRANSPORTATION BOARD"): the court of its
// papers (its address under the name, "Washington, D.C. 20554", is no
// party's line and is read past as any other). The name is a heading of
// two to eight words with an agency’s word in it; a judge’s "BEFORE THE
// HONORABLE …" and running text ("Before the Court is …") are neither
// (round 17).
var (
	beforeTheRE    = regexp.MustCompile(`(?i)^before\s+the$`)
	beforeAgencyRE = regexp.MustCompile(`(?i)^before\s+the\s+(\S.*)$`)
	agencyWordRE   = regexp.MustCompile(`(?i)\b(?:commission|board|authority|administration|agency|office|council|department)\b`)
)

// stateHeadRE: a state's line alone ("STATE OF MICHIGAN",
// "COMMONWEALTH OF PENNSYLVANIA"); courtWordRE: a court's word, which no
// agency under it names (round 19).
var (
	stateHeadRE  = regexp.MustCompile(`(?i)^(?:state|commonwealth)\s+of\s+([a-z]+(?:\s+[a-z]+)?)$`)
	courtWordRE  = regexp.MustCompile(`(?i)\b(?:court|judge|justice|tribunal)\b`)
	matterTailRE = regexp.MustCompile(`(?i)\s+in\s+the\s+matter\s+of\b.*$`)
)

func agencyTribunal(paras []string, i int) (name string, next int, ok bool) {
	p := strings.TrimSpace(paras[i])
	next = i + 1
	if beforeTheRE.MatchString(p) {
		if next >= len(paras) {
			return "", 0, false
		}
		name, next = strings.TrimSpace(paras[next]), next+1
	} else if m := beforeAgencyRE.FindStringSubmatch(p); m != nil {
		name = strings.TrimSpace(m[1])
	} else if m := stateHeadRE.FindStringSubmatch(p); m != nil && stateNameRE.MatchString(m[1]) {
		// A state's agency heads its papers with the state over its
		// name, no "Before the" ("STATE OF MICHIGAN" / "MICHIGAN
		// EMPLOYMENT RELATIONS COMMISSION"; "STATE OF NEW JERSEY" /
		// "PUBLIC EMPLOYMENT RELATIONS COMMISSION"): the agency is the
		// court, named with its state (round 19). A court under the
		// state's line ("SUPERIOR COURT OF NEW JERSEY") is read as a
		// court.
		for next < len(paras) && next <= i+2 && strings.TrimSpace(paras[next]) == "" {
			next++
		}
		if next >= len(paras) {
			return "", 0, false
		}
		name, next = strings.TrimSpace(paras[next]), next+1
		name = strings.TrimSpace(matterTailRE.ReplaceAllString(name, "")) // "… Board In the Matter of", lines the cleaner joined
		if isCourtLine(name) || courtWordRE.MatchString(name) || !agencyName(name) {
			return "", 0, false
		}
		if state := strings.Join(strings.Fields(m[1]), " "); !strings.Contains(strings.ToLower(name), strings.ToLower(state)) {
			name = state + " " + name
		}
		return name, next, true
	} else if usaHeadRE.MatchString(p) {
		// A federal agency's papers headed with the nation's name over
		// the agency's, no "Before the" ("UNITED STATES OF AMERICA" /
		// "MERIT SYSTEMS PROTECTION BOARD"; "… / FEDERAL LABOR RELATIONS
		// AUTHORITY"): the agency is the court (round 23). A criminal
		// caption's "UNITED STATES OF AMERICA," has its comma and its role.
		for next < len(paras) && next <= i+2 && strings.TrimSpace(paras[next]) == "" {
			next++
		}
		if next >= len(paras) {
			return "", 0, false
		}
		name, next = strings.TrimSpace(paras[next]), next+1
		if isCourtLine(name) || courtWordRE.MatchString(name) || beforeAgencyRE.MatchString(name) {
			return "", 0, false
		}
	} else {
		return "", 0, false
	}
	if !agencyName(name) {
		return "", 0, false
	}
	return name, next, true
}

// usaHeadRE: the nation's name alone on a line, an agency's papers' head
// (round 23).
var usaHeadRE = regexp.MustCompile(`(?i)^(?:the\s+)?united\s+states\s+of\s+america$`)

// rightAppealFromRE: a ruled caption's right column opening on the court
// below ("THE PEOPLE …, ) Appeal from the"), round 23.
var rightAppealFromRE = regexp.MustCompile(`(?i)\)\s*appeal(?:ed)?\s+from\b`)

// ofStateNameRE: "OF" and a state's name alone on a line (round 23).
var ofStateNameRE = regexp.MustCompile(`(?i)^of\s+([a-z]+(?:\s+[a-z]+)?)$`)

// mnAppNoRE, azAppNoRE: Minnesota's and Arizona's appellate numbers
// (round 23).
var (
	mnAppNoRE      = regexp.MustCompile(`^A\d{2}-\d{4}$`)
	appealsCourtRE = regexp.MustCompile(`(?i)\bappe(?:als?|llate)\b`)
	azAppNoRE      = regexp.MustCompile(`\b\d\s+CA-(?:CV|CR|JV|SA|IC|UB|MH|FC|TX)\s+\d{2}-\d{4}\b`)
)

// mspbNoRE: a docket number of the Merit Systems Protection Board's form
// (round 23).
var mspbNoRE = regexp.MustCompile(`\b[A-Z]{2}-\d{4}-\d{2}-\d{4}-[A-Z]-\d{1,2}\b`)

// agencyName: a heading of two to eight words, each significant one
// capitalised, one of them an agency's word, with no digit, comma or
// judge.
func agencyName(s string) bool {
	ws := strings.Fields(s)
	if len(ws) < 2 || len(ws) > 8 || len(s) > 90 || strings.ContainsAny(s, ",:;0123456789") || !agencyWordRE.MatchString(s) {
		return false
	}
	for _, w := range ws {
		if connector[strings.ToLower(w)] {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// A minor's (or a ward's) name over the caption's lines with the parents
// or guardians through whom the minor sues: "PETER ROE, a minor, by and"
// / "through his parents and natural" / "guardians, RICHARD ROE and" /
// "SUSAN ROE," / "Plaintiffs,". The minor is a party, and so are the
// parents when the role words are plural ("Plaintiffs": they sue too);
// under a singular role ("Plaintiff,") only the minor is (round 18).
var (
	guardianRE = regexp.MustCompile(`(?i)^(.*?),?\s+(?:(?:a|an)\s+(?:minor|infant|incompetent(?:\s+person)?)\s*,?\s+)?by\s+and\s+through\s+(?:his|her|their|its)\s+` +
		`(?:(?:natural|legal|biological|adoptive|court[- ]appointed)\s+)?(?:parents?|guardians?(?:\s+ad\s+litem)?|next\s+friends?|mother|father)` +
		`(?:(?:\s*,\s*|\s+and\s+)(?:(?:natural|legal|biological|adoptive)\s+)?(?:parents?|guardians?(?:\s+ad\s+litem)?|next\s+friends?))*\s*,?\s+(\S.*?)\s*,?$`)
	byAndRE        = regexp.MustCompile(`(?i)\bby\s+and(?:\s+through\b|$)`)
	railRE         = regexp.MustCompile(`\s[:)§](?:\s|$)`)
	trailingRoleRE = regexp.MustCompile(`(?i),?\s+(` + roleRun + `)[\s.,;:]*$`)
	pluralRoleRE   = regexp.MustCompile(`(?i)^(?:plaintiffs|petitioners|claimants|appellants)\b`)
	guardianSepRE  = regexp.MustCompile(`(?i)\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+`)
)

// guardianWordRE: a word of the "by and through" construction in lower
// case, where a line the text cleaner joined to a ruled caption's line
// resumes the names after the right column's words (round 19).
var guardianWordRE = regexp.MustCompile(`\b(?:through|guardians?|parents?|natural|next\s+friends?)\b`)

// judgeCapsColRE: the judge in capitals at a line's end, after a name's
// comma or a construction's word (round 19).
var judgeCapsColRE = regexp.MustCompile(`(,|\b[a-z]+)\s+(?:(?:SENIOR|DISTRICT|MAGISTRATE|CHIEF)\s+)*JUDGE(?:\s+[A-Z][A-Z.'’-]*){1,4}\s*$`)

// ruledOnly: a ruled caption's line with nothing left of its rule (":",
// ": LEAVE TO AMEND").
func ruledOnly(p string) bool {
	t := strings.TrimSpace(p)
	return strings.HasPrefix(t, ":") || strings.HasPrefix(t, "§")
}

func guardianLines(paras []string) []string {
	// The left column of a ruled caption's line: its first part, and a
	// later part that begins in lower case once the right column's number
	// is cut, the next line the text cleaner joined to it ("by and :
	// CASE NO. 3:21-cv-00321 through his parents :").
	left := func(p string) string {
		// A line that opens with the rule holds the right column only
		// (": LEAVE TO AMEND", ":"): its left column is empty (round 19).
		if t := strings.TrimSpace(p); strings.HasPrefix(t, ":") || strings.HasPrefix(t, "§") {
			return ""
		}
		parts := railRE.Split(p, -1)
		out := parts[0]
		for _, q := range parts[1:] {
			q = strings.TrimSpace(caseRefInitialsRE.ReplaceAllString(bareCaseLabelRE.ReplaceAllString(q, " "), " "))
			if r := firstRune(q); unicode.IsLower(r) {
				out += " " + q
			} else if loc := guardianWordRE.FindStringIndex(q); loc != nil && loc[0] > 0 {
				// The right column's words before the joined line's
				// ("JUDGE SMITH guardians, ALAN ROE and"): the names
				// resume at the construction's word (round 19).
				out += " " + q[loc[0]:]
			}
		}
		out = caseRefInitialsRE.ReplaceAllString(bareCaseLabelRE.ReplaceAllString(out, " "), " ")
		// An unruled caption's right column at a names' line end: the
		// judge ("guardians, JUDGE SMITH"), round 19.
		out = judgeCapsColRE.ReplaceAllString(out, "$1")
		return strings.Join(strings.Fields(out), " ")
	}
	for i := 0; i < len(paras) && i < 30; i++ {
		if !byAndRE.MatchString(left(paras[i])) {
			continue
		}
		// (A ruled column's lines whose left part is empty, between the
		// names or before their role words, are read past: round 19.)
		text, k := left(paras[i]), i
		for j := i + 1; j < len(paras) && j <= i+7; j++ {
			l := left(paras[j])
			if l == "" && ruledOnly(paras[j]) {
				continue
			}
			if l == "" || roleOnlyRE.MatchString(l) || isVersusWord(l) {
				break
			}
			text, k = text+" "+l, j
		}
		// The role words on the names' last line ("…, KAREN MILLS,
		// Plaintiffs,"), as the text cleaner may join them.
		role := ""
		if loc := trailingRoleRE.FindStringSubmatchIndex(text); loc != nil {
			role, text = text[loc[2]:loc[3]], text[:loc[0]]
		} else {
			for j := k + 1; j < len(paras) && j <= k+4; j++ {
				if l := left(paras[j]); l != "" || !ruledOnly(paras[j]) {
					role = l
					break
				}
			}
		}
		m := guardianRE.FindStringSubmatch(text)
		if m == nil || !looksLikeName(firstPart(m[1])) {
			continue
		}
		out := append(append([]string{}, paras[:i]...), m[1]+",")
		if pluralRoleRE.MatchString(role) {
			for _, g := range guardianSepRE.Split(m[2], -1) {
				if g = strings.TrimSpace(g); g != "" {
					out = append(out, g+",")
				}
			}
		}
		if trailingRoleRE.MatchString(left(paras[k])) {
			out = append(out, role+",")
		}
		// The right column's lines left of nothing up to the role words
		// (": LEAVE TO AMEND"), their title's head gone with the names'
		// lines, are no names (round 19).
		rest := paras[k+1:]
		for len(rest) > 0 && ruledOnly(rest[0]) {
			rest = rest[1:]
		}
		return append(out, rest...)
	}
	return paras
}

// A labor board's caption (an agency's representation or unfair-labor-
// practice case) names each party above its role line: "Employer",
// "Petitioner", "Intervenor", and the board's own words, "Union",
// "Intervenor/Union", "Petitioner/Union", "Charging Party", "Charged
// Party", "Labor Organization", "Party in Interest". The charging party
// brings the case (the plaintiff's side), the respondent or charged party
// answers it (the defendant's), and a union or party in interest named
// only as such is neither (round 19).
var laborRoleRE = regexp.MustCompile(`^(?:(?:Employer|Petitioner|Intervenor|Intervener|Respondent|Incumbent|Employer-Respondent|EMPLOYER|PETITIONER|INTERVENOR|RESPONDENT)\s*[/-]\s*)?` +
	`(?:Union|UNION|Labor Organization|LABOR ORGANIZATION|Charging Party|CHARGING PARTY|Charged Party|CHARGED PARTY|Party in Interest|PARTY IN INTEREST)` +
	`(?:\s*[/-]\s*(?:Petitioner|Intervenor|Intervener|Respondent|Employer|PETITIONER|INTERVENOR|RESPONDENT|EMPLOYER))?[.,;]?$`)

// titleColTailRE: where the right column's title, beside names joined by
// ";", takes up a name's line: a motion's words ("REPORT OF DEFENDANTS’",
// "DAMAGES EXPERT …", "AND TO PRECLUDE …", "TESTIFYING AT TRIAL") or an
// "AND" and a few words ending in a word wanting more ("AND ADRIAN
// FLEISSIG FROM"), round 20.
var titleColTailRE = regexp.MustCompile(`\s+(?:(?:AND\s+)?TO\s+(?:PRECLUDE|STRIKE|EXCLUDE|SEAL|COMPEL|DISMISS)\b|(?:REPORTS?|DAMAGES|EXPERTS?|TESTIFYING|TESTIMONY|PRECLUDE|STRIKE|EXCLUDE|DAUBERT)\b|AND\s+(?:[A-Z][A-Z.'’-]*\s+){1,3}(?:FROM|OF|TO|FOR|IN|ON|RE|REGARDING)$)`)

// compoundRoleRE: a state labor board's compound role line, the party's
// kind and then its side ("Public Employer-Respondent", "Labor
// Organization-Charging Party", "Employer-Petitioner", "Union-Respondent"):
// the side is the last part's (round 20).
var compoundRoleRE = regexp.MustCompile(`(?i)^((?:public\s+)?employer|union|labor\s+organization|exclusive\s+(?:bargaining\s+)?representative|employee|incumbent)\s*[-–/]\s*(respondent|petitioner|charging\s+party|charged\s+party)[.,;]?$`)

func agencyRole(words string, role Role, capacity string) (Role, string) {
	w := strings.ToLower(words)
	if m := compoundRoleRE.FindStringSubmatch(strings.TrimSpace(words)); m != nil {
		switch last := strings.Join(strings.Fields(strings.ToLower(m[2])), " "); last {
		case "respondent", "charged party":
			return RoleDefendant, last
		default:
			return RolePlaintiff, last
		}
	}
	switch {
	case strings.Contains(w, "charging party"):
		return RolePlaintiff, "charging party"
	case strings.Contains(w, "charged party"):
		return RoleDefendant, "charged party"
	case strings.Contains(w, "intervenor") || strings.Contains(w, "intervener"):
		return RoleOther, "intervenor"
	case strings.Contains(w, "petitioner"):
		return RolePlaintiff, "petitioner"
	case strings.Contains(w, "respondent") || strings.Contains(w, "employer"):
		return RoleDefendant, capacity
	case strings.Contains(w, "union") || strings.Contains(w, "labor organization") || strings.Contains(w, "party in interest"):
		return RoleOther, strings.TrimRight(w, ".,; ")
	}
	return role, capacity
}

// unionLocalRE: a union's local after its name's comma ("LOCAL 353",
// "LOCAL NO. 18", "LOCAL UNION NO. 1-A", "DISTRICT LODGE 70"); and
// unionLocalTailRE the same at a name's end, whatever comes before it
// ("… UNION AND ITS LOCAL 353"), whose number is no footnote's (round 19).
var (
	unionLocalRE     = regexp.MustCompile(`(?i)^(?:and\s+its\s+(?:affiliated\s+)?)?(?:local(?:\s+union|\s+lodge)?|(?:district\s+)?lodge|district\s+council)(?:\s+no\.?)?\s*\d+(?:-?[A-Z0-9]+)?$`)
	unionLocalTailRE = regexp.MustCompile(`(?i)\b(?:local(?:\s+union|\s+lodge)?|lodge|district\s+council)(?:\s+no\.?)?\s*\d+(?:-?[A-Z0-9]+)?$`)
)

// singularAgencyRoleRE: one party's role line in an agency's caption.
var singularAgencyRoleRE = regexp.MustCompile(`^(?:Employer|Petitioner|Intervenor|Intervener|Respondent|Union|Charging Party|Charged Party|Employer-Petitioner|Intervenor/Union|Petitioner/Union|EMPLOYER|PETITIONER|INTERVENOR|RESPONDENT|UNION)[.,;]?$`)

// oneAgencyName: a block's text as one party's name, its description
// after a comma in lower case cut ("MARY ROE, an Individual").
func oneAgencyName(block string) string {
	block = etAlRE.ReplaceAllString(block, "")
	if loc := lowerDescRE.FindStringIndex(block); loc != nil {
		block = block[:loc[0]]
	}
	ns := splitCleanNames(cleanName(block))
	if len(ns) != 1 {
		return ""
	}
	return ns[0]
}

var lowerDescRE = regexp.MustCompile(`,\s+(?:an?|the)\s+\p{Ll}`)

// addresseeCourt reports whether the court line at i is a letter's
// address block: the line above names the judge the letter is to ("Hon.
// Sarah B. Johnson, J.S.C.", "The Honorable …", "Judge …"), and a "Re:" or
// "Dear" line follows within a few lines. A letter to a judge names the
// court where it is sent, not a caption's court (round 20).
func addresseeCourt(paras []string, i int) bool {
	k := i - 1
	for k >= 0 && strings.TrimSpace(paras[k]) == "" {
		k--
	}
	if k < 0 || !addresseeRE.MatchString(strings.TrimSpace(paras[k])) {
		return false
	}
	for j := i + 1; j < len(paras) && j <= i+8; j++ {
		if letterOpenRE.MatchString(strings.TrimSpace(paras[j])) {
			return true
		}
	}
	return false
}

var (
	addresseeRE  = regexp.MustCompile(`^(?:The\s+)?(?:Hon\.|Honorable|HONORABLE|HON\.|Judge|JUDGE)\s+\S`)
	letterOpenRE = regexp.MustCompile(`^(?:Re|RE)\s*:|^Dear\s+\S`)
)
