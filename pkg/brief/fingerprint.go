package brief

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sort"
	"strings"
)

// Fingerprint returns a hex sha256 over everything a builder reads from in:
// the schema version, firm and matter ids, title and, for each document in
// order of id, its id, name, content hash, note and page texts. It does not
// depend on the order of in.Documents. Two inputs with equal fingerprints
// produce the same Brief from a deterministic builder. The builder's name is
// not included: compare Brief.Builder as well when the builder can change.
func Fingerprint(in Input) string {
	docs := make([]Document, len(in.Documents))
	copy(docs, in.Documents)
	sort.Slice(docs, func(i, j int) bool {
		return strings.ToLower(docs[i].ID) < strings.ToLower(docs[j].ID)
	})
	h := sha256.New()
	field(h, SchemaVersion)
	field(h, strings.ToLower(in.FirmID))
	field(h, strings.ToLower(in.MatterID))
	field(h, in.Title)
	count(h, len(docs))
	for _, d := range docs {
		field(h, strings.ToLower(d.ID))
		field(h, d.Name)
		field(h, strings.ToLower(d.SHA256))
		field(h, d.Note)
		count(h, len(d.Pages))
		for _, p := range d.Pages {
			field(h, p)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// field writes s length-prefixed, so that no two field sequences collide.
func field(h hash.Hash, s string) {
	count(h, len(s))
	h.Write([]byte(s))
}

func count(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
