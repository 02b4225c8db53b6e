// Package brief defines the Brief of a litigation matter (schema
// "brief/v2"), the Builder interface that produces it from a matter's
// documents, the Extractive builder (deterministic and offline), what a
// model builder needs besides its model (SystemPrompt, NewPrompt and
// Prompt.Assemble; the Bedrock builder is pkg/aws/bedrock) and Fingerprint,
// the rail's input fingerprint that every Brief records. It imports no AWS
// module.
//
// Every item in a Brief cites a document and a 1-based page of the
// document's cleaned text (package doctext); a citation's quote occurs on the
// page it cites, and builders drop or repair items whose quotes do not.
// What a model wrote is checked field by field against the documents
// (verify.go) and refused, dropped or marked model_asserted where they do
// not bear it out. Responses pairs a complaint's numbered allegations with
// an answer's responses, by rules (responses.go). Every field is untrusted
// text (untrusted.go).
// Validate checks that each citation points at a document in the Brief and a
// page it has. Decode reads both brief/v2 and older brief/v1 frames.
package brief

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// SchemaVersion is the value of Brief.SchemaVersion written by this package.
const SchemaVersion = "brief/v2"

// JSONSchema is the JSON Schema (draft 2020-12) of a serialised Brief.
//
//go:embed brief.v2.schema.json
var JSONSchema []byte

// Brief is the structured summary of one matter.
type Brief struct {
	SchemaVersion string            `json:"schema_version"`
	Matter        Matter            `json:"matter"`
	Caption       Caption           `json:"caption"`
	Parties       []Party           `json:"parties"`
	Chronology    []Event           `json:"chronology"`
	Documents     []DocumentSummary `json:"documents"`
	// Responses pairs each numbered allegation of a pleading with the
	// response to it (responses.go); deterministic, whatever the builder.
	// Frames written before the field have none.
	Responses        []Response `json:"responses"`
	Checks           Checks     `json:"checks"`
	Builder          string     `json:"builder"`
	InputFingerprint string     `json:"input_fingerprint"` // Fingerprint: the value the frame's ledger row carries
}

// Matter identifies the matter the Brief is about.
type Matter struct {
	FirmID   string `json:"firm_id"`
	MatterID string `json:"matter_id"`
	Title    string `json:"title"`
}

// Caption is the case as the filings caption it.
type Caption struct {
	Court       string     `json:"court"`        // "United States Court of Appeals for the First Circuit", or ""
	CaseNumbers []string   `json:"case_numbers"` // as written ("12-2209", "2:18-cv-10166-JAK"), distinct
	Title       string     `json:"title"`        // "Transamerica Life Insurance Company v. Estella Rodrigues", "In re: …", or ""
	Citations   []Citation `json:"citations"`    // the pages the caption was read from
	// ModelAsserted names the fields ("court", "title") a model wrote
	// that are not quotes of the caption's pages: shown as the model's
	// claim, not the documents'.
	ModelAsserted []string `json:"model_asserted,omitempty"`
}

// Checks reports the citation check every builder runs before a Brief is
// returned: each item's quote must occur on the page it cites.
type Checks struct {
	Checked  int `json:"checked"`  // citations checked
	Repaired int `json:"repaired"` // citations moved to the page of the same document that has the quote
	// DroppedCitations counts citations removed: an unknown document, or a
	// quote found on no page of the cited document.
	DroppedCitations int `json:"dropped_citations"`
	// DroppedItems counts parties, events and assertions removed because
	// none of their citations survived.
	DroppedItems int `json:"dropped_items"`
	// Refused counts values a model wrote that were refused: markup or a
	// URL, a value outside its enum or format, a case number on no page, a
	// date that is not in its quote, or a caption field, role, capacity,
	// kind or filing date the documents contradict (replaced by the
	// documents' own). 0 for the extractive builder.
	Refused int `json:"refused"`
	// ModelAsserted counts values a model wrote that the documents neither
	// confirm nor contradict, kept and marked model_asserted.
	ModelAsserted int `json:"model_asserted"`
	// Notes says what was dropped, repaired, refused or marked (at most
	// MaxCheckNotes). A model build's notes name fields and sizes, never
	// the model's text.
	Notes []string `json:"notes"`
}

// MaxCheckNotes bounds Checks.Notes.
const MaxCheckNotes = 20

// Role is a party's role in the matter. Litigants keep their trial role on
// appeal (an appellant that was the plaintiff is a plaintiff).
type Role string

// Roles a Party may have.
const (
	RolePlaintiff Role = "plaintiff"
	RoleDefendant Role = "defendant"
	RoleCounsel   Role = "counsel"
	RoleWitness   Role = "witness"
	RoleOther     Role = "other" // e.g. the subject of an "In re:" matter, a debtor, an intervenor
)

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool {
	switch r {
	case RolePlaintiff, RoleDefendant, RoleCounsel, RoleWitness, RoleOther:
		return true
	}
	return false
}

// Party is a person or organisation named in the documents.
type Party struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Capacity is the caption's own words for the party's role when they
	// say more than Role ("appellant", "petitioner", "debtor"), or "".
	Capacity  string     `json:"capacity,omitempty"`
	Citations []Citation `json:"citations"`
	// ModelAsserted is true when a model gave the party its role and no
	// caption or signature block confirms it.
	ModelAsserted bool `json:"model_asserted,omitempty"`
}

// Event is one event of the matter, with every document that states it.
type Event struct {
	Date      string     `json:"date"`      // YYYY-MM-DD
	Text      string     `json:"text"`      // the sentence that carries the date (the first citation's quote)
	Citations []Citation `json:"citations"` // at least one; each with its own quote
}

// Kind is what a document is.
type Kind string

// Kinds of document.
const (
	KindComplaint Kind = "complaint"
	KindAnswer    Kind = "answer"
	KindMotion    Kind = "motion"
	KindOrder     Kind = "order"
	KindOpinion   Kind = "opinion"
	KindNotice    Kind = "notice"
	KindLetter    Kind = "letter"
	KindExhibit   Kind = "exhibit"
	KindOther     Kind = "other"
)

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindComplaint, KindAnswer, KindMotion, KindOrder, KindOpinion, KindNotice, KindLetter, KindExhibit, KindOther:
		return true
	}
	return false
}

// DocumentSummary describes one input document and what it asserts.
type DocumentSummary struct {
	DocumentID  string      `json:"document_id"`
	Name        string      `json:"name"`
	SHA256      string      `json:"sha256"`
	PageCount   int         `json:"page_count"`
	Note        string      `json:"note"`
	Kind        Kind        `json:"kind"`
	FiledOn     string      `json:"filed_on"`     // YYYY-MM-DD, or "" when no stamp or signature date says
	DocketEntry string      `json:"docket_entry"` // from the docket stamp, or ""
	Assertions  []Assertion `json:"assertions"`
	// ModelAsserted names the fields ("kind", "filed_on") a model wrote
	// that the document neither confirms nor contradicts.
	ModelAsserted []string `json:"model_asserted,omitempty"`
}

// Assertion is a statement a document makes (an allegation, admission,
// denial, demand, defence, holding), a whole sentence or numbered paragraph.
type Assertion struct {
	Text     string   `json:"text"`
	Citation Citation `json:"citation"`
}

// Citation points at a page of a document, and quotes it.
type Citation struct {
	DocumentID   string `json:"document_id"`
	DocumentName string `json:"document_name"`
	Page         int    `json:"page"` // 1-based
	// Quote is the text on the page the citation stands for (a sentence, a
	// name); "" only where the item's own text is the quote.
	Quote string `json:"quote,omitempty"`
}

// Input is what a Builder reads: a matter and its documents' text.
//
// Builders read the documents through Each, one at a time, so a matter's
// text need not fit in memory: with Stream set (the rail sets it to
// rail.Inputs.Documents) only one document's text is held at a time, plus
// what the builder accumulates. Documents is the in-memory form.
type Input struct {
	FirmID    string
	MatterID  string
	Title     string
	Documents []Document
	// Stream, when set, is used instead of Documents: it yields the
	// documents in order of lowercase id, one at a time; each call is a
	// fresh pass.
	Stream func(ctx context.Context) iter.Seq2[Document, error] `json:"-"`
}

// Each yields in's documents one at a time in order of lowercase id: from
// Stream, or from Documents (sorted by id first).
func (in Input) Each(ctx context.Context) iter.Seq2[Document, error] {
	if in.Stream != nil {
		return in.Stream(ctx)
	}
	docs := slices.Clone(in.Documents)
	slices.SortStableFunc(docs, func(a, b Document) int { return strings.Compare(strings.ToLower(a.ID), strings.ToLower(b.ID)) })
	return func(yield func(Document, error) bool) {
		for _, d := range docs {
			if err := ctx.Err(); err != nil {
				yield(Document{}, err)
				return
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}

// Document is one uploaded document as pdftext extracted it.
type Document struct {
	ID     string   // uuid
	Name   string   // file name shown to people
	SHA256 string   // hex sha256 of the uploaded bytes
	Pages  []string // text per page; "" for a page without a text layer
	Note   string   // extraction note, e.g. which pages have no text layer
}

// Builder turns an Input into a Brief.
type Builder interface {
	Name() string
	Build(ctx context.Context, in Input) (Brief, error)
}

// ErrInvalidInput is wrapped by errors about a malformed Input.
var ErrInvalidInput = errors.New("brief: invalid input")

// ErrInvalidBrief is wrapped by every error Validate returns.
var ErrInvalidBrief = errors.New("brief: invalid brief")

// Validate checks the Input: uuid ids, unique document ids, a name per
// document. It reads every document (a pass over Stream); builders check
// as they stream instead (validateHeader, docChecker).
func (in Input) Validate() error {
	if err := in.validateHeader(); err != nil {
		return err
	}
	var dc docChecker
	for d, err := range in.Each(context.Background()) {
		if err != nil {
			return err
		}
		if err := dc.check(d); err != nil {
			return err
		}
	}
	return nil
}

func (in Input) validateHeader() error {
	if !isUUID(in.FirmID) {
		return fmt.Errorf("%w: firm id %q is not a uuid", ErrInvalidInput, in.FirmID)
	}
	if !isUUID(in.MatterID) {
		return fmt.Errorf("%w: matter id %q is not a uuid", ErrInvalidInput, in.MatterID)
	}
	return nil
}

// docChecker checks documents as they arrive in id order: a duplicate id
// is equal to the previous one.
type docChecker struct {
	n    int
	prev string
}

func (c *docChecker) check(d Document) error {
	i := c.n
	c.n++
	if !isUUID(d.ID) {
		return fmt.Errorf("%w: document %d: id %q is not a uuid", ErrInvalidInput, i, d.ID)
	}
	id := strings.ToLower(d.ID)
	if i > 0 && id == c.prev {
		return fmt.Errorf("%w: document id %s appears twice", ErrInvalidInput, d.ID)
	}
	c.prev = id
	if strings.TrimSpace(d.Name) == "" {
		return fmt.Errorf("%w: document %s has no name", ErrInvalidInput, d.ID)
	}
	return nil
}

// Validate checks a brief/v2 Brief's structure: schema version, matter ids,
// roles, kinds, dates, the chronology's order, non-empty texts, and that
// every citation names a document listed in Documents (by id, with that
// document's name) and a page within its PageCount. Whether quotes occur on
// their pages needs the documents' text: see CheckCitations.
func (b Brief) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if b.SchemaVersion != SchemaVersion {
		bad("schema_version %q, want %q", b.SchemaVersion, SchemaVersion)
	}
	if !isUUID(b.Matter.FirmID) || !isUUID(b.Matter.MatterID) {
		bad("matter firm_id %q / matter_id %q must be uuids", b.Matter.FirmID, b.Matter.MatterID)
	}
	if b.Builder == "" {
		bad("builder is empty")
	}
	if b.InputFingerprint == "" {
		bad("input_fingerprint is empty")
	}
	docs := make(map[string]DocumentSummary, len(b.Documents))
	for i, d := range b.Documents {
		if !isUUID(d.DocumentID) {
			bad("documents[%d]: document_id %q is not a uuid", i, d.DocumentID)
		}
		if _, dup := docs[d.DocumentID]; dup {
			bad("documents[%d]: document_id %s appears twice", i, d.DocumentID)
		}
		if d.PageCount < 0 {
			bad("documents[%d]: page_count %d", i, d.PageCount)
		}
		docs[d.DocumentID] = d
	}
	cite := func(where string, c Citation) {
		d, ok := docs[c.DocumentID]
		switch {
		case !ok:
			bad("%s: cites unknown document %q", where, c.DocumentID)
		case c.DocumentName != d.Name:
			bad("%s: document_name %q, but document %s is %q", where, c.DocumentName, c.DocumentID, d.Name)
		case c.Page < 1 || c.Page > d.PageCount:
			bad("%s: cites page %d of %q, which has %d pages", where, c.Page, d.Name, d.PageCount)
		}
	}
	for i, c := range b.Caption.Citations {
		cite(fmt.Sprintf("caption.citations[%d]", i), c)
	}
	if b.Caption.CaseNumbers == nil || b.Caption.Citations == nil {
		bad("caption: case_numbers and citations must be lists")
	}
	for i, p := range b.Parties {
		where := fmt.Sprintf("parties[%d]", i)
		if strings.TrimSpace(p.Name) == "" {
			bad("%s: empty name", where)
		}
		if !p.Role.Valid() {
			bad("%s: role %q", where, p.Role)
		}
		if len(p.Citations) == 0 {
			bad("%s: no citations", where)
		}
		for j, c := range p.Citations {
			cite(fmt.Sprintf("%s.citations[%d]", where, j), c)
		}
	}
	for i, e := range b.Chronology {
		where := fmt.Sprintf("chronology[%d]", i)
		if !isDate(e.Date) {
			bad("%s: date %q is not YYYY-MM-DD", where, e.Date)
		}
		if i > 0 && e.Date < b.Chronology[i-1].Date {
			bad("%s: date %s before the previous entry's %s", where, e.Date, b.Chronology[i-1].Date)
		}
		if strings.TrimSpace(e.Text) == "" {
			bad("%s: empty text", where)
		}
		if len(e.Citations) == 0 {
			bad("%s: no citations", where)
		}
		for j, c := range e.Citations {
			cite(fmt.Sprintf("%s.citations[%d]", where, j), c)
		}
	}
	for i, d := range b.Documents {
		if !d.Kind.Valid() {
			bad("documents[%d]: kind %q", i, d.Kind)
		}
		if d.FiledOn != "" && !isDate(d.FiledOn) {
			bad("documents[%d]: filed_on %q is not YYYY-MM-DD", i, d.FiledOn)
		}
		for j, a := range d.Assertions {
			where := fmt.Sprintf("documents[%d].assertions[%d]", i, j)
			if strings.TrimSpace(a.Text) == "" {
				bad("%s: empty text", where)
			}
			cite(where+".citation", a.Citation)
			if a.Citation.DocumentID != d.DocumentID {
				bad("%s: cites another document %s", where, a.Citation.DocumentID)
			}
		}
	}
	validateResponses(b.Responses, bad, cite)
	if b.Checks.Checked < 0 || b.Checks.Repaired < 0 || b.Checks.DroppedCitations < 0 || b.Checks.DroppedItems < 0 || b.Checks.Refused < 0 || b.Checks.ModelAsserted < 0 || b.Checks.Notes == nil {
		bad("checks: negative counts or null notes")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidBrief, errors.Join(errs...))
	}
	return nil
}

func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil && len(s) == 10
}

// isUUID reports whether s is a uuid in canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
