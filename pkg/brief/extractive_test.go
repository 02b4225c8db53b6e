package brief_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
)

func buildSample(t *testing.T, in brief.Input) brief.Brief {
	t.Helper()
	b, err := brief.NewExtractive().Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExtractiveParties(t *testing.T) {
	b := buildSample(t, sampleInput(t))
	want := []struct {
		name string
		role brief.Role
	}{
		{"Harlow Logistics Ltd", brief.RolePlaintiff},
		{"Penmark Freight Inc.", brief.RoleDefendant},
		{"Eleanor Voss", brief.RoleCounsel},
		{"Marcus Ortell", brief.RoleCounsel},
	}
	if len(b.Parties) != len(want) {
		t.Errorf("got %d parties, want %d: %+v", len(b.Parties), len(want), b.Parties)
	}
	for i, w := range want {
		if i >= len(b.Parties) {
			break
		}
		p := b.Parties[i]
		if p.Name != w.name || p.Role != w.role {
			t.Errorf("party %d = %q (%s), want %q (%s)", i, p.Name, p.Role, w.name, w.role)
		}
	}
	// The plaintiff is named in the complaint's caption on page 1.
	if !slices.Contains(b.Parties[0].Citations, brief.Citation{DocumentID: complaint, DocumentName: samples.ComplaintName, Page: 1}) {
		t.Errorf("plaintiff citations %+v lack complaint page 1", b.Parties[0].Citations)
	}
}

func TestExtractiveChronology(t *testing.T) {
	b := buildSample(t, sampleInput(t))
	if !slices.IsSortedFunc(b.Chronology, func(x, y brief.Event) int { return strings.Compare(x.Date, y.Date) }) {
		t.Error("chronology is not sorted by date")
	}
	// Key events as the complaint pleads them, in date order.
	key := []struct {
		date, contains string
		page           int
	}{
		{"2025-01-14", "signed a Freight Services Agreement", 1},
		{"2025-02-03", "booked its first shipment", 1},
		{"2025-02-17", "second shipment on 2025-02-17", 1},
		{"2025-03-03", "third shipment on 03/03/2025", 1},
		{"2025-03-28", "would not carry the third shipment", 2},
		{"2025-04-02", "did not deliver the first shipment until April 2, 2025", 2},
		{"2025-04-10", "By letter dated April 10, 2025", 2},
	}
	last := -1
	for _, k := range key {
		i := slices.IndexFunc(b.Chronology, func(e brief.Event) bool {
			return e.Date == k.date && slices.ContainsFunc(e.Citations, func(c brief.Citation) bool {
				return c.DocumentID == complaint && strings.Contains(c.Quote, k.contains)
			})
		})
		if i < 0 {
			t.Errorf("no complaint event on %s containing %q", k.date, k.contains)
			continue
		}
		if i <= last {
			t.Errorf("event %s out of order", k.date)
		}
		last = i
		if !slices.ContainsFunc(b.Chronology[i].Citations, func(c brief.Citation) bool {
			return c.Page == k.page && c.DocumentName == samples.ComplaintName
		}) {
			t.Errorf("event %s cites %+v, want %s page %d", k.date, b.Chronology[i].Citations, samples.ComplaintName, k.page)
		}
	}
	// Dates from the other documents, in their other formats.
	for _, k := range []struct{ date, doc string }{
		{"2025-02-20", answer}, {"2025-03-09", answer}, {"2025-04-04", answer},
		{"2025-03-28", exhibitA},
	} {
		if !slices.ContainsFunc(b.Chronology, func(e brief.Event) bool { return e.Date == k.date && citesDoc(e, k.doc) }) {
			t.Errorf("no event on %s from document %s", k.date, k.doc)
		}
	}
}

// One event, stated by several documents, is one entry citing them all; a
// date inside a case-law citation is not an event of the matter.
func TestExtractiveChronologyMergesAndFilters(t *testing.T) {
	b := buildSample(t, sampleInput(t))
	var signed []brief.Event
	for _, e := range b.Chronology {
		if e.Date == "2025-01-14" {
			signed = append(signed, e)
		}
	}
	if len(signed) != 1 || !citesDoc(signed[0], complaint) || !citesDoc(signed[0], answer) {
		t.Errorf("2025-01-14: %+v, want one event citing the complaint and the answer", signed)
	}
	for _, e := range b.Chronology {
		for _, c := range e.Citations {
			if c.Quote == "" {
				t.Errorf("event %s: citation without its quote: %+v", e.Date, c)
			}
		}
	}

	in := sampleInput(t)
	in.Documents = in.Documents[:1]
	in.Documents[0].Pages = []string{"The court granted the motion on March 3, 2021.\n\n" +
		"See Roman Catholic Diocese v. Cuomo, 141 S. Ct. 63 (U.S. Nov. 25, 2020) (per curiam); " +
		"Calvary Chapel v. Mills, No. 20-1507 (1st Cir. Jan. 5, 2021)."}
	b = buildSample(t, in)
	if len(b.Chronology) != 1 || b.Chronology[0].Date != "2021-03-03" {
		t.Errorf("chronology %+v, want only 2021-03-03", b.Chronology)
	}
}

func TestExtractiveAssertions(t *testing.T) {
	b := buildSample(t, sampleInput(t))
	byID := map[string]brief.DocumentSummary{}
	for _, d := range b.Documents {
		byID[d.DocumentID] = d
	}
	check := func(doc, contains string, page int) {
		t.Helper()
		d := byID[doc]
		if !slices.ContainsFunc(d.Assertions, func(a brief.Assertion) bool {
			return strings.Contains(a.Text, contains) && a.Citation.Page == page && a.Citation.DocumentID == doc
		}) {
			t.Errorf("%s: no assertion on page %d containing %q", d.Name, page, contains)
		}
	}
	check(complaint, "3. On January 14, 2025, Harlow and Penmark signed", 1)
	check(complaint, "10. Penmark breached the Agreement", 2)
	check(complaint, "WHEREFORE, Harlow demands judgment", 2)
	check(answer, "5. Penmark denies the allegations of paragraph 6", 1)
	check(answer, "SECOND DEFENSE (Force Majeure)", 2)
	check(exhibitA, "Our client demands payment of $184,500", 1)

	s := byID[scanned]
	if len(s.Assertions) != 0 || !strings.Contains(s.Note, "no text layer") || s.PageCount != 1 {
		t.Errorf("scanned summary = %+v", s)
	}
	for _, d := range b.Documents {
		if d.DocumentID != scanned && len(d.Assertions) == 0 {
			t.Errorf("%s: no assertions", d.Name)
		}
		if len(d.Assertions) > brief.MaxAssertionsPerDocument {
			t.Errorf("%s: %d assertions", d.Name, len(d.Assertions))
		}
	}
}

func TestExtractiveDeterministic(t *testing.T) {
	in := sampleInput(t)
	first, err := json.Marshal(buildSample(t, in))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, _ := json.Marshal(buildSample(t, sampleInput(t)))
		if !bytes.Equal(first, again) {
			t.Fatal("same input gave different JSON")
		}
	}
	rev := in
	rev.Documents = slices.Clone(in.Documents)
	slices.Reverse(rev.Documents)
	reordered, _ := json.Marshal(buildSample(t, rev))
	if !bytes.Equal(first, reordered) {
		t.Fatal("document order changed the JSON")
	}
}

func TestValidateRejectsBadCitations(t *testing.T) {
	good := buildSample(t, sampleInput(t))
	cases := map[string]func(b *brief.Brief){
		"unknown document": func(b *brief.Brief) {
			b.Chronology[0].Citations[0].DocumentID = "e5555555-5555-4555-8555-555555555555"
		},
		"page out of range": func(b *brief.Brief) { b.Parties[0].Citations[0].Page = 99 },
		"page zero":         func(b *brief.Brief) { b.Documents[0].Assertions[0].Citation.Page = 0 },
		"wrong name":        func(b *brief.Brief) { b.Chronology[0].Citations[0].DocumentName = "other.pdf" },
		"bad date":          func(b *brief.Brief) { b.Chronology[0].Date = "2025-02-30" },
		"bad role":          func(b *brief.Brief) { b.Parties[0].Role = "judge" },
		"schema version":    func(b *brief.Brief) { b.SchemaVersion = "brief/v0" },
		"bad kind":          func(b *brief.Brief) { b.Documents[0].Kind = "memo" },
		"bad filed_on":      func(b *brief.Brief) { b.Documents[0].FiledOn = "May 6, 2025" },
		"event uncited":     func(b *brief.Brief) { b.Chronology[0].Citations = nil },
		"unsorted":          func(b *brief.Brief) { b.Chronology[0].Date = "2099-01-01" },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			var b brief.Brief
			raw, _ := json.Marshal(good)
			if err := json.Unmarshal(raw, &b); err != nil {
				t.Fatal(err)
			}
			breakIt(&b)
			if err := b.Validate(); !errors.Is(err, brief.ErrInvalidBrief) {
				t.Fatalf("Validate() = %v, want ErrInvalidBrief", err)
			}
		})
	}
}

func TestInputValidation(t *testing.T) {
	in := sampleInput(t)
	in.Documents[1].ID = in.Documents[0].ID
	if _, err := brief.NewExtractive().Build(context.Background(), in); !errors.Is(err, brief.ErrInvalidInput) {
		t.Errorf("duplicate id: err = %v", err)
	}
	in = sampleInput(t)
	in.MatterID = "matter-1"
	if _, err := brief.NewExtractive().Build(context.Background(), in); !errors.Is(err, brief.ErrInvalidInput) {
		t.Errorf("non-uuid matter: err = %v", err)
	}
}

func citesDoc(e brief.Event, doc string) bool {
	return slices.ContainsFunc(e.Citations, func(c brief.Citation) bool { return c.DocumentID == doc })
}

func TestEmptyMatter(t *testing.T) {
	b := buildSample(t, brief.Input{FirmID: firmID, MatterID: matterID, Title: "New matter"})
	raw, _ := json.Marshal(b)
	for _, field := range []string{`"parties":[]`, `"chronology":[]`, `"documents":[]`} {
		if !bytes.Contains(raw, []byte(field)) {
			t.Errorf("JSON lacks %s: %s", field, raw)
		}
	}
}
