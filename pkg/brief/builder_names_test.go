package brief

import (
	"context"
	"strings"
	"testing"
)

// A caption whose right column cuts into the defendant's lines: the rules
// may join "Super. Ct." to the name below it, a name that stands on no
// page. The extractive builder must not cite it (the citation check
// would drop it), whatever its caption rules read.
func TestExtractiveCitesOnlyNamesOnThePage(t *testing.T) {
	page := lines(
		"IN THE COURT OF APPEAL OF THE STATE OF NEVADA",
		"",
		"MARGARET QUILL,",
		"",
		"Plaintiff and Appellant,",
		"",
		"v. (Washoe County",
		"",
		"Super. Ct. No. CV1190421)",
		"",
		"HORACE PENDLEBURY et al.,",
		"",
		"Defendants and Respondents.",
		"",
		"Margaret Quill sued Horace Pendlebury for unpaid rent on March 3, 2021.",
	)
	dc := readCaption([]string{page}, nil)
	joined := false
	for _, p := range dc.parties {
		if !strings.Contains(page, p.name) && strings.Contains(p.name, "Super. Ct.") {
			joined = true
		}
	}
	if !joined {
		t.Skip("the caption rules no longer join the column into a name; nothing for the builder to refuse")
	}
	in := Input{FirmID: "11111111-1111-4111-8111-111111111111", MatterID: "22222222-2222-4222-8222-222222222222", Title: "m",
		Documents: []Document{{ID: "33333333-3333-4333-8333-333333333333", Name: "op.pdf", SHA256: strings.Repeat("a", 64), Pages: []string{page}}}}
	b, err := NewExtractive().Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if b.Checks.DroppedCitations != 0 {
		t.Errorf("the builder's own citations were dropped: %v", b.Checks.Notes)
	}
	for _, p := range b.Parties {
		if strings.Contains(p.Name, "Super. Ct.") {
			t.Errorf("party %q is not a name on the page", p.Name)
		}
	}
}
