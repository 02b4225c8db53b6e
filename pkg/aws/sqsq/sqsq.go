// Package sqsq is the rail's SQS adapter: a rail.Nudger that sends nudges to
// the build queue, and strict decoders for the two message bodies the rail's
// functions receive (a build-queue nudge, an EventBridge envelope delivered to
// the trigger queue).
package sqsq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// SQS limits the adapter respects.
const (
	MaxBatch    = 10                // entries per SendMessageBatch
	MaxDelay    = 900 * time.Second // DelaySeconds ceiling
	traceHeader = "AWSTraceHeader"
)

// Nudger sends nudges to one queue. Safe for concurrent use.
type Nudger struct {
	Client   *sqs.Client
	QueueURL string
	// Attempts per entry for entries SQS reports as failed (not the
	// client's own retries of whole calls); zero means 3.
	Attempts int
	// Backoff before retrying failed entries; zero means 100ms, doubled per round.
	Backoff time.Duration
}

// NewNudger returns a Nudger for queueURL.
func NewNudger(client *sqs.Client, queueURL string) *Nudger {
	return &Nudger{Client: client, QueueURL: queueURL}
}

// Nudge sends the nudges with DelaySeconds = delay (rounded up to whole
// seconds, at most 900) and MessageGroupId = the firm id (GroupID), at most
// ten per SendMessageBatch call. Entries SQS
// reports as failed are retried; the error (nil when every nudge was
// accepted) is a *rail.NudgeError naming exactly the nudges not sent: a
// batch SQS partly accepted is never reported as all refused.
func (n *Nudger) Nudge(ctx context.Context, nudges []rail.Nudge, delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return fmt.Errorf("sqsq: nudge delay %s outside 0..%s", delay, MaxDelay)
	}
	secs := int32(math.Ceil(delay.Seconds()))
	failed := map[int]error{}
	for start := 0; start < len(nudges); start += MaxBatch {
		for i, err := range n.sendBatch(ctx, nudges[start:min(start+MaxBatch, len(nudges))], secs) {
			failed[start+i] = err
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &rail.NudgeError{Failed: failed}
}

// sendBatch sends one batch and returns the nudges (by index in batch)
// that were not sent, with why.
func (n *Nudger) sendBatch(ctx context.Context, batch []rail.Nudge, delaySecs int32) map[int]error {
	all := func(err error) map[int]error {
		out := make(map[int]error, len(batch))
		for i := range batch {
			out[i] = err
		}
		return out
	}
	pending := map[string]types.SendMessageBatchRequestEntry{}
	for i, nd := range batch {
		body, err := EncodeNudge(nd)
		if err != nil {
			return all(err)
		}
		e := types.SendMessageBatchRequestEntry{
			Id:           aws.String(strconv.Itoa(i)),
			MessageBody:  aws.String(body),
			DelaySeconds: delaySecs,
			// SQS fair queues: on a standard queue the group id names the
			// tenant, and when one firm has a backlog SQS delivers the
			// other firms' messages ahead of it. Every nudge (demand,
			// follow-up, retry, sweep, backfill) goes through here.
			MessageGroupId: aws.String(GroupID(nd)),
		}
		if nd.TraceHeader != "" {
			e.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{
				traceHeader: {DataType: aws.String("String"), StringValue: aws.String(nd.TraceHeader)},
			}
		}
		pending[*e.Id] = e
	}
	attempts := n.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	backoff := n.Backoff
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	var last map[string]string // id -> why it failed
	for attempt := 1; len(pending) > 0 && attempt <= attempts; attempt++ {
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return n.unsent(batch, pending, func(string) string { return "send nudges: " + ctx.Err().Error() })
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		entries := make([]types.SendMessageBatchRequestEntry, 0, len(pending))
		for _, e := range pending {
			entries = append(entries, e)
		}
		out, err := n.Client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(n.QueueURL), Entries: entries})
		if err != nil {
			msg := fmt.Sprintf("send %d nudges to %s: %v", len(entries), n.QueueURL, err)
			return n.unsent(batch, pending, func(string) string { return msg })
		}
		for _, ok := range out.Successful {
			delete(pending, aws.ToString(ok.Id))
		}
		last = map[string]string{}
		for _, f := range out.Failed {
			id := aws.ToString(f.Id)
			last[id] = aws.ToString(f.Code) + ": " + aws.ToString(f.Message)
			if f.SenderFault { // the entry itself is wrong: retrying cannot help
				attempt = attempts
			}
		}
	}
	return n.unsent(batch, pending, func(id string) string { return last[id] })
}

// GroupID is the MessageGroupId a nudge carries on a standard queue (SQS
// fair queues): its firm's id, so fairness is per tenant, not per matter.
func GroupID(nd rail.Nudge) string { return nd.FirmID.String() }

// unsent names the pending entries of batch as not sent.
func (n *Nudger) unsent(batch []rail.Nudge, pending map[string]types.SendMessageBatchRequestEntry, why func(id string) string) map[int]error {
	out := make(map[int]error, len(pending))
	for id := range pending {
		i, _ := strconv.Atoi(id)
		out[i] = fmt.Errorf("sqsq: nudge %s (%s) not sent: %s", batch[i].Ref(), batch[i].Reason, why(id))
	}
	return out
}

// EncodeNudge renders a nudge's body: {"v":1,"firm_id","matter_id","reason"}.
// The trace header is not part of the body.
func EncodeNudge(nd rail.Nudge) (string, error) {
	if nd.V == 0 {
		nd.V = 1
	}
	if err := checkNudge(nd); err != nil {
		return "", err
	}
	b, err := json.Marshal(nd)
	if err != nil {
		return "", fmt.Errorf("sqsq: encode nudge: %w", err)
	}
	return string(b), nil
}

func checkNudge(nd rail.Nudge) error {
	switch {
	case nd.V != 1:
		return fmt.Errorf("sqsq: nudge version %d, want 1", nd.V)
	case nd.FirmID == uuid.Nil:
		return errors.New("sqsq: nudge has no firm_id")
	case nd.MatterID == uuid.Nil:
		return errors.New("sqsq: nudge has no matter_id")
	}
	switch nd.Reason {
	case rail.ReasonDemand, rail.ReasonFollowUp, rail.ReasonSweep, rail.ReasonBackfill, rail.ReasonRetry:
		return nil
	}
	return fmt.Errorf("sqsq: nudge reason %q, want demand, follow_up, sweep, backfill or retry", nd.Reason)
}

// DecodeNudge parses a build-queue body strictly: JSON object, v 1, firm and
// matter uuids, a known reason, no unknown fields.
func DecodeNudge(body string) (rail.Nudge, error) {
	var nd rail.Nudge
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&nd); err != nil {
		return rail.Nudge{}, fmt.Errorf("sqsq: nudge body is not a valid nudge: %w", err)
	}
	if dec.More() {
		return rail.Nudge{}, errors.New("sqsq: nudge body has data after the JSON object")
	}
	if err := checkNudge(nd); err != nil {
		return rail.Nudge{}, err
	}
	return nd, nil
}

// Envelope is an EventBridge event as a rule delivers it to an SQS queue.
type Envelope struct {
	ID         string // EventBridge's envelope id: new on every PutEvents, never dedupe on it
	DetailType string
	Source     string
	Detail     rail.FactDetail
}

// DecodeEnvelope parses an EventBridge envelope from an SQS body and its
// detail as a rail fact (rail.DecodeFactDetail). The detail's event_name
// must equal the envelope's detail-type.
func DecodeEnvelope(body string) (Envelope, error) {
	var raw struct {
		ID         string          `json:"id"`
		DetailType string          `json:"detail-type"`
		Source     string          `json:"source"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		return Envelope{}, fmt.Errorf("sqsq: body is not an EventBridge envelope: %w", err)
	}
	switch {
	case raw.DetailType == "":
		return Envelope{}, errors.New("sqsq: envelope has no detail-type")
	case raw.Source == "":
		return Envelope{}, errors.New("sqsq: envelope has no source")
	case len(raw.Detail) == 0 || string(raw.Detail) == "null":
		return Envelope{}, errors.New("sqsq: envelope has no detail")
	}
	d, err := rail.DecodeFactDetail(raw.Detail)
	if err != nil {
		return Envelope{}, fmt.Errorf("sqsq: envelope %s (%s): %w", raw.ID, raw.DetailType, err)
	}
	if d.EventName != raw.DetailType {
		return Envelope{}, fmt.Errorf("sqsq: envelope %s: detail-type %q but detail event_name %q", raw.ID, raw.DetailType, d.EventName)
	}
	return Envelope{ID: raw.ID, DetailType: raw.DetailType, Source: raw.Source, Detail: d}, nil
}

// ErrForeignSource: an envelope whose source is not the rail's. EventBridge
// lets any principal allowed to PutEvents on a bus set any source not
// starting with "aws.", so the trigger takes facts only from the rail's.
var ErrForeignSource = errors.New("sqsq: envelope source is not the rail's")

// DecodeRailEnvelope is DecodeEnvelope for the trigger: the envelope's
// source must be source (the relay's, RAIL_EVENT_SOURCE).
func DecodeRailEnvelope(body, source string) (Envelope, error) {
	env, err := DecodeEnvelope(body)
	if err != nil {
		return Envelope{}, err
	}
	if source == "" || env.Source != source {
		return Envelope{}, fmt.Errorf("%w: envelope %s has source %q, want %q", ErrForeignSource, env.ID, env.Source, source)
	}
	return env, nil
}

// Source receives from an SQS queue for a poller outside Lambda (railctl's
// local rail over SQS): the messages in the shape Lambda's event source
// mapping delivers them, system attributes (AWSTraceHeader, receive count)
// included.
type Source struct {
	Client *sqs.Client
	URL    string
}

// Receive long-polls for up to max messages.
func (s *Source) Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error) {
	out, err := s.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(s.URL), MaxNumberOfMessages: int32(max), WaitTimeSeconds: int32(wait.Seconds()),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		return nil, err
	}
	msgs := make([]events.SQSMessage, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes,
			EventSource: "aws:sqs", EventSourceARN: s.URL})
	}
	return msgs, nil
}

// Delete deletes a received message.
func (s *Source) Delete(receiptHandle string) error {
	_, err := s.Client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(s.URL), ReceiptHandle: aws.String(receiptHandle)})
	return err
}
