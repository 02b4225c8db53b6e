package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
)

// `--transport aws` without its queues is a usage error naming them, not
// a rail polling no queue.
func TestAWSTransportNeedsItsQueues(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	env := map[string]string{"RAIL_TRIGGER_QUEUE_URL": "", "RAIL_BUILD_QUEUE_URL": ""}
	o := railOptions{getenv: func(k string) string { return env[k] }, lease: 10 * time.Second, settle: time.Second,
		sweepEvery: time.Hour, sweepGrace: time.Hour, builder: "digest", transport: "aws"}
	r, err := startRail(context.Background(), db.URL, o, newProgress(io.Discard, slog.LevelInfo))
	if err == nil {
		r.Close()
		t.Fatal("startRail over AWS without queues started")
	}
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != exitUsage || !strings.Contains(err.Error(), "RAIL_TRIGGER_QUEUE_URL and RAIL_BUILD_QUEUE_URL") {
		t.Fatalf("err = %v, want a usage error naming both queues", err)
	}
}
