package rail_test

import (
	"context"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The outcome context outlives the build's but is bounded by its own
// timeout, and keeps the build context's values.
func TestOutcomeContextDetachedAndBounded(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	ctx, stop := rail.OutcomeContext(parent, 7*time.Second)
	defer stop()
	if ctx.Err() != nil {
		t.Fatal("the outcome context inherited the build's cancellation")
	}
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > 7*time.Second {
		t.Fatalf("deadline %v %v: want one at most 7s away", dl, ok)
	}
	if ctx.Value(key{}) != "v" {
		t.Fatal("the outcome context lost the build context's values")
	}
	ctx0, stop0 := rail.OutcomeContext(parent, 0)
	defer stop0()
	if dl, ok := ctx0.Deadline(); !ok || time.Until(dl) > rail.DefaultCommitTimeout {
		t.Fatalf("zero timeout: deadline %v %v, want the default", dl, ok)
	}
}
