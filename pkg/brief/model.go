package brief

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pramaan/brief-rail/pkg/doctext"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// A model builder (pkg/aws/bedrock) has a model write the Brief: it sends
// SystemPrompt and a Prompt's documents, and hands the reply to
// Prompt.Assemble. The prompt, the parsing of the reply and the citation
// check live here, with the schema they describe; the model's transport
// lives in the builder's own package.

// ErrModelOutput is wrapped by errors about a model reply that is not a
// usable Brief.
var ErrModelOutput = errors.New("brief: unusable model output")

// SystemPrompt asks a model for a brief/v2 Brief of the documents that
// follow. Its hash (PromptHash) is part of a model builder's identity.
const SystemPrompt = `You write the Brief of a litigation matter from its documents.
Reply with one JSON object and nothing else, of this form (schema "brief/v2"):
{
  "schema_version": "brief/v2",
  "caption": {"court": "the court as captioned", "case_numbers": ["as written"],
              "title": "FIRST PLAINTIFF v. FIRST DEFENDANT, or In re: SUBJECT, as captioned",
              "citations": [{"document_id": "...", "page": 1}]},
  "parties": [{"name": "...", "role": "plaintiff|defendant|counsel|witness|other",
               "capacity": "appellant|appellee|petitioner|respondent|debtor|... or empty",
               "citations": [{"document_id": "...", "page": 1, "quote": "the name as written on that page"}]}],
  "chronology": [{"date": "YYYY-MM-DD", "text": "the sentence that states the event",
                  "citations": [{"document_id": "...", "page": 1, "quote": "the sentence, copied exactly from that page"}]}],
  "documents": [{"document_id": "...", "kind": "complaint|answer|motion|order|opinion|notice|letter|exhibit|other",
                 "filed_on": "YYYY-MM-DD or empty",
                 "assertions": [{"text": "a whole sentence the document asserts, copied exactly",
                                 "citation": {"document_id": "...", "page": 1}}]}]
}
Rules:
- Use only the documents given. Every citation names a document_id given and a page number shown in its <page number="N"> tag, and every quote (and every assertion's text) is copied exactly from that page: citations whose quote is not on the page are dropped.
- Parties: the litigants named in the captions, with their names (never role words such as "Appellees"). An appellant or appellee keeps its trial role (plaintiff or defendant) and puts "appellant"/"appellee" in capacity. The subject of an "In re:" matter is "other". Counsel and witnesses may be added.
- Chronology: events of this matter only (not dates inside case-law citations, not docket stamps), one entry per event, citing every document that states it, sorted by date.
- Assertions: for each document, its allegations, admissions, denials, defences, demands and holdings, as whole sentences, at most 40 per document.
- filed_on: the filing date the document states (a "Filed" stamp or the signature date), else empty.
- Include every document_id given in "documents", with an empty "assertions" list when it has no text.
- Do not invent facts, names or dates.`

// Prompt is one model call's documents, ready to send, and what Assemble
// needs to turn the model's reply into a Brief.
type Prompt struct {
	// Documents is the user message: the matter's title and each document's
	// cleaned text (doctext.Clean), page-tagged, in order of id.
	Documents string

	builder     string
	in          Input
	docs        []cleanDoc
	fingerprint string
}

// NewPrompt reads in once, one document at a time, into a Prompt for a
// build by the builder identified by id: the documents' cleaned text, at
// most maxChars of it (more is ErrInvalidInput), kept for the citation
// check, and the input fingerprint (rail.InputFingerprint) for id.
func NewPrompt(ctx context.Context, in Input, id rail.BuilderIdentity, maxChars int) (*Prompt, error) {
	if err := in.validateHeader(); err != nil {
		return nil, err
	}
	var s strings.Builder
	var dc docChecker
	fp := newFingerprint(in, id)
	var docs []cleanDoc
	fmt.Fprintf(&s, "Matter: %s\n\n", in.Title)
	for d, err := range in.Each(ctx) {
		if err != nil {
			return nil, err
		}
		if err := dc.check(d); err != nil {
			return nil, err
		}
		addToFingerprint(fp, d)
		c := doctext.Clean(d.Pages)
		fmt.Fprintf(&s, "<document id=%q name=%q pages=\"%d\">\n", d.ID, d.Name, len(c.Pages))
		if d.Note != "" {
			fmt.Fprintf(&s, "<note>%s</note>\n", d.Note)
		}
		for i, p := range c.Pages {
			fmt.Fprintf(&s, "<page number=\"%d\">\n%s\n</page>\n", i+1, p)
		}
		s.WriteString("</document>\n")
		if s.Len() > maxChars {
			return nil, fmt.Errorf("%w: documents have more than %d characters of text for one model call", ErrInvalidInput, maxChars)
		}
		meta := Document{ID: d.ID, Name: d.Name, SHA256: d.SHA256, Pages: make([]string, len(d.Pages)), Note: d.Note}
		docs = append(docs, cleanDoc{Document: meta, pages: c.Pages, meta: c.Meta})
	}
	sort.SliceStable(docs, func(i, j int) bool {
		if docs[i].Name != docs[j].Name {
			return docs[i].Name < docs[j].Name
		}
		return strings.ToLower(docs[i].ID) < strings.ToLower(docs[j].ID)
	})
	return &Prompt{Documents: s.String(), builder: id.Name, in: in, docs: docs, fingerprint: fp.Sum()}, nil
}

// Assemble turns the model's reply into the Brief: see assemble.
func (p *Prompt) Assemble(reply string) (Brief, error) {
	return assemble(p.builder, p.in, p.docs, p.fingerprint, reply)
}

// cleanDoc is an input document with its cleaned pages.
type cleanDoc struct {
	Document
	pages []string
	meta  doctext.Meta
}

// modelBrief is the part of a Brief the model writes.
type modelBrief struct {
	SchemaVersion string  `json:"schema_version"`
	Caption       Caption `json:"caption"`
	Parties       []Party `json:"parties"`
	Chronology    []Event `json:"chronology"`
	Documents     []struct {
		DocumentID string      `json:"document_id"`
		Kind       Kind        `json:"kind"`
		FiledOn    string      `json:"filed_on"`
		Assertions []Assertion `json:"assertions"`
	} `json:"documents"`
}

// assemble parses the model's reply, completes it from the input and runs
// the citation check: an item that cites an unknown document, a page the
// document does not have or a quote that is not on the page (nor on another
// page of that document, where it is moved) is dropped and counted in
// Checks, not landed.
func assemble(builder string, in Input, docs []cleanDoc, fingerprint, reply string) (Brief, error) {
	raw, err := jsonObject(reply)
	if err != nil {
		return Brief{}, err
	}
	var m modelBrief
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return Brief{}, fmt.Errorf("%w: reply is not Brief JSON: %v", ErrModelOutput, err)
	}
	if m.SchemaVersion != "" && m.SchemaVersion != SchemaVersion {
		return Brief{}, fmt.Errorf("%w: schema_version %q, want %q", ErrModelOutput, m.SchemaVersion, SchemaVersion)
	}
	byID := make(map[string]cleanDoc, len(docs))
	pages := make(map[string][]string, len(docs))
	for _, d := range docs {
		byID[strings.ToLower(d.ID)] = d
		pages[d.ID] = d.pages
	}
	b := Brief{
		SchemaVersion:    SchemaVersion,
		Matter:           Matter{FirmID: in.FirmID, MatterID: in.MatterID, Title: in.Title},
		Caption:          m.Caption,
		Parties:          nonNil(m.Parties),
		Chronology:       nonNil(m.Chronology),
		Documents:        make([]DocumentSummary, 0, len(docs)),
		Checks:           Checks{Notes: []string{}},
		Builder:          builder,
		InputFingerprint: fingerprint,
	}
	b.Caption.CaseNumbers = nonNil(b.Caption.CaseNumbers)
	b.Caption.Citations = nonNil(b.Caption.Citations)
	for i := range b.Parties {
		b.Parties[i].Role = Role(strings.ToLower(string(b.Parties[i].Role)))
		b.Parties[i].Citations = nonNil(b.Parties[i].Citations)
	}
	for _, e := range b.Chronology {
		if !isDate(e.Date) {
			return Brief{}, fmt.Errorf("%w: chronology date %q is not YYYY-MM-DD", ErrModelOutput, e.Date)
		}
	}
	sort.SliceStable(b.Chronology, func(i, j int) bool { return b.Chronology[i].Date < b.Chronology[j].Date })

	type modelDoc struct {
		kind       Kind
		filedOn    string
		assertions []Assertion
	}
	given := map[string]*modelDoc{}
	for _, d := range m.Documents {
		id := strings.ToLower(d.DocumentID)
		if _, ok := byID[id]; !ok {
			b.Checks.DroppedItems += len(d.Assertions)
			b.Checks.DroppedCitations += len(d.Assertions)
			b.Checks.Checked += len(d.Assertions)
			if len(b.Checks.Notes) < MaxCheckNotes {
				b.Checks.Notes = append(b.Checks.Notes, fmt.Sprintf("assertions for unknown document %q", d.DocumentID))
			}
			continue
		}
		md := given[id]
		if md == nil {
			md = &modelDoc{}
			given[id] = md
		}
		md.kind, md.filedOn = Kind(strings.ToLower(string(d.Kind))), d.FiledOn
		md.assertions = append(md.assertions, d.Assertions...)
	}
	for _, d := range docs {
		sum := DocumentSummary{
			DocumentID: d.ID, Name: d.Name, SHA256: d.SHA256,
			PageCount: len(d.Pages), Note: d.Note, Kind: KindOther,
			FiledOn: d.meta.FiledOn, DocketEntry: d.meta.DocketEntry, Assertions: []Assertion{},
		}
		if md := given[strings.ToLower(d.ID)]; md != nil {
			if md.kind.Valid() {
				sum.Kind = md.kind
			}
			if sum.FiledOn == "" && isDate(md.filedOn) {
				sum.FiledOn = md.filedOn
			}
			sum.Assertions = nonNil(md.assertions)
		}
		b.Documents = append(b.Documents, sum)
	}
	CheckCitations(&b, pages)
	if err := b.Validate(); err != nil {
		return Brief{}, fmt.Errorf("%w: %w", ErrModelOutput, err)
	}
	return b, nil
}

// jsonObject finds the JSON object in a reply: the body of a ```json (or
// bare ```) fence if there is one, else the text from the first '{' to the
// last '}'.
func jsonObject(reply string) (string, error) {
	s := strings.TrimSpace(reply)
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			lang := strings.TrimSpace(rest[:nl])
			if lang == "" || strings.EqualFold(lang, "json") {
				rest = rest[nl+1:]
			}
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			s = strings.TrimSpace(rest[:j])
		}
	}
	start, end := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if start < 0 || end < start {
		return "", fmt.Errorf("%w: no JSON object in reply (%s)", ErrModelOutput, strconv.Quote(clip(s, 120)))
	}
	return s[start : end+1], nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
