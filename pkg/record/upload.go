package record

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/worker"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Upload is all-or-nothing: every file is read, extracted and validated
// first; only when all of them are good are they stored, each with its
// document.uploaded fact, in one transaction. A corrupt file, a non-PDF or
// an empty PDF therefore writes nothing at all, for any file of the command.
// A PDF without a text layer is not an error: it is stored with a note.

// Prepared is one file ready to store.
type Prepared struct {
	Path string
	Doc  rail.NewDocument
}

// FileError names the file a refusal is about.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Extractor extracts a PDF's text. The default runs each extraction in a
// worker process with a memory limit and a deadline (pkg/pdftext/worker),
// so that a hostile file costs its upload and never this process;
// pdftext.ExtractContext extracts in this process instead.
var Extractor func(ctx context.Context, data []byte, lim pdftext.Limits) (pdftext.Document, error) = worker.Default().Extract

// Prepare reads, extracts and validates one file within lim (zero fields:
// pdftext's defaults); nothing is written.
func Prepare(ctx context.Context, path string, lim pdftext.Limits) (Prepared, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Prepared{}, &FileError{path, err}
	}
	return PrepareData(ctx, path, raw, lim)
}

// PrepareData is Prepare on a file's contents already read: the document
// is named after path's last element.
func PrepareData(ctx context.Context, path string, raw []byte, lim pdftext.Limits) (Prepared, error) {
	if len(raw) == 0 {
		return Prepared{}, &FileError{path, errors.New("file is empty (0 bytes), not a PDF")}
	}
	doc, err := Extractor(ctx, raw, lim)
	if err != nil {
		return Prepared{}, &FileError{path, DescribeExtractError(err)}
	}
	nd := rail.NewDocument{
		ID:     uuid.New(),
		Name:   filepath.Base(path),
		Pages:  doc.Pages,
		Note:   doc.Note,
		SHA256: SHA256Hex(raw),
	}
	if err := nd.Validate(); err != nil {
		return Prepared{}, &FileError{path, err}
	}
	return Prepared{Path: path, Doc: nd}, nil
}

// limitNames say which extraction limit a refused PDF exceeded.
var limitNames = map[pdftext.Limit]string{
	pdftext.LimitSize:    "file size",
	pdftext.LimitPages:   "pages",
	pdftext.LimitDecoded: "decompressed content",
	pdftext.LimitTime:    "time",
	pdftext.LimitGlyphs:  "text per page",
	pdftext.LimitWork:    "parser work",
	pdftext.LimitText:    "text per document",
}

// DescribeExtractError says in a person's words why a PDF was refused,
// keeping the typed error wrapped.
func DescribeExtractError(err error) error {
	var what string
	var limit *pdftext.LimitError
	switch {
	case errors.Is(err, pdftext.ErrNotPDF):
		what = "not a PDF"
	case errors.Is(err, pdftext.ErrEmpty):
		what = "the PDF has no pages"
	case errors.Is(err, pdftext.ErrEncrypted):
		what = "the PDF is encrypted and needs a password to open (or its encryption cannot be read); upload an unprotected copy"
	case errors.As(err, &limit):
		what = "the PDF exceeds the extraction limit on " + limitNames[limit.Limit]
	case errors.Is(err, pdftext.ErrCorrupt):
		what = "the PDF is corrupt or unreadable"
	case errors.Is(err, worker.ErrKilled):
		what = "the PDF's extraction was stopped (its worker ran out of memory or time, or the upload was interrupted)"
	default:
		return err
	}
	return fmt.Errorf("%s (%w)", what, err)
}

// Stored is a file Upload stored.
type Stored struct {
	ID    uuid.UUID
	Name  string
	Pages int
	Note  string
}

// Upload validates every file (each within lim), then stores them all with their
// document.uploaded facts in one transaction. On any refusal it writes
// nothing and returns every refusal, one per bad file.
func Upload(ctx context.Context, db Beginner, ref rail.MatterRef, paths []string, lim pdftext.Limits) ([]Stored, error) {
	var prepared []Prepared
	var errs []error
	for _, p := range paths {
		u, err := Prepare(ctx, p, lim)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		prepared = append(prepared, u)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []Stored
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, u := range prepared {
			id, err := AddDocument(ctx, tx, ref, u.Doc)
			if err != nil {
				return &FileError{u.Path, err}
			}
			out = append(out, Stored{ID: id, Name: u.Doc.Name, Pages: len(u.Doc.Pages), Note: u.Doc.Note})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SHA256Hex is the hex sha256 of b, as documents record their upload's.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
