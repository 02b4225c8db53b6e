package rail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// The transactional outbox's producer side: a fact is recorded in the
// caller's transaction, so it commits (or rolls back) with the record it
// describes (pkg/postgres's RecordFact). The relay (relay.go) puts
// committed facts on the bus. Here: the facts' grammar, their checks and
// their bus detail.

// Fact names used by the rail. Names are `noun.verb` with a past-tense
// verb: a fact says what happened, never what someone wants to happen.
const (
	FactMatterCreated         = "matter.created"
	FactDocumentUploaded      = "document.uploaded"
	FactDocumentRemoved       = "document.removed"
	FactRegenerationRequested = "brief.regeneration_requested"
	FactFrameBuilt            = "frame.built"
	DefaultEventSource        = "pramaan.domain"
	MaxEventNameLen           = 128
	MaxFactPayloadBytes       = 4096 // the JSON text of the payload, as the database measures it
	MaxTraceHeaderLen         = 500
	maxPayloadKeyLen          = 64
)

// The grammar, kept character for character equal to the database's check
// outbox_event_name_is_past_tense_fact (a CHECK in sql/migrations/002_outbox.sql,
// now the outbox's write trigger; a test proves both accept and refuse the
// same names). The database is the
// authority; this copy only gives a clearer error before the insert.
var (
	eventNameShape   = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*\.([a-z][a-z0-9]*_)*([a-z]*[a-df-z]ed|(re|un|up|out|over|under|with|mis|fore|pre|co)?(agreed|freed|guaranteed|decreed|arisen|awoken|beaten|begun|bent|bitten|blown|bought|bound|broken|brought|built|caught|chosen|dealt|done|drawn|driven|dug|eaten|fallen|fed|felt|fled|flown|forbidden|forgiven|forgotten|fought|found|frozen|given|gone|gotten|grown|held|hidden|hung|kept|known|laid|led|left|lent|lost|made|meant|met|paid|proven|ridden|risen|said|seen|sent|shaken|shown|sold|sought|spent|spoken|stolen|stood|struck|stuck|sworn|taken|taught|thought|thrown|told|torn|understood|won|woken|worn|written))$`)
	eventNameNotVerb = regexp.MustCompile(`[._](bed|embed|imbed|red|shred|sled)$`)
	nounVerbShape    = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*\.[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	payloadKeyShape  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// ErrBadEventName is wrapped by every event-name refusal.
var ErrBadEventName = errors.New("event name is not a past-tense fact")

// ErrPayloadTooLarge is wrapped when a fact's payload exceeds MaxFactPayloadBytes.
var ErrPayloadTooLarge = errors.New("fact payload too large")

// ValidEventName reports whether name is a fact the bus may carry:
// lowercase `noun.verb`, snake_case on both sides, at most 128 characters,
// and the last word of the verb a past participle (regular -ed, or one of
// a closed list of irregular ones such as built, sent, written, optionally
// prefixed: rebuilt, withdrawn). See docs/relay.md.
func ValidEventName(name string) error {
	if validNames.has(name) {
		return nil
	}
	if err := checkEventName(name); err != nil {
		return err
	}
	validNames.add(name)
	return nil
}

// validNames remembers names ValidEventName accepted (a pure function of
// the name; the relay checks every fact's name as the trigger will, and a
// deployment uses a handful of names), up to maxRememberedNames of them.
var validNames nameSet

const maxRememberedNames = 1024

type nameSet struct {
	mu    sync.RWMutex
	names map[string]struct{}
}

func (s *nameSet) has(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.names[name]
	return ok
}

func (s *nameSet) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]struct{}{}
	}
	if len(s.names) < maxRememberedNames {
		s.names[name] = struct{}{}
	}
}

func checkEventName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrBadEventName)
	case len(name) > MaxEventNameLen:
		return fmt.Errorf("%w: %d characters, at most %d", ErrBadEventName, len(name), MaxEventNameLen)
	case strings.ToLower(name) != name:
		return fmt.Errorf("%w: %q must be lowercase", ErrBadEventName, name)
	case strings.Count(name, ".") != 1 || !nounVerbShape.MatchString(name):
		return fmt.Errorf("%w: %q must be snake_case noun.verb with exactly one dot, like document.uploaded", ErrBadEventName, name)
	case !eventNameShape.MatchString(name) || eventNameNotVerb.MatchString(name):
		verb := name[strings.LastIndexAny(name, "._")+1:]
		return fmt.Errorf("%w: %q: %q is not a past participle (a fact says what happened: %s, not a wish or command)",
			ErrBadEventName, name, verb, "document.uploaded, brief.regeneration_requested, frame.built")
	}
	return nil
}

// Fact is one domain fact to record.
type Fact struct {
	EventID  uuid.UUID     // zero: generated
	FirmID   uuid.UUID     // required
	MatterID uuid.NullUUID // optional
	Name     string        // noun.verb, past tense (ValidEventName)
	// Payload holds ids only (document_id, ...): consumers read the truth
	// from Postgres. Keys are snake_case; encoded size at most 4 KB.
	Payload     map[string]string
	TraceHeader string // optional X-Ray trace header, forwarded by PutEvents
}

// Validate checks a fact before anything is written.
func (f Fact) Validate() error {
	if err := ValidEventName(f.Name); err != nil {
		return err
	}
	if f.FirmID == uuid.Nil {
		return errors.New("fact: firm id is required")
	}
	if f.MatterID.Valid && f.MatterID.UUID == uuid.Nil {
		return errors.New("fact: matter id is the nil uuid")
	}
	if len(f.TraceHeader) > MaxTraceHeaderLen {
		return fmt.Errorf("fact: trace header is %d bytes, at most %d", len(f.TraceHeader), MaxTraceHeaderLen)
	}
	for k := range f.Payload {
		if len(k) > maxPayloadKeyLen || !payloadKeyShape.MatchString(k) {
			return fmt.Errorf("fact: payload key %q must be snake_case, at most %d characters", k, maxPayloadKeyLen)
		}
	}
	size, err := payloadSize(f.Payload)
	if err != nil {
		return err
	}
	if size > MaxFactPayloadBytes {
		return fmt.Errorf("%w: %d bytes encoded, at most %d (ids only: the record lives in Postgres)",
			ErrPayloadTooLarge, size, MaxFactPayloadBytes)
	}
	return nil
}

// payloadSize is the length of jsonb's text form of the payload, which is
// what the CHECK measures: `{"k": "v", "k2": "v2"}` (jsonb puts a space
// after each colon and comma). Go's encoding escapes a few characters that
// jsonb does not (<, >, &, U+2028), so it can only overestimate: a payload
// accepted here is never refused by the database for size.
func payloadSize(p map[string]string) (int, error) {
	if p == nil {
		return 2, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return 0, fmt.Errorf("fact: payload: %w", err)
	}
	if len(p) == 0 {
		return len(b), nil
	}
	return len(b) + 2*len(p) - 1, nil // ": " per pair, ", " between pairs
}

// FactDetail is the JSON detail of a fact on the bus; the trigger decodes
// exactly this:
//
//	{"event_id":"…","event_name":"document.uploaded","firm_id":"…","matter_id":"…",
//	 "occurred_at":"2026-…Z","payload":{"document_id":"…"}}
//
// matter_id is null for a fact about no matter. Consumers dedupe on
// event_id, never on the bus envelope's id.
//
// Payload is the outbox row's JSON object as stored, compacted: any JSON
// object the outbox's CHECKs accept (strings, numbers, booleans, nulls,
// arrays and nested objects, kept as written: numbers are not rounded
// through float64). RecordFact writes string values (ids); the host
// application may write any object. docs/relay.md, "Payload".
type FactDetail struct {
	EventID    uuid.UUID
	EventName  string
	FirmID     uuid.UUID
	MatterID   uuid.NullUUID
	OccurredAt time.Time
	Payload    json.RawMessage // a JSON object; nil or empty encodes as {}
}

type factDetailJSON struct {
	EventID    string          `json:"event_id"`
	EventName  string          `json:"event_name"`
	FirmID     string          `json:"firm_id"`
	MatterID   *string         `json:"matter_id"`
	OccurredAt string          `json:"occurred_at"`
	Payload    json.RawMessage `json:"payload"`
}

// ErrBadPayload is wrapped when a payload is not a JSON object.
var ErrBadPayload = errors.New("fact payload is not a JSON object")

// Ref returns the detail's matter, ok=false for a fact about no matter.
func (d FactDetail) Ref() (MatterRef, bool) {
	return MatterRef{FirmID: d.FirmID, MatterID: d.MatterID.UUID}, d.MatterID.Valid
}

// PayloadString returns the payload's value at key when it is a JSON
// string (ids are), ok=false otherwise.
func (d FactDetail) PayloadString(key string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(d.Payload, &m) != nil {
		return "", false
	}
	var s string
	if raw, ok := m[key]; !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// compactObject returns p compacted, {} for an empty p, and ErrBadPayload
// when p is not one JSON object.
func compactObject(p []byte) (json.RawMessage, error) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if p[0] != '{' {
		return nil, fmt.Errorf("%w: starts with %q", ErrBadPayload, truncate(string(p), 16))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	return b.Bytes(), nil
}

// EncodeFactDetail renders d as the bus detail JSON. The payload is
// carried as written (no HTML escaping, numbers and nesting kept); a
// payload that is not a JSON object is refused with ErrBadPayload. The
// bytes are encoding/json's for factDetailJSON (SetEscapeHTML(false)):
// written directly when every string needs no escaping (ids, times and
// the names the grammar allows), by encoding/json otherwise.
func EncodeFactDetail(d FactDetail) (json.RawMessage, error) {
	payload, err := compactObject(d.Payload)
	if err != nil {
		return nil, fmt.Errorf("fact detail: payload: %w", err)
	}
	occurred := d.OccurredAt.UTC().Format(time.RFC3339Nano)
	if !plainJSONString(d.EventName) || !plainJSONString(occurred) {
		return encodeFactDetailJSON(d, occurred, payload)
	}
	b := make([]byte, 0, 180+len(d.EventName)+len(payload))
	b = append(b, `{"event_id":"`...)
	b = appendUUID(b, d.EventID)
	b = append(b, `","event_name":"`...)
	b = append(b, d.EventName...)
	b = append(b, `","firm_id":"`...)
	b = appendUUID(b, d.FirmID)
	if d.MatterID.Valid {
		b = append(b, `","matter_id":"`...)
		b = appendUUID(b, d.MatterID.UUID)
		b = append(b, `","occurred_at":"`...)
	} else {
		b = append(b, `","matter_id":null,"occurred_at":"`...)
	}
	b = append(b, occurred...)
	b = append(b, `","payload":`...)
	b = append(b, payload...)
	return append(b, '}'), nil
}

// EncodeBusDetail is EncodeFactDetail for the relay: the same bytes, and an
// error wherever DecodeFactDetail (the trigger's decoder) would refuse
// them, so a fact the trigger could not read is parked, not sent. When
// every string is plain (the fast path) the payload and the JSON are sound
// by construction, and what the decoder can still refuse is a nil id, the
// name's grammar and a time RFC 3339 cannot carry (a year past 9999):
// those are checked, with no decode. Otherwise the bytes are decoded
// (FuzzEncodeBusDetail holds the two verdicts equal).
func EncodeBusDetail(d FactDetail) (json.RawMessage, error) {
	b, err := EncodeFactDetail(d)
	if err != nil {
		return nil, err
	}
	occurred := d.OccurredAt.UTC().Format(time.RFC3339Nano)
	if !plainJSONString(d.EventName) || !plainJSONString(occurred) {
		if _, err := DecodeFactDetail(b); err != nil {
			return nil, err
		}
		return b, nil
	}
	switch {
	case d.EventID == uuid.Nil:
		return nil, errors.New("fact detail: event_id is the nil uuid")
	case d.FirmID == uuid.Nil:
		return nil, errors.New("fact detail: firm_id is the nil uuid")
	case d.MatterID.Valid && d.MatterID.UUID == uuid.Nil:
		return nil, errors.New("fact detail: matter_id is the nil uuid")
	}
	if err := ValidEventName(d.EventName); err != nil {
		return nil, fmt.Errorf("fact detail: event_name: %w", err)
	}
	if _, err := time.Parse(time.RFC3339Nano, occurred); err != nil {
		return nil, fmt.Errorf("fact detail: occurred_at %q: %w", occurred, err)
	}
	return b, nil
}

// encodeFactDetailJSON is EncodeFactDetail by encoding/json.
func encodeFactDetailJSON(d FactDetail, occurred string, payload json.RawMessage) (json.RawMessage, error) {
	j := factDetailJSON{
		EventID:    d.EventID.String(),
		EventName:  d.EventName,
		FirmID:     d.FirmID.String(),
		OccurredAt: occurred,
		Payload:    payload,
	}
	if d.MatterID.Valid {
		s := d.MatterID.UUID.String()
		j.MatterID = &s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, fmt.Errorf("fact detail: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// plainJSONString: s is printable ASCII without a quote or a backslash, so
// encoding/json writes it unchanged between quotes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func appendUUID(b []byte, id uuid.UUID) []byte {
	var buf [36]byte
	const hex = "0123456789abcdef"
	j := 0
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[j] = '-'
			j++
		}
		buf[j], buf[j+1] = hex[c>>4], hex[c&0xf]
		j += 2
	}
	return append(b, buf[:]...)
}

// DecodeFactDetail parses a bus detail, refusing missing or malformed ids,
// names, times and payloads with an error that says which field is wrong.
// The payload may be any JSON object (absent or null: {}).
func DecodeFactDetail(b []byte) (FactDetail, error) {
	var j factDetailJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return FactDetail{}, fmt.Errorf("fact detail: %w", err)
	}
	var d FactDetail
	var err error
	if d.EventID, err = requiredUUID("event_id", j.EventID); err != nil {
		return FactDetail{}, err
	}
	if d.FirmID, err = requiredUUID("firm_id", j.FirmID); err != nil {
		return FactDetail{}, err
	}
	if j.MatterID != nil {
		m, err := requiredUUID("matter_id", *j.MatterID)
		if err != nil {
			return FactDetail{}, err
		}
		d.MatterID = uuid.NullUUID{UUID: m, Valid: true}
	}
	if err := ValidEventName(j.EventName); err != nil {
		return FactDetail{}, fmt.Errorf("fact detail: event_name: %w", err)
	}
	d.EventName = j.EventName
	if j.OccurredAt == "" {
		return FactDetail{}, errors.New("fact detail: occurred_at is missing")
	}
	if d.OccurredAt, err = time.Parse(time.RFC3339Nano, j.OccurredAt); err != nil {
		return FactDetail{}, fmt.Errorf("fact detail: occurred_at %q: %w", j.OccurredAt, err)
	}
	if d.Payload, err = compactObject(j.Payload); err != nil {
		return FactDetail{}, fmt.Errorf("fact detail: payload: %w", err)
	}
	return d, nil
}

func requiredUUID(field, s string) (uuid.UUID, error) {
	if s == "" {
		return uuid.Nil, fmt.Errorf("fact detail: %s is missing", field)
	}
	// uuid.Parse also takes urn: and {…} forms; the detail carries only
	// the canonical 36-character form.
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return uuid.Nil, fmt.Errorf("fact detail: %s %q is not a uuid", field, s)
	}
	if id == uuid.Nil {
		return uuid.Nil, fmt.Errorf("fact detail: %s is the nil uuid", field)
	}
	return id, nil
}
