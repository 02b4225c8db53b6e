package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/internal/testenv/briefsample"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// A v1 frame still in the ledger renders (its chronology and documents),
// and says that the next build writes v2.
func TestPrintBriefV1Frame(t *testing.T) {
	body, err := os.ReadFile("../../pkg/brief/testdata/frame_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printBrief(&out, postgres.JobRow{Current: true, RequestedGeneration: 3, BuiltGeneration: 3},
		rail.StoredFrame{Token: 1, Target: 3, Builder: "extractive/v1", Body: body})
	for _, want := range []string{
		"BRIEF  Harlow Logistics Ltd v. Penmark Freight Inc.",
		"schema brief/v1 (read as brief/v2; the next build writes brief/v2)",
		"2025-01-14  On January 14, 2025",
		"[complaint.pdf p.2]",
		"1. complaint.pdf — other, 2 page(s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "is not a Brief") {
		t.Errorf("v1 frame not read:\n%s", out.String())
	}
}

// The Brief's responses print as a table (paragraph, status, allegation
// and response with their pages, notes and history); marks of what a
// model asserted show; terminal escapes in the documents' text do not
// reach the terminal.
func TestPrintBriefResponsesAndMarks(t *testing.T) {
	b, err := brief.NewExtractive().Build(context.Background(), briefsample.Input(t))
	if err != nil {
		t.Fatal(err)
	}
	b.Responses[0].Response.Text = "Admitted.\x1b]0;owned\x07\x1b[2J"
	b.Responses[1].History = []brief.PriorResponse{{Response: brief.Passage{DocumentName: "answer-original.pdf", Page: 1, Text: "2. Denied."}, Status: brief.StatusDenied}}
	b.Caption.ModelAsserted = []string{"court"}
	b.Parties[0].ModelAsserted = true
	b.Checks.ModelAsserted, b.Checks.Refused = 2, 3
	body, _ := json.Marshal(b)
	var out bytes.Buffer
	printBrief(&out, postgres.JobRow{Current: true, RequestedGeneration: 3, BuiltGeneration: 3},
		rail.StoredFrame{Token: 1, Target: 3, Builder: b.Builder, Body: body})
	got := out.String()
	for _, want := range []string{
		"RESPONSES (11): each allegation and the answer's response",
		"para  status",
		"[p.1] 1. Plaintiff Harlow Logistics Ltd",
		"NOT ANSWERED (8(b)(6))",
		"[answer.pdf p.1] 8. Penmark denies the allegations of paragraphs 9 through 11.",
		"note: a grouped response to paragraphs 9 through 11",
		"earlier: [answer-original.pdf p.1] denied — 2. Denied.",
		`Admitted.\x1b]0;owned\x07\x1b[2J`,
		"Commercial Division  [model asserted: not confirmed by the documents]",
		"MODEL CHECK: 3 value(s) the model wrote refused, 2 kept but marked model asserted",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsRune(got, 0x1b) {
		t.Errorf("an escape character reached the output")
	}
	var marked int
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "Harlow Logistics Ltd  [") && strings.Contains(line, "model asserted") {
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("the model-asserted party is not marked:\n%s", got)
	}
}

// A matter's responses that pair a complaint and a counterclaim: the
// table names each allegation's document, and a label wider than a number
// ("Count III", "INTRODUCTION") prints whole.
func TestPrintResponsesOfAComplaintAndACounterclaim(t *testing.T) {
	rs := []brief.Response{
		{Paragraph: "1", Allegation: brief.Passage{DocumentID: "d1", DocumentName: "complaint.pdf", Page: 1, Text: "1. Plaintiff is an agency."},
			Response: &brief.Passage{DocumentID: "d2", DocumentName: "answer-and-counterclaim.pdf", Page: 1, Text: "1. Admitted."}, Status: brief.StatusAdmitted},
		{Paragraph: "INTRODUCTION", Allegation: brief.Passage{DocumentID: "d2", DocumentName: "answer-and-counterclaim.pdf", Page: 1, Text: "Defendant submits this counterclaim."},
			Response: &brief.Passage{DocumentID: "d3", DocumentName: "answer-to-counterclaim.pdf", Page: 1, Text: "The allegations of the Introduction are legal conclusions."}, Status: brief.StatusNoResponseRequired},
		{Paragraph: "Count III", Allegation: brief.Passage{DocumentID: "d2", DocumentName: "answer-and-counterclaim.pdf", Page: 4, Text: "COUNT III PUBLIC TRUST"},
			Response: &brief.Passage{DocumentID: "d3", DocumentName: "answer-to-counterclaim.pdf", Page: 2, Text: "3. Plaintiff denies the allegations contained in Count III."}, Status: brief.StatusDenied},
	}
	var out bytes.Buffer
	printResponses(&out, rs)
	got := out.String()
	for _, want := range []string{
		"  para         status",
		"  INTRODUCTION no response required",
		"  Count III    denied",
		"[complaint.pdf p.1] 1. Plaintiff is an agency.",
		"[answer-and-counterclaim.pdf p.4] COUNT III PUBLIC TRUST",
		"[answer-to-counterclaim.pdf p.2] 3. Plaintiff denies",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
