package brief

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// MaxBedrockInputChars bounds the page text sent to the model in one call.
const MaxBedrockInputChars = 400_000

// ErrModelOutput is wrapped by errors about a model reply that is not a
// usable Brief.
var ErrModelOutput = errors.New("brief: unusable model output")

// Bedrock builds a Brief with a model behind Amazon Bedrock's Converse API.
// The model writes parties, chronology and assertions; matter, document
// metadata, builder name and fingerprint come from the Input; the result must
// pass Validate.
type Bedrock struct {
	client    *bedrockruntime.Client
	modelID   string
	maxTokens int32
}

// NewBedrock returns a Bedrock builder calling modelID through client.
func NewBedrock(client *bedrockruntime.Client, modelID string) *Bedrock {
	return &Bedrock{client: client, modelID: modelID, maxTokens: 8192}
}

// Name is "bedrock:" followed by the model id.
func (b *Bedrock) Name() string { return "bedrock:" + b.modelID }

const systemPrompt = `You write the Brief of a litigation matter from its documents.
Reply with one JSON object and nothing else, of this form (schema "brief/v1"):
{
  "schema_version": "brief/v1",
  "parties": [{"name": "...", "role": "plaintiff|defendant|counsel|witness|other",
               "citations": [{"document_id": "...", "page": 1}]}],
  "chronology": [{"date": "YYYY-MM-DD", "text": "the sentence from the document that carries the date",
                  "citation": {"document_id": "...", "page": 1}}],
  "documents": [{"document_id": "...",
                 "assertions": [{"text": "what the document asserts, alleges, admits, denies or demands, in its own words",
                                 "citation": {"document_id": "...", "page": 1}}]}]
}
Rules:
- Use only the documents given. Every citation names a document_id given and a page number shown in its <page number="N"> tag.
- Chronology: one entry per dated event, dates normalised to YYYY-MM-DD, sorted by date. Quote the sentence; do not paraphrase.
- Assertions: for each document, its allegations, admissions, denials, defences and demands, quoted, at most 40 per document.
- Include every document_id given in "documents", with an empty "assertions" list when it has no text.
- Do not invent facts, names or dates.`

// Build implements Builder.
func (b *Bedrock) Build(ctx context.Context, in Input) (Brief, error) {
	if err := in.validateHeader(); err != nil {
		return Brief{}, err
	}
	prompt, docs, fp, err := documentsPrompt(ctx, in)
	if err != nil {
		return Brief{}, err
	}
	out, err := b.client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(b.modelID),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: systemPrompt}},
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}},
		}},
		InferenceConfig: &types.InferenceConfiguration{
			Temperature: aws.Float32(0),
			MaxTokens:   aws.Int32(b.maxTokens),
		},
	})
	if err != nil {
		return Brief{}, fmt.Errorf("brief: bedrock converse with %s: %w", b.modelID, err)
	}
	if out.StopReason == types.StopReasonMaxTokens {
		return Brief{}, fmt.Errorf("%w: reply was cut off at %d tokens", ErrModelOutput, b.maxTokens)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return Brief{}, fmt.Errorf("%w: converse returned no message", ErrModelOutput)
	}
	var text strings.Builder
	for _, c := range msg.Value.Content {
		if t, ok := c.(*types.ContentBlockMemberText); ok {
			text.WriteString(t.Value)
		}
	}
	return assemble(b.Name(), in, docs, fp, text.String())
}

// documentsPrompt renders the documents as page-tagged text, reading them
// one at a time: the prompt is bounded by MaxBedrockInputChars, and only
// the documents' metadata (no text) is kept for the Brief, sorted by name
// then id. A second pass, once the text is known to fit, computes the
// fingerprint.
func documentsPrompt(ctx context.Context, in Input) (prompt string, docs []Document, fp string, err error) {
	var s strings.Builder
	var dc docChecker
	fmt.Fprintf(&s, "Matter: %s\n\n", in.Title)
	for d, err := range in.Each(ctx) {
		if err != nil {
			return "", nil, "", err
		}
		if err := dc.check(d); err != nil {
			return "", nil, "", err
		}
		fmt.Fprintf(&s, "<document id=%q name=%q pages=\"%d\">\n", d.ID, d.Name, len(d.Pages))
		if d.Note != "" {
			fmt.Fprintf(&s, "<note>%s</note>\n", d.Note)
		}
		for i, p := range d.Pages {
			fmt.Fprintf(&s, "<page number=\"%d\">\n%s\n</page>\n", i+1, p)
		}
		s.WriteString("</document>\n")
		if s.Len() > MaxBedrockInputChars {
			return "", nil, "", fmt.Errorf("%w: documents have more than %d characters of text for one model call", ErrInvalidInput, MaxBedrockInputChars)
		}
		pages := make([]string, len(d.Pages)) // the page count, without the text
		docs = append(docs, Document{ID: d.ID, Name: d.Name, SHA256: d.SHA256, Pages: pages, Note: d.Note})
	}
	f := newFingerprinter(in, dc.n)
	for d, err := range in.Each(ctx) {
		if err != nil {
			return "", nil, "", err
		}
		f.add(d)
	}
	sort.SliceStable(docs, func(i, j int) bool {
		if docs[i].Name != docs[j].Name {
			return docs[i].Name < docs[j].Name
		}
		return strings.ToLower(docs[i].ID) < strings.ToLower(docs[j].ID)
	})
	return s.String(), docs, f.sum(), nil
}

// modelBrief is the part of a Brief the model writes.
type modelBrief struct {
	SchemaVersion string  `json:"schema_version"`
	Parties       []Party `json:"parties"`
	Chronology    []Event `json:"chronology"`
	Documents     []struct {
		DocumentID string      `json:"document_id"`
		Assertions []Assertion `json:"assertions"`
	} `json:"documents"`
}

// assemble parses the model's reply and completes it from the input.
func assemble(builder string, in Input, docs []Document, fingerprint, reply string) (Brief, error) {
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
	byID := make(map[string]Document, len(docs))
	for _, d := range docs {
		byID[strings.ToLower(d.ID)] = d
	}
	// The model cites by id; the id's spelling and the name come from the
	// input. An unknown id is left as written and Validate reports it.
	fix := func(c *Citation) {
		if d, ok := byID[strings.ToLower(c.DocumentID)]; ok {
			c.DocumentID, c.DocumentName = d.ID, d.Name
		}
	}
	b := Brief{
		SchemaVersion:    SchemaVersion,
		Matter:           Matter{FirmID: in.FirmID, MatterID: in.MatterID, Title: in.Title},
		Parties:          nonNil(m.Parties),
		Chronology:       nonNil(m.Chronology),
		Documents:        make([]DocumentSummary, 0, len(docs)),
		Builder:          builder,
		InputFingerprint: fingerprint,
	}
	for i := range b.Parties {
		b.Parties[i].Role = Role(strings.ToLower(string(b.Parties[i].Role)))
		for j := range b.Parties[i].Citations {
			fix(&b.Parties[i].Citations[j])
		}
	}
	for i := range b.Chronology {
		fix(&b.Chronology[i].Citation)
	}
	sort.SliceStable(b.Chronology, func(i, j int) bool { return b.Chronology[i].Date < b.Chronology[j].Date })

	assertions := map[string][]Assertion{}
	for _, d := range m.Documents {
		id := strings.ToLower(d.DocumentID)
		if _, ok := byID[id]; !ok {
			return Brief{}, fmt.Errorf("%w: assertions for unknown document %q", ErrModelOutput, d.DocumentID)
		}
		assertions[id] = append(assertions[id], d.Assertions...)
	}
	for _, d := range docs {
		as := nonNil(assertions[strings.ToLower(d.ID)])
		for i := range as {
			fix(&as[i].Citation)
		}
		b.Documents = append(b.Documents, DocumentSummary{
			DocumentID: d.ID, Name: d.Name, SHA256: d.SHA256,
			PageCount: len(d.Pages), Note: d.Note, Assertions: as,
		})
	}
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
