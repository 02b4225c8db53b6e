package record

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// DB runs statements and starts transactions: a pool.
type DB interface {
	Beginner
	postgres.Querier
}

// File is a PDF's name and contents.
type File struct {
	Name string
	Data []byte
}

// Seeded says what Seed did.
type Seeded struct {
	Created     bool     // the matter was new (else it was re-opened, if closed)
	Stored      []Stored // the files not stored before, now stored
	Regenerated bool     // every file was stored already: a regeneration was requested instead
	// Facts are the facts whose demand a Brief covering the files must
	// serve: the regeneration's, or every document.uploaded of the matter
	// still in the outbox.
	Facts []uuid.UUID
}

// Seed makes sure a matter holds files (the quickstart's): it creates the
// matter (or re-opens it) and stores, all or nothing with their
// document.uploaded facts in one transaction, the files it does not hold
// yet by name; when it holds them all, it records
// brief.regeneration_requested instead, so the rail still has demand to
// serve.
func Seed(ctx context.Context, db DB, ref rail.MatterRef, title string, files []File) (Seeded, error) {
	var out Seeded
	have, err := postgres.DocumentNames(ctx, db, ref)
	if err != nil {
		return out, err
	}
	var missing []Prepared
	for _, f := range files {
		if slices.Contains(have, f.Name) {
			continue
		}
		u, err := PrepareData(ctx, f.Name, f.Data, pdftext.Limits{})
		if err != nil {
			return out, err
		}
		missing = append(missing, u)
	}
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		out = Seeded{}
		var err error
		if out.Created, err = CreateMatter(ctx, tx, ref, title); err != nil {
			return err
		}
		if !out.Created {
			if err := postgres.SetMatterStatus(ctx, tx, ref, "open"); err != nil {
				return err
			}
		}
		if len(missing) == 0 {
			id, err := RequestRegeneration(ctx, tx, ref)
			out.Regenerated, out.Facts = true, []uuid.UUID{id}
			return err
		}
		for _, u := range missing {
			id, err := AddDocument(ctx, tx, ref, u.Doc)
			if err != nil {
				return &FileError{u.Path, err}
			}
			out.Stored = append(out.Stored, Stored{ID: id, Name: u.Doc.Name, Pages: len(u.Doc.Pages), Note: u.Doc.Note})
		}
		return nil
	})
	if err != nil || out.Regenerated {
		return out, err
	}
	out.Facts, err = postgres.FactIDs(ctx, db, ref, rail.FactDocumentUploaded)
	return out, err
}
