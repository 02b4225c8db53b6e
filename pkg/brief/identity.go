package brief

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The builders' identities (rail.BuilderIdentity): a frame records the
// identity that built it, and a matter whose frame was built by another
// identity than the deployed one is outdated (the backfill rebuilds it).
// Version is the Brief schema the builder writes; the name carries the
// builder's own rules version (extractive/v1); a model builder adds its
// model id and the hash of its prompt.

// Identity is the extractive builder's identity.
func (e Extractive) Identity() rail.BuilderIdentity {
	return rail.BuilderIdentity{Name: e.Name(), Version: SchemaVersion}
}

// Identity is the Bedrock builder's identity: its model and prompt.
func (b *Bedrock) Identity() rail.BuilderIdentity {
	return rail.BuilderIdentity{Name: b.Name(), Version: SchemaVersion, ModelID: b.modelID, PromptHash: PromptHash()}
}

// PromptHash is the hex sha256 of the Bedrock builder's system prompt.
func PromptHash() string {
	h := sha256.Sum256([]byte(systemPrompt))
	return hex.EncodeToString(h[:])
}

// DeployedIdentity is the identity of the builder a configuration deploys
// (RAIL_BRIEF_BUILDER and RAIL_BEDROCK_MODEL_ID), without building it: the
// sweeper and railctl compare frames against it.
func DeployedIdentity(kind, modelID string) (rail.BuilderIdentity, error) {
	switch kind {
	case "", "extractive":
		return NewExtractive().Identity(), nil
	case "bedrock":
		if modelID == "" {
			return rail.BuilderIdentity{}, fmt.Errorf("brief: the bedrock builder needs a model id")
		}
		return (&Bedrock{modelID: modelID}).Identity(), nil
	case "digest":
		return rail.IdentityOf(rail.DigestBuilder{}), nil
	}
	return rail.BuilderIdentity{}, fmt.Errorf("brief: unknown builder %q (want extractive, bedrock or digest)", kind)
}

func (r railBuilder) Identity() rail.BuilderIdentity {
	if ib, ok := r.b.(interface{ Identity() rail.BuilderIdentity }); ok {
		return ib.Identity()
	}
	return rail.BuilderIdentity{Name: r.b.Name()}
}
