package rail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The record the Brief is built from: firms, matters and documents, and a
// build's view of them (Inputs). The writers are in pkg/postgres
// (record.go); they take the caller's transaction so that a fact about the
// record (the outbox) commits with it.

// Limits on documents, checked before anything is written.
const (
	MaxDocumentNameLen = 512
	MaxDocumentBytes   = 32 << 20 // total text across pages
	MaxDocumentPages   = 5000
)

// NewDocument is a document to store.
type NewDocument struct {
	ID    uuid.UUID // zero: generated
	Name  string
	Pages []string
	Note  string // e.g. "no text layer on pages 2-3"
	// SHA256 of the original upload (hex). Empty: computed over the pages.
	SHA256 string
}

// Document is a stored document.
type Document struct {
	ID         uuid.UUID
	Name       string
	Pages      []string
	SHA256     string
	Note       string
	UploadedAt time.Time
}

// Validate checks a document before anything is written.
func (d NewDocument) Validate() error {
	name := strings.TrimSpace(d.Name)
	switch {
	case name == "":
		return errors.New("document name is empty")
	case len(name) > MaxDocumentNameLen:
		return fmt.Errorf("document name is %d bytes, limit %d", len(name), MaxDocumentNameLen)
	case !utf8.ValidString(name):
		return errors.New("document name is not valid UTF-8")
	case strings.IndexFunc(d.Name, isControl) >= 0:
		return errors.New("document name contains a control character")
	case len(d.Pages) > MaxDocumentPages:
		return fmt.Errorf("document has %d pages, limit %d", len(d.Pages), MaxDocumentPages)
	}
	total := 0
	for i, p := range d.Pages {
		total += len(p)
		if !utf8.ValidString(p) || strings.ContainsRune(p, 0) {
			return fmt.Errorf("page %d is not valid UTF-8 text", i+1)
		}
	}
	if total > MaxDocumentBytes {
		return fmt.Errorf("document text is %d bytes, limit %d", total, MaxDocumentBytes)
	}
	if d.SHA256 != "" {
		if b, err := hex.DecodeString(d.SHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("document sha256 %q is not 64 hex digits", d.SHA256)
		}
	}
	return nil
}

// PagesSHA256 hashes page texts (length-prefixed, so page boundaries count).
func PagesSHA256(pages []string) string {
	h := sha256.New()
	for _, p := range pages {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Inputs is what a build reads: the matter, its title, and a manifest of
// its documents (ids, names, content hashes; no text) read after the claim
// committed, so it includes every input whose demand the claim covers. The
// text is read by Documents, one document at a time.
//
// Memory bound of a build (docs/ARCHITECTURE.md, "Bounded builds"): the
// manifest (one DocumentMeta per document, no page text) plus one
// document's text at a time plus what the builder accumulates. No
// transaction, cursor or session state is held across the build: the
// manifest is read in keyset pages and each document in its own statement.
type Inputs struct {
	Ref      MatterRef
	Title    string
	Manifest []DocumentMeta // in document id order

	src  DocumentSource // where Documents reads text (Ledger.LoadInputs)
	docs []Document     // in memory instead (NewInputs)
}

// DocumentMeta is a document without its text.
type DocumentMeta struct {
	ID         uuid.UUID
	Name       string
	SHA256     string
	PageCount  int
	UploadedAt time.Time
}

// ErrInputsChanged: a document of the manifest was removed or changed
// while the build read it. The build fails and is retried; the change's
// own fact brings its demand.
var ErrInputsChanged = errors.New("inputs changed during the build")

// ManifestPage is how many manifest rows LoadInputs reads per statement.
const ManifestPage = 500

// InputsFrom is a build's inputs read from a store: the matter's title and
// manifest (in document id order), each document's text read from src
// when Documents reaches it (pkg/postgres's LoadInputs).
func InputsFrom(ref MatterRef, title string, manifest []DocumentMeta, src DocumentSource) Inputs {
	return Inputs{Ref: ref, Title: title, Manifest: manifest, src: src}
}

// NewInputs holds docs in memory as a build's inputs (tests, benchmarks,
// callers that already have the text). The manifest is sorted by id.
func NewInputs(ref MatterRef, title string, docs []Document) Inputs {
	docs = slices.Clone(docs)
	slices.SortFunc(docs, func(a, b Document) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	in := Inputs{Ref: ref, Title: title, docs: docs}
	for _, d := range docs {
		in.Manifest = append(in.Manifest, DocumentMeta{ID: d.ID, Name: d.Name, SHA256: d.SHA256,
			PageCount: len(d.Pages), UploadedAt: d.UploadedAt})
	}
	return in
}

// Documents yields the manifest's documents with their text, one at a
// time, in document id order; each document is read by its own statement
// when the previous one has been handed over, so only one document's text
// is held here at a time. Each call is a fresh pass (a builder that needs
// two passes calls it twice). A document that was removed, or whose
// content hash no longer matches the manifest, ends the pass with
// ErrInputsChanged.
func (in Inputs) Documents(ctx context.Context) iter.Seq2[Document, error] {
	return func(yield func(Document, error) bool) {
		if in.src == nil {
			for _, d := range in.docs {
				if !yield(d, nil) {
					return
				}
			}
			return
		}
		for _, m := range in.Manifest {
			d, found, err := in.src.ReadDocument(ctx, in.Ref, m.ID)
			switch {
			case err != nil:
				err = fmt.Errorf("read document %s: %w", m.ID, err)
			case !found:
				err = fmt.Errorf("document %s: %w", m.ID, ErrInputsChanged)
			case d.SHA256 != m.SHA256 || d.Name != m.Name:
				err = fmt.Errorf("document %s: %w", m.ID, ErrInputsChanged)
			}
			if err != nil {
				yield(Document{}, err)
				return
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}

// isControl reports the characters a name may not hold: C0 and C1 control
// characters (a name is printed on terminals and in logs) and the Unicode
// bidirectional overrides and isolates (which reorder what is shown).
func isControl(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
