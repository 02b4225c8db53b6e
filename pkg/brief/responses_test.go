package brief_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
)

// pleadingCaption is the caption every written pleading below shares.
const pleadingCaption = `UNITED STATES DISTRICT COURT
DISTRICT OF NORTH DAKOTA
ACME WIDGETS LLC,
Plaintiff,
v.
BETA SUPPLY CO.,
Defendant.
Case No. 1:25-cv-00017
`

// written is a matter of written pleadings, one document per text; "\f"
// separates pages, and each line is a paragraph (a blank line between, as
// extraction gives paragraphs set apart).
func written(t *testing.T, docs ...string) brief.Input {
	t.Helper()
	in := brief.Input{FirmID: firmID, MatterID: matterID, Title: "Acme Widgets LLC v. Beta Supply Co."}
	for i, text := range docs {
		in.Documents = append(in.Documents, brief.Document{
			ID:     fmt.Sprintf("e%07d-0000-4000-8000-000000000000", i+1),
			Name:   fmt.Sprintf("doc%d.pdf", i+1),
			SHA256: strings.Repeat(fmt.Sprint(i+1), 64)[:64],
			Pages:  strings.Split(strings.ReplaceAll(text, "\n", "\n\n"), "\f"),
		})
	}
	return in
}

const writtenComplaint = pleadingCaption + `COMPLAINT
1. Plaintiff Acme Widgets LLC is a Delaware limited liability company.
2. Defendant Beta Supply Co. is a North Dakota corporation.
3. On March 3, 2024, the parties signed a Supply Agreement.
4. The Supply Agreement required Beta to deliver 500 widgets each month.
5. Beta delivered no widgets in June 2024.
6. Beta's failure to deliver is a material breach of the Supply Agreement.
7. Acme lost customers as a result.
` + "\f" + `8. Acme sent Beta a notice of breach on July 1, 2024.
9. Beta did not cure the breach.
10. Acme has suffered damages of $250,000.
11. Beta acted in bad faith.
12. Beta's conduct was willful.
WHEREFORE, on Count I, Acme demands judgment against Beta.
1. Damages of $250,000.
COUNT II
13. Acme repeats and realleges paragraphs 1 through 12.
14. Acme is entitled to attorneys' fees under the Supply Agreement.
WHEREFORE, Acme demands judgment against Beta.
1. Damages of $250,000.
Dated: September 3, 2024
`

// status of paragraph n in b, with its response's page and the note.
func responseOf(t *testing.T, b brief.Brief, n string) brief.Response {
	t.Helper()
	for _, r := range b.Responses {
		if r.Paragraph == n {
			return r
		}
	}
	t.Fatalf("no response entry for paragraph %s in %+v", n, b.Responses)
	return brief.Response{}
}

func buildWritten(t *testing.T, docs ...string) brief.Brief {
	t.Helper()
	b, err := brief.NewExtractive().Build(context.Background(), written(t, docs...))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	return b
}

// One answer that uses every construction the pairing reads: a mirror
// "Admitted.", a response naming its paragraph, a grouped range, a list,
// admitted in part and denied in part, "lacks knowledge", a legal
// conclusion, "speaks for itself" with and without a denial, an
// incorporation, and a paragraph the answer never reaches.
func TestResponsesConstructions(t *testing.T) {
	answer := pleadingCaption + `DEFENDANT BETA SUPPLY CO.'S ANSWER TO PLAINTIFF'S COMPLAINT
Defendant Beta Supply Co. answers the Complaint as follows.
1. Admitted.
2. Beta admits the allegations of paragraph 2 of the Complaint, and states that paragraph 9 of the Supply Agreement governs notice.
3. Admitted in part and denied in part. Beta admits that the parties signed an agreement and denies the remaining allegations.
4. The Supply Agreement is a written document that speaks for itself.
5. Beta lacks knowledge or information sufficient to form a belief about the truth of the allegations of paragraph 5 and therefore denies them.
6. Paragraph 6 states legal conclusions to which no response is required. To the extent a response is required, denied.
` + "\f" + `Paragraphs 7 through 9 are denied.
10. Beta denies the allegations of paragraphs 10, 11 and 12.
13. Beta incorporates its responses to paragraphs 1 through 12.
AFFIRMATIVE DEFENSES
1. The Complaint fails to state a claim.
Dated: October 1, 2024
`
	b := buildWritten(t, writtenComplaint, answer)
	want := map[string]brief.ResponseStatus{
		"1": brief.StatusAdmitted, "2": brief.StatusAdmitted, "3": brief.StatusPartlyAdmitted,
		"4": brief.StatusNotAnswered, "5": brief.StatusNoKnowledge, "6": brief.StatusNoResponseRequired,
		"7": brief.StatusDenied, "8": brief.StatusDenied, "9": brief.StatusDenied,
		"10": brief.StatusDenied, "11": brief.StatusDenied, "12": brief.StatusDenied,
		"13": brief.StatusNoResponseRequired, "14": brief.StatusNotAnswered,
	}
	if len(b.Responses) != len(want) {
		t.Errorf("%d responses, want %d (the prayer's numbered item is not an allegation)", len(b.Responses), len(want))
	}
	for n, st := range want {
		r := responseOf(t, b, n)
		if r.Status != st {
			t.Errorf("paragraph %s: %s, want %s (response %+v)", n, r.Status, st, r.Response)
		}
		if r.Allegation.DocumentName != "doc1.pdf" || !strings.HasPrefix(r.Allegation.Text, n+". ") {
			t.Errorf("paragraph %s: allegation %+v", n, r.Allegation)
		}
	}
	if r := responseOf(t, b, "8"); r.Response == nil || r.Response.Page != 2 || r.Allegation.Page != 2 || !strings.Contains(r.Note, "grouped") {
		t.Errorf("paragraph 8: %+v, want the grouped response on page 2 of the answer, noted", r)
	}
	if r := responseOf(t, b, "5"); !strings.Contains(r.Note, "8(b)(5)") {
		t.Errorf("no knowledge: note %q, want Rule 8(b)(5)", r.Note)
	}
	if r := responseOf(t, b, "4"); r.Response == nil || !strings.Contains(r.Note, "speaks for itself") || !strings.Contains(r.Note, "8(b)(6)") {
		t.Errorf("speaks for itself: %+v", r)
	}
	if r := responseOf(t, b, "6"); !strings.Contains(r.Note, "to the extent a response is required, denied") {
		t.Errorf("legal conclusion: note %q", r.Note)
	}
	if r := responseOf(t, b, "13"); r.Response == nil || !strings.HasPrefix(r.Response.Text, "13. ") || !strings.Contains(r.Note, "incorporates") {
		t.Errorf("incorporation: %+v, want answer paragraph 13 (not its references to 1-12)", r)
	}
	if r := responseOf(t, b, "14"); r.Response != nil || !strings.Contains(r.Note, "8(b)(6)") {
		t.Errorf("never reached: %+v, want no response and the Rule 8(b)(6) flag", r)
	}
}

// A general denial denies every allegation the answer does not expressly
// reach; a "speaks for itself" that also denies is a denial.
func TestResponsesGeneralDenial(t *testing.T) {
	answer := pleadingCaption + `ANSWER
Beta denies each and every allegation of the Complaint not expressly admitted below.
1. Admitted.
2. Admitted.
4. The Supply Agreement speaks for itself, and Beta denies any characterization of it inconsistent with its terms.
AFFIRMATIVE DEFENSES
`
	b := buildWritten(t, writtenComplaint, answer)
	if r := responseOf(t, b, "4"); r.Status != brief.StatusDenied || !strings.Contains(r.Note, "speaks for itself") {
		t.Errorf("paragraph 4: %+v", r)
	}
	for _, n := range []string{"3", "5", "9", "14"} {
		r := responseOf(t, b, n)
		if r.Status != brief.StatusDenied || r.Response == nil || !strings.Contains(r.Response.Text, "each and every allegation") || !strings.Contains(r.Note, "general denial") {
			t.Errorf("paragraph %s: %+v, want denied by the general denial", n, r)
		}
	}
}

// An answer that restates each allegation and answers under it.
func TestResponsesRestatedAllegations(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Plaintiff Acme Widgets LLC is a Delaware limited liability company.
ANSWER: Admitted.
2. Defendant Beta Supply Co. is a North Dakota corporation.
ANSWER: Beta denies that it is a North Dakota corporation and states that it is a Minnesota corporation.
3. On March 3, 2024, the parties signed a Supply Agreement.
RESPONSE: Beta lacks knowledge or information sufficient to form a belief as to the date.
`
	b := buildWritten(t, writtenComplaint, answer)
	for n, st := range map[string]brief.ResponseStatus{"1": brief.StatusAdmitted, "2": brief.StatusDenied, "3": brief.StatusNoKnowledge, "4": brief.StatusNotAnswered} {
		r := responseOf(t, b, n)
		if r.Status != st {
			t.Errorf("paragraph %s: %s, want %s (%+v)", n, r.Status, st, r.Response)
		}
		if r.Response != nil && !strings.HasPrefix(r.Response.Text, "ANSWER:") && !strings.HasPrefix(r.Response.Text, "RESPONSE:") {
			t.Errorf("paragraph %s: response %q, want the answer under the restatement", n, r.Response.Text)
		}
	}
}

// An amended answer supersedes the first: the newest wins, the first's
// response is kept as history. The documents' order does not matter.
func TestResponsesAmendedAnswer(t *testing.T) {
	first := pleadingCaption + `ANSWER
1. Admitted.
2. Denied.
3. Denied.
Dated: October 1, 2024
`
	amended := pleadingCaption + `FIRST AMENDED ANSWER
1. Admitted.
2. Admitted.
Dated: November 12, 2024
`
	for _, docs := range [][]string{{writtenComplaint, first, amended}, {amended, writtenComplaint, first}} {
		b := buildWritten(t, docs...)
		r2 := responseOf(t, b, "2")
		if r2.Status != brief.StatusAdmitted || len(r2.History) != 1 || r2.History[0].Status != brief.StatusDenied {
			t.Errorf("paragraph 2: %+v, want admitted by the amended answer, the first answer's denial in history", r2)
		}
		if r2.Response == nil || r2.Response.DocumentName == r2.History[0].Response.DocumentName {
			t.Errorf("paragraph 2: response and history from the same answer: %+v", r2)
		}
		// The amended answer never reaches paragraph 3: not answered now,
		// whatever the first answer said.
		if r3 := responseOf(t, b, "3"); r3.Status != brief.StatusNotAnswered || len(r3.History) != 1 {
			t.Errorf("paragraph 3: %+v", r3)
		}
	}
}

// A complaint whose numbering skips and repeats: no paragraph is invented,
// both paragraphs numbered 4 are listed and noted, and the answer's
// mirror-numbered responses land on the right paragraphs.
func TestResponsesSkippedAndRepeatedNumbers(t *testing.T) {
	complaint := pleadingCaption + `COMPLAINT
1. Acme is a Delaware limited liability company.
2. Beta is a North Dakota corporation.
4. The parties signed a Supply Agreement on March 3, 2024.
4. Beta delivered no widgets in June 2024.
5. Acme has suffered damages.
`
	answer := pleadingCaption + `ANSWER
1. Admitted.
2. Admitted.
4. Denied.
5. Denied.
`
	b := buildWritten(t, complaint, answer)
	var got []string
	for _, r := range b.Responses {
		got = append(got, r.Paragraph+":"+string(r.Status))
	}
	if strings.Join(got, " ") != "1:admitted 2:admitted 4:denied 4:denied 5:denied" {
		t.Errorf("responses = %v", got)
	}
	if r := responseOf(t, b, "4"); !strings.Contains(r.Note, "numbers 2 paragraphs 4") {
		t.Errorf("repeated number: note %q", r.Note)
	}
}

// The sample matter's answer: explicit references ("paragraph 6",
// "paragraphs 9 through 11") and paragraphs that answer in order, and the
// allegation it never reaches (paragraph 5).
func TestResponsesSampleMatter(t *testing.T) {
	b, err := brief.NewExtractive().Build(context.Background(), sampleInput(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range b.Responses {
		page := 0
		if r.Response != nil {
			page = r.Response.Page
		}
		got = append(got, fmt.Sprintf("%s:%s@%d", r.Paragraph, r.Status, page))
	}
	want := "1:admitted@1 2:admitted@1 3:admitted@1 4:admitted@1 5:not_answered@0 6:denied@1 7:partly_admitted@1 8:partly_admitted@1 9:denied@1 10:denied@1 11:denied@1"
	if strings.Join(got, " ") != want {
		t.Errorf("responses\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// No complaint and answer, no responses: an empty list, never null.
func TestResponsesNeedAPleadingAndAnAnswer(t *testing.T) {
	b := buildWritten(t, writtenComplaint)
	if b.Responses == nil || len(b.Responses) != 0 {
		t.Errorf("responses = %#v, want []", b.Responses)
	}
}

// Extraction that joins numbered paragraphs into one line ("… company.
// 2. Defendant …") and an answer's restatement onto its "ANSWER:" line
// changes nothing.
func TestResponsesSurviveJoinedParagraphs(t *testing.T) {
	answer := pleadingCaption + `ANSWER
1. Plaintiff Acme Widgets LLC is a Delaware limited liability company. ANSWER: Admitted.
2. Denied.
3. Beta lacks knowledge or information sufficient to form a belief about the truth of the allegations.
4. Denied.
5. Denied.
`
	in := written(t, writtenComplaint, answer)
	for i := range in.Documents {
		for j, p := range in.Documents[i].Pages {
			in.Documents[i].Pages[j] = strings.ReplaceAll(p, "\n\n", "\n")
		}
	}
	b, err := brief.NewExtractive().Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range b.Responses[:6] {
		got = append(got, r.Paragraph+":"+string(r.Status))
	}
	if strings.Join(got, " ") != "1:admitted 2:denied 3:no_knowledge 4:denied 5:denied 6:not_answered" {
		t.Errorf("responses = %v", got)
	}
	if r := responseOf(t, b, "1"); r.Response == nil || r.Response.Text != "ANSWER: Admitted." {
		t.Errorf("paragraph 1: %+v", r.Response)
	}
}

// The plaintiff's answer to a counterclaim answers the counterclaim's
// paragraphs, not the complaint's: it never supersedes the answer.
func TestResponsesIgnoreAnAnswerToACounterclaim(t *testing.T) {
	answer := pleadingCaption + `ANSWER AND COUNTERCLAIM
1. Admitted.
2. Denied.
Dated: October 1, 2024
`
	reply := pleadingCaption + `PLAINTIFF'S ANSWER TO DEFENDANT'S COUNTERCLAIM
1. Denied.
2. Admitted.
Dated: November 1, 2024
`
	b := buildWritten(t, writtenComplaint, answer, reply)
	if r := responseOf(t, b, "1"); r.Status != brief.StatusAdmitted || len(r.History) != 0 || r.Response.DocumentName != "doc2.pdf" {
		t.Errorf("paragraph 1: %+v", r)
	}
}

// Answers that label each response ("ANSWER TO PARAGRAPH NO. 1:", the
// response on the lines below) or number them "¶ 3:".
func TestResponsesLabelledAnswers(t *testing.T) {
	answer := pleadingCaption + `ANSWER
ANSWER TO PARAGRAPH NO. 1:
Admitted.
ANSWER TO PARAGRAPH NO. 2:
Beta denies that it is a North Dakota corporation.
¶ 3: Beta lacks knowledge or information sufficient to form a belief as to paragraph 3.
`
	b := buildWritten(t, writtenComplaint, answer)
	for n, st := range map[string]brief.ResponseStatus{"1": brief.StatusAdmitted, "2": brief.StatusDenied, "3": brief.StatusNoKnowledge, "4": brief.StatusNotAnswered} {
		if r := responseOf(t, b, n); r.Status != st {
			t.Errorf("paragraph %s: %s, want %s (%+v)", n, r.Status, st, r.Response)
		}
	}
	if r := responseOf(t, b, "1"); r.Response == nil || !strings.Contains(r.Response.Text, "Admitted.") {
		t.Errorf("paragraph 1: %+v", r.Response)
	}
}
