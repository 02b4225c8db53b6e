package rail

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// InputFingerprint is the one definition of a build's input fingerprint:
// a sha256 over the builder's identity, the matter, its title and the id,
// content hash and name of every document, in order of id. The worker
// compares it with the last landed frame's to skip an unchanged build
// (Worker.build), and the Brief builders record the same value in the Brief
// they write (brief.Brief.InputFingerprint), so a frame's body and its
// ledger row name the same inputs. It reads no page text: a document's text
// is extracted once, at upload, from the content its hash names.
//
// Write it incrementally: NewInputFingerprint, then Add each document in
// order of id, then Sum. Ids are the canonical lowercase uuid text.
type InputFingerprint struct{ h hash.Hash }

// NewInputFingerprint starts the fingerprint of a build by id of the
// matter firmID/matterID titled title. A builder identified by its name
// alone is keyed by the name; any other by its full identity, so a new
// version, model or prompt changes the fingerprint and the model is called
// again.
func NewInputFingerprint(id BuilderIdentity, firmID, matterID, title string) InputFingerprint {
	key := id.Name
	if id.Version != "" || id.ModelID != "" || id.PromptHash != "" {
		key = id.Name + "\x00" + id.Version + "\x00" + id.ModelID + "\x00" + id.PromptHash
	}
	h := sha256.New()
	fmt.Fprintf(h, "builder=%s\nmatter=%s/%s\ntitle=%q\n", key, firmID, matterID, title)
	return InputFingerprint{h}
}

// Add adds the next document, in order of id.
func (f InputFingerprint) Add(docID, sha256, name string) {
	fmt.Fprintf(f.h, "%s=%s|%s\n", docID, sha256, name)
}

// Sum returns the fingerprint as 64 hex digits.
func (f InputFingerprint) Sum() string { return hex.EncodeToString(f.h.Sum(nil)) }

// FingerprintFor is the InputFingerprint of in's manifest (already in id
// order) for a build by id.
func (in Inputs) FingerprintFor(id BuilderIdentity) string {
	f := NewInputFingerprint(id, in.Ref.FirmID.String(), in.Ref.MatterID.String(), in.Title)
	for _, d := range in.Manifest {
		f.Add(d.ID.String(), d.SHA256, d.Name)
	}
	return f.Sum()
}
