package sqsq_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// FuzzDecodeNudge: never panics; what it accepts is a valid nudge that
// encodes back to an equal nudge.
func FuzzDecodeNudge(f *testing.F) {
	good, _ := sqsq.EncodeNudge(rail.Nudge{V: 1, FirmID: uuid.New(), MatterID: uuid.New(), Reason: rail.ReasonDemand})
	for _, s := range []string{good, `{}`, `{"v":2}`, `{"v":1,"firm_id":"x"}`, `[]`, `null`, good + good,
		`{"v":1,"firm_id":"00000000-0000-0000-0000-000000000001","matter_id":"00000000-0000-0000-0000-000000000002","reason":"sweep","extra":1}`} {
		f.Add(s)
	}
	addSample(f, "../../../events/builder.json")
	f.Fuzz(func(t *testing.T, body string) {
		nd, err := sqsq.DecodeNudge(body)
		if err != nil {
			return
		}
		if nd.V != 1 || nd.FirmID == uuid.Nil || nd.MatterID == uuid.Nil {
			t.Fatalf("accepted an invalid nudge %+v from %q", nd, body)
		}
		enc, err := sqsq.EncodeNudge(nd)
		if err != nil {
			t.Fatalf("an accepted nudge does not encode: %v", err)
		}
		back, err := sqsq.DecodeNudge(enc)
		if err != nil || back != nd {
			t.Fatalf("round trip: %+v → %+v (%v)", nd, back, err)
		}
	})
}

// FuzzDecodeEnvelope: never panics; what it accepts names a grammatical
// fact with real ids whose event_name matches the detail-type.
func FuzzDecodeEnvelope(f *testing.F) {
	detail, _ := rail.EncodeFactDetail(rail.FactDetail{EventID: uuid.New(), EventName: "document.uploaded",
		FirmID: uuid.New(), MatterID: uuid.NullUUID{UUID: uuid.New(), Valid: true}, Payload: json.RawMessage(`{"document_id":"` + uuid.NewString() + `","page":3}`)})
	env, _ := json.Marshal(map[string]any{"version": "0", "id": uuid.NewString(), "detail-type": "document.uploaded",
		"source": "pramaan.domain", "detail": json.RawMessage(detail)})
	for _, s := range []string{string(env), `{}`, `{"detail-type":"x","source":"y","detail":{}}`, `not json`, `{"detail":null}`} {
		f.Add(s)
	}
	addSample(f, "../../../events/trigger.json")
	f.Fuzz(func(t *testing.T, body string) {
		e, err := sqsq.DecodeEnvelope(body)
		if err != nil {
			return
		}
		if e.DetailType != e.Detail.EventName || e.Source == "" {
			t.Fatalf("accepted a mismatched envelope: %+v", e)
		}
		if e.Detail.EventID == uuid.Nil || e.Detail.FirmID == uuid.Nil {
			t.Fatalf("accepted an envelope without ids: %+v", e)
		}
		if err := rail.ValidEventName(e.DetailType); err != nil {
			t.Fatalf("accepted a wish: %v", err)
		}
	})
}

// addSample adds the bodies of a sample SQS event from events/ to the corpus.
func addSample(f *testing.F, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatalf("sample event: %v", err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		f.Fatalf("sample event %s: %v", path, err)
	}
	for _, r := range ev.Records {
		f.Add(r.Body)
	}
}
