// Package record is the host application's side of the rail, the part
// railctl plays: the record the Brief is built from (firms, matters,
// documents) and, in the same transaction, the fact about each change
// (the transactional outbox). The relay puts the fact on the bus after the
// commit; the trigger turns it into demand.
//
// Each fact carries ctx's trace (tracing.TraceHeader), which the rail hands
// on hop by hop to the build it causes and to that build's frame.built.
package record

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// Beginner starts a transaction: a pool or a connection.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

func fact(ctx context.Context, ref rail.MatterRef, name string, payload map[string]string) rail.Fact {
	return rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: name, Payload: payload, TraceHeader: tracing.TraceHeader(ctx)}
}

// CreateMatter adds an open matter (and its firm) on q, the caller's
// transaction, with its matter.created fact. An existing matter of the same
// firm is not an error (created=false, no fact).
func CreateMatter(ctx context.Context, q postgres.Querier, ref rail.MatterRef, title string) (created bool, err error) {
	if created, err = postgres.AddMatter(ctx, q, ref, title); err != nil || !created {
		return created, err
	}
	_, err = postgres.RecordFact(ctx, q, fact(ctx, ref, rail.FactMatterCreated, nil))
	return true, err
}

// AddDocument stores a document on q, the caller's transaction, with its
// document.uploaded fact, and returns the document's id.
func AddDocument(ctx context.Context, q postgres.Querier, ref rail.MatterRef, d rail.NewDocument) (uuid.UUID, error) {
	id, err := postgres.AddDocument(ctx, q, ref, d)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = postgres.RecordFact(ctx, q, fact(ctx, ref, rail.FactDocumentUploaded, map[string]string{"document_id": id.String()}))
	return id, err
}

// RequestRegeneration records brief.regeneration_requested on q: what the
// Regenerate button does. It returns the fact's event id.
func RequestRegeneration(ctx context.Context, q postgres.Querier, ref rail.MatterRef) (uuid.UUID, error) {
	return postgres.RecordFact(ctx, q, fact(ctx, ref, rail.FactRegenerationRequested, nil))
}

// NewMatter is CreateMatter in a transaction of its own on db.
func NewMatter(ctx context.Context, db Beginner, ref rail.MatterRef, title string) (created bool, err error) {
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		created, err = CreateMatter(ctx, tx, ref, title)
		return err
	})
	return created, err
}

// StoreDocument is AddDocument in a transaction of its own on db.
func StoreDocument(ctx context.Context, db Beginner, ref rail.MatterRef, d rail.NewDocument) (id uuid.UUID, err error) {
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		id, err = AddDocument(ctx, tx, ref, d)
		return err
	})
	return id, err
}

// Regenerate is the Regenerate button on db: in one transaction it checks
// that the matter exists under its firm (rail.ErrUnknownMatter,
// rail.ErrFirmMismatch) and records brief.regeneration_requested. It
// returns the fact's event id.
func Regenerate(ctx context.Context, db Beginner, ref rail.MatterRef) (id uuid.UUID, err error) {
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := postgres.CheckMatter(ctx, tx, ref); err != nil {
			return err
		}
		id, err = RequestRegeneration(ctx, tx, ref)
		return err
	})
	return id, err
}
