package postgres_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Run keeps draining for its window, stops with its context, and makes one
// pass when its deadline is closer than the safety margin. No assertion
// bounds how long anything takes (latency is BenchmarkCommitToPublish's):
// the writer waits for its facts to be seen, not for a clock.
func TestRunDrainsForTheWindowAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s}
	ctx := context.Background()
	var ids []uuid.UUID
	var wg sync.WaitGroup
	window := 1500 * time.Millisecond
	start := time.Now()
	wg.Go(func() {
		// Three facts at a time, the next three once the relay has published
		// these: they arrive during the window, across several passes.
		for range 10 {
			ids = append(ids, recordN(t, db.Pool, 3)...)
			for s.count() < len(ids) && time.Since(start) < window {
				time.Sleep(5 * time.Millisecond) // polling for the condition
			}
		}
	})
	st, err := r.Run(ctx, window, 50*time.Millisecond)
	wg.Wait()
	if err != nil || time.Since(start) < window-100*time.Millisecond {
		t.Fatalf("Run: %v after %s; want nil, and not before the %s window ended", err, time.Since(start), window)
	}
	if st.Passes < 2 || !st.Measured {
		t.Fatalf("Run stats %+v; want several passes and a measured backlog", st)
	}
	// What arrived after the window (a loaded machine) goes at the next pass.
	more, err := r.DrainOnce(ctx)
	if err != nil || st.Published+more.Published != 30 || more.Backlog != 0 {
		t.Fatalf("Run published %d, the next pass %d (%v); want 30 in all, backlog 0", st.Published, more.Published, err)
	}
	for _, id := range ids {
		if s.got[id] != 1 {
			t.Fatalf("%s published %d times", id, s.got[id])
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := r.Run(cctx, time.Hour, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run did not stop with its context: %v", err)
	}
	// A deadline closer than the safety margin (PublishTimeout + 5 s): one
	// pass, then a clean return.
	recordN(t, db.Pool, 2)
	dctx, dcancel := context.WithTimeout(ctx, 12*time.Second)
	defer dcancel()
	if st, err := r.Run(dctx, time.Minute, 0); err != nil || st.Published != 2 || st.Passes != 1 {
		t.Fatalf("Run near its deadline: %+v %v; want one pass publishing 2", st, err)
	}
}

// BenchmarkCommitToPublish measures the time from a fact's COMMIT to the
// relay's PutEvents call for it, with Run polling at the default interval
// against the real Postgres. The publisher is the recording port double
// (it notes the instant Publish is called), so the figure is the relay's
// own latency, without EventBridge's round trip. Facts are committed at
// random intervals (0-60 ms) so they do not phase-lock with the poll.
//
//	go test ./pkg/postgres -run '^$' -bench CommitToPublish -benchtime 400x -count 5
func BenchmarkCommitToPublish(b *testing.B) {
	db := railtest.NewDB(b)
	s := newSink()
	r := &rail.Relay{Outbox: postgres.NewOutbox(db.Pool), Publisher: s}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.Run(ctx, time.Hour, 0) // default poll
	}()
	firm := uuid.New()
	committed := make(map[uuid.UUID]time.Time, b.N)
	b.ResetTimer()
	for range b.N {
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		id, err := postgres.RecordFact(ctx, tx, rail.Fact{FirmID: firm, Name: rail.FactDocumentUploaded,
			Payload: map[string]string{"document_id": uuid.NewString()}})
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		committed[id] = time.Now()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.at)
		s.mu.Unlock()
		if n >= b.N || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	cancel()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	lat := make([]float64, 0, b.N)
	for id, c := range committed {
		p, ok := s.at[id]
		if !ok {
			b.Fatalf("fact %s never published", id)
		}
		lat = append(lat, float64(p.Sub(c).Microseconds())/1000)
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
	b.ReportMetric(lat[len(lat)-1], "max-ms")
}
