package brief_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
)

// Constructions of real counterclaims and the answers to them, each
// written small (the real pair is in TestResponsesRealPairs).

// responsesOf lists a document's entries as "paragraph:status@allegation
// page/response page".
func responsesOf(b brief.Brief, doc string) string {
	var got []string
	for _, r := range b.Responses {
		if r.Allegation.DocumentName != doc {
			continue
		}
		rp := 0
		if r.Response != nil {
			rp = r.Response.Page
		}
		got = append(got, r.Paragraph+":"+string(r.Status)+"@"+strconv.Itoa(r.Allegation.Page)+"/"+strconv.Itoa(rp))
	}
	return strings.Join(got, " ")
}

// An "Answer and Counterclaim" carries allegations of its own: the
// plaintiff's answer to the counterclaim is paired with the counterclaim's
// paragraphs (read from its COUNTERCLAIM heading), and the complaint's
// pairing is unchanged.
func TestResponsesCounterclaimAndItsAnswer(t *testing.T) {
	answer := pleadingCaption + `ANSWER AND COUNTERCLAIM
1. Admitted.
2. Denied.
COUNTERCLAIM
1. Beta delivered 400 widgets in May 2024.
2. Acme has not paid for the May delivery.
3. Acme owes Beta $80,000.
WHEREFORE, Beta demands judgment against Acme.
Dated: October 1, 2024
`
	reply := pleadingCaption + `PLAINTIFF'S ANSWER TO DEFENDANT'S COUNTERCLAIM
1. Admitted.
2. Denied.
3. Acme lacks knowledge or information sufficient to form a belief about the amount and therefore denies it.
Dated: November 1, 2024
`
	b := buildWritten(t, writtenComplaint, answer, reply)
	if got, want := responsesOf(b, "doc2.pdf"), "1:admitted@1/1 2:denied@1/1 3:no_knowledge@1/1"; got != want {
		t.Errorf("counterclaim: %s, want %s", got, want)
	}
	for _, r := range b.Responses {
		if r.Allegation.DocumentName == "doc2.pdf" && (r.Response == nil || r.Response.DocumentName != "doc3.pdf") {
			t.Errorf("counterclaim paragraph %s answered by %+v, want the answer to the counterclaim", r.Paragraph, r.Response)
		}
	}
	if r := responseOf(t, b, "1"); r.Allegation.DocumentName != "doc1.pdf" || r.Status != brief.StatusAdmitted || r.Response.DocumentName != "doc2.pdf" {
		t.Errorf("complaint paragraph 1: %+v", r)
	}
}

// A counterclaim filed as "Amended Answer and Counter Claim" that answers
// nothing: its introduction (under a heading), lettered paragraphs and
// counts of unnumbered prose are its allegations, and the answer to it
// responds under the same heading, by letter (with and without naming the
// paragraph; the status on the line after) and by count. A court rule at a
// line's start ("R. 4:5-4") is no paragraph R, a telephone number no
// paragraph 609, a citation in capitals no heading.
func TestResponsesCounterclaimFiledAsAnAnswer(t *testing.T) {
	counterclaim := `Jane Roe, Pro Se
(609) 555-0134 jroe@example.com
SUPERIOR COURT OF NEW JERSEY
LAW DIVISION SPECIAL CIVIL PART
ACME WIDGETS LLC,
Plaintiff,
v.
JANE ROE,
Defendant / Counterclaimant.
AMENDED ANSWER AND COUNTER CLAIM
INTRODUCTION
Defendant submits this counterclaim under
R. 4:5-4 and R. 4:67.
FACTUAL GROUNDS
A. Fees
The fees Acme charged exceed its costs.
B. Notice
Acme sent no notice before charging the fees.
` + "\f" + `C. Statutory Limits
The fees exceed the limits of
N.J.A.C. 19:9-9.2;
and are void.
CAUSES OF ACTION
COUNT I DECLARATORY JUDGMENT
(FEES)
Defendant seeks a declaration that the fees are void.
COUNT II UNJUST ENRICHMENT
Acme was enriched by the fees at Defendant's expense.
RELIEF SOUGHT
WHEREFORE, Defendant requests relief.
A. Dismissal of the complaint.
`
	reply := `ACME WIDGETS LLC,
Plaintiff,
v.
JANE ROE,
Defendant.
ANSWER TO COUNTERCLAIM AND AFFIRMATIVE DEFENSES
Acme, by way of answer to the Counterclaim, states:
INTRODUCTION
The allegations contained in the "Introduction" paragraph of the Counterclaim constitute
legal conclusions to which no response is required. To the extent a response is required,
all such allegations are denied.
FACTUAL GROUNDS
A. The allegations contained in paragraph A of the "Factual Grounds"
section of the Counterclaim are hereby denied.
B. Admitted.
` + "\f" + `C. The allegations contained in paragraph C of the "Factual Grounds" section of the Counterclaim constitute a legal conclusion to which no response is required.
COUNT I
1. Plaintiff denies the allegations contained in Count I of the Counterclaim.
COUNT II
2. Plaintiff admits the allegations of Count II that it charged the fees and denies the remaining allegations of Count II.
SEPARATE DEFENSES
1. The counterclaim fails to state a claim.
`
	b := buildWritten(t, counterclaim, reply)
	want := "INTRODUCTION:no_response_required@1/1 A:denied@1/1 B:admitted@1/1 C:no_response_required@2/2 Count I:denied@2/2 Count II:partly_admitted@2/2"
	if got := responsesOf(b, "doc1.pdf"); got != want {
		t.Errorf("counterclaim\n got %s\nwant %s", got, want)
	}
	for _, r := range b.Responses {
		switch r.Paragraph {
		case "R", "609":
			t.Errorf("paragraph %s: %+v", r.Paragraph, r.Allegation)
		case "C":
			if !strings.Contains(r.Allegation.Text, "and are void.") {
				t.Errorf("paragraph C ends at the citation in capitals: %q", r.Allegation.Text)
			}
		case "Count I":
			if !strings.Contains(r.Allegation.Text, "(FEES) Defendant seeks a declaration") || !strings.Contains(r.Note, "count as a whole") {
				t.Errorf("Count I: %+v, want its two-line heading and its prose, noted", r)
			}
		case "A":
			if r.Response == nil || !strings.Contains(r.Response.Text, "hereby denied") {
				t.Errorf("paragraph A: the wrapped status line is not in the response %+v", r.Response)
			}
		}
	}
	if len(b.Responses) != 6 {
		t.Errorf("%d entries, want 6 (the prayer's lettered item is not an allegation)", len(b.Responses))
	}
}

// A complaint that numbers its paragraphs keeps lettered lines as what
// they are there: headings over numbered paragraphs, or items of the
// numbered paragraph they are in — never allegations of their own.
func TestResponsesLettersInANumberedComplaint(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
A. The Parties
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
B. The Agreement
3. Beta agreed to:
A. deliver 500 widgets each month; and
B. invoice Acme monthly.
4. Beta did neither.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Denied.
4. Denied.
`
	b := buildWritten(t, complaint, answer)
	if got, want := responsesOf(b, "doc1.pdf"), "1:admitted@1/1 2:admitted@1/1 3:denied@1/1 4:denied@1/1"; got != want {
		t.Errorf("responses %s, want %s", got, want)
	}
	if r := responseOf(t, b, "3"); !strings.Contains(r.Allegation.Text, "invoice Acme monthly") {
		t.Errorf("paragraph 3 lost its lettered items: %q", r.Allegation.Text)
	}
}

// A signature block's telephone number at a line's start ("(701)
// 555-0134") is no paragraph 701.
func TestResponsesTelephoneIsNoParagraph(t *testing.T) {
	complaint := writtenComplaint + `Jane Counsel
(701) 555-0134
jcounsel@example.com
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
`
	b := buildWritten(t, complaint, answer)
	for _, r := range b.Responses {
		if r.Paragraph == "701" {
			t.Errorf("the telephone number is paragraph 701: %+v", r.Allegation)
		}
	}
}

// An answer's numbered response may itemize with letters: the items are
// the response's (here, its denial), not lettered responses of their own.
func TestResponsesLetteredItemsOfANumberedResponse(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
3. Beta admits that the parties signed an agreement, and states that:
A. the agreement is dated March 4, 2024; and
B. Beta denies the remaining allegations of paragraph 3.
4. Denied.
`
	b := buildWritten(t, writtenComplaint, answer)
	r := responseOf(t, b, "3")
	if r.Status != brief.StatusPartlyAdmitted || r.Response == nil || !strings.Contains(r.Response.Text, "denies the remaining") {
		t.Errorf("paragraph 3: %s %+v, want partly admitted by the response with its items", r.Status, r.Response)
	}
	if r := responseOf(t, b, "4"); r.Status != brief.StatusDenied {
		t.Errorf("paragraph 4: %s", r.Status)
	}
}

// The commonest partial admission of real answers is two sentences:
// "Beta admits that … . Beta denies the remaining allegations of
// paragraph 3." — partly admitted, not denied because the sentence that
// names the paragraph only denies.
func TestResponsesAdmitsThenDeniesTheRemaining(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Beta admits that it is a corporation. Beta denies the remaining allegations of paragraph 2.
3. Beta admits that the parties signed an agreement on March 3, 2024. Except as expressly admitted, Beta denies the allegations of paragraph 3.
4. Paragraph 4 is denied, except that Beta admits that the agreement mentions widgets.
`
	b := buildWritten(t, writtenComplaint, answer)
	for _, n := range []string{"2", "3", "4"} {
		if r := responseOf(t, b, n); r.Status != brief.StatusPartlyAdmitted {
			t.Errorf("paragraph %s: %s, want partly admitted (%q)", n, r.Status, textOf(r.Response))
		}
	}
}

// Real answers number a response with the range it answers ("2-3.
// Admitted.", "5.–6. Denied.") and carry a response over a page break,
// the status on the next page's wrapped line: neither shifts the responses
// after it onto the wrong paragraphs.
func TestResponsesRangeNumberedAndPageSpanning(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
3. The parties signed a Supply Agreement.
4. Beta delivered no widgets in June 2024, and Acme lost
` + "\f" + `customers as a result.
5. Acme sent a notice of breach.
6. Beta did not cure.
7. Acme has suffered damages.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2-3. Admitted.
4. Beta admits that it delivered no widgets in June 2024 and
` + "\f" + `denies the remaining allegations of paragraph 4.
5.–6. Denied.
7. Beta lacks knowledge or information sufficient to form a belief about Acme's damages.
`
	b := buildWritten(t, complaint, answer)
	want := "1:admitted@1/1 2:admitted@1/1 3:admitted@1/1 4:partly_admitted@1/1 5:denied@2/2 6:denied@2/2 7:no_knowledge@2/2"
	if got := responsesOf(b, "doc1.pdf"); got != want {
		t.Errorf("responses\n got %s\nwant %s", got, want)
	}
	if r := responseOf(t, b, "3"); !strings.Contains(r.Note, "grouped") {
		t.Errorf("paragraph 3: note %q, want the grouped response noted", r.Note)
	}
}

// Real answers' other wordings of the statuses: "requires no response",
// "does not require a response", "denied for lack of knowledge" (Rule
// 8(b)(5)), "neither admits nor denies" (not a denial: flagged).
func TestResponsesOtherWordings(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Paragraph 1 characterizes the action and requires no response.
2. Paragraph 2 states Plaintiff's theory of the case and does not require a response.
3. Denied for lack of knowledge.
4. Beta neither admits nor denies the allegations of paragraph 4 and leaves Acme to its proofs.
5. Denied.
`
	b := buildWritten(t, writtenComplaint, answer)
	for n, st := range map[string]brief.ResponseStatus{"1": brief.StatusNoResponseRequired, "2": brief.StatusNoResponseRequired, "3": brief.StatusNoKnowledge, "4": brief.StatusNotAnswered, "5": brief.StatusDenied} {
		if r := responseOf(t, b, n); r.Status != st {
			t.Errorf("paragraph %s: %s, want %s (%q)", n, r.Status, st, textOf(r.Response))
		}
	}
	if r := responseOf(t, b, "4"); !strings.Contains(r.Note, "8(b)(6)") {
		t.Errorf("paragraph 4: note %q, want the Rule 8(b)(6) flag", r.Note)
	}
}

// A counterclaim titled as an answer responds to none of the complaint's
// paragraphs: it is no answer to the complaint, whose allegations are not
// flagged as deemed admitted because of it (a matter with no readable
// answer pairs nothing).
func TestResponsesACounterclaimIsNoAnswerToTheComplaint(t *testing.T) {
	counterclaim := pleadingCaption + `AMENDED ANSWER AND COUNTER CLAIM
INTRODUCTION
Beta submits this counterclaim for a declaration.
A. Fees
The fees Acme charged exceed its costs.
B. Notice
Acme sent no notice.
`
	reply := pleadingCaption + `ANSWER TO COUNTERCLAIM
A. The allegations contained in paragraph A of the Counterclaim are denied.
B. The allegations contained in paragraph B of the Counterclaim are admitted.
`
	b := buildWritten(t, writtenComplaint, counterclaim, reply)
	if got := responsesOf(b, "doc1.pdf"); got != "" {
		t.Errorf("the complaint's allegations are paired with the counterclaim: %s", got)
	}
	if got, want := responsesOf(b, "doc2.pdf"), "A:denied@1/1 B:admitted@1/1"; got != want {
		t.Errorf("counterclaim: %s, want %s", got, want)
	}
}
