package brief_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/internal/testenv/briefsample"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// One fingerprint: the Brief records the value the worker stores on the
// frame and compares to skip an unchanged build (rail.Inputs.FingerprintFor
// with the builder's identity), whether the Brief is built through the rail
// or from a brief.Input, in any document order and id case. If the Brief's
// fingerprint and the rail's drift apart, this fails.
func TestFingerprintIsTheRails(t *testing.T) {
	ctx := context.Background()
	in := sampleInput(t)
	ri := briefsample.RailInputs(in)

	fb := brief.ForRail(brief.NewExtractive())
	id := rail.IdentityOf(fb)
	want := ri.FingerprintFor(id)
	body, err := fb.Build(ctx, ri)
	if err != nil {
		t.Fatal(err)
	}
	var b brief.Brief
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if b.InputFingerprint != want {
		t.Errorf("a Brief built through the rail records %s; the worker stores %s", b.InputFingerprint, want)
	}

	// The same inputs given directly, reversed and in upper case.
	up := in
	up.FirmID, up.MatterID = strings.ToUpper(in.FirmID), strings.ToUpper(in.MatterID)
	up.Documents = slices.Clone(in.Documents)
	slices.Reverse(up.Documents)
	for i := range up.Documents {
		up.Documents[i].ID = strings.ToUpper(up.Documents[i].ID)
	}
	for name, in := range map[string]brief.Input{"as given": in, "reversed, upper case": up} {
		direct, err := brief.NewExtractive().Build(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if direct.InputFingerprint != want {
			t.Errorf("%s: a Brief built from a brief.Input records %s, want the rail's %s", name, direct.InputFingerprint, want)
		}
		// Any identity: a model builder's too.
		for _, id := range []rail.BuilderIdentity{id, {Name: "bedrock/v2:m", Version: brief.SchemaVersion, ModelID: "m", PromptHash: brief.PromptHash()}, {Name: "digest/v1"}} {
			got, err := brief.Fingerprint(ctx, in, id)
			if err != nil {
				t.Fatal(err)
			}
			if w := ri.FingerprintFor(id); got != w {
				t.Errorf("%s, %s: brief.Fingerprint %s, rail %s", name, id, got, w)
			}
		}
	}
}

// The fingerprint changes with what names the inputs and the builder, and
// not with page text, which the content hash already names.
func TestFingerprint(t *testing.T) {
	ctx := context.Background()
	id := brief.NewExtractive().Identity()
	fp := func(in brief.Input, id rail.BuilderIdentity) string {
		t.Helper()
		s, err := brief.Fingerprint(ctx, in, id)
		if err != nil || len(s) != 64 {
			t.Fatalf("fingerprint %q, %v", s, err)
		}
		return s
	}
	in := sampleInput(t)
	base := fp(in, id)
	changes := map[string]func(in *brief.Input){
		"title":            func(in *brief.Input) { in.Title += " (amended)" },
		"matter":           func(in *brief.Input) { in.MatterID = "0b9e8d7c-6a5b-4c3d-8e2f-112233445567" },
		"firm":             func(in *brief.Input) { in.FirmID = "6f1c2b7e-3d4a-4c55-9a0e-1b2c3d4e5f61" },
		"content hash":     func(in *brief.Input) { in.Documents[1].SHA256 = strings.Repeat("0", 64) },
		"document removed": func(in *brief.Input) { in.Documents = in.Documents[1:] },
		"document renamed": func(in *brief.Input) { in.Documents[2].Name = "exhibit-a.pdf" },
	}
	for name, change := range changes {
		c := in
		c.Documents = slices.Clone(in.Documents)
		change(&c)
		if fp(c, id) == base {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}
	for name, other := range map[string]rail.BuilderIdentity{
		"builder version": {Name: id.Name, Version: "brief/v3"},
		"model":           {Name: "bedrock/v2:a", Version: brief.SchemaVersion, ModelID: "a", PromptHash: brief.PromptHash()},
		"prompt":          {Name: "bedrock/v2:a", Version: brief.SchemaVersion, ModelID: "a", PromptHash: strings.Repeat("0", 64)},
	} {
		if fp(in, other) == base {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}
	same := in
	same.Documents = slices.Clone(in.Documents)
	same.Documents[0].Pages = []string{"other text"}
	same.Documents[3].Note = ""
	if fp(same, id) != base {
		t.Error("page text or note changed the fingerprint (the content hash names them)")
	}
	if fp(in, id) != base {
		t.Error("changes leaked into the original input")
	}
}

// TestInputEncodesAsJSON: a builder's input can be written out (railbench's
// memory children read it back); its Stream, a function, is left out rather
// than failing the encoding.
func TestInputEncodesAsJSON(t *testing.T) {
	in := brief.Input{FirmID: "f", MatterID: "m", Title: "t", Documents: []brief.Document{{ID: "d", Name: "a.pdf", Pages: []string{"p1"}}}}
	in.Stream = in.Each
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back brief.Input
	if err := json.Unmarshal(b, &back); err != nil || len(back.Documents) != 1 || back.Documents[0].Pages[0] != "p1" {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}
