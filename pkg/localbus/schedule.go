package localbus

import (
	"context"
	"fmt"
	"time"
)

// Schedule invokes a scheduled function the way EventBridge Scheduler
// invokes the relay and the sweeper: once per Every, each invocation bounded
// by Timeout (the function's timeout, its context's deadline), never two at
// once (the template turns Lambda's own retries off and a run that overruns
// delays the next instead of overlapping it). A failed invocation is
// reported to OnError; the next one runs at its time.
type Schedule struct {
	Name string
	// Every is the period between starts; zero runs invocations back to
	// back (a relay whose window is its own pacing).
	Every time.Duration
	// Timeout bounds one invocation; zero: none.
	Timeout time.Duration
	// Invoke is the function's handler with the schedule's input bound.
	Invoke func(ctx context.Context) error
	// OnError, if set, receives invocation errors (and panics).
	OnError func(error)
}

// Run invokes until ctx is done, first at once, and returns nil then.
func (s *Schedule) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		start := time.Now()
		if err := s.invoke(ctx); err != nil && ctx.Err() == nil && s.OnError != nil {
			s.OnError(fmt.Errorf("%s: %w", s.Name, err))
		}
		timer.Reset(max(s.Every-time.Since(start), 0))
	}
}

func (s *Schedule) invoke(ctx context.Context) (err error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("handler panicked: %v", x)
		}
	}()
	return s.Invoke(ctx)
}
