package rail_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
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

// EncodeFactDetail writes the bytes encoding/json writes for the detail
// (SetEscapeHTML(false)), whether it takes its direct path (plain strings)
// or encoding/json (names or times that need escaping).
func TestEncodeFactDetailIsEncodingJSONsBytes(t *testing.T) {
	reference := func(d rail.FactDetail, payload string) string {
		type detail struct {
			EventID    string          `json:"event_id"`
			EventName  string          `json:"event_name"`
			FirmID     string          `json:"firm_id"`
			MatterID   *string         `json:"matter_id"`
			OccurredAt string          `json:"occurred_at"`
			Payload    json.RawMessage `json:"payload"`
		}
		j := detail{EventID: d.EventID.String(), EventName: d.EventName, FirmID: d.FirmID.String(),
			OccurredAt: d.OccurredAt.UTC().Format(time.RFC3339Nano), Payload: json.RawMessage(payload)}
		if d.MatterID.Valid {
			m := d.MatterID.UUID.String()
			j.MatterID = &m
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(j); err != nil {
			t.Fatal(err)
		}
		return strings.TrimRight(b.String(), "\n")
	}
	rng := rand.New(rand.NewPCG(21, 1))
	names := []string{"document.uploaded", "frame.built", "a<b>&c.sent", `quote".sent`, `back\slash.sent`,
		"tab\t.sent", "é.sent", "\u2028.sent", "\xff.sent", ""}
	payloads := []struct{ in, compact string }{
		{``, `{}`}, {`{}`, `{}`}, {`{"document_id": "x"}`, `{"document_id":"x"}`},
		{`{"a": [1, 2.5e10, null, true], "b": {"c": "<&>"}}`, `{"a":[1,2.5e10,null,true],"b":{"c":"<&>"}}`},
		{`{"s": "\u00e9\n"}`, `{"s":"\u00e9\n"}`},
	}
	times := []time.Time{time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 20, 0, 0, 123456789, time.FixedZone("x", 3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), {}}
	n := 0
	for _, name := range names {
		for _, p := range payloads {
			for _, at := range times {
				for _, matter := range []bool{false, true} {
					var id, firm, m uuid.UUID
					for i := range id {
						id[i], firm[i], m[i] = byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))
					}
					d := rail.FactDetail{EventID: id, EventName: name, FirmID: firm, OccurredAt: at,
						MatterID: uuid.NullUUID{UUID: m, Valid: matter}, Payload: json.RawMessage(p.in)}
					got, err := rail.EncodeFactDetail(d)
					if err != nil {
						t.Fatalf("%+v: %v", d, err)
					}
					if want := reference(d, p.compact); string(got) != want {
						t.Fatalf("%+v:\n got %s\nwant %s", d, got, want)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d details, byte for byte", n)
}
