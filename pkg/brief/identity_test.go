package brief_test

import (
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The extractive builder's identity, as the rail reads it through ForRail,
// is its name and the schema it writes. (The deployed identity of each
// registered builder: pkg/app, TestDeployedIdentityIsTheBuildersOwn.)
func TestExtractiveIdentity(t *testing.T) {
	got := rail.IdentityOf(brief.ForRail(brief.NewExtractive()))
	if want := (rail.BuilderIdentity{Name: "extractive/v15", Version: brief.SchemaVersion}); got != want {
		t.Errorf("identity %+v, want %+v", got, want)
	}
}

// PromptHash is pinned: it is part of every Bedrock frame's identity, so a
// change makes every such matter outdated (the backfill rebuilds it and
// calls the model). Change it on purpose only, with the prompt.
func TestPromptHashPinned(t *testing.T) {
	const want = "ad6da7078ec57e5da3d50d97e3b6731321fe2280031d3d58a80c6a112c657ac5"
	if got := brief.PromptHash(); got != want {
		t.Errorf("PromptHash() = %s, want %s (the hash deployed frames carry)", got, want)
	}
}
