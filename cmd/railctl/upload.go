package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// upload is all-or-nothing: every file is read, extracted and validated
// first; only when all of them are good are they stored, each with its
// document.uploaded fact, in one transaction. A corrupt file, a non-PDF or
// an empty PDF therefore writes nothing at all, for any file of the command.
// A PDF without a text layer is not an error: it is stored with a note.

// preparedUpload is one file ready to store.
type preparedUpload struct {
	path string
	doc  rail.NewDocument
}

// fileError names the file a refusal is about.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string { return e.path + ": " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// prepareUpload reads and extracts one file.
func prepareUpload(path string) (preparedUpload, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return preparedUpload{}, &fileError{path, err}
	}
	if len(raw) == 0 {
		return preparedUpload{}, &fileError{path, errors.New("file is empty (0 bytes), not a PDF")}
	}
	doc, err := pdftext.Extract(raw)
	if err != nil {
		return preparedUpload{}, &fileError{path, describeExtractError(err)}
	}
	nd := rail.NewDocument{
		ID:     uuid.New(),
		Name:   filepath.Base(path),
		Pages:  doc.Pages,
		Note:   doc.Note,
		SHA256: sha256hex(raw),
	}
	if err := nd.Validate(); err != nil {
		return preparedUpload{}, &fileError{path, err}
	}
	return preparedUpload{path: path, doc: nd}, nil
}

func describeExtractError(err error) error {
	var what string
	var limit *pdftext.LimitError
	switch {
	case errors.Is(err, pdftext.ErrNotPDF):
		what = "not a PDF"
	case errors.Is(err, pdftext.ErrEmpty):
		what = "the PDF has no pages"
	case errors.Is(err, pdftext.ErrEncrypted):
		what = "the PDF is encrypted; upload an unprotected copy"
	case errors.As(err, &limit):
		what = "the PDF exceeds the extraction limit on " + map[pdftext.Limit]string{
			pdftext.LimitSize:    "file size",
			pdftext.LimitPages:   "pages",
			pdftext.LimitDecoded: "decompressed content",
			pdftext.LimitTime:    "time",
			pdftext.LimitGlyphs:  "text per page",
		}[limit.Limit]
	case errors.Is(err, pdftext.ErrCorrupt):
		what = "the PDF is corrupt or unreadable"
	default:
		return err
	}
	return fmt.Errorf("%s (%w)", what, err)
}

// storedUpload is what uploadFiles stored.
type storedUpload struct {
	ID    uuid.UUID
	Name  string
	Pages int
	Note  string
}

// uploadFiles validates every file, then stores them all with their facts
// in one transaction. On any refusal it writes nothing and returns every
// refusal, one per bad file.
func uploadFiles(ctx context.Context, q interface {
	Begin(context.Context) (pgx.Tx, error)
}, ref rail.MatterRef, paths []string) ([]storedUpload, error) {
	var prepared []preparedUpload
	var errs []error
	for _, p := range paths {
		u, err := prepareUpload(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		prepared = append(prepared, u)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []storedUpload
	err := pgx.BeginFunc(ctx, q, func(tx pgx.Tx) error {
		for _, u := range prepared {
			id, err := rail.AddDocument(ctx, tx, ref, u.doc)
			if err != nil {
				return &fileError{u.path, err}
			}
			if err := recordDocumentUploaded(ctx, tx, ref, id); err != nil {
				return &fileError{u.path, err}
			}
			out = append(out, storedUpload{ID: id, Name: u.doc.Name, Pages: len(u.doc.Pages), Note: u.doc.Note})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func cmdUpload(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "upload", "--firm F --matter M FILE.pdf...")
	mf := addMatterFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError("%v", err)
	}
	ref, err := mf.ref()
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError("upload: name at least one PDF file")
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	// With X-Ray on, the upload is a trace of its own that the rail carries
	// to the build and its frame.built fact; otherwise ctx's trace, if any.
	ctx, end := tracing.StartSegment(ctx, "railctl upload")
	stored, err := uploadFiles(ctx, pool, ref, fs.Args())
	end(err)
	if err != nil {
		return fmt.Errorf("nothing uploaded:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	for _, s := range stored {
		fmt.Fprintf(g.stdout, "uploaded %s: document %s, %d page(s)", s.Name, s.ID, s.Pages)
		if s.Note != "" {
			fmt.Fprintf(g.stdout, " — note: %s", s.Note)
		}
		fmt.Fprintln(g.stdout)
	}
	return nil
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
