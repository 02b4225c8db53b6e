package rail_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// FuzzDecodeFactDetail: the bus detail decoder never panics, and whatever
// it accepts has real ids, a grammatical name and a JSON-object payload,
// and survives a round trip unchanged (payload bytes included: numbers and
// nesting are carried as written). What it refuses gets an error naming
// the detail.
func FuzzDecodeFactDetail(f *testing.F) {
	good, _ := json.Marshal(map[string]any{"event_id": uuid.NewString(), "event_name": "document.uploaded",
		"firm_id": uuid.NewString(), "matter_id": uuid.NewString(), "occurred_at": "2026-11-30T01:02:03Z",
		"payload": map[string]string{"document_id": uuid.NewString()}})
	f.Add(good)
	head := `{"event_id":"` + uuid.NewString() + `","event_name":"document.uploaded","firm_id":"` + uuid.NewString() +
		`","matter_id":null,"occurred_at":"2026-11-30T01:02:03.5Z","payload":`
	for _, p := range []string{`{"n":1}`, `{"big":12345678901234567890.000000000000000001,"e":-1.5e-300}`,
		`{"o":{"a":[1,true,null,{"b":"<&>"}]}}`, `{ "spaced" : [ 1 , 2 ] }`, `null`, `1`, `[1]`, `"x"`, `{"a":}`} {
		f.Add([]byte(head + p + `}`))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"event_id":"nope"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"event_id":"00000000-0000-0000-0000-000000000000","event_name":"frame.built","firm_id":"00000000-0000-0000-0000-000000000001"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := rail.DecodeFactDetail(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fact detail: ") {
				t.Fatalf("refusal does not name the detail: %v", err)
			}
			return
		}
		if d.EventID == uuid.Nil || d.FirmID == uuid.Nil || (d.MatterID.Valid && d.MatterID.UUID == uuid.Nil) {
			t.Fatalf("accepted a detail without ids: %+v", d)
		}
		if err := rail.ValidEventName(d.EventName); err != nil {
			t.Fatalf("accepted a detail with a bad name: %v", err)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(d.Payload, &obj); err != nil || obj == nil {
			t.Fatalf("accepted a payload that is not a JSON object: %s (%v)", d.Payload, err)
		}
		enc, err := rail.EncodeFactDetail(d)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		d2, err := rail.DecodeFactDetail(enc)
		if err != nil || d2.EventID != d.EventID || d2.EventName != d.EventName || d2.FirmID != d.FirmID ||
			d2.MatterID != d.MatterID || !d2.OccurredAt.Equal(d.OccurredAt) || !bytes.Equal(d2.Payload, d.Payload) {
			t.Fatalf("round trip: %+v → %+v (%v)", d, d2, err)
		}
	})
}

// FuzzEncodeBusDetail: the relay's encoder gives EncodeFactDetail's bytes,
// and refuses exactly what the trigger's decoder would refuse of them
// (encoding refused, or DecodeFactDetail refusing the bytes): names off the
// grammar or needing escapes, payloads of every shape, times out of RFC
// 3339's range.
func FuzzEncodeBusDetail(f *testing.F) {
	f.Add("document.uploaded", []byte(`{"document_id":"x"}`), 2026, int64(1_000_000_123), true, uint8(0))
	f.Add("Document.Uploaded", []byte(`{}`), 2026, int64(0), false, uint8(0))
	f.Add("document.uploaded", []byte(`{"a":1}`), 10000, int64(0), true, uint8(0))
	f.Add("document.uploaded", []byte(`{"a":1}`), 9999, int64(365*24*time.Hour), true, uint8(0))
	f.Add("document.uploaded", []byte(`{}`), -1, int64(0), true, uint8(0))
	f.Add("doc\"ument.uploaded", []byte(`null`), 1, int64(5), true, uint8(0))
	f.Add("frame.built", []byte(`[1]`), 2026, int64(5), true, uint8(0))
	f.Add("frame.bu\u00efltx", []byte(`{"o":{"a":[1,true,null,{"b":"<&>"}]}}`), 2026, int64(5), false, uint8(0))
	f.Add("document.uploaded", []byte(`{}`), 2026, int64(0), true, uint8(1))
	f.Add("document.uploaded", []byte(`{}`), 2026, int64(0), true, uint8(2))
	f.Add("document.uploaded", []byte(`{}`), 2026, int64(0), true, uint8(4))
	f.Fuzz(func(t *testing.T, name string, payload []byte, year int, nanos int64, withMatter bool, nilIDs uint8) {
		id := func(bit uint8) uuid.UUID { // a nil id where nilIDs has the bit
			if nilIDs&bit != 0 {
				return uuid.Nil
			}
			return uuid.New()
		}
		d := rail.FactDetail{EventID: id(1), EventName: name, FirmID: id(2), Payload: payload,
			OccurredAt: time.Date(year%20000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(nanos))}
		if withMatter {
			d.MatterID = uuid.NullUUID{UUID: id(4), Valid: true}
		}
		got, gotErr := rail.EncodeBusDetail(d)
		want, wantErr := rail.EncodeFactDetail(d)
		if wantErr == nil {
			_, wantErr = rail.DecodeFactDetail(want)
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("EncodeBusDetail refused: %v; encode and decode refused: %v (%+v)", gotErr, wantErr, d)
		}
		if gotErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("bytes differ:\n%s\n%s", got, want)
		}
	})
}

// FuzzCheckStorable: the storable check never panics, refuses whatever is
// not valid JSON or not valid UTF-8, and every refusal wraps
// ErrBodyNotStorable. (Whether it agrees with jsonb itself is checked
// against PostgreSQL: pkg/postgres, TestCheckStorableAgreesWithJSONB.)
func FuzzCheckStorable(f *testing.F) {
	for _, s := range []string{`{}`, `"\u0000"`, `"\ud800\udc00"`, `"\ud800"`, `1e131072`, `1e-16384`, `-0.0e5`,
		`[1,"a\\u0000",{"k":"\uDBFF\uDFFF"}]`, "\"\xff\"", `"\u`, `1e`, `-`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := rail.CheckStorable(body)
		if err != nil && !errors.Is(err, rail.ErrBodyNotStorable) {
			t.Fatalf("%q: %v does not wrap ErrBodyNotStorable", body, err)
		}
		if err == nil && (!json.Valid(body) || !utf8.Valid(body)) {
			t.Fatalf("%q: accepted, but not valid JSON in UTF-8", body)
		}
	})
}
