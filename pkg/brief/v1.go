package brief

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
)

// SchemaV1 is the schema version of Briefs written before brief/v2. Frames
// in that form may still be in the ledger; Decode reads them.
const SchemaV1 = "brief/v1"

// JSONSchemaV1 is the JSON Schema of a brief/v1 Brief, kept for readers of
// old frames.
//
//go:embed brief.v1.schema.json
var JSONSchemaV1 []byte

// V1 is a brief/v1 Brief as it was serialised.
type V1 struct {
	SchemaVersion string  `json:"schema_version"`
	Matter        Matter  `json:"matter"`
	Parties       []Party `json:"parties"`
	Chronology    []struct {
		Date     string   `json:"date"`
		Text     string   `json:"text"`
		Citation Citation `json:"citation"`
	} `json:"chronology"`
	Documents []struct {
		DocumentID string      `json:"document_id"`
		Name       string      `json:"name"`
		SHA256     string      `json:"sha256"`
		PageCount  int         `json:"page_count"`
		Note       string      `json:"note"`
		Assertions []Assertion `json:"assertions"`
	} `json:"documents"`
	Builder          string `json:"builder"`
	InputFingerprint string `json:"input_fingerprint"`
}

// Decode reads a serialised Brief of either schema. A brief/v2 body is
// returned as it is. A brief/v1 body is read into the v2 shape: each
// chronology entry gets its one citation as a list, documents are of kind
// "other" with no filed date, the caption's title is the matter's title,
// and SchemaVersion stays "brief/v1" so that readers can say the frame is
// old (the rail rebuilds it as v2 on its next build: the schema version is
// part of the builders' names and of Fingerprint). Anything else is an
// error wrapping ErrInvalidBrief.
func Decode(body []byte) (Brief, error) {
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return Brief{}, fmt.Errorf("%w: %v", ErrInvalidBrief, err)
	}
	switch head.SchemaVersion {
	case SchemaVersion:
		var b Brief
		if err := json.Unmarshal(body, &b); err != nil {
			return Brief{}, fmt.Errorf("%w: %v", ErrInvalidBrief, err)
		}
		b.Responses = nonNil(b.Responses) // frames written before the field have none
		return b, nil
	case SchemaV1:
		var v V1
		if err := json.Unmarshal(body, &v); err != nil {
			return Brief{}, fmt.Errorf("%w: %v", ErrInvalidBrief, err)
		}
		return v.Upgrade(), nil
	}
	return Brief{}, fmt.Errorf("%w: schema_version %q is neither %s nor %s", ErrInvalidBrief, head.SchemaVersion, SchemaVersion, SchemaV1)
}

// Upgrade reads a v1 Brief into the v2 shape (see Decode).
func (v V1) Upgrade() Brief {
	b := Brief{
		SchemaVersion:    SchemaV1,
		Matter:           v.Matter,
		Caption:          Caption{Title: v.Matter.Title, CaseNumbers: []string{}, Citations: []Citation{}},
		Parties:          nonNil(v.Parties),
		Chronology:       make([]Event, 0, len(v.Chronology)),
		Documents:        make([]DocumentSummary, 0, len(v.Documents)),
		Responses:        []Response{},
		Checks:           Checks{Notes: []string{}},
		Builder:          v.Builder,
		InputFingerprint: v.InputFingerprint,
	}
	for _, e := range v.Chronology {
		b.Chronology = append(b.Chronology, Event{Date: e.Date, Text: e.Text, Citations: []Citation{e.Citation}})
	}
	sort.SliceStable(b.Chronology, func(i, j int) bool { return b.Chronology[i].Date < b.Chronology[j].Date })
	for _, d := range v.Documents {
		b.Documents = append(b.Documents, DocumentSummary{
			DocumentID: d.DocumentID, Name: d.Name, SHA256: d.SHA256, PageCount: d.PageCount,
			Note: d.Note, Kind: KindOther, Assertions: nonNil(d.Assertions),
		})
	}
	return b
}
