package brief

import (
	"crypto/sha256"
	"encoding/hex"

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

// PromptHash is the hex sha256 of SystemPrompt, part of a model builder's
// identity: a new prompt makes every frame the model built outdated.
func PromptHash() string {
	h := sha256.Sum256([]byte(SystemPrompt))
	return hex.EncodeToString(h[:])
}

func (r railBuilder) Identity() rail.BuilderIdentity {
	if ib, ok := r.b.(interface{ Identity() rail.BuilderIdentity }); ok {
		return ib.Identity()
	}
	return rail.BuilderIdentity{Name: r.b.Name()}
}
