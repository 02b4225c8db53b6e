package postgres_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The manifest is read in keyset pages (more documents than one page
// holds), in id order, without text; the documents' text comes one
// document at a time, in the same order.
func TestLoadInputsManifestPagesAndStream(t *testing.T) {
	b := setup(t, rail.Config{})
	n := rail.ManifestPage*2 + 7
	if _, err := b.pool.Exec(b.ctx, `INSERT INTO app.documents (firm_id, matter_id, name, pages, content_sha256)
        SELECT $1, $2, 'doc ' || g, ARRAY['page one of ' || g, 'page two'], encode(sha256(convert_to(g::text, 'UTF8')), 'hex')
        FROM generate_series(1, $3::int) g`, b.ref.FirmID, b.ref.MatterID, n); err != nil {
		t.Fatal(err)
	}
	in, err := postgres.LoadInputs(b.ctx, b.pool, b.ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Manifest) != n {
		t.Fatalf("manifest has %d documents, want %d", len(in.Manifest), n)
	}
	if !slices.IsSortedFunc(in.Manifest, func(a, c rail.DocumentMeta) int { return strings.Compare(a.ID.String(), c.ID.String()) }) {
		t.Fatal("manifest not in id order")
	}
	i := 0
	for d, err := range in.Documents(b.ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != in.Manifest[i].ID || len(d.Pages) != 2 || d.Pages[1] != "page two" {
			t.Fatalf("document %d: %+v, manifest %+v", i, d, in.Manifest[i])
		}
		i++
	}
	if i != n {
		t.Fatalf("streamed %d documents, want %d", i, n)
	}
	// The fingerprint is the one computed before streaming (sorted
	// "id=sha|name" lines after the builder, matter and title).
	var lines []string
	for _, d := range in.Manifest {
		lines = append(lines, d.ID.String()+"="+d.SHA256+"|"+d.Name)
	}
	slices.Sort(lines)
	h := sha256.New()
	fmt.Fprintf(h, "builder=%s\nmatter=%s\ntitle=%q\n", "x", b.ref, in.Title)
	for _, s := range lines {
		fmt.Fprintf(h, "%s\n", s)
	}
	if got, want := in.FingerprintFor(rail.BuilderIdentity{Name: "x"}), hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("fingerprint %s, want %s (the definition frames already carry)", got, want)
	}
}

// Documents reads each document only when the previous one has been taken:
// a document removed while the stream is part-way through is found missing
// (ErrInputsChanged), which an all-in-memory load would not notice.
func TestDocumentsStreamReadsOneAtATime(t *testing.T) {
	b := setup(t, rail.Config{})
	for i := range 3 {
		b.addDoc(t, fmt.Sprint("d", i), "text")
	}
	in, err := postgres.LoadInputs(b.ctx, b.pool, b.ref)
	if err != nil {
		t.Fatal(err)
	}
	last := in.Manifest[2].ID
	seen := 0
	var streamErr error
	for d, err := range in.Documents(b.ctx) {
		if err != nil {
			streamErr = err
			break
		}
		seen++
		if seen == 1 {
			if _, err := b.pool.Exec(b.ctx, `DELETE FROM app.documents WHERE document_id = $1`, last); err != nil {
				t.Fatal(err)
			}
		}
		_ = d
	}
	if seen != 2 || !errors.Is(streamErr, rail.ErrInputsChanged) {
		t.Fatalf("streamed %d then %v; want 2 documents, then ErrInputsChanged", seen, streamErr)
	}
}
