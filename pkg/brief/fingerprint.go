package brief

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"
)

// Fingerprint returns a hex sha256 over everything a builder reads from in:
// the schema version, firm and matter ids, title and, for each document in
// order of id, its id, name, content hash, note and page texts. It does not
// depend on the order of in.Documents. Two inputs with equal fingerprints
// produce the same Brief from a deterministic builder. The builder's name is
// not included: compare Brief.Builder as well when the builder can change.
// It reads in with Each (two passes: the count, then the documents); it
// returns "" if a pass fails.
func Fingerprint(in Input) string {
	ctx := context.Background()
	n := 0
	for _, err := range in.Each(ctx) {
		if err != nil {
			return ""
		}
		n++
	}
	fp := newFingerprinter(in, n)
	for d, err := range in.Each(ctx) {
		if err != nil {
			return ""
		}
		fp.add(d)
	}
	return fp.sum()
}

// fingerprinter computes Fingerprint incrementally: the count of documents
// first (a builder knows it from an earlier pass), then each document in
// order of id.
type fingerprinter struct{ h hash.Hash }

func newFingerprinter(in Input, docs int) fingerprinter {
	h := sha256.New()
	field(h, SchemaVersion)
	field(h, strings.ToLower(in.FirmID))
	field(h, strings.ToLower(in.MatterID))
	field(h, in.Title)
	count(h, docs)
	return fingerprinter{h}
}

func (f fingerprinter) add(d Document) {
	field(f.h, strings.ToLower(d.ID))
	field(f.h, d.Name)
	field(f.h, strings.ToLower(d.SHA256))
	field(f.h, d.Note)
	count(f.h, len(d.Pages))
	for _, p := range d.Pages {
		field(f.h, p)
	}
}

func (f fingerprinter) sum() string { return hex.EncodeToString(f.h.Sum(nil)) }

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
