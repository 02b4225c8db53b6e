// Package localbus is an in-process stand-in for the rail's AWS wiring: an
// EventBridge-like bus whose rules match events with the patterns declared
// in template.yaml, delivering to SQS-like queues with the semantics the
// deployed queues have, so the local rail meets the same failure modes:
//
//   - at-least-once delivery: a received message is hidden for the
//     visibility timeout and reappears if it is not deleted in time;
//   - per-message delay (DelaySeconds) and a queue default delay;
//   - a receive count per message, and redrive to a dead-letter queue once
//     a message has been received maxReceiveCount times without a delete;
//   - batch receive of at most ten messages, with long polling;
//   - an optional fault knob that delivers a message twice;
//   - fair delivery by message group, as SQS fair queues do on a standard
//     queue (see Fairness below).
//
// # Fairness
//
// A message sent with a group id (SendGroup; the Nudger passes the firm id,
// as the SQS adapter sets MessageGroupId) belongs to that tenant. SQS fair
// queues watch how many messages each tenant has in flight and, when one
// tenant holds a disproportionate share, deliver the other tenants' messages
// ahead of its backlog. This queue approximates that deterministically: each
// receive picks, one message at a time, a visible message of the group with
// the fewest messages in flight (counting those picked in this receive),
// ties going to the group whose oldest visible message was sent first, and
// within a group messages go in send order. So a tenant with a backlog never
// starves another that has only a few messages, and no receiver waits while
// any message is visible (work-conserving). SQS's own detection is
// statistical and approximate; this one is exact and deterministic, so the
// local rail shows the intended behaviour, not SQS's timing of it. Messages
// without a group id
// form one group (the trigger queue's envelopes, whose order is unchanged).
// SetFair(false) turns the ordering off (plain send order, the control the
// benchmark compares against).
//
// Queue settings come from samtemplate (QueueConfigFromSpec), so local and
// deployed wiring cannot drift; a scale factor shrinks the timings for
// tests and demos. Bodies are what AWS carries: the EventBridge envelope
// JSON in a rule's target queue, the nudge JSON in the build queue.
package localbus

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

// SQS limits the queues enforce.
const (
	MaxReceiveBatch = 10                // messages per Receive
	MaxDelay        = 900 * time.Second // DelaySeconds ceiling
	MaxBodyBytes    = 256 << 10         // message body size
)

// Errors a queue returns.
var (
	// ErrStaleReceipt: the receipt handle is not the message's latest (it was
	// received again since) or the message is gone. Real SQS accepts such a
	// delete and may not delete; this queue says so.
	ErrStaleReceipt = errors.New("localbus: receipt handle is stale or unknown")
	ErrBadRequest   = errors.New("localbus: invalid request")
)

// QueueConfig is a queue's settings.
type QueueConfig struct {
	Name            string
	Delay           time.Duration // default delay of every message
	Visibility      time.Duration // how long a received message stays hidden
	Retention       time.Duration // messages older than this are dropped; 0: kept
	MaxReceiveCount int           // 0: no redrive
	DLQ             *Queue        // where messages go after MaxReceiveCount receives
	// Duplicate is the probability (0..1) that a sent message is delivered
	// twice: a second copy with the same message id and its own receipt
	// handles, as SQS's at-least-once delivery allows.
	Duplicate float64
	Seed      uint64 // seeds the fault knob
	// Unfair delivers visible messages in send order, ignoring their groups
	// (a standard queue before fair queues; the benchmark's control).
	Unfair bool
	// Now is the queue's clock for delays, visibility and retention; nil:
	// time.Now. A test passes a fake clock, advances it, and receives with
	// wait 0 (a long poll's wait is real time).
	Now func() time.Time
}

// QueueConfigFromSpec turns a template queue's settings into a QueueConfig,
// multiplying every timing by scale (1 = as deployed; 0.01 turns a 3600 s
// visibility timeout into 36 s). Timings never scale below 10 ms, except a
// zero delay, which stays zero. dlq must be given when the spec has a
// redrive policy.
func QueueConfigFromSpec(spec samtemplate.QueueSpec, dlq *Queue, scale float64) (QueueConfig, error) {
	if scale <= 0 {
		return QueueConfig{}, fmt.Errorf("localbus: queue %s: scale must be positive, got %g", spec.LogicalID, scale)
	}
	if spec.RedriveMaxReceiveCount > 0 && dlq == nil {
		return QueueConfig{}, fmt.Errorf("localbus: queue %s redrives to %s after %d receives: give its DLQ",
			spec.LogicalID, spec.DLQ, spec.RedriveMaxReceiveCount)
	}
	sc := func(secs int) time.Duration {
		if secs == 0 {
			return 0
		}
		return max(time.Duration(float64(secs)*scale*float64(time.Second)), 10*time.Millisecond)
	}
	c := QueueConfig{
		Name:       spec.LogicalID,
		Delay:      sc(spec.DelaySeconds),
		Visibility: sc(spec.VisibilityTimeout),
		Retention:  sc(spec.MessageRetentionPeriod),
	}
	if spec.RedriveMaxReceiveCount > 0 {
		c.MaxReceiveCount, c.DLQ = spec.RedriveMaxReceiveCount, dlq
	}
	return c, nil
}

// Queue is an SQS-like queue. Safe for concurrent use.
type Queue struct {
	cfg QueueConfig

	mu     sync.Mutex
	msgs   []*message
	notify chan struct{} // closed and replaced when a message may have become available
	rng    *rand.Rand
	seq    int64
	moved  int // messages redriven to the DLQ
}

type message struct {
	id        string
	body      string
	group     string            // MessageGroupId: the tenant; "" when none
	attrs     map[string]string // system attributes: AWSTraceHeader
	sentAt    time.Time
	visibleAt time.Time // available for receive from this time
	receives  int
	firstRecv time.Time
	receipt   string // the latest receipt handle; "" while never received
	inflight  bool   // received and not yet visible again
}

// NewQueue returns an empty queue.
func NewQueue(cfg QueueConfig) *Queue {
	if cfg.Visibility <= 0 {
		cfg.Visibility = 30 * time.Second
	}
	return &Queue{cfg: cfg, notify: make(chan struct{}), rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
}

// Name is the queue's name.
func (q *Queue) Name() string { return q.cfg.Name }

// Config returns the queue's settings.
func (q *Queue) Config() QueueConfig { return q.cfg }

// ARN is a made-up ARN naming the queue (events.SQSMessage.EventSourceARN).
func (q *Queue) ARN() string { return "arn:aws:sqs:local:000000000000:" + q.cfg.Name }

// SetDuplicate changes the duplicate-delivery probability.
func (q *Queue) SetDuplicate(p float64) {
	q.mu.Lock()
	q.cfg.Duplicate = p
	q.mu.Unlock()
}

// SetClock replaces the queue's clock (QueueConfig.Now) for delays,
// visibility and retention: a simulation that advances a fake clock sets
// it on the queues FromTemplate built. Call it before the queue is used.
func (q *Queue) SetClock(now func() time.Time) {
	q.mu.Lock()
	q.cfg.Now = now
	q.mu.Unlock()
}

func (q *Queue) now() time.Time {
	if q.cfg.Now != nil {
		return q.cfg.Now()
	}
	return time.Now()
}

func (q *Queue) wake() {
	close(q.notify)
	q.notify = make(chan struct{})
}

// SetFair turns fair delivery by group on (the default) or off.
func (q *Queue) SetFair(fair bool) {
	q.mu.Lock()
	q.cfg.Unfair = !fair
	q.mu.Unlock()
}

// Send enqueues body. delay < 0 takes the queue's default delay; otherwise
// it is the message's DelaySeconds (at most 900 s). traceHeader, if set,
// travels as the AWSTraceHeader system attribute. It returns the message id.
func (q *Queue) Send(body string, delay time.Duration, traceHeader string) (string, error) {
	return q.SendGroup(body, delay, traceHeader, "")
}

// SendGroup is Send with a message group id (SQS's MessageGroupId on a
// standard queue): the tenant fair delivery balances across. At most 128
// characters, as SQS allows.
func (q *Queue) SendGroup(body string, delay time.Duration, traceHeader, group string) (string, error) {
	if len(group) > 128 {
		return "", fmt.Errorf("%w: message group id of %d characters (at most 128)", ErrBadRequest, len(group))
	}
	if body == "" || len(body) > MaxBodyBytes {
		return "", fmt.Errorf("%w: body of %d bytes (want 1..%d)", ErrBadRequest, len(body), MaxBodyBytes)
	}
	if delay > MaxDelay {
		return "", fmt.Errorf("%w: delay %s above %s", ErrBadRequest, delay, MaxDelay)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if delay < 0 {
		delay = q.cfg.Delay
	}
	now := q.now()
	id := uuid.NewString()
	copies := 1
	if q.cfg.Duplicate > 0 && q.rng.Float64() < q.cfg.Duplicate {
		copies = 2
	}
	for range copies {
		m := &message{id: id, body: body, group: group, sentAt: now, visibleAt: now.Add(delay), attrs: map[string]string{}}
		if traceHeader != "" {
			m.attrs["AWSTraceHeader"] = traceHeader
		}
		q.msgs = append(q.msgs, m)
	}
	q.wake()
	return id, nil
}

// resend puts a dead-lettered message on this queue (the DLQ), keeping its
// id and body.
func (q *Queue) resend(m *message, from string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	attrs := map[string]string{"DeadLetterQueueSourceArn": from}
	for k, v := range m.attrs {
		attrs[k] = v
	}
	q.msgs = append(q.msgs, &message{id: m.id, body: m.body, group: m.group, sentAt: now, visibleAt: now, attrs: attrs})
	q.wake()
}

// Receive returns up to max (1..10) available messages, waiting up to wait
// for the first one (long polling). Each returned message is hidden for the
// visibility timeout and carries a fresh receipt handle; it reappears unless
// deleted in time. A message already received MaxReceiveCount times is moved
// to the DLQ instead of being delivered again.
func (q *Queue) Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error) {
	if max < 1 || max > MaxReceiveBatch {
		return nil, fmt.Errorf("%w: max %d messages (want 1..%d)", ErrBadRequest, max, MaxReceiveBatch)
	}
	deadline := time.Now().Add(wait)
	for {
		q.mu.Lock()
		got, next, dead := q.take(max)
		notify := q.notify
		q.mu.Unlock()
		for _, m := range dead {
			q.cfg.DLQ.resend(m, q.ARN())
		}
		if len(got) > 0 {
			return got, nil
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		sleep := deadline.Sub(now)
		if untilNext := next.Sub(q.now()); !next.IsZero() && untilNext < sleep {
			sleep = max0(untilNext)
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-notify:
		case <-t.C:
		}
		t.Stop()
	}
}

func max0(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// take collects up to max available messages (q.mu held). It returns the
// earliest future time a message becomes available and the messages to
// dead-letter. Which visible messages it picks is the fairness rule (see
// the package doc); with Unfair, the first max in send order.
func (q *Queue) take(max int) (got []events.SQSMessage, next time.Time, dead []*message) {
	now := q.now()
	keep := q.msgs[:0]
	var visible []*message       // in send order
	inflight := map[string]int{} // by group, messages hidden after a receive
	for _, m := range q.msgs {
		if q.cfg.Retention > 0 && now.Sub(m.sentAt) > q.cfg.Retention {
			continue // expired
		}
		if now.Before(m.visibleAt) {
			if next.IsZero() || m.visibleAt.Before(next) {
				next = m.visibleAt
			}
			if m.inflight {
				inflight[m.group]++
			}
			keep = append(keep, m)
			continue
		}
		m.inflight = false
		if q.cfg.MaxReceiveCount > 0 && m.receives >= q.cfg.MaxReceiveCount {
			dead = append(dead, m)
			q.moved++
			continue
		}
		visible = append(visible, m)
		keep = append(keep, m)
	}
	clear(q.msgs[len(keep):])
	q.msgs = keep
	for _, m := range q.pick(visible, inflight, max) {
		m.receives++
		if m.receives == 1 {
			m.firstRecv = now
		}
		q.seq++
		m.receipt = fmt.Sprintf("%s#%d", m.id, q.seq)
		m.inflight = true
		m.visibleAt = now.Add(q.cfg.Visibility)
		got = append(got, q.toSQS(m))
	}
	return got, next, dead
}

// pick chooses up to max of the visible messages (in send order): one at a
// time, the oldest of the group with the fewest in flight, ties to the
// group whose oldest visible message comes first.
func (q *Queue) pick(visible []*message, inflight map[string]int, max int) []*message {
	if len(visible) <= max || q.cfg.Unfair {
		return visible[:min(max, len(visible))]
	}
	var order []string // groups by their oldest visible message
	byGroup := map[string][]*message{}
	for _, m := range visible {
		if _, ok := byGroup[m.group]; !ok {
			order = append(order, m.group)
		}
		byGroup[m.group] = append(byGroup[m.group], m)
	}
	if len(order) == 1 {
		return visible[:max]
	}
	out := make([]*message, 0, max)
	for len(out) < max {
		best := ""
		found := false
		for _, g := range order {
			if len(byGroup[g]) == 0 {
				continue
			}
			if !found || inflight[g] < inflight[best] {
				best, found = g, true
			}
		}
		if !found {
			break
		}
		out = append(out, byGroup[best][0])
		byGroup[best] = byGroup[best][1:]
		inflight[best]++
	}
	return out
}

func (q *Queue) toSQS(m *message) events.SQSMessage {
	sum := md5.Sum([]byte(m.body))
	attrs := map[string]string{
		"ApproximateReceiveCount":          strconv.Itoa(m.receives),
		"SentTimestamp":                    strconv.FormatInt(m.sentAt.UnixMilli(), 10),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstRecv.UnixMilli(), 10),
		"SenderId":                         "LOCALBUS",
	}
	for k, v := range m.attrs {
		attrs[k] = v
	}
	if m.group != "" {
		attrs["MessageGroupId"] = m.group
	}
	return events.SQSMessage{
		MessageId:      m.id,
		ReceiptHandle:  m.receipt,
		Body:           m.body,
		Md5OfBody:      hex.EncodeToString(sum[:]),
		Attributes:     attrs,
		EventSource:    "aws:sqs",
		EventSourceARN: q.ARN(),
		AWSRegion:      "local",
	}
}

// Delete removes the message received with receiptHandle. A handle that is
// not the message's latest, or whose message is gone, is ErrStaleReceipt
// and deletes nothing.
func (q *Queue) Delete(receiptHandle string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.msgs {
		if m.receipt == receiptHandle && receiptHandle != "" {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrStaleReceipt, receiptHandle)
}

// ChangeVisibility makes a received message visible again after d (0: now),
// as SQS ChangeMessageVisibility does.
func (q *Queue) ChangeVisibility(receiptHandle string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.msgs {
		if m.receipt == receiptHandle && m.inflight {
			m.visibleAt = q.now().Add(d)
			q.wake()
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrStaleReceipt, receiptHandle)
}

// Stats is a queue's depth, as SQS's approximate counters report it.
type Stats struct {
	Visible     int // available now
	InFlight    int // received, not deleted, still hidden
	Delayed     int // sent with a delay that has not passed
	Redriven    int // moved to the DLQ so far
	OldestAgeMs int64
}

// Stats counts the queue's messages.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	s := Stats{Redriven: q.moved}
	for _, m := range q.msgs {
		switch {
		case !now.Before(m.visibleAt):
			s.Visible++
		case m.inflight:
			s.InFlight++
		default:
			s.Delayed++
		}
		s.OldestAgeMs = int64(math.Max(float64(s.OldestAgeMs), float64(now.Sub(m.sentAt).Milliseconds())))
	}
	return s
}
