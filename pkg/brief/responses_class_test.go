package brief_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
)

// Constructions of real federal and state answers, each written small:
// the classes a real answer the tests have never seen is made of.

// statusesOf is "paragraph:status" of the complaint's (doc1.pdf) entries.
func statusesOf(b brief.Brief) string {
	var got []string
	for _, r := range b.Responses {
		if r.Allegation.DocumentName == "doc1.pdf" {
			got = append(got, r.Paragraph+":"+string(r.Status))
		}
	}
	return strings.Join(got, " ")
}

// N.D. Ill. style: each allegation quoted, then "ANSWER:" on its own
// lines; the quotation runs over lines, holds words a status reader
// would take ("denied", "admitted"), and the answer runs over lines too.
func TestResponsesQuotedAllegationsThenAnswer(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta denied Acme's claim for the missing widgets.
3. Beta admitted in writing that it had not delivered.
4. Acme has suffered damages.
`
	answer := pleadingCaption + `ANSWER
1. Acme is a Delaware limited liability company.
ANSWER: Beta lacks knowledge or information sufficient to form a belief
about the truth of the allegations of paragraph 1.
2. Beta denied Acme's claim for the missing widgets.
ANSWER: Admitted.
3. Beta admitted in writing that it had not delivered.
RESPONSE: Denied.
4. Acme has suffered damages.
Answer: Beta denies the allegations of paragraph 4.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:no_knowledge 2:admitted 3:denied 4:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
}

// An answer that quotes the allegation and gives the status on the next
// line with no label ("Admitted.", "Denied."): the quotation's own words
// are not the response.
func TestResponsesQuotedAllegationsUnlabelled(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta denied Acme's claim for the missing widgets.
3. Beta admitted in writing that it had not delivered.
`
	answer := pleadingCaption + `ANSWER
1. Acme is a Delaware limited liability company.
Admitted.
2. Beta denied Acme's claim for the missing widgets.
Admitted.
3. Beta admitted in writing that it had not delivered.
Denied.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:admitted 3:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "3"); r.Response == nil || strings.Contains(r.Response.Text, "in writing") {
		t.Errorf("paragraph 3: response %+v, want the status, not the quotation", r.Response)
	}
}

// "Answering paragraph 5, Defendant …" and "In response to Paragraph 6 …":
// unnumbered responses that name their paragraph, and numbered responses
// whose own numbers are not the complaint's.
func TestResponsesAnsweringParagraphN(t *testing.T) {
	answer := pleadingCaption + `ANSWER
Answering paragraph 1 of the Complaint, Beta admits the allegations.
Answering paragraph 2, Beta denies that it is a North Dakota corporation.
In response to Paragraph 3, Beta admits that the parties signed an agreement and denies the remaining allegations.
1. Answering paragraph 4 of the Complaint, Beta states that the Supply Agreement speaks for itself and denies any characterization of it.
2. Answering paragraph 5 of the Complaint, Beta is without knowledge or information sufficient to form a belief as to its truth and therefore denies it.
`
	b := buildWritten(t, writtenComplaint, answer)
	for n, st := range map[string]brief.ResponseStatus{"1": brief.StatusAdmitted, "2": brief.StatusDenied, "3": brief.StatusPartlyAdmitted, "4": brief.StatusDenied, "5": brief.StatusNoKnowledge, "6": brief.StatusNotAnswered} {
		if r := responseOf(t, b, n); r.Status != st {
			t.Errorf("paragraph %s: %s, want %s (%q)", n, r.Status, st, textOf(r.Response))
		}
	}
	if r := responseOf(t, b, "1"); r.Response == nil || !strings.HasPrefix(r.Response.Text, "Answering paragraph 1") {
		t.Errorf("paragraph 1: %+v", r.Response)
	}
	if r := responseOf(t, b, "6"); r.Response != nil {
		t.Errorf("paragraph 6: answered by %q, which answers paragraph 5", r.Response.Text)
	}
}

// An answer that opens with a numbered general denial and then answers by
// reference ("2. Beta admits the allegations in Paragraph 1"): its own
// numbers are not the complaint's, and the general denial answers nothing
// in particular.
func TestResponsesOffsetNumberingByReference(t *testing.T) {
	answer := pleadingCaption + `ANSWER
GENERAL DENIAL
1. Beta denies each and every allegation of the Complaint except as expressly admitted herein.
RESPONSES TO SPECIFIC ALLEGATIONS
2. Beta admits the allegations in Paragraph 1.
3. Beta admits the allegations in Paragraph 2.
4. Beta lacks knowledge or information sufficient to form a belief about the allegations in Paragraph 3.
5. Beta admits the allegations in Paragraph 4.
`
	b := buildWritten(t, writtenComplaint, answer)
	for n, st := range map[string]brief.ResponseStatus{"1": brief.StatusAdmitted, "2": brief.StatusAdmitted, "3": brief.StatusNoKnowledge, "4": brief.StatusAdmitted, "5": brief.StatusDenied} {
		if r := responseOf(t, b, n); r.Status != st {
			t.Errorf("paragraph %s: %s, want %s (%q)", n, r.Status, st, textOf(r.Response))
		}
	}
	if r := responseOf(t, b, "2"); r.Response == nil || !strings.Contains(r.Response.Text, "Paragraph 2") {
		t.Errorf("paragraph 2: %+v, want the response that names it", r.Response)
	}
	if r := responseOf(t, b, "5"); !strings.Contains(r.Note, "general denial") {
		t.Errorf("paragraph 5: note %q, want the general denial (%+v)", r.Note, r.Response)
	}
}

// Legal conclusions with the usual hedge, and the other wordings of
// "no response is required".
func TestResponsesLegalConclusionHedged(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Admitted.
4. Admitted.
5. Admitted.
6. Paragraph 6 states legal conclusions to which no response is required. To the extent a response is required, Beta denies the allegations of paragraph 6.
7. The allegations of paragraph 7 are not directed to Beta, and no response is required of it; to the extent a response is deemed required, Beta denies them.
8. Paragraph 8 contains conclusions of law, not allegations of fact, and Beta therefore does not respond to it.
`
	b := buildWritten(t, writtenComplaint, answer)
	for _, n := range []string{"6", "7", "8"} {
		r := responseOf(t, b, n)
		if r.Status != brief.StatusNoResponseRequired {
			t.Errorf("paragraph %s: %s, want no_response_required (%q)", n, r.Status, textOf(r.Response))
		}
		if n != "8" && !strings.Contains(r.Note, "to the extent a response is required, denied") {
			t.Errorf("paragraph %s: note %q, want the denial noted", n, r.Note)
		}
	}
}

// "The document speaks for itself" with a reference to the document and
// nothing more is neither an admission nor a denial; with "denies any
// characterization" it is a denial.
func TestResponsesDocumentSpeaksForItself(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Paragraph 3 purports to describe a written agreement, which speaks for itself, and Beta refers the Court to the agreement for its complete and accurate contents.
4. The Supply Agreement is a document that speaks for itself; Beta denies any allegation of paragraph 4 inconsistent with its terms.
`
	b := buildWritten(t, writtenComplaint, answer)
	if r := responseOf(t, b, "3"); r.Status != brief.StatusNotAnswered || !strings.Contains(r.Note, "speaks for itself") || !strings.Contains(r.Note, "8(b)(6)") {
		t.Errorf("paragraph 3: %s %q", r.Status, r.Note)
	}
	if r := responseOf(t, b, "4"); r.Status != brief.StatusDenied || !strings.Contains(r.Note, "speaks for itself") {
		t.Errorf("paragraph 4: %s %q", r.Status, r.Note)
	}
}

// An answer that repeats the complaint's headings between its numbered
// responses, in capitals and in title case.
func TestResponsesRepeatedHeadings(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
THE PARTIES
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
JURISDICTION AND VENUE
3. This Court has jurisdiction under 28 U.S.C. § 1332.
Factual Allegations
4. The parties signed a Supply Agreement.
5. Beta delivered no widgets in June 2024.
`
	answer := pleadingCaption + `ANSWER
THE PARTIES
1. Admitted.
2. Admitted.
JURISDICTION AND VENUE
3. Paragraph 3 states a legal conclusion to which no response is required.
Factual Allegations
4. Admitted.
5. Denied.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:admitted 3:no_response_required 4:admitted 5:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "3"); strings.Contains(r.Allegation.Text, "Factual") || strings.Contains(textOf(r.Response), "Factual") {
		t.Errorf("paragraph 3 took the next heading: %q / %q", r.Allegation.Text, textOf(r.Response))
	}
}

// Affirmative defenses and a counterclaim numbered 1..n again, under the
// headings real answers give them: none of them answers a paragraph.
func TestResponsesNumberingRestartsAfterTheResponses(t *testing.T) {
	for _, head := range []string{
		"AFFIRMATIVE AND OTHER DEFENSES",
		"DEFENDANT'S AFFIRMATIVE DEFENSES",
		"BETA SUPPLY CO.'S AFFIRMATIVE DEFENSES",
		"DEFENSES AND AFFIRMATIVE DEFENSES",
		"ADDITIONAL AND AFFIRMATIVE DEFENSES",
		"STATEMENT OF AFFIRMATIVE DEFENSES",
		"Affirmative Defenses",
		"Defendant's Affirmative Defenses",
		"Separate and Additional Defenses",
		"DEFENDANT BETA SUPPLY CO.'S COUNTERCLAIMS AGAINST ACME WIDGETS LLC",
		"COUNTERCLAIM",
		"PARTIES, JURISDICTION AND VENUE",
	} {
		answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
4. Denied.
` + head + `
1. Acme's claims are barred in whole or in part by the statute of limitations.
2. Acme admitted in writing that it waived the delivery terms.
3. Acme has denied Beta the benefit of its bargain.
4. Acme failed to mitigate its damages.
5. Acme's claims are barred by waiver.
`
		b := buildWritten(t, writtenComplaint, answer)
		got := statusesOf(b)
		want := "1:admitted 2:admitted 3:not_answered 4:denied 5:not_answered"
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: responses %s, want %s …", head, got, want)
		}
		for _, r := range b.Responses {
			if r.Response != nil && strings.Contains(r.Response.Text, "Acme") {
				t.Errorf("%s: paragraph %s answered by %q", head, r.Paragraph, r.Response.Text)
			}
		}
	}
}

// Pleading paper: line numbers in the margin, the paper's title in the
// footer of each page, a footnote at a page's foot, and a response that
// runs over the page break.
func TestResponsesPleadingPaperBetweenLines(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
3. The parties signed a Supply Agreement.
4. Beta delivered no widgets in June 2024.
5. Acme has suffered damages.
`
	answer := `1 UNITED STATES DISTRICT COURT
2 DISTRICT OF NORTH DAKOTA
3 ACME WIDGETS LLC, Plaintiff,
4 v.
5 BETA SUPPLY CO., Defendant.
6 Case No. 1:25-cv-00017
7 DEFENDANT'S ANSWER TO COMPLAINT
8 1. Admitted.
9 2. Admitted.
10 3. Beta admits that the parties signed a Supply Agreement,1 and
11 1 The agreement is dated March 3, 2024; Beta denies that it was signed in June.
12 DEFENDANT'S ANSWER TO COMPLAINT - 1
` + "\f" + `13 denies the remaining allegations of paragraph 3.
14 4. Beta admits that it delivered no widgets in June 2024.
15 5. Beta is without sufficient knowledge or information to form a belief as to
16 the truth of the allegations of paragraph 5 and therefore denies them.
17 AFFIRMATIVE DEFENSES
18 1. Failure to state a claim.
19 DEFENDANT'S ANSWER TO COMPLAINT - 2
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:admitted 3:partly_admitted 4:admitted 5:no_knowledge"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "3"); r.Response == nil || !strings.Contains(r.Response.Text, "denies the remaining") || strings.Contains(r.Response.Text, "ANSWER TO COMPLAINT") {
		t.Errorf("paragraph 3: %+v, want the response across the page break without the footer", r.Response)
	}
}

// Two-page answer: the footer repeats on only two pages, too few for the
// running-header rule, and a response runs from one to the other.
func TestResponsesTwoPageFooter(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
3. The parties signed a Supply Agreement.
4. Beta delivered no widgets in June 2024.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Beta admits that the parties signed a Supply Agreement on March 3, 2024, and
DEFENDANT'S ANSWER TO COMPLAINT
` + "\f" + `denies the remaining allegations of paragraph 3.
4. Denied.
DEFENDANT'S ANSWER TO COMPLAINT
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:admitted 3:partly_admitted 4:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
}

// The short and hedged wordings real answers use for each status.
func TestResponsesStatusWordings(t *testing.T) {
	cases := map[string]brief.ResponseStatus{
		"Denied.":                               brief.StatusDenied,
		"Deny.":                                 brief.StatusDenied,
		"Admit.":                                brief.StatusAdmitted,
		"Admitted.":                             brief.StatusAdmitted,
		"Denied as stated.":                     brief.StatusDenied,
		"Admitted upon information and belief.": brief.StatusAdmitted,
		"Upon information and belief, Beta admits the allegations.": brief.StatusAdmitted,
		"Upon information and belief, denied.":                      brief.StatusDenied,
		"Beta is without knowledge or information sufficient to form a belief as to the truth of the allegations and therefore denies them.": brief.StatusNoKnowledge,
		"Beta is without sufficient knowledge to admit or deny the allegations, and therefore denies them.":                                  brief.StatusNoKnowledge,
		"Beta lacks the knowledge necessary to admit or deny the allegations.":                                                               brief.StatusNoKnowledge,
		"Beta is without personal knowledge of the allegations and therefore denies them.":                                                   brief.StatusNoKnowledge,
		"Beta has no knowledge of the allegations and therefore denies them.":                                                                brief.StatusNoKnowledge,
		"Beta does not possess sufficient information to admit or deny the allegations.":                                                     brief.StatusNoKnowledge,
		"Denied for want of knowledge.": brief.StatusNoKnowledge,
		"Beta lacks information sufficient to form a belief as to the truth of these allegations and, on that basis, denies them.": brief.StatusNoKnowledge,
		"Beta is without knowledge or information sufficient to form a belief as to the allegations, which are therefore denied.":  brief.StatusNoKnowledge,
		"Admitted in part, denied in part.":                                                                                      brief.StatusPartlyAdmitted,
		"Beta admits only that it is a corporation.":                                                                             brief.StatusPartlyAdmitted,
		"Denied, except that Beta admits that it is a corporation.":                                                              brief.StatusPartlyAdmitted,
		"Beta admits that it is a corporation and is without knowledge as to the rest.":                                          brief.StatusPartlyAdmitted,
		"Defendants Beta Supply Co. and Gamma Logistics LLC admit the allegations.":                                              brief.StatusAdmitted,
		"Defendants Beta Supply Co. and Gamma Logistics LLC deny the allegations.":                                               brief.StatusDenied,
		"Beta admits the allegations as to itself. Gamma lacks knowledge or information sufficient to form a belief about them.": brief.StatusPartlyAdmitted,
		"The allegations are not directed at Beta and require no response.":                                                      brief.StatusNoResponseRequired,
		"Beta is not required to respond to legal argument.":                                                                     brief.StatusNoResponseRequired,
		"The allegations call for no responsive pleading; no responsive pleading is required.":                                   brief.StatusNoResponseRequired,
		"Beta need not respond to Acme's characterization of its claims.":                                                        brief.StatusNoResponseRequired,
		"No response is required. To the extent one is required, Beta admits that it is a corporation.":                          brief.StatusNoResponseRequired,
		"Beta denies knowledge or information sufficient to form a belief as to the allegations.":                                brief.StatusNoKnowledge,
	}
	for text, st := range cases {
		answer := pleadingCaption + "ANSWER\n1. " + text + "\n"
		b := buildWritten(t, writtenComplaint, answer)
		if r := responseOf(t, b, "1"); r.Status != st {
			t.Errorf("%q: %s, want %s", text, r.Status, st)
		}
	}
}

// An answer numbered as the complaint whose response to one paragraph
// refers to another's ("… and refers to its response to paragraph 8"):
// the response numbered 8 still answers paragraph 8.
func TestResponsesMirrorNumberingWithCrossReference(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Admitted.
4. Denied.
5. Denied.
6. Denied.
7. Denied.
8. Admitted.
9. Beta denies the allegations of paragraph 9 and refers to its response to paragraph 8.
10. Denied.
`
	b := buildWritten(t, writtenComplaint, answer)
	if r := responseOf(t, b, "8"); r.Status != brief.StatusAdmitted || r.Response == nil || !strings.HasPrefix(r.Response.Text, "8. ") {
		t.Errorf("paragraph 8: %s %+v", r.Status, r.Response)
	}
	if r := responseOf(t, b, "9"); r.Status != brief.StatusDenied || r.Response == nil || !strings.HasPrefix(r.Response.Text, "9. ") {
		t.Errorf("paragraph 9: %s %+v", r.Status, r.Response)
	}
}

// A response's own "denies all other allegations of paragraph 2 not
// expressly admitted" is that paragraph's, not a general denial of the
// complaint: the paragraphs the answer never reaches stay flagged.
func TestResponsesParagraphDenialIsNotGeneral(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Beta admits that it is a corporation, and denies all other allegations of paragraph 2 not expressly admitted.
`
	b := buildWritten(t, writtenComplaint, answer)
	if r := responseOf(t, b, "2"); r.Status != brief.StatusPartlyAdmitted {
		t.Errorf("paragraph 2: %s", r.Status)
	}
	if r := responseOf(t, b, "3"); r.Status != brief.StatusNotAnswered || r.Response != nil {
		t.Errorf("paragraph 3: %s %+v, want not answered (no general denial)", r.Status, r.Response)
	}
}

// An answer's defences under a heading the start-of-line rule misses
// ("DEFENDANT'S AFFIRMATIVE DEFENSES"), unnumbered, one naming paragraphs
// of the complaint: they answer none of them.
func TestResponsesDefencesHeadingAnywhere(t *testing.T) {
	for _, head := range []string{"DEFENDANT'S AFFIRMATIVE DEFENSES", "BETA SUPPLY CO.'S SEPARATE DEFENSES", "Defendant's Affirmative Defenses"} {
		answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Denied.
` + head + `
Beta denies that it owes the damages alleged in paragraphs 10 through 12, which are barred by the statute of limitations.
Acme failed to mitigate its damages.
`
		b := buildWritten(t, writtenComplaint, answer)
		for _, n := range []string{"10", "11", "12"} {
			if r := responseOf(t, b, n); r.Response != nil {
				t.Errorf("%s: paragraph %s answered by the defence %q", head, n, r.Response.Text)
			}
		}
	}
}

// Extraction often sets a paragraph's number (or an "ANSWER:" label) on
// a line of its own, its text on the next: "1." / "Acme is …".
func TestResponsesNumberOnItsOwnLine(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
PARTIES
1.
Acme is a Delaware limited liability company.
2.
Beta is a North Dakota corporation.
3.
The parties signed a Supply Agreement.
4.
Beta delivered no widgets in June 2024.
`
	answer := pleadingCaption + `ANSWER
1.
Admitted.
2.
Beta denies that it is a North Dakota corporation.
3.
The parties signed a Supply Agreement.
ANSWER:
Beta lacks knowledge or information sufficient to form a belief about the date.
4.
Denied.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:denied 3:no_knowledge 4:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "1"); !strings.Contains(r.Allegation.Text, "Delaware") {
		t.Errorf("paragraph 1: allegation %q", r.Allegation.Text)
	}
}

// Answers in the Georgia and Alabama manner open with numbered defences
// and answer the complaint's paragraphs under one of them ("FOURTH
// DEFENSE … responds to the numbered paragraphs as follows"); a general
// denial among the defences still denies what is not admitted.
func TestResponsesDefencesFirst(t *testing.T) {
	answer := pleadingCaption + `ANSWER AND DEFENSES
FIRST DEFENSE
1. The Complaint fails to state a claim upon which relief can be granted.
SECOND DEFENSE
Acme's claims are barred by the statute of limitations.
THIRD DEFENSE
Beta denies each and every allegation of the Complaint not expressly admitted below.
FOURTH DEFENSE
Beta responds to the numbered paragraphs of the Complaint as follows:
1. Admitted.
2. Admitted.
3. Beta admits that the parties signed a Supply Agreement and denies the remaining allegations of paragraph 3.
4. Denied.
5. Denied.
FIFTH DEFENSE
1. Acme failed to mitigate its damages.
`
	b := buildWritten(t, writtenComplaint, answer)
	got := statusesOf(b)
	if want := "1:admitted 2:admitted 3:partly_admitted 4:denied 5:denied 6:denied"; !strings.HasPrefix(got, want) {
		t.Errorf("responses %s, want %s …", got, want)
	}
	if r := responseOf(t, b, "1"); r.Response == nil || r.Response.Text != "1. Admitted." {
		t.Errorf("paragraph 1: %+v, want the fourth defence's response", r.Response)
	}
	if r := responseOf(t, b, "6"); !strings.Contains(r.Note, "general denial") {
		t.Errorf("paragraph 6: note %q, want the general denial", r.Note)
	}
}

// A federal complaint and a two-defendant answer as they are filed:
// docket stamps, an introduction with a general denial, the complaint's
// headings repeated, a hedged "requires no response", "speaks for
// itself" with and without a denial, split responses of two defendants,
// incorporations, a response to the prayer, numbered affirmative
// defences and a certificate of service.
func TestResponsesFederalAnswerWhole(t *testing.T) {
	complaint := `Case 1:25-cv-00017 Document 1 Filed 09/03/24 Page 1 of 3
UNITED STATES DISTRICT COURT
DISTRICT OF NORTH DAKOTA
ACME WIDGETS LLC,
Plaintiff,
v.
BETA SUPPLY CO. and GAMMA LOGISTICS LLC,
Defendants.
Case No. 1:25-cv-00017
COMPLAINT AND DEMAND FOR JURY TRIAL
Plaintiff Acme Widgets LLC ("Acme"), by its attorneys, for its Complaint against Defendants Beta Supply Co. ("Beta") and Gamma Logistics LLC ("Gamma"), alleges as follows:
NATURE OF THE ACTION
1. This is an action for breach of a Supply Agreement dated March 3, 2024.
THE PARTIES
2. Acme is a Delaware limited liability company with its principal place of business in Fargo, North Dakota.
3. Beta is a Minnesota corporation with its principal place of business in Minneapolis.
4. Gamma is a North Dakota limited liability company.
JURISDICTION AND VENUE
5. This Court has subject matter jurisdiction under 28 U.S.C. § 1332 because the parties are diverse and the amount in controversy exceeds $75,000.
6. Venue is proper in this District under 28 U.S.C. § 1391.
FACTUAL ALLEGATIONS
7. On March 3, 2024, Acme and Beta entered into the Supply Agreement, a true copy of which is attached as Exhibit A.
8. The Supply Agreement required Beta to:
a. deliver 500 widgets each month; and
b. ship them through Gamma.
Case 1:25-cv-00017 Document 1 Filed 09/03/24 Page 2 of 3
` + "\f" + `Case 1:25-cv-00017 Document 1 Filed 09/03/24 Page 2 of 3
9. Beta delivered no widgets in June 2024.
10. Gamma lost the July shipment.
COUNT I
(Breach of Contract — Against Beta)
11. Acme repeats and realleges paragraphs 1 through 10 as if fully set forth herein.
12. Beta breached the Supply Agreement.
13. Acme has been damaged in an amount to be proven at trial, but not less than $250,000.
COUNT II
(Negligence — Against Gamma)
14. Acme repeats and realleges paragraphs 1 through 10.
15. Gamma owed Acme a duty of care in handling the July shipment.
PRAYER FOR RELIEF
WHEREFORE, Acme requests that the Court:
A. award damages of not less than $250,000;
B. award pre- and post-judgment interest; and
C. grant such other relief as is just.
JURY DEMAND
Acme demands a trial by jury on all issues so triable.
Dated: September 3, 2024
/s/ Jane Counsel
(701) 555-0134
`
	answer := `Case 1:25-cv-00017 Document 12 Filed 10/01/24 Page 1 of 3
UNITED STATES DISTRICT COURT
DISTRICT OF NORTH DAKOTA
ACME WIDGETS LLC,
Plaintiff,
v.
BETA SUPPLY CO. and GAMMA LOGISTICS LLC,
Defendants.
Case No. 1:25-cv-00017
DEFENDANTS' ANSWER AND AFFIRMATIVE DEFENSES
Defendants Beta Supply Co. ("Beta") and Gamma Logistics LLC ("Gamma") (together, "Defendants"), by their undersigned counsel, answer the Complaint as follows. Except as expressly admitted below, Defendants deny each and every allegation of the Complaint, including any allegations in its headings.
NATURE OF THE ACTION
1. Paragraph 1 characterizes the action and requires no response. To the extent a response is required, Defendants admit that Acme purports to bring an action for breach of contract and deny that Acme is entitled to any relief.
THE PARTIES
2. Defendants lack knowledge or information sufficient to form a belief about the truth of the allegations of Paragraph 2 and therefore deny them.
3. Admitted.
4. Admitted.
JURISDICTION AND VENUE
5. Paragraph 5 states legal conclusions to which no response is required.
6. Paragraph 6 states a legal conclusion to which no response is required. To the extent a response is required, Defendants do not contest venue.
FACTUAL ALLEGATIONS
7. Defendants admit that Acme and Beta entered into the Supply Agreement on March 3, 2024. The Supply Agreement speaks for itself, and Defendants deny any characterization of it inconsistent with its terms.
8. The Supply Agreement speaks for itself, and Defendants refer the Court to it for its complete contents.
Case 1:25-cv-00017 Document 12 Filed 10/01/24 Page 2 of 3
` + "\f" + `Case 1:25-cv-00017 Document 12 Filed 10/01/24 Page 2 of 3
9. Denied.
10. Gamma denies the allegations of Paragraph 10. Beta lacks knowledge or information sufficient to form a belief about them and therefore denies them.
COUNT I
11. Defendants incorporate their responses to Paragraphs 1 through 10.
12. Denied.
13. Denied.
COUNT II
14. Defendants incorporate their responses to Paragraphs 1 through 10.
15. Paragraph 15 states a legal conclusion to which no response is required. To the extent a response is required, Gamma denies it.
RESPONSE TO PRAYER FOR RELIEF
Defendants deny that Acme is entitled to any of the relief requested in its Prayer for Relief, including paragraphs A through C.
AFFIRMATIVE DEFENSES
1. The Complaint fails to state a claim against Gamma.
2. Acme's claims are barred, in whole or in part, by its failure to mitigate its damages.
Dated: October 1, 2024
CERTIFICATE OF SERVICE
I hereby certify that on October 1, 2024, I electronically filed the foregoing with the Clerk of Court using the CM/ECF system.
`
	b := buildWritten(t, complaint, answer)
	want := "1:no_response_required 2:no_knowledge 3:admitted 4:admitted 5:no_response_required 6:no_response_required 7:partly_admitted 8:denied 9:denied 10:no_knowledge 11:no_response_required 12:denied 13:denied 14:no_response_required 15:no_response_required"
	if got := statusesOf(b); got != want {
		t.Errorf("responses\n got %s\nwant %s", got, want)
	}
	if r := responseOf(t, b, "1"); !strings.Contains(r.Note, "to the extent a response is required, admitted in part and denied in part") {
		t.Errorf("paragraph 1: note %q, want the hedge's partial admission noted", r.Note)
	}
	// The general denial denies what "speaks for itself" left unanswered,
	// and the specific response stays cited.
	if r := responseOf(t, b, "8"); r.Response == nil || !strings.HasPrefix(r.Response.Text, "8. The Supply Agreement speaks for itself") || !strings.Contains(r.Note, "general denial (page 1)") {
		t.Errorf("paragraph 8: %+v %q", r.Response, r.Note)
	}
	if r := responseOf(t, b, "9"); r.Allegation.Page != 2 || r.Response == nil || r.Response.Page != 2 {
		t.Errorf("paragraph 9: pages %d/%+v", r.Allegation.Page, r.Response)
	}
	if len(b.Responses) != 15 {
		t.Errorf("%d entries, want 15 (the prayer's lettered items and the defences are none)", len(b.Responses))
	}
}

// pleadingPaper sets lines on California pleading paper: 28 numbered
// lines a page, the paper's title in the footer of each.
func pleadingPaper(lines []string, footer string) string {
	var pages []string
	var cur []string
	n := 0
	for _, l := range lines {
		n++
		cur = append(cur, fmt.Sprintf("%d %s", n, l))
		if len(cur) == 28 {
			pages = append(pages, strings.Join(cur, "\n")+"\n"+footer)
			cur = nil
			n = 0
		}
	}
	if len(cur) > 0 {
		pages = append(pages, strings.Join(cur, "\n")+"\n"+footer)
	}
	return strings.Join(pages, "\f")
}

// A California answer: no numbered responses, a general denial under
// Code of Civil Procedure section 431.30(d) under a "GENERAL DENIAL"
// heading, affirmative defences numbered on from it; the complaint's
// caption lists its causes of action "(1) BREACH OF CONTRACT;" beside
// the parties. Every allegation is denied by the general denial (the
// sentence, not its heading), and the caption's list is no paragraph.
func TestResponsesCaliforniaGeneralDenial(t *testing.T) {
	var cl []string
	cl = append(cl, "JANE COUNSEL (SBN 123456)", "COUNSEL LLP", "Attorneys for Plaintiff", "SUPERIOR COURT OF THE STATE OF CALIFORNIA", "COUNTY OF LOS ANGELES", "ACME WIDGETS LLC, Case No. 24STCV01234", "Plaintiff, COMPLAINT FOR:", "v. (1) BREACH OF CONTRACT;", "BETA SUPPLY CO.; and DOES 1 through 10, (2) NEGLIGENCE", "Defendants.", "Plaintiff Acme Widgets LLC alleges:", "FIRST CAUSE OF ACTION", "(Breach of Contract Against All Defendants)")
	for i := 1; i <= 30; i++ {
		cl = append(cl, fmt.Sprintf("%d. Allegation number %d says that Beta did thing %d to Acme, and the sentence runs", i, i, i), fmt.Sprintf("over a second line of the pleading paper for paragraph %d.", i))
	}
	cl = append(cl, "PRAYER FOR RELIEF", "WHEREFORE, Plaintiff prays for judgment:", "1. For damages;", "2. For costs.")
	complaint := pleadingPaper(cl, "COMPLAINT")
	var al []string
	al = append(al, "JOHN DEFENSE (SBN 654321)", "Attorneys for Defendant", "SUPERIOR COURT OF THE STATE OF CALIFORNIA", "COUNTY OF LOS ANGELES", "ACME WIDGETS LLC, Case No. 24STCV01234", "Plaintiff, DEFENDANT BETA SUPPLY CO.'S ANSWER", "v. TO PLAINTIFF'S COMPLAINT", "BETA SUPPLY CO.; and DOES 1 through 10,", "Defendants.", "Defendant Beta Supply Co. answers the Complaint as follows:", "GENERAL DENIAL", "1. Pursuant to California Code of Civil Procedure section 431.30(d), Beta generally denies", "each and every allegation of the Complaint, and further denies that Plaintiff has been damaged.", "AFFIRMATIVE DEFENSES", "FIRST AFFIRMATIVE DEFENSE", "(Failure to State a Cause of Action)", "2. The Complaint fails to state facts sufficient to constitute a cause of action.", "SECOND AFFIRMATIVE DEFENSE", "(Statute of Limitations)", "3. The Complaint is barred by the statute of limitations, Code Civ. Proc. § 337.")
	answer := pleadingPaper(al, "DEFENDANT'S ANSWER TO COMPLAINT")
	b := buildWritten(t, complaint, answer)
	if len(b.Responses) != 30 {
		t.Errorf("%d entries, want the complaint's 30 paragraphs", len(b.Responses))
	}
	for _, r := range b.Responses {
		if r.Status != brief.StatusDenied || r.Response == nil || !strings.HasPrefix(r.Response.Text, "1. Pursuant to California Code") || !strings.Contains(r.Note, "general denial") {
			t.Errorf("paragraph %s: %s %q %q, want denied by the general denial", r.Paragraph, r.Status, textOf(r.Response), r.Note)
		}
		if strings.Contains(r.Allegation.Text, "BREACH OF CONTRACT") {
			t.Errorf("paragraph %s is the caption's list of causes of action: %q", r.Paragraph, r.Allegation.Text)
		}
	}
}

// A counterclaim after the answer, under a heading that names it anywhere
// and numbered on from the responses: its paragraphs answer nothing.
func TestResponsesCounterclaimNumberedOn(t *testing.T) {
	for _, head := range []string{"BETA SUPPLY CO.'S COUNTER-CLAIMS AGAINST ACME WIDGETS LLC", "Defendant's Counterclaim", "CROSSCLAIM AGAINST GAMMA LOGISTICS LLC", "THIRD-PARTY COMPLAINT"} {
		answer := pleadingCaption + `ANSWER AND COUNTERCLAIM
1. Admitted.
2. Admitted.
3. Denied.
4. Denied.
` + head + `
5. Beta delivered 400 widgets to Acme in May 2024, which Acme admitted receiving.
6. Acme denied Beta's invoice for the May delivery.
7. Acme owes Beta $80,000.
`
		b := buildWritten(t, writtenComplaint, answer)
		for _, n := range []string{"5", "6", "7"} {
			if r := responseOf(t, b, n); r.Allegation.DocumentName == "doc1.pdf" && r.Response != nil {
				t.Errorf("%s: complaint paragraph %s answered by the counterclaim's %q", head, n, r.Response.Text)
			}
		}
	}
}

// New Jersey pleadings number each count from 1 again and end each with
// its WHEREFORE; the answer answers count by count, ends each with its
// own WHEREFORE, and closes with separate defences and Rule 4:5-1
// certifications numbered from 1 again. Each count's paragraphs are
// paired with the answer's responses to that count.
func TestResponsesCountsNumberedAgain(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
FIRST COUNT
1. Acme and Beta signed a Supply Agreement.
2. Beta delivered no widgets in June 2024.
3. Acme has been damaged.
WHEREFORE, Acme demands judgment against Beta for damages.
SECOND COUNT
1. Acme repeats the allegations of the First Count.
2. Beta acted in bad faith.
WHEREFORE, Acme demands judgment against Beta for punitive damages.
CERTIFICATION PURSUANT TO R. 4:5-1
1. The matter in controversy is not the subject of any other action.
2. No other party should be joined.
`
	answer := pleadingCaption + `ANSWER
ANSWER TO THE FIRST COUNT
1. Admitted.
2. Denied.
3. Beta lacks knowledge or information sufficient to form a belief as to Acme's damages.
WHEREFORE, Beta demands judgment dismissing the First Count with prejudice.
ANSWER TO THE SECOND COUNT
1. Beta repeats its answers to the First Count as if set forth at length herein.
2. Denied.
WHEREFORE, Beta demands judgment dismissing the Second Count.
SEPARATE DEFENSES
1. The Complaint fails to state a claim.
2. Acme's claims are barred by waiver.
CERTIFICATION PURSUANT TO R. 4:5-1
1. The matter in controversy is not the subject of any other action.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:denied 3:no_knowledge 1:no_response_required 2:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if len(b.Responses) < 5 {
		t.Fatalf("%d entries, want 5", len(b.Responses))
	}
	second := b.Responses[4]
	if second.Response == nil || !strings.Contains(second.Allegation.Text, "bad faith") || second.Response.Text != "2. Denied." || !strings.Contains(second.Note, "Second Count") {
		t.Errorf("the Second Count's paragraph 2: %+v", second)
	}
}

// The answer numbers on from one count to the next where the complaint
// numbered each count from 1 again: its responses answer the complaint's
// paragraphs in order.
func TestResponsesCountsNumberedAgainAnsweredOn(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
FIRST COUNT
1. Acme and Beta signed a Supply Agreement.
2. Beta delivered no widgets in June 2024.
3. Acme has been damaged.
WHEREFORE, Acme demands judgment against Beta for damages.
SECOND COUNT
1. Acme repeats the allegations of the First Count.
2. Beta acted in bad faith.
WHEREFORE, Acme demands judgment against Beta for punitive damages.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Denied.
3. Denied.
4. Beta repeats its answers to the First Count.
5. Beta admits that it acted in good faith and denies the remaining allegations.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:denied 3:denied 1:no_response_required 2:partly_admitted"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
}

// Answers that quote each allegation under the complaint's label
// ("COMPLAINT ¶ 1:", "PARAGRAPH 1:") and answer under "ANSWER:" or
// "RESPONSE:".
func TestResponsesQuotedUnderTheComplaintsLabel(t *testing.T) {
	for _, labels := range [][2]string{{"COMPLAINT ¶ %d:", "ANSWER:"}, {"PARAGRAPH %d:", "RESPONSE:"}, {"Paragraph No. %d.", "Answer:"}} {
		answer := pleadingCaption + "ANSWER\n" +
			fmt.Sprintf(labels[0], 1) + " Plaintiff Acme Widgets LLC is a Delaware limited liability company.\n" + labels[1] + " Admitted.\n" +
			fmt.Sprintf(labels[0], 2) + " Defendant Beta Supply Co. is a North Dakota corporation.\n" + labels[1] + " Beta denies that it is a North Dakota corporation.\n" +
			fmt.Sprintf(labels[0], 3) + " On March 3, 2024, the parties signed a Supply Agreement.\n" + labels[1] + " Beta lacks knowledge or information sufficient to form a belief as to the date.\n"
		b := buildWritten(t, writtenComplaint, answer)
		if got, want := statusesOf(b), "1:admitted 2:denied 3:no_knowledge 4:not_answered"; !strings.HasPrefix(got, want) {
			t.Errorf("%s / %s: responses %s, want %s …", labels[0], labels[1], got, want)
		}
	}
}

// A label naming its paragraph on a line of its own, the response on the
// lines below it: "AS TO PARAGRAPH 1:", "Responding to Paragraph 1 of the
// Complaint:", "Paragraph 1".
func TestResponsesLabelsAboveTheirResponses(t *testing.T) {
	for _, label := range []string{"AS TO PARAGRAPH %d:", "Responding to Paragraph %d of the Complaint:", "Paragraph %d"} {
		answer := pleadingCaption + "ANSWER\n" +
			fmt.Sprintf(label, 1) + "\nAdmitted.\n" +
			fmt.Sprintf(label, 2) + "\nBeta admits that it is a corporation.\nBeta denies that it is a North Dakota corporation.\n" +
			fmt.Sprintf(label, 3) + "\nDenied.\n"
		b := buildWritten(t, writtenComplaint, answer)
		if got, want := statusesOf(b), "1:admitted 2:partly_admitted 3:denied 4:not_answered"; !strings.HasPrefix(got, want) {
			t.Errorf("%q: responses %.60s, want %s …", label, got, want)
		}
	}
}

// The titles real answers and complaints carry: an answer "OF DEFENDANT
// …" over "TO PLAINTIFF'S COMPLAINT" is no complaint; "ANSWER,
// AFFIRMATIVE DEFENSES, AND COUNTERCLAIMS" and "RESPONSE TO …
// COMPLAINT" are answers; a state court's "ORIGINAL PETITION" or
// "PETITION FOR DAMAGES" is a complaint. Each matter pairs.
func TestResponsesPleadingTitles(t *testing.T) {
	for _, title := range []string{
		"ANSWER OF DEFENDANT BETA SUPPLY CO.\nTO PLAINTIFF'S COMPLAINT",
		"DEFENDANTS' ANSWER, AFFIRMATIVE DEFENSES, AND COUNTERCLAIMS",
		"ANSWER, AFFIRMATIVE DEFENSES AND JURY DEMAND",
		"ANSWER IN RESPONSE TO THE COMPLAINT",
		"DEFENDANT'S RESPONSE TO PLAINTIFF'S COMPLAINT",
		"DEFENDANT'S ORIGINAL ANSWER",
	} {
		b := buildWritten(t, writtenComplaint, pleadingCaption+title+"\n1. Admitted.\n2. Denied.\n")
		if b.Documents[1].Kind != brief.KindAnswer || !strings.HasPrefix(statusesOf(b), "1:admitted 2:denied") {
			t.Errorf("%q: kind %s, responses %.40s", title, b.Documents[1].Kind, statusesOf(b))
		}
	}
	for _, title := range []string{"PLAINTIFF'S ORIGINAL PETITION", "PETITION FOR DAMAGES", "PLAINTIFFS' FIRST AMENDED PETITION"} {
		complaint := pleadingCaption + title + "\n1. Acme is a Delaware limited liability company.\n2. Beta is a North Dakota corporation.\n"
		b := buildWritten(t, complaint, pleadingCaption+"DEFENDANT'S ORIGINAL ANSWER\n1. Admitted.\n2. Denied.\n")
		if b.Documents[0].Kind != brief.KindComplaint || statusesOf(b) != "1:admitted 2:denied" {
			t.Errorf("%q: kind %s, responses %s", title, b.Documents[0].Kind, statusesOf(b))
		}
	}
	// A reply to a counterclaim under either name answers the
	// counterclaim, never the complaint.
	counter := pleadingCaption + "ANSWER AND COUNTERCLAIM\n1. Admitted.\n2. Denied.\nCOUNTERCLAIM\n1. Acme owes Beta $80,000.\n"
	for _, title := range []string{"PLAINTIFF'S REPLY TO DEFENDANT'S COUNTERCLAIM", "RESPONSE TO COUNTERCLAIM"} {
		b := buildWritten(t, writtenComplaint, counter, pleadingCaption+title+"\n1. Denied.\n")
		if r := responseOf(t, b, "1"); r.Response == nil || r.Response.DocumentName != "doc2.pdf" || r.Status != brief.StatusAdmitted {
			t.Errorf("%q: complaint paragraph 1 %+v", title, r)
		}
		if got := responsesOf(b, "doc2.pdf"); got != "1:denied@1/1" {
			t.Errorf("%q: counterclaim %s", title, got)
		}
	}
}

// An "ANSWER:" that runs over several lines, a sentence starting a line
// and the page break between them: the whole answer is the response.
func TestResponsesQuotedAllegationsLongAnswer(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta agreed to deliver 500 widgets each month.
3. Beta delivered no widgets in June 2024.
`
	answer := pleadingCaption + `ANSWER
1. Acme is a Delaware limited liability company.
ANSWER: Admitted.
2. Beta agreed to deliver 500 widgets each month.
ANSWER: Beta admits that the Supply Agreement provided for deliveries
of widgets.
Beta denies the remaining allegations of paragraph 2.
` + "\f" + `3. Beta delivered no widgets in June 2024.
ANSWER: Beta admits that it made no delivery in June 2024 and
` + "\f" + `denies that it was obliged to make one.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:partly_admitted 3:partly_admitted"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "2"); r.Response == nil || !strings.Contains(r.Response.Text, "denies the remaining") {
		t.Errorf("paragraph 2: %+v", r.Response)
	}
}

// A matter with the complaint, its answer and an amended complaint filed
// after the answer (not yet answered): the answer is paired with the
// complaint it answers, not with the amended complaint's paragraphs. An
// answer whose title names the amended complaint is paired with that.
func TestResponsesAnswerPairedWithTheComplaintItAnswers(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
Dated: September 3, 2024
`
	answer := pleadingCaption + `DEFENDANT'S ANSWER TO PLAINTIFF'S COMPLAINT
1. Admitted.
2. Denied.
Dated: October 1, 2024
`
	amended := pleadingCaption + `FIRST AMENDED COMPLAINT
1. Acme is a Delaware limited liability company.
2. Gamma Logistics LLC is a North Dakota company.
3. Beta is a Minnesota corporation.
Dated: November 12, 2024
`
	b := buildWritten(t, complaint, answer, amended)
	if got, want := responsesOf(b, "doc1.pdf"), "1:admitted@1/1 2:denied@1/1"; got != want {
		t.Errorf("the complaint: %s, want %s", got, want)
	}
	if got := responsesOf(b, "doc3.pdf"); got != "" {
		t.Errorf("the amended complaint, filed after the answer, is paired with it: %s", got)
	}
	answerToAmended := pleadingCaption + `DEFENDANT'S ANSWER TO PLAINTIFF'S FIRST
AMENDED COMPLAINT
1. Admitted.
2. Admitted.
3. Denied.
Dated: December 2, 2024
`
	b = buildWritten(t, complaint, answer, amended, answerToAmended)
	if got, want := responsesOf(b, "doc3.pdf"), "1:admitted@1/1 2:admitted@1/1 3:denied@1/1"; got != want {
		t.Errorf("the amended complaint: %s, want %s", got, want)
	}
	for _, r := range b.Responses {
		if len(r.History) > 0 {
			t.Errorf("paragraph %s: history %+v from the answer to the original complaint", r.Paragraph, r.History)
		}
	}
}

// A count whose allegations are numbered is no allegation of its own,
// even with headings between its title and its first paragraph; an
// answer that names the count in prose answers its numbered paragraphs'
// numbers, not a "Count II" entry.
func TestResponsesNumberedCountIsNoAllegation(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
COUNT I
1. Acme and Beta signed a Supply Agreement.
2. Beta delivered no widgets in June 2024.
COUNT II
BREACH OF THE IMPLIED COVENANT
(AGAINST BETA)
3. Beta acted in bad faith.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Denied.
3. Denied, and Beta denies that it is liable to Acme under Count II.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:denied 3:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	// "denies the allegations of Count II" answers the count's paragraphs.
	answer = pleadingCaption + `ANSWER
1. Admitted.
2. Denied.
COUNT II
Beta denies the allegations of Count II.
`
	b = buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:denied 3:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "3"); r.Response == nil || !strings.Contains(r.Response.Text, "Count II") {
		t.Errorf("paragraph 3: %+v", r.Response)
	}
}

// A pleading written all in capitals keeps its paragraphs (each ends a
// sentence); a numbered heading in capitals ("2. JURISDICTION") is none.
func TestResponsesAllCapitals(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. ACME IS A DELAWARE LIMITED LIABILITY COMPANY.
2. JURISDICTION
3. BETA DELIVERED NO WIDGETS IN JUNE 2024.
`
	answer := pleadingCaption + `ANSWER
1. ADMITTED.
3. DENIED.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 3:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
}

// Two defendants answer apart: each answer gives its own entry for each
// allegation (named in the note), neither supersedes the other; an
// amended answer of one of them supersedes only that defendant's answer.
func TestResponsesTwoDefendantsAnswerApart(t *testing.T) {
	beta := pleadingCaption + `DEFENDANT BETA SUPPLY CO.'S ANSWER TO PLAINTIFF'S COMPLAINT
1. Admitted.
2. Admitted.
Dated: October 1, 2024
`
	gamma := pleadingCaption + `ANSWER OF DEFENDANT GAMMA LOGISTICS LLC
Defendant Gamma Logistics LLC ("Gamma"), by its counsel, answers the Complaint as follows.
1. Gamma lacks knowledge or information sufficient to form a belief about paragraph 1.
2. Denied.
Dated: October 8, 2024
`
	betaAmended := pleadingCaption + `DEFENDANT BETA SUPPLY CO.'S FIRST AMENDED ANSWER
1. Admitted.
2. Denied.
Dated: November 1, 2024
`
	b := buildWritten(t, writtenComplaint, beta, gamma, betaAmended)
	var got []string
	for _, r := range b.Responses[:min(4, len(b.Responses))] {
		got = append(got, r.Paragraph+":"+string(r.Status)+"@"+textOf(r.Response)[:min(2, len(textOf(r.Response)))]+docOf(r.Response))
	}
	if want := "1:admitted@1.doc4.pdf 1:no_knowledge@1.doc3.pdf 2:denied@2.doc4.pdf 2:denied@2.doc3.pdf"; strings.Join(got, " ") != want {
		t.Errorf("responses %s, want %s", strings.Join(got, " "), want)
	}
	if len(b.Responses) < 4 {
		t.Fatalf("%d entries, want each defendant's for each paragraph", len(b.Responses))
	}
	if r := b.Responses[2]; len(r.History) != 1 || r.History[0].Status != brief.StatusAdmitted || !strings.Contains(r.Note, "the answer of BETA SUPPLY CO.") {
		t.Errorf("Beta's paragraph 2: %+v", r)
	}
	if r := b.Responses[1]; len(r.History) != 0 || !strings.Contains(strings.ToLower(r.Note), "the answer of gamma logistics llc") {
		t.Errorf("Gamma's paragraph 1: %+v", r)
	}
}

// Two officers answering apart are two parties, not one "officer".
func TestResponsesTwoOfficersAnswerApart(t *testing.T) {
	smith := pleadingCaption + "DEFENDANT OFFICER JOHN SMITH'S ANSWER\n1. Admitted.\n"
	jones := pleadingCaption + "DEFENDANT OFFICER JANE JONES'S ANSWER\n1. Denied.\n"
	b := buildWritten(t, writtenComplaint, smith, jones)
	if len(b.Responses) < 2 || b.Responses[0].Paragraph != "1" || b.Responses[1].Paragraph != "1" || b.Responses[0].Status == b.Responses[1].Status {
		t.Errorf("responses %s, want each officer's response to paragraph 1", statusesOf(b))
	}
}

// A sentence that ends in capitals on a line of its own ("… under the
// TELEPHONE CONSUMER" / "PROTECTION ACT.") continues its paragraph; the
// status after it is the response's.
func TestResponsesSentenceEndingInCapitals(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Beta admits that Acme purports to sue under the TELEPHONE CONSUMER
PROTECTION ACT.
Beta denies that it violated the statute.
3. Denied.
`
	b := buildWritten(t, writtenComplaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:partly_admitted 3:denied"; !strings.HasPrefix(got, want) {
		t.Errorf("responses %.50s, want %s …", got, want)
	}
}

// The allegation summed up and its "Answer:" on one line, in title case:
// the summary's words ("denied") are not the response's.
func TestResponsesInlineTitleCaseLabel(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Acme, a company Beta never denied was formed in Delaware, is an LLC. Answer: Admitted.
2. Beta (which Acme says was denied a charter) is a North Dakota corporation. Response: Admitted.
3. The parties signed the Supply Agreement. Answer: Denied.
`
	b := buildWritten(t, writtenComplaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:admitted 3:denied"; !strings.HasPrefix(got, want) {
		t.Errorf("responses %.50s, want %s …", got, want)
	}
	if r := responseOf(t, b, "2"); r.Response == nil || r.Response.Text != "Response: Admitted." {
		t.Errorf("paragraph 2: %+v", r.Response)
	}
}

// An answer's own prayer, its items numbered on from the responses: they
// answer none of the paragraphs the answer did not reach.
func TestResponsesAnswersPrayerItems(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Denied.
WHEREFORE, Beta requests that the Court:
4. deny Acme the relief it requests;
5. dismiss the Complaint, which Beta denied in full; and
6. award Beta its costs.
`
	b := buildWritten(t, writtenComplaint, answer)
	for _, n := range []string{"4", "5", "6"} {
		if r := responseOf(t, b, n); r.Response != nil {
			t.Errorf("paragraph %s answered by the prayer's item %q", n, r.Response.Text)
		}
	}
}

// A sentence that stands at the top of two pages (boilerplate that
// continues two responses) is the responses' text, not a running head.
func TestResponsesRepeatedSentenceIsNoRunningHead(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Paragraph 2 states a legal conclusion to which no response is required, and
` + "\f" + `Beta therefore denies them.
3. Admitted.
4. Paragraph 4 states a legal conclusion to which no response is required, and
` + "\f" + `Beta therefore denies them.
5. Admitted.
`
	b := buildWritten(t, writtenComplaint, answer)
	if r := responseOf(t, b, "2"); r.Response == nil || !strings.Contains(r.Response.Text, "therefore denies") {
		t.Errorf("paragraph 2: %+v", r.Response)
	}
}

// A numbered response's next sentence on a line of its own that names
// the same paragraph ("Beta denies the remaining allegations of paragraph
// 2.") is part of it: the response admits in part.
func TestResponsesNextSentenceNamesItsParagraph(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Beta admits that it is a corporation.
Beta denies the remaining allegations of paragraph 2.
3. Denied.
`
	b := buildWritten(t, writtenComplaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:partly_admitted 3:denied"; !strings.HasPrefix(got, want) {
		t.Errorf("responses %.50s, want %s …", got, want)
	}
	// Numbered its own way: the sentence names the paragraph the response
	// answers.
	answer = pleadingCaption + `ANSWER
1. Answering Paragraph 2, Beta admits that it is a corporation.
Beta denies the remaining allegations of Paragraph 2.
2. Answering Paragraph 3, Beta denies the allegations.
`
	b = buildWritten(t, writtenComplaint, answer)
	if got, want := statusesOf(b), "1:not_answered 2:partly_admitted 3:denied"; !strings.HasPrefix(got, want) {
		t.Errorf("numbered by reference: responses %.50s, want %s …", got, want)
	}
}

func docOf(p *brief.Passage) string {
	if p == nil {
		return ""
	}
	return p.DocumentName
}

// A complaint filed with its verification and an exhibit (a contract
// with numbered clauses) after the allegations, and no prayer between:
// the declarant's and the contract's paragraphs are no allegations, and
// none is flagged as unanswered.
func TestResponsesComplaintTrailers(t *testing.T) {
	complaint := pleadingCaption + `VERIFIED COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
3. Beta breached the Supply Agreement.
VERIFICATION
1. I am the manager of Acme and have read the Complaint.
2. The facts stated in it are true.
EXHIBIT A
SUPPLY AGREEMENT
1. Term. This Agreement runs for two years.
2. Delivery. Beta shall deliver 500 widgets each month.
3. Payment. Acme shall pay within 30 days.
4. Notices. Notices shall be in writing.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Denied.
`
	b := buildWritten(t, complaint, answer)
	if got, want := statusesOf(b), "1:admitted 2:admitted 3:denied"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
}
