package localbus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

// EventBridge limits the bus enforces.
const (
	MaxPutEntries  = 10        // entries per PutEvents call
	MaxEntryBytes  = 256 << 10 // an event's size
	DefaultAccount = "000000000000"
	DefaultRegion  = "local"
)

// Entry is one PutEvents entry.
type Entry struct {
	Source      string
	DetailType  string
	Detail      json.RawMessage // a JSON object
	TraceHeader string
}

// Envelope is an event as EventBridge delivers it to a target: the body of
// the message in a rule's target queue.
type Envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// Rule routes matching events to its target queues.
type Rule struct {
	Name    string
	Pattern *Pattern
	Targets []*Queue
}

// Delivery reports one accepted event: its envelope id, which rules
// delivered it, and the trace header it carried to their targets.
type Delivery struct {
	EnvelopeID  string
	DetailType  string
	Rules       []string
	TraceHeader string
}

// Bus is an EventBridge-like bus. Safe for concurrent use.
type Bus struct {
	Name string
	// Source is what Publish (rail.Publisher) puts on every entry; default
	// rail's event source, "pramaan.domain".
	Source string
	// OnDeliver, if set, is called for every accepted event (the local
	// runner prints it).
	OnDeliver func(Delivery)

	mu    sync.RWMutex
	rules []*Rule
}

// NewBus returns a bus with no rules.
func NewBus(name, source string) *Bus {
	if source == "" {
		source = "pramaan.domain"
	}
	return &Bus{Name: name, Source: source}
}

// AddRule compiles pattern and routes matching events to targets.
func (b *Bus) AddRule(name string, pattern []byte, targets ...*Queue) error {
	if len(targets) == 0 {
		return fmt.Errorf("localbus: rule %s has no targets", name)
	}
	p, err := CompilePattern(pattern)
	if err != nil {
		return fmt.Errorf("localbus: rule %s: %w", name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rules = append(b.rules, &Rule{Name: name, Pattern: p, Targets: targets})
	return nil
}

// AddTemplateRule reads the AWS::Events::Rule ruleID's EventPattern and
// targets from the template and routes to the queues named by the targets'
// logical ids (queues maps logical id to queue).
func (b *Bus) AddTemplateRule(tpl *samtemplate.Template, ruleID string, queues map[string]*Queue) error {
	pattern, err := tpl.RulePattern(ruleID)
	if err != nil {
		return err
	}
	ids, err := tpl.RuleTargets(ruleID)
	if err != nil {
		return err
	}
	var targets []*Queue
	for _, id := range ids {
		q, ok := queues[id]
		if !ok {
			return fmt.Errorf("localbus: rule %s targets %s, which has no local queue", ruleID, id)
		}
		targets = append(targets, q)
	}
	return b.AddRule(ruleID, pattern, targets...)
}

// PutEvents accepts up to ten entries and returns one error per entry (nil:
// accepted and routed to every matching rule's targets). An event no rule
// matches is accepted and goes nowhere, as on EventBridge.
func (b *Bus) PutEvents(entries []Entry) ([]error, error) {
	if len(entries) == 0 || len(entries) > MaxPutEntries {
		return nil, fmt.Errorf("%w: %d entries (want 1..%d)", ErrBadRequest, len(entries), MaxPutEntries)
	}
	errs := make([]error, len(entries))
	for i, e := range entries {
		errs[i] = b.put(e)
	}
	return errs, nil
}

func (b *Bus) put(e Entry) error {
	switch {
	case e.Source == "":
		return errors.New("InvalidArgument: Source is required")
	case e.DetailType == "":
		return errors.New("InvalidArgument: DetailType is required")
	}
	dec := json.NewDecoder(bytes.NewReader(e.Detail))
	dec.UseNumber()
	var detail any
	if err := dec.Decode(&detail); err != nil {
		return fmt.Errorf("MalformedDetail: %v", err)
	}
	if _, ok := detail.(map[string]any); !ok {
		return errors.New("MalformedDetail: Detail must be a JSON object")
	}
	env := Envelope{
		Version: "0", ID: uuid.NewString(), DetailType: e.DetailType, Source: e.Source,
		Account: DefaultAccount, Time: time.Now().UTC().Format(time.RFC3339), Region: DefaultRegion,
		Resources: []string{}, Detail: e.Detail,
	}
	body, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("MalformedDetail: %v", err)
	}
	if len(body) > MaxEntryBytes {
		return fmt.Errorf("InvalidArgument: event is %d bytes, limit %d", len(body), MaxEntryBytes)
	}
	event := map[string]any{
		"version": env.Version, "id": env.ID, "detail-type": env.DetailType, "source": env.Source,
		"account": env.Account, "time": env.Time, "region": env.Region, "resources": []any{}, "detail": detail,
	}
	b.mu.RLock()
	rules := b.rules
	b.mu.RUnlock()
	d := Delivery{EnvelopeID: env.ID, DetailType: e.DetailType, TraceHeader: e.TraceHeader}
	var errs []error
	for _, r := range rules {
		if !r.Pattern.Match(event) {
			continue
		}
		d.Rules = append(d.Rules, r.Name)
		for _, q := range r.Targets {
			// EventBridge retries a failed delivery, then dead-letters it
			// to the target's DLQ; in process a send fails only on a body
			// over the limit, which the size check above excludes.
			if _, err := q.Send(string(body), -1, e.TraceHeader); err != nil {
				errs = append(errs, fmt.Errorf("rule %s -> %s: %w", r.Name, q.Name(), err))
			}
		}
	}
	if b.OnDeliver != nil {
		b.OnDeliver(d)
	}
	return errors.Join(errs...)
}

// Publish implements rail.Publisher: every entry goes on the bus with
// Source = b.Source and DetailType = the event name, ten per PutEvents.
func (b *Bus) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]rail.PublishResult, 0, len(entries))
	for start := 0; start < len(entries); start += MaxPutEntries {
		chunk := entries[start:min(start+MaxPutEntries, len(entries))]
		put := make([]Entry, len(chunk))
		for i, e := range chunk {
			put[i] = Entry{Source: b.Source, DetailType: e.Name, Detail: e.Detail, TraceHeader: e.TraceHeader}
		}
		errs, err := b.PutEvents(put)
		if err != nil {
			return nil, err
		}
		for i, e := range chunk {
			out = append(out, rail.PublishResult{EventID: e.EventID, Err: errs[i]})
		}
	}
	return out, nil
}

// Nudger implements rail.Nudger on a queue: each nudge is sent as the
// build-queue body {"v":1,"firm_id","matter_id","reason"} with
// DelaySeconds = delay rounded up to whole seconds and the firm id as its
// message group (fair delivery among firms), as the SQS adapter does.
type Nudger struct {
	Queue *Queue
	// Exact keeps sub-second delays as given instead of rounding them up
	// (scaled-down demos and tests).
	Exact bool
	// OnNudge, if set, is called for every nudge sent.
	OnNudge func(n rail.Nudge, delay time.Duration)
}

// Nudge sends the nudges. The error joins those that could not be sent.
func (n *Nudger) Nudge(ctx context.Context, nudges []rail.Nudge, delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return fmt.Errorf("localbus: nudge delay %s outside 0..%s", delay, MaxDelay)
	}
	if !n.Exact {
		delay = time.Duration(math.Ceil(delay.Seconds())) * time.Second
	}
	failed := map[int]error{}
	for i, nd := range nudges {
		body, err := EncodeNudge(nd)
		if err != nil {
			failed[i] = err
			continue
		}
		if _, err := n.Queue.SendGroup(body, delay, nd.TraceHeader, nd.FirmID.String()); err != nil {
			failed[i] = fmt.Errorf("localbus: nudge %s: %w", nd.Ref(), err)
			continue
		}
		if n.OnNudge != nil {
			n.OnNudge(nd, delay)
		}
	}
	if len(failed) > 0 {
		return &rail.NudgeError{Failed: failed} // the others were sent
	}
	return nil
}

// EncodeNudge renders a nudge's body exactly as the build queue carries it.
func EncodeNudge(nd rail.Nudge) (string, error) {
	if nd.V == 0 {
		nd.V = 1
	}
	if nd.V != 1 || nd.FirmID == uuid.Nil || nd.MatterID == uuid.Nil {
		return "", fmt.Errorf("localbus: invalid nudge %+v", nd)
	}
	switch nd.Reason {
	case rail.ReasonDemand, rail.ReasonFollowUp, rail.ReasonSweep, rail.ReasonBackfill, rail.ReasonRetry:
	default:
		return "", fmt.Errorf("localbus: nudge reason %q, want demand, follow_up, sweep, backfill or retry", nd.Reason)
	}
	b, err := json.Marshal(nd)
	return string(b), err
}
