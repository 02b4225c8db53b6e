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
		PromptHash: "a683592f4dc769d470bda7f0fcf693f7d80be96a210f0ae6559de3a771b68bd4",
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
// stores on its frame (one definition, rail.InputFingerprint), and that
// value is the one a Bedrock frame of the sample matter carried before the
// builder moved here: the worker's skip compares equal, nothing rebuilds.
func TestFingerprintThroughTheRail(t *testing.T) {
	const pinned = "b6c9cdeb560abc262f9074a744267b3ef66dbb7199b366e3300f7d075b2a7312"
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
