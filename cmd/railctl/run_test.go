package main

import (
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
)

// TestRunQuickstart plays `railctl run` end to end on a test database: the
// three sample PDFs go through the outbox, the in-process bus and queues,
// the trigger and the builder, and the printed Brief lists all three. A
// second run on the same database finishes too (regeneration, fingerprint
// skip: no model call).
func TestRunQuickstart(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	c := cli{t: t, url: db.URL}
	for i, wantModel := range []string{"model invoked: yes", "model invoked: no"} {
		code, out, errOut := c.run("run", "--timeout", "40s", "--settle", "300ms")
		if code != exitOK {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", i+1, code, out, errOut)
		}
		_, briefOut, ok := strings.Cut(out, "BRIEF  ")
		if !ok {
			t.Fatalf("run %d printed no Brief:\n%s", i+1, out)
		}
		for _, want := range []string{"status CURRENT", "DOCUMENTS (3)", wantModel, "JOB ROW", "RUNS",
			"1. " + samples.AnswerName, "2. " + samples.ComplaintName, "3. " + samples.ExhibitAName} {
			if !strings.Contains(briefOut, want) {
				t.Errorf("run %d: output lacks %q:\n%s", i+1, want, briefOut)
			}
		}
		if !strings.Contains(out, "document.uploaded published -> TriggerRule") && i == 0 {
			t.Errorf("run 1 did not route the uploads through the bus:\n%s", out)
		}
	}
}
