package localbus_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/localbus"
)

// TestScheduleInvokesWithoutOverlapAndReportsFailures: invocations never
// overlap, each gets the schedule's timeout as its deadline, a failure or a
// panic is reported and the schedule keeps going.
func TestScheduleInvokesWithoutOverlapAndReportsFailures(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		calls, running atomic.Int32
		overlapped     atomic.Bool
		mu             sync.Mutex
		reported       []string
		deadlineOK     = true
	)
	s := &localbus.Schedule{
		Name: "sweeper", Every: time.Millisecond, Timeout: time.Hour,
		Invoke: func(ctx context.Context) error {
			if running.Add(1) > 1 {
				overlapped.Store(true)
			}
			defer running.Add(-1)
			dl, ok := ctx.Deadline()
			if !ok || time.Until(dl) > time.Hour {
				mu.Lock()
				deadlineOK = false
				mu.Unlock()
			}
			switch calls.Add(1) {
			case 2:
				return errors.New("database down")
			case 3:
				panic("boom")
			}
			return nil
		},
		OnError: func(err error) {
			mu.Lock()
			reported = append(reported, err.Error())
			mu.Unlock()
		},
	}
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for calls.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if calls.Load() < 5 {
		t.Fatalf("%d invocations within the deadline, want at least 5", calls.Load())
	}
	if overlapped.Load() {
		t.Error("two invocations ran at once")
	}
	mu.Lock()
	defer mu.Unlock()
	if !deadlineOK {
		t.Error("an invocation ran without the schedule's timeout as its deadline")
	}
	if len(reported) != 2 || !strings.Contains(reported[0], "sweeper: database down") || !strings.Contains(reported[1], "panicked: boom") {
		t.Errorf("reported %q, want the error and the panic, named", reported)
	}
}
