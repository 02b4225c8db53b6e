package main

import (
	"context"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// recordMatterCreated and recordDocumentUploaded record the facts about a
// record in the same transaction as the record (the outbox).
func recordMatterCreated(ctx context.Context, q rail.Querier, ref rail.MatterRef) error {
	return nil // the outbox lands with issue 3
}

func recordDocumentUploaded(ctx context.Context, q rail.Querier, ref rail.MatterRef, doc uuid.UUID) error {
	return nil // the outbox lands with issue 3
}
