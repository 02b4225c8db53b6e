package rail

import "strings"

// BuilderIdentity names precisely what built a frame: the builder's name,
// its code version, the model it called and a hash of its prompt. Two
// frames built from the same inputs by the same identity are the same
// Brief; a matter whose current frame was built by another identity than
// the deployed one is outdated (nothing was uploaded, but the Brief would
// come out differently today).
type BuilderIdentity struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	ModelID    string `json:"model_id"`
	PromptHash string `json:"prompt_hash"`
}

// String is the identity's one-line form, also what the fingerprint hashes:
// name@version, then model=… and prompt=… when set.
func (id BuilderIdentity) String() string {
	var b strings.Builder
	b.WriteString(id.Name)
	if id.Version != "" {
		b.WriteString("@" + id.Version)
	}
	if id.ModelID != "" {
		b.WriteString(" model=" + id.ModelID)
	}
	if id.PromptHash != "" {
		p := id.PromptHash
		if len(p) > 12 {
			p = p[:12]
		}
		b.WriteString(" prompt=" + p)
	}
	return b.String()
}

// IdentifiedBuilder is a FrameBuilder that states its full identity. A
// builder that does not is identified by its name alone.
type IdentifiedBuilder interface {
	FrameBuilder
	Identity() BuilderIdentity
}

// IdentityOf returns b's identity.
func IdentityOf(b FrameBuilder) BuilderIdentity {
	if ib, ok := b.(IdentifiedBuilder); ok {
		id := ib.Identity()
		if id.Name == "" {
			id.Name = b.Name()
		}
		return id
	}
	return BuilderIdentity{Name: b.Name()}
}
