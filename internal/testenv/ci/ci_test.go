package ci

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that records instead of stopping the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }

func TestMissingToolFailsInCI(t *testing.T) {
	r := &recorder{TB: t}
	missingTool(r, true, "moto_server is not installed")
	if r.failed == "" || r.skipped != "" {
		t.Fatalf("in CI: failed %q skipped %q; want a failure", r.failed, r.skipped)
	}
	r = &recorder{TB: t}
	missingTool(r, false, "moto_server is not installed")
	if r.skipped == "" || r.failed != "" {
		t.Fatalf("locally: failed %q skipped %q; want a skip", r.failed, r.skipped)
	}
}

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, "no": false,
		"true": true, "1": true, "yes": true, "github-actions": true} {
		if got := enabled(v); got != want {
			t.Errorf("CI=%q: enabled %v, want %v", v, got, want)
		}
	}
}
