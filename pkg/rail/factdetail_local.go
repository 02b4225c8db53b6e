package rail

// TEMPORARY (branch lambda): a minimal FactDetail decoder written against the
// bus detail format the outbox branch (issue 3) publishes. Deleted when that
// branch, which owns FactDetail and DecodeFactDetail, is merged.

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// FactDetail is the EventBridge detail of a fact published from the outbox.
type FactDetail struct {
	EventID    uuid.UUID       `json:"event_id"`
	EventName  string          `json:"event_name"`
	FirmID     uuid.UUID       `json:"firm_id"`
	MatterID   uuid.UUID       `json:"matter_id"`
	OccurredAt time.Time       `json:"occurred_at"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}

// DecodeFactDetail decodes and checks a bus detail.
func DecodeFactDetail(b []byte) (FactDetail, error) {
	var d FactDetail
	if err := json.Unmarshal(b, &d); err != nil {
		return FactDetail{}, fmt.Errorf("fact detail: %w", err)
	}
	switch {
	case d.EventID == uuid.Nil:
		return FactDetail{}, errors.New("fact detail: event_id missing")
	case d.FirmID == uuid.Nil:
		return FactDetail{}, errors.New("fact detail: firm_id missing")
	case d.MatterID == uuid.Nil:
		return FactDetail{}, errors.New("fact detail: matter_id missing")
	}
	return d, nil
}
