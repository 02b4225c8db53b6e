package postgres_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The reads the local rail and the quickstart print from: the running
// claims (heartbeats), a matter's document names, the facts recorded about
// it, and how many of them the trigger has heard.
func TestLeasesDocumentsAndFacts(t *testing.T) {
	b := setup(t, rail.Config{})
	ctx := b.ctx
	b.addDoc(t, "b.txt", "two")
	b.addDoc(t, "a.txt", "one")
	if names, err := postgres.DocumentNames(ctx, b.pool, b.ref); err != nil || !slices.Equal(names, []string{"a.txt", "b.txt"}) {
		t.Fatalf("DocumentNames = %v, %v", names, err)
	}
	other := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if names, err := postgres.DocumentNames(ctx, b.pool, other); err != nil || len(names) != 0 {
		t.Fatalf("DocumentNames of an unknown matter = %v, %v", names, err)
	}

	if leases, err := b.ledger.Leases(ctx); err != nil || len(leases) != 0 {
		t.Fatalf("Leases before a claim = %v, %v", leases, err)
	}
	b.demand(t)
	c, ok, err := b.ledger.Claim(ctx, b.ref, "w")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	leases, err := b.ledger.Leases(ctx)
	if err != nil || len(leases) != 1 || leases[0].MatterRef != b.ref || leases[0].Token != c.Token || !leases[0].ClaimedAt.Equal(c.ClaimedAt) {
		t.Fatalf("Leases = %+v, %v; want the claim %+v", leases, err, c)
	}

	var ids []uuid.UUID
	for _, name := range []string{rail.FactDocumentUploaded, rail.FactMatterCreated, rail.FactDocumentUploaded} {
		id, err := postgres.RecordFact(ctx, b.pool, rail.Fact{FirmID: b.ref.FirmID,
			MatterID: uuid.NullUUID{UUID: b.ref.MatterID, Valid: true}, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if name == rail.FactDocumentUploaded {
			ids = append(ids, id)
		}
	}
	if got, err := postgres.FactIDs(ctx, b.pool, b.ref, rail.FactDocumentUploaded); err != nil || !slices.Equal(got, ids) {
		t.Fatalf("FactIDs = %v, %v; want %v", got, err, ids)
	}
	if n, err := postgres.FactsHeard(ctx, b.pool, ids); err != nil || n != 0 {
		t.Fatalf("FactsHeard before the trigger = %d, %v", n, err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name)
        VALUES ($1, $2, $3, 'document.uploaded')`, ids[1], b.ref.FirmID, b.ref.MatterID); err != nil {
		t.Fatal(err)
	}
	if n, err := postgres.FactsHeard(ctx, b.pool, ids); err != nil || n != 1 {
		t.Fatalf("FactsHeard after the trigger heard one = %d, %v", n, err)
	}
}
