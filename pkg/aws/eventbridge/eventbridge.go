// Package eventbridge is the rail's EventBridge adapter: a rail.Publisher
// over the real aws-sdk-go-v2 client. The endpoint comes from the SDK's
// configuration, so AWS_ENDPOINT_URL points it at moto_server or LocalStack.
package eventbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// EntryError is the bus's refusal of one entry (PutEvents ErrorCode and
// ErrorMessage). The relay records it and retries the entry with backoff;
// it wraps rail.ErrPermanentRefusal when the code is one PutEvents
// documents as not retryable (Permanent), and only those count toward
// parking the row.
type EntryError struct {
	Code    string
	Message string
}

// permanentCodes are the PutEventsResultEntry error codes the EventBridge
// API reference lists as non-retryable. It lists InternalFailure and
// ThrottlingException as retryable; a code in neither list is treated as
// retryable too (backing off for ever is visible in the backlog gauges;
// parking a fact for a transient error would lose its effect).
var permanentCodes = map[string]bool{
	"AccessDeniedException":               true,
	"InvalidAccountIdException":           true,
	"InvalidArgument":                     true,
	"MalformedDetail":                     true,
	"RedactionFailure":                    true,
	"NotAuthorizedForSourceException":     true,
	"NotAuthorizedForDetailTypeException": true,
}

// permanentCallCodes are the whole-call error codes that retrying the same
// request cannot fix: an invalid request (an entry the call cannot carry).
var permanentCallCodes = map[string]bool{"ValidationException": true}

// Permanent reports whether the bus will refuse the entry again.
func (e *EntryError) Permanent() bool { return permanentCodes[e.Code] }

// Unwrap is rail.ErrPermanentRefusal for a permanent refusal, else nil.
func (e *EntryError) Unwrap() error {
	if e.Permanent() {
		return rail.ErrPermanentRefusal
	}
	return nil
}

func (e *EntryError) Error() string {
	if e.Message == "" {
		return "PutEvents entry rejected: " + e.Code
	}
	return "PutEvents entry rejected: " + e.Code + ": " + e.Message
}

// Publisher puts facts on one event bus with PutEvents.
type Publisher struct {
	Client *eventbridge.Client
	Bus    string // EventBusName (name or ARN); "" means the default bus
	Source string // the entries' Source; default rail.DefaultEventSource
}

var _ rail.Publisher = (*Publisher)(nil)

// New returns a Publisher for bus (name or ARN; "" = "default") with the
// given source ("" = rail.DefaultEventSource), using a client built from cfg.
func New(cfg aws.Config, bus, source string) *Publisher {
	return &Publisher{Client: eventbridge.NewFromConfig(cfg), Bus: bus, Source: source}
}

// Publish puts entries on the bus, rail.PutEventsMaxEntries per call, and
// returns one result per entry in order: Err is an *EntryError for an entry
// the bus refused. A call that fails as a whole makes its entries' results
// carry that error; Publish returns an error only when no entry was
// accepted because the first call failed (nothing is then known to be on
// the bus).
func (p *Publisher) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	source := p.Source
	if source == "" {
		source = rail.DefaultEventSource
	}
	bus := p.Bus
	if bus == "" {
		bus = "default"
	}
	results := make([]rail.PublishResult, 0, len(entries))
	for start := 0; start < len(entries); start += rail.PutEventsMaxEntries {
		chunk := entries[start:min(start+rail.PutEventsMaxEntries, len(entries))]
		in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(chunk))}
		for i, e := range chunk {
			in.Entries[i] = types.PutEventsRequestEntry{
				EventBusName: aws.String(bus),
				Source:       aws.String(source),
				DetailType:   aws.String(e.Name),
				Detail:       aws.String(string(e.Detail)),
			}
			if e.TraceHeader != "" {
				in.Entries[i].TraceHeader = aws.String(e.TraceHeader)
			}
		}
		out, err := p.Client.PutEvents(ctx, in)
		if err == nil && len(out.Entries) != len(chunk) {
			err = fmt.Errorf("PutEvents returned %d result entries for %d request entries", len(out.Entries), len(chunk))
		}
		if err != nil {
			var api smithy.APIError
			if errors.As(err, &api) && permanentCallCodes[api.ErrorCode()] {
				err = fmt.Errorf("%w (%w)", err, rail.ErrPermanentRefusal)
			}
			if start == 0 {
				return nil, fmt.Errorf("eventbridge: PutEvents to %s: %w", bus, err)
			}
			for _, e := range chunk {
				results = append(results, rail.PublishResult{EventID: e.EventID, Err: fmt.Errorf("PutEvents call failed: %w", err)})
			}
			continue
		}
		for i, e := range chunk {
			r := rail.PublishResult{EventID: e.EventID}
			res := out.Entries[i]
			switch {
			case res.ErrorCode != nil && *res.ErrorCode != "":
				r.Err = &EntryError{Code: *res.ErrorCode, Message: aws.ToString(res.ErrorMessage)}
			case res.EventId == nil || *res.EventId == "":
				// An entry neither failed nor got an id: do not count it as
				// published (a duplicate later beats a loss).
				r.Err = errors.New("PutEvents result entry has neither an EventId nor an ErrorCode")
			}
			results = append(results, r)
		}
	}
	return results, nil
}
