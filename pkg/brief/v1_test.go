package brief_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
)

// A v1 frame (as landed before brief/v2) still reads, in the v2 shape.
func TestDecodeV1Frame(t *testing.T) {
	raw, err := os.ReadFile("testdata/frame_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := brief.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.SchemaVersion != brief.SchemaV1 || b.Builder != "extractive/v1" || b.Caption.Title != "Harlow Logistics Ltd v. Penmark Freight Inc." {
		t.Errorf("decoded %q by %q, caption %+v", b.SchemaVersion, b.Builder, b.Caption)
	}
	if len(b.Chronology) != 2 || b.Chronology[0].Date != "2025-01-14" || len(b.Chronology[0].Citations) != 1 || b.Chronology[0].Citations[0].Page != 1 {
		t.Errorf("chronology %+v", b.Chronology)
	}
	if len(b.Documents) != 1 || b.Documents[0].Kind != brief.KindOther || len(b.Documents[0].Assertions) != 1 {
		t.Errorf("documents %+v", b.Documents)
	}
	// Upgraded, it is a valid v2 Brief apart from its version.
	b.SchemaVersion = brief.SchemaVersion
	b.InputFingerprint = "x"
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
}

func TestDecodeV2AndUnknown(t *testing.T) {
	b := buildSample(t, sampleInput(t))
	raw, _ := json.Marshal(b)
	got, err := brief.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(got)
	if string(again) != string(raw) {
		t.Error("a v2 Brief does not round-trip through Decode")
	}
	for _, body := range []string{`{"schema_version":"brief/v3"}`, `{}`, `not json`} {
		if _, err := brief.Decode([]byte(body)); !errors.Is(err, brief.ErrInvalidBrief) {
			t.Errorf("Decode(%s) = %v, want ErrInvalidBrief", body, err)
		}
	}
}

// A brief/v2 frame written before responses and the model checks' counts
// decodes with an empty responses list and validates.
func TestDecodeV2FrameWithoutTheNewerFields(t *testing.T) {
	b, err := brief.NewExtractive().Build(context.Background(), sampleInput(t))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	raw, _ := json.Marshal(b)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "responses")
	checks := m["checks"].(map[string]any)
	delete(checks, "refused")
	delete(checks, "model_asserted")
	old, _ := json.Marshal(m)
	got, err := brief.Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if got.Responses == nil || len(got.Responses) != 0 || got.Checks.Refused != 0 {
		t.Errorf("responses %#v, refused %d", got.Responses, got.Checks.Refused)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}
