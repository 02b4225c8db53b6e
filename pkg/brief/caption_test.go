package brief

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/doctext"
)

type wantParty struct {
	name string
	role Role
}

func captionOf(t *testing.T, pages ...string) docCaption {
	t.Helper()
	c := doctext.Clean(pages)
	return readCaption(c.Pages, c.Meta.CaseNumbers)
}

func checkParties(t *testing.T, dc docCaption, want []wantParty) {
	t.Helper()
	if len(dc.parties) != len(want) {
		t.Errorf("parties %+v, want %+v", dc.parties, want)
		return
	}
	for i, w := range want {
		if p := dc.parties[i]; p.name != w.name || p.role != w.role {
			t.Errorf("party %d = %q (%s), want %q (%s)", i, p.name, p.role, w.name, w.role)
		}
	}
}

// An appellate caption: names from the caption, trial roles kept, role
// words never names, the description after a comma dropped.
func TestCaptionAppellate(t *testing.T) {
	dc := captionOf(t, strings.Join([]string{
		"Case: 20-1507 Document: 00117654321 Page: 1 Date Filed: 10/01/2020 Entry ID: 6371234",
		"United States Court of Appeals",
		"For the First Circuit",
		"No. 20-1507",
		"CALVARY CHAPEL OF BANGOR,",
		"Plaintiff, Appellant,",
		"v.",
		"JANET T. MILLS, in her official capacity as Governor of the",
		"State of Maine,",
		"Defendant, Appellee.",
		"APPEAL FROM THE UNITED STATES DISTRICT COURT",
		"FOR THE DISTRICT OF MAINE",
		"The Appellees argue that the appeal is moot. Appellant disagrees.",
	}, "\n"))
	if dc.court != "United States Court of Appeals for the First Circuit" {
		t.Errorf("court %q", dc.court)
	}
	if dc.title != "Calvary Chapel of Bangor v. Janet T. Mills" {
		t.Errorf("title %q", dc.title)
	}
	if len(dc.caseNumbers) != 1 || CaseKey(dc.caseNumbers[0]) != "20--1507" {
		t.Errorf("case numbers %q", dc.caseNumbers)
	}
	checkParties(t, dc, []wantParty{{"Calvary Chapel of Bangor", RolePlaintiff}, {"Janet T. Mills", RoleDefendant}})
	if dc.parties[0].capacity != "appellant" || dc.parties[1].capacity != "appellee" {
		t.Errorf("capacities %q, %q", dc.parties[0].capacity, dc.parties[1].capacity)
	}
}

// Without trial-role words the side of the "v." decides; an appellee
// before the "v." is the plaintiff.
func TestCaptionRolesBySide(t *testing.T) {
	dc := captionOf(t, "In the United States Court of Appeal\nFor the Eighth Circuit\nMary Beavers Appellant v. 17-2543\nMidland Funding LLC, et al Appellees\nDesignation & Statement of Issues\nAppellant Mary Beavers designates the following issue on appeal.")
	checkParties(t, dc, []wantParty{{"Mary Beavers", RolePlaintiff}, {"Midland Funding LLC", RoleDefendant}})
	dc = captionOf(t, "UNITED STATES COURT OF APPEALS\nFOR THE DISTRICT OF COLUMBIA CIRCUIT\nNo. 07-3125\nUNITED STATES OF AMERICA,\nAPPELLEE\nv.\nSAMUEL H. VINTON, JR.,\nAPPELLANT\nAppeal from the United States District Court")
	checkParties(t, dc, []wantParty{{"United States of America", RolePlaintiff}, {"Samuel H. Vinton, Jr.", RoleDefendant}})
}

func TestCaptionInRe(t *testing.T) {
	dc := captionOf(t, "UNITED STATES BANKRUPTCY COURT\nFOR THE DISTRICT OF ALASKA\nIn Re: )\nJOHN Q. SMITH, ) Case No. 09-00429\nDebtor. )\nMOTION TO CONVERT\nThe debtor moves to convert the case to chapter 7.")
	if dc.court != "United States Bankruptcy Court for the District of Alaska" {
		t.Errorf("court %q", dc.court)
	}
	checkParties(t, dc, []wantParty{{"John Q. Smith", RoleOther}})
	if dc.title != "In re: John Q. Smith" {
		t.Errorf("title %q", dc.title)
	}
}

// Pleading paper: the line numbers go before the caption is read.
func TestCaptionOnPleadingPaper(t *testing.T) {
	var lines []string
	body := []string{"", "", "UNITED STATES DISTRICT COURT", "CENTRAL DISTRICT OF CALIFORNIA", "", "DENNIS B. REGALADO, Case No. 2:18-cv-10166-JAK (AFM)",
		"Petitioner,", "v. JUDGMENT", "W.J. SULLIVAN, Warden,", "Respondent.", "", "This matter came before the Court on the Petition."}
	for i, l := range body {
		lines = append(lines, strings.TrimSpace(strconv.Itoa(i+1)+" "+l))
	}
	dc := captionOf(t, strings.Join(lines, "\n"))
	checkParties(t, dc, []wantParty{{"Dennis B. Regalado", RolePlaintiff}, {"W.J. Sullivan", RoleDefendant}})
	if len(dc.caseNumbers) != 1 || CaseKey(dc.caseNumbers[0]) != "18-cv-10166" {
		t.Errorf("case numbers %q", dc.caseNumbers)
	}
}

func TestCaseKey(t *testing.T) {
	for in, want := range map[string]string{
		"2:18-cv-10166-JAK": "18-cv-10166", "18-CV-10166": "18-cv-10166", "2009-1361": "09--1361", "09-1361": "09--1361",
		"CV17-00016-CAS(JCx)": "17-cv-16", "06cr00298-01": "06-cr-298", "19031-13": "19031-13", "Section 5": "",
	} {
		if got := CaseKey(in); got != want {
			t.Errorf("CaseKey(%q) = %q, want %q", in, got, want)
		}
	}
}
