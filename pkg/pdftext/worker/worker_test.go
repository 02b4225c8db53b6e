package worker_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
	"github.com/pramaan/brief-rail/pkg/pdftext/worker"
)

// A worker returns what the extraction in this process returns: the same
// pages, or the same typed errors.
func TestWorkerMatchesInProcess(t *testing.T) {
	p := &worker.Pool{}
	defer p.Close()
	filing := pdftexttest.Pages(3, pdftexttest.FilingPage)
	want, err := pdftext.Extract(filing)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Extract(context.Background(), filing, pdftext.Limits{})
	if err != nil {
		t.Fatalf("worker: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("worker's document differs: %d pages vs %d", len(got.Pages), len(want.Pages))
	}
	_, err = p.Extract(context.Background(), pdftexttest.HTML(), pdftext.Limits{})
	if !errors.Is(err, pdftext.ErrNotPDF) {
		t.Fatalf("html: err = %v, want ErrNotPDF", err)
	}
	_, err = p.Extract(context.Background(), pdftexttest.Bomb(16<<20), pdftext.Limits{Decoded: 1 << 20})
	var le *pdftext.LimitError
	if !errors.As(err, &le) || le.Limit != pdftext.LimitDecoded || !errors.Is(err, pdftext.ErrTooLarge) {
		t.Fatalf("bomb: err = %v, want LimitError decoded", err)
	}
}

// A worker that runs out of memory under its limit dies; the call gets a
// KilledError and the next call, on a fresh worker, extracts normally.
func TestWorkerDiesAlone(t *testing.T) {
	p := &worker.Pool{Memory: 24 << 20}
	defer p.Close()
	// An xref subsection at the highest object number the parser keeps:
	// its table is one 64 MiB allocation (within the parser's bounds, past
	// this worker's 24 MiB).
	heavy := bytes.Replace(pdftexttest.XrefSubsection(), []byte("9000000000 3"), []byte("2097148 3"), 1)
	_, err := p.Extract(context.Background(), heavy, pdftext.Limits{})
	var ke *worker.KilledError
	if !errors.As(err, &ke) || ke.Reason != "died" || !errors.Is(err, worker.ErrKilled) {
		t.Fatalf("err = %v, want a KilledError (died)", err)
	}
	t.Logf("killed: %v", err)
	p.Memory = 0
	doc, err := p.Extract(context.Background(), pdftexttest.ManyPages(2), pdftext.Limits{})
	if err != nil || len(doc.Pages) != 2 {
		t.Fatalf("after a dead worker: %v, %d pages", err, len(doc.Pages))
	}
}

// A worker past its deadline is killed, and so is one whose caller gives
// up; the call returns at once with a KilledError.
func TestWorkerKilled(t *testing.T) {
	long := pdftexttest.TJArray(120_000_000) // seconds of parsing
	p := &worker.Pool{Grace: time.Millisecond}
	defer p.Close()
	start := time.Now()
	_, err := p.Extract(context.Background(), long, pdftext.Limits{Time: time.Millisecond})
	var ke *worker.KilledError
	if !errors.As(err, &ke) || ke.Reason != "deadline" {
		t.Fatalf("err = %v, want a KilledError (deadline)", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("deadline kill took %v", d)
	}

	p = &worker.Pool{}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	_, err = p.Extract(ctx, long, pdftext.Limits{})
	if !errors.As(err, &ke) || ke.Reason != "canceled" || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a KilledError (canceled)", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

