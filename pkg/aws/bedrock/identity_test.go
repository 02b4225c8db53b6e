package bedrock_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pramaan/brief-rail/internal/testenv/briefsample"
	"github.com/pramaan/brief-rail/pkg/aws/bedrock"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The Bedrock builder's identity is pinned byte for byte: frames record it,
// and a matter whose frame carries another identity than the deployed one
// is outdated (the backfill rebuilds it and calls the model). The values
// are the ones the builder had when it lived in pkg/brief
// (brief.DeployedIdentity("bedrock", model)), so moving it rebuilt nothing.
func TestIdentityPinned(t *testing.T) {
	want := rail.BuilderIdentity{
		Name:       "bedrock/v2:anthropic.claude-3-5-sonnet-20240620-v1:0",
		Version:    "brief/v2",
		ModelID:    "anthropic.claude-3-5-sonnet-20240620-v1:0",
		PromptHash: "ad6da7078ec57e5da3d50d97e3b6731321fe2280031d3d58a80c6a112c657ac5",
	}
	b := bedrock.New(nil, modelID)
	for name, got := range map[string]rail.BuilderIdentity{
		"Identity(model)":   bedrock.Identity(modelID),
		"builder.Identity":  b.Identity(),
		"through the rail":  rail.IdentityOf(brief.ForRail(b)),
		"name and identity": {Name: b.Name(), Version: want.Version, ModelID: want.ModelID, PromptHash: want.PromptHash},
	} {
		if got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if other := bedrock.Identity("amazon.nova-pro-v1:0"); other == want || other.PromptHash != want.PromptHash {
		t.Errorf("another model: %+v", other)
	}
}

// Through the rail, a Bedrock Brief records the fingerprint the worker
// stores on its frame (one definition, rail.InputFingerprint), pinned: it
// changes only with the prompt (PromptHash), as it did when the reply's
// field-by-field checks and the fenced prompt came in, so that no Brief a
// model wrote before them is reused while the inputs are unchanged.
func TestFingerprintThroughTheRail(t *testing.T) {
	const pinned = "fcc0e30d0801ae517827073aa1956bf7fa7825c0f63c71612eb14a1639cc6f3e"
	ri := briefsample.RailInputs(sampleInput(t))
	fb := brief.ForRail(bedrock.New(converseServer(t, recorded(t)), modelID))
	if got := ri.FingerprintFor(rail.IdentityOf(fb)); got != pinned {
		t.Fatalf("the worker's fingerprint %s, want %s", got, pinned)
	}
	body, err := fb.Build(context.Background(), ri)
	if err != nil {
		t.Fatal(err)
	}
	var b brief.Brief
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if b.InputFingerprint != pinned {
		t.Errorf("the Brief records %s, the worker stores %s", b.InputFingerprint, pinned)
	}
}
