package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// briefView is `railctl brief --json`: the frame's metadata, whether it is
// current, and the Brief itself.
type briefView struct {
	FirmID              string            `json:"firm_id"`
	MatterID            string            `json:"matter_id"`
	Current             bool              `json:"current"`
	RequestedGeneration int64             `json:"requested_generation"`
	BuiltGeneration     int64             `json:"built_generation"`
	RunStatus           string            `json:"run_status"`
	Frame               *rail.StoredFrame `json:"frame"`
	Brief               json.RawMessage   `json:"brief"`
}

func cmdBrief(ctx context.Context, g *globals, args []string) error {
	c := g.flags("brief", "--firm F --matter M [--json]", withMatter)
	asJSON := c.Bool("json", false, "print the frame metadata and the Brief as JSON")
	s, err := c.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	ref, ledger := s.ref, s.ledger()
	j, err := ledger.Job(ctx, ref)
	if err != nil {
		return err
	}
	f, found, err := ledger.LatestFrame(ctx, ref)
	if err != nil {
		return err
	}
	if *asJSON {
		v := briefView{FirmID: ref.FirmID.String(), MatterID: ref.MatterID.String(), Current: j.Current && found,
			RequestedGeneration: j.RequestedGeneration, BuiltGeneration: j.BuiltGeneration, RunStatus: j.RunStatus,
			Brief: json.RawMessage("null")}
		if found {
			v.Frame, v.Brief = &f, f.Body
		}
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if !found {
		fmt.Fprintf(g.stdout, "No Brief yet for matter %s (%s; requested %d, built %d).\n",
			ref, j.RunStatus, j.RequestedGeneration, j.BuiltGeneration)
		return nil
	}
	printBrief(g.stdout, j, f)
	return nil
}

// printBrief renders a frame for people.
func printBrief(w io.Writer, j postgres.JobRow, f rail.StoredFrame) {
	state := "CURRENT"
	if !j.Current {
		state = fmt.Sprintf("NOT CURRENT: %s; a newer Brief is on its way", currentText(j))
	}
	b, err := brief.Decode(f.Body)
	if err != nil {
		fmt.Fprintf(w, "Frame (token %d, builder %s) is not a Brief this railctl can read (%v); its body:\n%s\n", f.Token, f.Builder, err, f.Body)
		fmt.Fprintf(w, "Status: %s (requested %d, built %d)\n", state, j.RequestedGeneration, j.BuiltGeneration)
		return
	}
	title := b.Matter.Title
	if title == "" {
		title = "(untitled matter)"
	}
	rule := strings.Repeat("=", 78)
	fmt.Fprintln(w, rule)
	fmt.Fprintf(w, "BRIEF  %s\n", title)
	fmt.Fprintf(w, "matter %s / %s\n", b.Matter.FirmID, b.Matter.MatterID)
	fmt.Fprintf(w, "status %s — requested generation %d, built generation %d\n", state, j.RequestedGeneration, j.BuiltGeneration)
	fmt.Fprintf(w, "frame  token %d, covers generation %d, built %s by %s (model invoked: %v)\n",
		f.Token, f.Target, f.BuiltAt.Local().Format(time.DateTime), f.Builder, yesNo(f.ModelInvoked))
	if b.SchemaVersion != brief.SchemaVersion {
		fmt.Fprintf(w, "schema %s (read as %s; the next build writes %s)\n", b.SchemaVersion, brief.SchemaVersion, brief.SchemaVersion)
	}
	fmt.Fprintln(w, rule)

	if c := b.Caption; c.Court != "" || c.Title != "" || len(c.CaseNumbers) > 0 {
		fmt.Fprintf(w, "\nCAPTION\n")
		if c.Title != "" {
			fmt.Fprintf(w, "  %s%s\n", c.Title, assertedMark(c.ModelAsserted, "title"))
		}
		if c.Court != "" {
			fmt.Fprintf(w, "  %s%s\n", c.Court, assertedMark(c.ModelAsserted, "court"))
		}
		if len(c.CaseNumbers) > 0 {
			fmt.Fprintf(w, "  No. %s\n", strings.Join(c.CaseNumbers, ", "))
		}
	}

	fmt.Fprintf(w, "\nPARTIES (%d)\n", len(b.Parties))
	for _, p := range b.Parties {
		role := string(p.Role)
		if p.Capacity != "" {
			role += " (" + p.Capacity + ")"
		}
		mark := ""
		if p.ModelAsserted {
			mark = "  " + modelAssertedText
		}
		fmt.Fprintf(w, "  %-10s %s  %s%s\n", role, p.Name, cites(p.Citations), mark)
	}
	fmt.Fprintf(w, "\nCHRONOLOGY (%d)\n", len(b.Chronology))
	for _, e := range b.Chronology {
		fmt.Fprintf(w, "  %s  %s  %s\n", e.Date, clip(e.Text, 110), cites(e.Citations))
	}
	fmt.Fprintf(w, "\nDOCUMENTS (%d)\n", len(b.Documents))
	for i, d := range b.Documents {
		fmt.Fprintf(w, "  %d. %s — %s, %d page(s), sha256 %s…%s\n", i+1, d.Name, kindText(d), d.PageCount, short(d.SHA256, 12), assertedFields(d.ModelAsserted))
		if d.Note != "" {
			fmt.Fprintf(w, "     note: %s\n", d.Note)
		}
		if len(d.Assertions) == 0 {
			fmt.Fprintln(w, "     (no assertions extracted)")
		}
		for _, a := range d.Assertions {
			fmt.Fprintf(w, "     - %s  %s\n", clip(a.Text, 110), cite(a.Citation))
		}
	}
	printResponses(w, b.Responses)
	if c := b.Checks; c.DroppedItems > 0 || c.DroppedCitations > 0 || c.Repaired > 0 || c.Refused > 0 || c.ModelAsserted > 0 {
		fmt.Fprintf(w, "\nCITATION CHECK: %d checked, %d repaired, %d citation(s) and %d item(s) dropped\n", c.Checked, c.Repaired, c.DroppedCitations, c.DroppedItems)
		if c.Refused > 0 || c.ModelAsserted > 0 {
			fmt.Fprintf(w, "MODEL CHECK: %d value(s) the model wrote refused, %d kept but marked model asserted\n", c.Refused, c.ModelAsserted)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

// kindText is "complaint", "order filed 2013-01-03, docket entry 19", ….
func kindText(d brief.DocumentSummary) string {
	s := string(d.Kind)
	if s == "" {
		s = "document"
	}
	if d.FiledOn != "" {
		s += " filed " + d.FiledOn
	}
	if d.DocketEntry != "" {
		s += ", docket entry " + d.DocketEntry
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cite(c brief.Citation) string { return fmt.Sprintf("[%s p.%d]", c.DocumentName, c.Page) }

func cites(cs []brief.Citation) string {
	var parts []string
	for i, c := range cs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("+%d more", len(cs)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s p.%d", c.DocumentName, c.Page))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// modelAssertedText marks what a model wrote that the documents do not
// confirm.
const modelAssertedText = "[model asserted: not confirmed by the documents]"

func assertedMark(fields []string, field string) string {
	for _, f := range fields {
		if f == field {
			return "  " + modelAssertedText
		}
	}
	return ""
}

func assertedFields(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return "  [model asserted: " + strings.Join(fields, ", ") + "]"
}

// statusText is a response status as the table shows it.
var statusText = map[brief.ResponseStatus]string{
	brief.StatusAdmitted:           "admitted",
	brief.StatusDenied:             "denied",
	brief.StatusNoKnowledge:        "no knowledge (8(b)(5): denied)",
	brief.StatusPartlyAdmitted:     "partly admitted",
	brief.StatusNoResponseRequired: "no response required",
	brief.StatusNotAnswered:        "NOT ANSWERED (8(b)(6))",
}

// printResponses prints the allegations and responses as a table: the
// paragraph, what the response does, the allegation and the response,
// each with its page. The paragraph column is as wide as the longest
// label (a letter, a number, "Count III", up to 14 characters); when the
// allegations come from more than one pleading (a complaint and a
// counterclaim) each names its document.
func printResponses(w io.Writer, rs []brief.Response) {
	if len(rs) == 0 {
		return
	}
	width, docs := 5, map[string]bool{}
	for _, r := range rs {
		width = max(width, min(14, len([]rune(r.Paragraph))))
		docs[r.Allegation.DocumentID] = true
	}
	fmt.Fprintf(w, "\nRESPONSES (%d): each allegation and the answer's response\n", len(rs))
	fmt.Fprintf(w, "  %-*s %-30s %-52s %s\n", width, "para", "status", "allegation", "response")
	for _, r := range rs {
		st := statusText[r.Status]
		if st == "" {
			st = esc(string(r.Status))
		}
		resp := "—"
		if r.Response != nil {
			resp = fmt.Sprintf("[%s p.%d] %s", esc(r.Response.DocumentName), r.Response.Page, clip(esc(r.Response.Text), 90))
		}
		alleg := fmt.Sprintf("[p.%d] %s", r.Allegation.Page, clip(esc(r.Allegation.Text), 44))
		if len(docs) > 1 {
			alleg = fmt.Sprintf("[%s p.%d] %s", esc(r.Allegation.DocumentName), r.Allegation.Page, clip(esc(r.Allegation.Text), 44))
		}
		fmt.Fprintf(w, "  %-*s %-30s %-52s %s\n", width, clip(esc(r.Paragraph), width), st, alleg, resp)
		if r.Note != "" {
			fmt.Fprintf(w, "  %-*s %-30s note: %s\n", width, "", "", clip(esc(r.Note), 150))
		}
		for _, h := range r.History {
			fmt.Fprintf(w, "  %-*s %-30s earlier: [%s p.%d] %s — %s\n", width, "", "", esc(h.Response.DocumentName), h.Response.Page, statusText[h.Status], clip(esc(h.Response.Text), 60))
		}
	}
}

// esc makes untrusted text safe for a terminal: control characters
// (escape sequences among them) and bidirectional overrides are shown as
// "\x.." or "\u....", never interpreted.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
