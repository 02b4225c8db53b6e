package main

import (
	"context"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// recordMatterCreated, recordDocumentUploaded and recordRegenerationRequested
// record a fact about the record in the same transaction as the record (the
// outbox); the relay puts it on the bus after the commit. Each fact carries
// the trace of ctx (tracing.TraceHeader), which the rail hands on hop by hop
// to the build it causes and to that build's frame.built fact.
func recordMatterCreated(ctx context.Context, q rail.Querier, ref rail.MatterRef) error {
	_, err := rail.RecordFact(ctx, q, rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: rail.FactMatterCreated, TraceHeader: tracing.TraceHeader(ctx)})
	return err
}

func recordDocumentUploaded(ctx context.Context, q rail.Querier, ref rail.MatterRef, doc uuid.UUID) error {
	_, err := rail.RecordFact(ctx, q, rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: rail.FactDocumentUploaded, Payload: map[string]string{"document_id": doc.String()},
		TraceHeader: tracing.TraceHeader(ctx)})
	return err
}

func recordRegenerationRequested(ctx context.Context, q rail.Querier, ref rail.MatterRef) (uuid.UUID, error) {
	return rail.RecordFact(ctx, q, rail.Fact{FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: rail.FactRegenerationRequested, TraceHeader: tracing.TraceHeader(ctx)})
}
