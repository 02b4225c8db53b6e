package lambdafn_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Each file in events/ (the samples for sam local invoke) is accepted by its
// handler against a seeded database.
func TestEventSamplesAreAcceptedByTheirHandlers(t *testing.T) {
	s := newStack(t)
	read := func(name string) []byte {
		b, err := os.ReadFile("../../events/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var trig, build events.SQSEvent
	if err := json.Unmarshal(read("trigger.json"), &trig); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(read("builder.json"), &build); err != nil {
		t.Fatal(err)
	}
	// The samples name firm 1111… and matter 2222…: seed them with a document.
	ref, err := rail.ParseMatterRef("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.AddMatter(s.ctx, s.db.Pool, ref, "Sample v. Matter"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.AddDocument(s.ctx, s.db.Pool, ref, rail.NewDocument{ID: uuid.MustParse("33333333-3333-4333-8333-333333333333"),
		Name: "complaint.pdf", Pages: []string{"Harlow Logistics sued Penmark Freight on 3 March 2025."}}); err != nil {
		t.Fatal(err)
	}
	// The sample's fact, as the rail recorded it (the trigger confirms a
	// demand fact against its outbox row).
	if _, err := postgres.RecordFact(s.ctx, s.db.Pool, rail.Fact{EventID: sampleEventID, FirmID: ref.FirmID,
		MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true}, Name: rail.FactDocumentUploaded}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := s.invocation("TriggerFunction")
	resp, err := s.trigger.Handle(ctx, trig)
	cancel()
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("events/trigger.json: %+v %v", resp, err)
	}
	if j := s.job(ref); j.RequestedGeneration != 1 {
		t.Fatalf("events/trigger.json recorded no demand: %+v", j)
	}

	ctx, cancel = s.invocation("BuilderFunction")
	resp, err = s.builder.Handle(ctx, build)
	cancel()
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("events/builder.json: %+v %v", resp, err)
	}
	if len(s.frames(ref)) != 1 {
		t.Fatal("events/builder.json built no frame")
	}

	relayEv, err := lambdafn.DecodeSchedule(read("relay.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = s.invocation("RelayFunction")
	_, err = s.relay.Handle(ctx, relayEv)
	cancel()
	if err != nil {
		t.Fatalf("events/relay.json: %v", err)
	}
	sweepEv, err := lambdafn.DecodeSchedule(read("sweeper.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = s.invocation("SweeperFunction")
	_, err = s.sweeper.Handle(ctx, sweepEv)
	cancel()
	if err != nil {
		t.Fatalf("events/sweeper.json: %v", err)
	}
	// A misrouted schedule input is refused clearly, not half-run.
	if _, err := s.sweeper.Handle(s.ctx, relayEv); err == nil {
		t.Fatal("the sweeper accepted the relay's schedule input")
	}
	if _, err := s.relay.Handle(s.ctx, sweepEv); err == nil {
		t.Fatal("the relay accepted the sweeper's schedule input")
	}
}

// A malformed nudge fails alone and is left for redelivery (then the DLQ);
// a nudge for a matter with no demand claims nothing and is acknowledged.
func TestBuilderRefusesMalformedNudge(t *testing.T) {
	s := newStack(t)
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "bad", Body: `{"v":1,"firm_id":"x"}`},
		{MessageId: "stale", Body: `{"v":1,"firm_id":"11111111-1111-4111-8111-111111111111","matter_id":"22222222-2222-4222-8222-222222222222","reason":"demand"}`},
	}}
	ctx, cancel := s.invocation("BuilderFunction")
	defer cancel()
	resp, err := s.builder.Handle(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "bad" {
		t.Fatalf("%+v %v: want only the malformed nudge reported", resp, err)
	}
}
