package localbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Source is a queue a Poller drives: a localbus Queue, or an SQS queue
// through an adapter.
type Source interface {
	Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error)
	Delete(receiptHandle string) error
}

// Handler is a Lambda SQS handler with ReportBatchItemFailures.
type Handler func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// Poller drives a Handler the way Lambda's SQS event source mapping does:
// it receives a batch, passes it as an events.SQSEvent, and deletes only the
// messages the handler did not report as failed. A handler error (or panic)
// fails the whole batch: nothing is deleted and every message reappears
// after the visibility timeout, counting towards the redrive.
type Poller struct {
	Name    string
	Source  Source
	Handler Handler
	Batch   int           // messages per invocation, 1..10 (default 10)
	Wait    time.Duration // long-poll wait (default 1 s)
	// Concurrency is how many invocations may run at once (the event
	// source's MaximumConcurrency); default 1.
	Concurrency int
	// Timeout bounds one invocation (the function timeout); 0: none.
	Timeout time.Duration
	// OnError, if set, receives handler and delete errors.
	OnError func(error)
}

// Run polls until ctx is done and returns nil then.
func (p *Poller) Run(ctx context.Context) error {
	n := max(p.Concurrency, 1)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := p.PollOnce(ctx); err != nil && ctx.Err() == nil {
					p.report(err)
					select { // a receive error: do not spin
					case <-ctx.Done():
					case <-time.After(200 * time.Millisecond):
					}
				}
			}
		})
	}
	wg.Wait()
	return nil
}

func (p *Poller) report(err error) {
	if p.OnError != nil {
		p.OnError(err)
	}
}

// PollOnce receives one batch (waiting up to Wait) and handles it. It
// returns how many messages were received.
func (p *Poller) PollOnce(ctx context.Context) (int, error) {
	batch := p.Batch
	if batch <= 0 {
		batch = MaxReceiveBatch
	}
	wait := p.Wait
	if wait <= 0 {
		wait = time.Second
	}
	msgs, err := p.Source.Receive(ctx, batch, wait)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, nil
		}
		return 0, fmt.Errorf("%s: receive: %w", p.Name, err)
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	resp, err := p.invoke(ctx, events.SQSEvent{Records: msgs})
	if err != nil {
		p.report(fmt.Errorf("%s: invocation failed, %d message(s) will reappear: %w", p.Name, len(msgs), err))
		return len(msgs), nil
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range msgs {
		if failed[m.MessageId] {
			continue
		}
		if err := p.Source.Delete(m.ReceiptHandle); err != nil {
			p.report(fmt.Errorf("%s: delete %s: %w", p.Name, m.MessageId, err))
		}
	}
	return len(msgs), nil
}

func (p *Poller) invoke(ctx context.Context, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("handler panicked: %v", x)
		}
	}()
	return p.Handler(ctx, ev)
}
