package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/proc"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// lockedBuffer is the progress output, read by the test while the rail
// writes it (the package's tests use this name for proc.Buffer).
type lockedBuffer = proc.Buffer

// One trace id from the upload to the frame.built fact, on the local rail
// (the in-process bus and queues wired from template.yaml, and the Lambdas'
// own trigger and builder handlers): the upload's request carries an X-Ray
// header; the document.uploaded outbox row stores it; the relay puts it on
// the bus; the rule delivers it to the trigger queue as AWSTraceHeader; the
// trigger's nudge carries it on the build queue; the builder commits the
// frame.built outbox row with it. Each hop only hands on what it received
// (tracing is off here, so nothing mints a new trace): if any hop drops the
// header, the frame.built row's trace id is empty and the test fails.
func TestTraceContinuesFromUploadToFrameBuilt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := railtest.NewDB(t)
	out := &lockedBuffer{}
	p := newProgress(out, slog.LevelInfo)
	if err := migrateURL(ctx, db.URL, p); err != nil {
		t.Fatal(err)
	}
	// No sweeper during the test: its re-nudges start no trace of their
	// own, and the build must be the one the upload's nudge caused.
	o := railOptions{settle: 200 * time.Millisecond, lease: 10 * time.Second, sweepEvery: time.Hour, sweepGrace: time.Hour,
		scale: 0.01, builder: "extractive", transport: "local"}
	r, err := startRail(ctx, db.URL, o, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(ctx, r.pool, ref, sampleTitle); err != nil {
		t.Fatal(err)
	}
	const incoming = "Root=1-6968b3d8-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"
	want := tracing.TraceID(incoming)
	dir := t.TempDir()
	var paths []string
	for _, f := range samples.PDFs() {
		if f.Name == samples.ComplaintName {
			paths = append(paths, writeFile(t, dir, filepath.Base(f.Name), f.Data))
		}
	}
	// The host application's request context, as Lambda hands it over.
	if _, err := record.Upload(tracing.ContextWithHeader(ctx, incoming), r.pool, ref, paths, pdftext.Limits{}); err != nil {
		t.Fatal(err)
	}

	traceOf := func(event string) (string, bool) {
		var th string
		err := r.pool.QueryRow(ctx, `SELECT trace_header FROM ops.domain_event_outbox
            WHERE firm_id = $1 AND matter_id = $2 AND event_name = $3 ORDER BY occurred_at LIMIT 1`,
			ref.FirmID, ref.MatterID, event).Scan(&th)
		return th, err == nil
	}
	// Polling for the rail's progress, not timing it.
	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var built string
	if err := proc.WaitFor(wait, 50*time.Millisecond, nil, func() (ok bool) {
		built, ok = traceOf(rail.FactFrameBuilt)
		return ok
	}); err != nil {
		t.Fatalf("no frame.built within 60s:\n%s", out)
	}
	uploaded, _ := traceOf(rail.FactDocumentUploaded)
	progress := out.String()
	hops := []struct {
		hop string
		got string
	}{
		{"upload -> document.uploaded outbox row", tracing.TraceID(uploaded)},
		{"relay -> bus -> trigger queue", traceOn(progress, "document.uploaded published")},
		{"trigger -> nudge on the build queue", traceOn(progress, "-> build queue: matter "+ref.MatterID.String()[:8]+" reason=demand")},
		{"builder -> frame.built outbox row", tracing.TraceID(built)},
	}
	for _, h := range hops {
		if h.got != want {
			t.Errorf("%s: trace id %q, want %q", h.hop, h.got, want)
		}
	}
	if t.Failed() {
		t.Logf("progress:\n%s", progress)
	}
}

// traceOn returns the trace id on the first progress line containing
// marker.
func traceOn(progress, marker string) string {
	for line := range strings.Lines(progress) {
		if !strings.Contains(line, marker) {
			continue
		}
		_, id, ok := strings.Cut(line, " trace=")
		if !ok {
			return ""
		}
		return strings.Fields(id)[0]
	}
	return ""
}
