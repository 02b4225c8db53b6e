package rail_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

func TestFactDetailRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	d := rail.FactDetail{EventID: uuid.New(), EventName: "document.uploaded", FirmID: uuid.New(),
		MatterID: uuid.NullUUID{UUID: uuid.New(), Valid: true}, OccurredAt: time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC),
		Payload: json.RawMessage(`{"document_id":"` + uuid.NewString() + `"}`)}
	b, err := rail.EncodeFactDetail(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rail.DecodeFactDetail(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.EventID != d.EventID || got.FirmID != d.FirmID || got.MatterID != d.MatterID ||
		!got.OccurredAt.Equal(d.OccurredAt) || string(got.Payload) != string(d.Payload) || got.EventName != d.EventName {
		t.Fatalf("round trip: %+v != %+v", got, d)
	}
	if !strings.Contains(string(b), `"event_id":"`+d.EventID.String()+`"`) || !strings.Contains(string(b), `"payload":{"document_id":`) {
		t.Fatalf("wire format: %s", b)
	}
	noMatter, _ := rail.EncodeFactDetail(rail.FactDetail{EventID: d.EventID, EventName: "firm.created", FirmID: d.FirmID, OccurredAt: d.OccurredAt})
	if got, err := rail.DecodeFactDetail(noMatter); err != nil || got.MatterID.Valid || !strings.Contains(string(noMatter), `"matter_id":null`) {
		t.Fatalf("no matter: %s → %+v, %v", noMatter, got, err)
	}
	ok := fmt.Sprintf(`"event_name":"document.uploaded","firm_id":"%s","matter_id":"%s","occurred_at":"2026-03-01T09:30:00Z","payload":{}`, d.FirmID, d.MatterID.UUID)
	for _, c := range []struct{ json, want string }{
		{`{` + ok + `}`, "event_id is missing"},
		{`{"event_id":"nope",` + ok + `}`, `event_id "nope" is not a uuid`},
		{`{"event_id":"00000000-0000-0000-0000-000000000000",` + ok + `}`, "event_id is the nil uuid"},
		{`{"event_id":"` + d.EventID.String() + `","event_name":"document.uploaded","matter_id":null,"occurred_at":"2026-03-01T09:30:00Z"}`, "firm_id is missing"},
		{`{"event_id":"` + d.EventID.String() + `","event_name":"document.uploaded","firm_id":"` + d.FirmID.String() + `","matter_id":"x","occurred_at":"2026-03-01T09:30:00Z"}`, `matter_id "x" is not a uuid`},
		{`{"event_id":"` + d.EventID.String() + `","event_name":"document.upload","firm_id":"` + d.FirmID.String() + `","occurred_at":"2026-03-01T09:30:00Z"}`, "event_name"},
		{`{"event_id":"` + d.EventID.String() + `","event_name":"document.uploaded","firm_id":"` + d.FirmID.String() + `"}`, "occurred_at is missing"},
		{`not json`, "fact detail"},
		{`{"event_id":"` + d.EventID.String() + `",` + strings.Replace(ok, `"payload":{}`, `"payload":1`, 1) + `}`, "payload: fact payload is not a JSON object"},
		{`{"event_id":"` + d.EventID.String() + `",` + strings.Replace(ok, `"payload":{}`, `"payload":["document_id"]`, 1) + `}`, "payload: fact payload is not a JSON object"},
		{`{"event_id":"` + d.EventID.String() + `",` + strings.Replace(ok, `"payload":{}`, `"payload":"x"`, 1) + `}`, "payload: fact payload is not a JSON object"},
	} {
		if _, err := rail.DecodeFactDetail([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeFactDetail(%s) = %v, want an error containing %q", c.json, err, c.want)
		}
	}
	// Any JSON object is carried as written: numbers keep their digits
	// (no float64 round trip), nesting and HTML characters are kept.
	for _, p := range []string{`{}`, `{"n":1}`, `{"big":12345678901234567890.000000000000000001,"neg":-0.0e-7}`,
		`{"o":{"a":[1,true,null,{"b":"<&>"}]},"s":"é \u2028 \"q\""}`} {
		d.Payload = json.RawMessage(p)
		b, err := rail.EncodeFactDetail(d)
		if err != nil {
			t.Fatalf("encode %s: %v", p, err)
		}
		got, err := rail.DecodeFactDetail(b)
		if err != nil || string(got.Payload) != p || !strings.Contains(string(b), `"payload":`+p) {
			t.Errorf("payload %s: detail %s decoded to %s (%v)", p, b, got.Payload, err)
		}
	}
	d.Payload = json.RawMessage(`[1]`)
	if _, err := rail.EncodeFactDetail(d); !errors.Is(err, rail.ErrBadPayload) {
		t.Errorf("encoding an array payload: %v, want ErrBadPayload", err)
	}
	d.Payload = nil
	if b, err := rail.EncodeFactDetail(d); err != nil || !strings.Contains(string(b), `"payload":{}`) {
		t.Errorf("nil payload: %s %v, want {}", b, err)
	}
}

// ValidEventName remembers the names it accepted (the relay checks every
// fact's name): a name's verdict is the same on every call, a refused name
// is refused again, and more distinct names than it remembers are all
// still judged.
func TestValidEventNameVerdictIsStable(t *testing.T) {
	for range 3 {
		for _, n := range []string{"document.uploaded", "frame.built", "brief.regeneration_requested"} {
			if err := rail.ValidEventName(n); err != nil {
				t.Fatalf("%q refused: %v", n, err)
			}
		}
		for _, n := range []string{"document.upload", "Document.uploaded", "brief.regenerate", ""} {
			if err := rail.ValidEventName(n); !errors.Is(err, rail.ErrBadEventName) {
				t.Fatalf("%q: %v, want ErrBadEventName", n, err)
			}
		}
	}
	for i := range 3000 {
		good, bad := fmt.Sprintf("thing%d.sent", i), fmt.Sprintf("thing%d.send", i)
		if err := rail.ValidEventName(good); err != nil {
			t.Fatalf("%q refused: %v", good, err)
		}
		if err := rail.ValidEventName(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
