package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mapDocs are the pages that name the repository's files and packages as
// a map for newcomers; each path they name must exist.
var mapDocs = []string{"docs/ARCHITECTURE.md"}

// repoPath matches a path inside the repository as the pages write it:
// from a top-level directory on, with globs (*) and brace lists
// ({sim,modelcheck}) allowed.
// A path relative to another directory (./cmd/x after a cd) is not one.
var repoPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:pkg|cmd|internal|functions|sql|docs|bench|mk|events|scripts)/[A-Za-z0-9_./{},*-]*)`)

// placeholders are path shapes a page uses for a family of files.
var placeholders = regexp.MustCompile(`NNN|<[a-z]+>`)

// expandBraces expands the first {a,b} list of p, recursively.
func expandBraces(p string) []string {
	i := strings.Index(p, "{")
	j := strings.Index(p, "}")
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

// docPaths returns the repository paths a page names, with their lines.
func docPaths(text string) map[string]int {
	found := map[string]int{}
	for n, line := range strings.Split(text, "\n") {
		for _, sub := range repoPath.FindAllStringSubmatch(line, -1) {
			m := strings.TrimRight(sub[1], ".,")
			if placeholders.MatchString(m) {
				continue
			}
			for _, p := range expandBraces(m) {
				if _, seen := found[p]; !seen {
					found[p] = n + 1
				}
			}
		}
	}
	return found
}

// TestArchitectureNamesOnlyPathsThatExist: every repository path
// docs/ARCHITECTURE.md names (a package, a file, a glob of files) exists,
// so the map cannot drift from the tree when code or tests move.
func TestArchitectureNamesOnlyPathsThatExist(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range mapDocs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		paths := docPaths(string(b))
		if len(paths) < 50 {
			t.Fatalf("%s: found only %d paths; is the pattern still matching the page?", doc, len(paths))
		}
		for p, line := range paths {
			matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil || len(matches) == 0 {
				t.Errorf("%s:%d names %s, which does not exist", doc, line, p)
			}
		}
	}
}

// The path finder itself: braces, globs, trailing punctuation and
// placeholders, and a path that does not exist is caught.
func TestDocPathsFinder(t *testing.T) {
	got := docPaths("see `internal/verify/{sim,modelcheck}` and pkg/postgres/*_test.go, then sql/migrations/NNN_name.sql.\n" +
		"`functions/<fn>/main.go`; pkg/rail/sweep.go. `cd bench && go run ./cmd/rulecost`")
	for _, want := range []string{"internal/verify/sim", "internal/verify/modelcheck", "pkg/postgres/*_test.go", "pkg/rail/sweep.go"} {
		if _, ok := got[want]; !ok {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	for p := range got {
		if strings.Contains(p, "NNN") || strings.Contains(p, "<") || strings.HasSuffix(p, ".") || p == "cmd/rulecost" {
			t.Errorf("unexpected %q", p)
		}
	}
	root, _ := moduleRoot()
	if m, _ := filepath.Glob(filepath.Join(root, "pkg/rail/sweep.go")); len(m) != 0 {
		t.Fatal("pkg/rail/sweep.go exists: pick another missing path for this control")
	}
}
