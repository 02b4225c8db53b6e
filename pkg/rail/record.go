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
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The record the Brief is built from: firms, matters and documents. These
// writers take the caller's transaction so that a fact about the record
// (the outbox) commits with it.

// Limits on documents, checked before anything is written.
const (
	MaxDocumentNameLen = 512
	MaxDocumentBytes   = 32 << 20 // total text across pages
	MaxDocumentPages   = 5000
)

// EnsureFirm creates the firm if it does not exist.
func EnsureFirm(ctx context.Context, q Querier, firmID uuid.UUID, name string) error {
	_, err := q.Exec(ctx, `INSERT INTO app.firms (firm_id, name) VALUES ($1, $2)
        ON CONFLICT (firm_id) DO NOTHING`, firmID, name)
	if err != nil {
		return fmt.Errorf("ensure firm %s: %w", firmID, err)
	}
	return nil
}

// AddMatter creates an open matter (and its firm, if new). Adding a matter
// that already exists under the same firm is not an error (created=false);
// a matter id already used by another firm is ErrFirmMismatch.
func AddMatter(ctx context.Context, q Querier, ref MatterRef, title string) (created bool, err error) {
	if err := EnsureFirm(ctx, q, ref.FirmID, ""); err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx, `INSERT INTO app.matters (firm_id, matter_id, title) VALUES ($1, $2, $3)
        ON CONFLICT DO NOTHING`, ref.FirmID, ref.MatterID, title)
	if err != nil {
		return false, fmt.Errorf("add matter %s: %w", ref, err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var firm uuid.UUID
	if err := q.QueryRow(ctx, `SELECT firm_id FROM app.matters WHERE matter_id = $1`, ref.MatterID).Scan(&firm); err != nil {
		return false, fmt.Errorf("add matter %s: %w", ref, err)
	}
	if firm != ref.FirmID {
		return false, fmt.Errorf("add matter %s: %w", ref, ErrFirmMismatch)
	}
	return false, nil
}

// SetMatterStatus opens or closes a matter.
//
// A closed matter gets no builds and no new demand (Demand refuses it), but
// its ledger row keeps what was recorded: demand already requested stays
// requested (held, counted by Gauges.MattersClosedWithDemand rather than as
// late), and a build already claimed may still land (its commit does not
// look at the matter's status: the frame reflects inputs read while the
// matter was open). Re-opening restarts the demand clock of held demand
// (demand_since and uncovered_since become the re-opening's time), so the
// oldest-unserved gauge counts it from the moment the rail is responsible
// for it again; the sweeper's next pass re-nudges it (it lists open matters
// with unserved demand and no live claim). Both happen in one statement.
func SetMatterStatus(ctx context.Context, q Querier, ref MatterRef, status string) error {
	if status != "open" && status != "closed" {
		return fmt.Errorf("matter status %q: want open or closed", status)
	}
	var changed int
	err := q.QueryRow(ctx, `
WITH m AS (
    UPDATE app.matters SET status = $3 WHERE firm_id = $1 AND matter_id = $2
    RETURNING firm_id, matter_id
), old AS (
    SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2
), reopened AS (
    UPDATE ops.matter_frame_jobs j SET
        demand_since    = CASE WHEN j.demand_since IS NOT NULL THEN clock_timestamp() END,
        uncovered_since = CASE WHEN j.uncovered_since IS NOT NULL THEN clock_timestamp() END
    FROM m, old
    WHERE j.firm_id = m.firm_id AND j.matter_id = m.matter_id AND $3 = 'open' AND old.status = 'closed'
)
SELECT count(*) FROM m`, ref.FirmID, ref.MatterID, status).Scan(&changed)
	if err != nil {
		return fmt.Errorf("set matter status %s: %w", ref, err)
	}
	if changed == 0 {
		return matterError(ctx, q, ref)
	}
	return nil
}

// matterError explains why a matter could not be found under a firm.
func matterError(ctx context.Context, q Querier, ref MatterRef) error {
	var firm uuid.UUID
	err := q.QueryRow(ctx, `SELECT firm_id FROM app.matters WHERE matter_id = $1`, ref.MatterID).Scan(&firm)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("matter %s: %w", ref, ErrUnknownMatter)
	case err != nil:
		return fmt.Errorf("matter %s: %w", ref, err)
	case firm != ref.FirmID:
		return fmt.Errorf("matter %s: %w", ref, ErrFirmMismatch)
	}
	return fmt.Errorf("matter %s: not changed", ref)
}

// DocumentNames lists the names of a matter's documents (none for a
// matter that does not exist).
func DocumentNames(ctx context.Context, q Querier, ref MatterRef) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT name FROM app.documents WHERE firm_id = $1 AND matter_id = $2 ORDER BY name`,
		ref.FirmID, ref.MatterID)
	if err != nil {
		return nil, fmt.Errorf("document names %s: %w", ref, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("document names %s: %w", ref, err)
	}
	return names, nil
}

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

// AddDocument stores a document on an open matter of the given firm, in the
// caller's transaction. It returns the stored document's id.
func AddDocument(ctx context.Context, q Querier, ref MatterRef, d NewDocument) (uuid.UUID, error) {
	if err := d.Validate(); err != nil {
		return uuid.Nil, fmt.Errorf("add document: %w", err)
	}
	if d.ID == uuid.Nil {
		d.ID = uuid.New()
	}
	if d.SHA256 == "" {
		d.SHA256 = PagesSHA256(d.Pages)
	}
	if d.Pages == nil {
		d.Pages = []string{}
	}
	var status string
	err := q.QueryRow(ctx, `SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2 FOR SHARE`,
		ref.FirmID, ref.MatterID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, fmt.Errorf("add document: %w", matterError(ctx, q, ref))
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("add document: %w", err)
	}
	if status != "open" {
		return uuid.Nil, fmt.Errorf("add document to %s: %w", ref, ErrMatterClosed)
	}
	_, err = q.Exec(ctx, `INSERT INTO app.documents (document_id, firm_id, matter_id, name, pages, content_sha256, note)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`, d.ID, ref.FirmID, ref.MatterID, strings.TrimSpace(d.Name),
		d.Pages, strings.ToLower(d.SHA256), d.Note)
	if err != nil {
		return uuid.Nil, fmt.Errorf("add document to %s: %w", ref, err)
	}
	return d.ID, nil
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

	q    Querier    // where Documents reads text (LoadInputs)
	docs []Document // in memory instead (NewInputs)
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

// LoadInputs reads a matter's title and document manifest (no text) in
// keyset pages of ManifestPage rows by document id.
func LoadInputs(ctx context.Context, q Querier, ref MatterRef) (Inputs, error) {
	in := Inputs{Ref: ref, q: q}
	err := q.QueryRow(ctx, `SELECT title FROM app.matters WHERE firm_id = $1 AND matter_id = $2`,
		ref.FirmID, ref.MatterID).Scan(&in.Title)
	if errors.Is(err, pgx.ErrNoRows) {
		return in, fmt.Errorf("load inputs: %w", matterError(ctx, q, ref))
	}
	if err != nil {
		return in, fmt.Errorf("load inputs %s: %w", ref, err)
	}
	after := uuid.Nil
	for {
		rows, err := q.Query(ctx, `SELECT document_id, name, content_sha256, page_count, uploaded_at
            FROM app.documents WHERE firm_id = $1 AND matter_id = $2 AND document_id > $3
            ORDER BY document_id LIMIT $4`, ref.FirmID, ref.MatterID, after, ManifestPage)
		if err != nil {
			return in, fmt.Errorf("load inputs %s: %w", ref, err)
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DocumentMeta, error) {
			var d DocumentMeta
			err := r.Scan(&d.ID, &d.Name, &d.SHA256, &d.PageCount, &d.UploadedAt)
			return d, err
		})
		if err != nil {
			return in, fmt.Errorf("load inputs %s: %w", ref, err)
		}
		in.Manifest = append(in.Manifest, page...)
		if len(page) < ManifestPage {
			return in, nil
		}
		after = page[len(page)-1].ID
	}
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
		if in.q == nil {
			for _, d := range in.docs {
				if !yield(d, nil) {
					return
				}
			}
			return
		}
		for _, m := range in.Manifest {
			d := Document{ID: m.ID}
			err := in.q.QueryRow(ctx, `SELECT name, pages, content_sha256, note, uploaded_at FROM app.documents
                WHERE document_id = $1 AND firm_id = $2 AND matter_id = $3`, m.ID, in.Ref.FirmID, in.Ref.MatterID).
				Scan(&d.Name, &d.Pages, &d.SHA256, &d.Note, &d.UploadedAt)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				err = fmt.Errorf("document %s: %w", m.ID, ErrInputsChanged)
			case err != nil:
				err = fmt.Errorf("read document %s: %w", m.ID, err)
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
