// Package ci says whether the tests run in continuous integration, where a
// test that cannot run because a tool is missing (moto_server, the
// PostgreSQL binaries) must fail rather than skip: a skipped test proves
// nothing, and CI must not report green for tests it never ran. .ci/run
// exports CI=true.
package ci

import (
	"os"
	"strings"
	"testing"
)

// Enabled reports whether CI is set to anything but "", "0" or "false".
func Enabled() bool { return enabled(os.Getenv("CI")) }

func enabled(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// MissingTool skips t on a developer's machine and fails it in CI. why
// names the tool and how to install it.
func MissingTool(t testing.TB, why string) {
	t.Helper()
	missingTool(t, Enabled(), why)
}

func missingTool(t testing.TB, inCI bool, why string) {
	t.Helper()
	if inCI {
		t.Fatalf("%s (CI is set: a test that cannot run fails)", why)
		return
	}
	t.Skipf("%s (set CI=true to make this a failure)", why)
}
