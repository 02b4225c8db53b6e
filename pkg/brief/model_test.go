package brief_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// What a model builder needs besides its model, without one: the prompt is
// the cleaned, page-tagged text, bounded; a reply is assembled into a
// checked Brief under the builder's name and the rail's fingerprint. (The
// Bedrock builder's recorded replies: pkg/aws/bedrock.)
func TestPromptAndAssemble(t *testing.T) {
	ctx := context.Background()
	in := sampleInput(t)
	id := rail.BuilderIdentity{Name: "model/v2:x", Version: brief.SchemaVersion, ModelID: "x", PromptHash: brief.PromptHash()}
	p, err := brief.NewPrompt(ctx, in, id, 400_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<document id="` + complaint + `" name="complaint.pdf" pages="2">`, `<page number="2">`, `<note>`} {
		if !strings.Contains(p.Documents, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if _, err := brief.NewPrompt(ctx, in, id, len(p.Documents)-1); !errors.Is(err, brief.ErrInvalidInput) {
		t.Errorf("a prompt over the bound: err = %v, want ErrInvalidInput", err)
	}

	b, err := p.Assemble("```json\n" + `{"schema_version": "brief/v2",
		"parties": [{"name": "Harlow Logistics Ltd", "role": "Plaintiff",
		             "citations": [{"document_id": "` + complaint + `", "page": 1, "quote": "Harlow Logistics Ltd"},
		                           {"document_id": "` + complaint + `", "page": 9, "quote": "Harlow Logistics Ltd"}]},
		            {"name": "Rotterdam Port Authority", "role": "other",
		             "citations": [{"document_id": "` + complaint + `", "page": 1}]}]}` + "\n```")
	if err != nil {
		t.Fatal(err)
	}
	fp, err := brief.Fingerprint(ctx, in, id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Builder != id.Name || b.InputFingerprint != fp || len(b.Documents) != len(in.Documents) {
		t.Errorf("builder %q fingerprint %q documents %d", b.Builder, b.InputFingerprint, len(b.Documents))
	}
	if len(b.Parties) != 1 || b.Parties[0].Role != brief.RolePlaintiff || len(b.Parties[0].Citations) != 1 {
		t.Errorf("parties = %+v, want Harlow alone, its page-9 citation moved to page 1 (a duplicate, kept once)", b.Parties)
	}
	if b.Checks.DroppedItems != 1 || b.Checks.Repaired != 1 {
		t.Errorf("checks = %+v, want the invented party dropped and one citation repaired", b.Checks)
	}
	if _, err := p.Assemble("no JSON here"); !errors.Is(err, brief.ErrModelOutput) {
		t.Errorf("prose reply: err = %v, want ErrModelOutput", err)
	}
}
