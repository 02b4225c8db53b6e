package brief_test

import (
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The deployed identity a configuration names is exactly the identity the
// builder it deploys records on its frames; otherwise every matter would
// read as outdated (or none would).
func TestDeployedIdentityIsTheBuildersOwn(t *testing.T) {
	const model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	for kind, b := range map[string]rail.FrameBuilder{
		"extractive": brief.ForRail(brief.NewExtractive()),
		"bedrock":    brief.ForRail(brief.NewBedrock(nil, model)),
		"digest":     rail.DigestBuilder{},
	} {
		dep, err := brief.DeployedIdentity(kind, model)
		if err != nil {
			t.Fatal(err)
		}
		if got := rail.IdentityOf(b); got != dep {
			t.Errorf("%s: builder identity %+v, deployed identity %+v", kind, got, dep)
		}
	}
	bd, _ := brief.DeployedIdentity("bedrock", model)
	if bd.ModelID != model || len(bd.PromptHash) != 64 || bd.Version != brief.SchemaVersion {
		t.Errorf("bedrock identity %+v: want model, prompt hash and schema version", bd)
	}
	other, _ := brief.DeployedIdentity("bedrock", "amazon.nova-pro-v1:0")
	if other == bd {
		t.Error("a different model id must be a different identity")
	}
	if _, err := brief.DeployedIdentity("bedrock", ""); err == nil {
		t.Error("bedrock without a model id accepted")
	}
	if _, err := brief.DeployedIdentity("gpt", ""); err == nil {
		t.Error("unknown builder accepted")
	}
}
