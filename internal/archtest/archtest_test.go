// Package archtest holds the tests that keep the house in shape: import
// arrows point inward (docs/ARCHITECTURE.md, "Package map"), the protocol
// imports no AWS module and no project package, and verification tools stay
// out of the product.
package archtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pramaan/brief-rail/pkg/postgres"
)

const module = "github.com/pramaan/brief-rail"

// Rings, inner to outer (docs/ARCHITECTURE.md, section 2). A package may
// import project packages of a lower ring only. The longest matching
// prefix decides a package's ring.
var rings = []struct {
	prefix string
	ring   int
}{
	{"pkg/rail", 0},

	{"pkg/brief", 1}, // the Brief: schema, builders' rules, prompt, citation check; no AWS (its Bedrock room is pkg/aws/bedrock)
	{"pkg/brief/samples", 1},
	{"pkg/pdftext", 1},
	{"pkg/doctext", 1},
	{"pkg/emf", 1},
	{"pkg/samtemplate", 1},
	{"pkg/childproc", 1}, // a child process in its own group (make run's PostgreSQL, the test servers)
	{"sql", 1},

	// Adapters: one package per outside dependency.
	{"pkg/pgconn", 2},
	{"pkg/postgres", 2}, // docs/ARCHITECTURE.md, section 11
	{"pkg/aws", 2},
	{"pkg/localbus", 2},
	{"pkg/tracing", 2},
	{"pkg/localdb", 2},        // the PostgreSQL server make run starts (and the tests, through internal/testenv/localpg)
	{"pkg/pdftext/worker", 2}, // extraction in a child process (the OS's memory limit and kill), over pkg/pdftext

	// Use-cases over the adapters: Lambda-shaped handlers, the host
	// application's record.
	{"pkg/lambdafn", 3},
	{"pkg/record", 3},

	{"pkg/app", 4}, // the composition root

	{"functions", 5},
	{"cmd", 5},
}

// beside are the verification tools and test servers: never imported by
// the product, except where allowed below.
var beside = []string{
	"internal/verify", "internal/testenv", "internal/archtest",
}

// allowed are the edges that break the ring rule on purpose, each with its
// reason. An entry here is a decision, not a debt.
var allowed = map[[2]string]string{
	// The Brief reads page text as doctext cleans it. doctext is a leaf
	// (no project import) used by the Brief alone; both stay on ring 1,
	// below pkg/aws/bedrock, which imports the Brief.
	{"pkg/brief", "pkg/doctext"}: "the Brief's text cleaning, a leaf on its ring",
}

func ringOf(rel string) (int, bool) {
	best, ring := "", -1
	for _, r := range rings {
		if (rel == r.prefix || strings.HasPrefix(rel, r.prefix+"/")) && len(r.prefix) > len(best) {
			best, ring = r.prefix, r.ring
		}
	}
	return ring, ring >= 0
}

func isBeside(rel string) bool {
	for _, b := range beside {
		if rel == b || strings.HasPrefix(rel, b+"/") {
			return true
		}
	}
	return false
}

type pkg struct {
	rel     string   // path inside the module
	imports []string // direct imports, full paths
	deps    []string // transitive dependencies, full paths
}

var (
	listOnce sync.Once
	listed   []pkg
	listErr  string
)

// list runs `go list -deps` over the module's packages once (tests
// excluded: they may import anything).
func list(t *testing.T) []pkg {
	t.Helper()
	listOnce.Do(func() { listed, listErr = goList() })
	if listErr != "" {
		t.Fatal(listErr)
	}
	return listed
}

func goList() ([]pkg, string) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err.Error()
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Sprintf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || !strings.HasPrefix(f[0], module) {
			continue
		}
		pkgs = append(pkgs, pkg{rel: strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/"),
			imports: strings.Fields(f[1]), deps: strings.Fields(f[2])})
	}
	if len(pkgs) < 10 {
		return nil, fmt.Sprintf("go list found %d packages; is the test running inside the module?", len(pkgs))
	}
	return pkgs, ""
}

func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above " + wd)
		}
	}
}

func project(imp string) (string, bool) {
	if imp == module {
		return "", true
	}
	if strings.HasPrefix(imp, module+"/") {
		return strings.TrimPrefix(imp, module+"/"), true
	}
	return "", false
}

// TestImportsPointInward: every project import goes to a lower ring; no
// product package imports a verification tool or test server; every
// package has a ring (a new package must be placed on the map).
func TestImportsPointInward(t *testing.T) {
	for _, p := range list(t) {
		if isBeside(p.rel) {
			continue
		}
		from, ok := ringOf(p.rel)
		if !ok {
			t.Errorf("%s is on no ring: add it to docs/ARCHITECTURE.md's map and to rings here", p.rel)
			continue
		}
		for _, imp := range p.imports {
			rel, ok := project(imp)
			if !ok {
				continue
			}
			if _, ok := allowed[[2]string{p.rel, rel}]; ok {
				continue
			}
			if isBeside(rel) {
				t.Errorf("%s (ring %d) imports %s, a verification tool or test server", p.rel, from, rel)
				continue
			}
			to, ok := ringOf(rel)
			if ok && to >= from {
				t.Errorf("%s (ring %d) imports %s (ring %d): arrows must point inward", p.rel, from, rel, to)
			}
		}
	}
}

// TestCommandsImportNoTestEnvironment: the commands are product (`make
// run` is railctl): nothing under cmd/ or functions/ depends, even
// transitively, on a test server harness (internal/testenv). The server
// `make run` starts is pkg/localdb's, which the tests reuse, not the
// other way round.
func TestCommandsImportNoTestEnvironment(t *testing.T) {
	seen := 0
	for _, p := range list(t) {
		if !strings.HasPrefix(p.rel, "cmd/") && !strings.HasPrefix(p.rel, "functions/") {
			continue
		}
		seen++
		for _, d := range p.deps {
			if rel, ok := project(d); ok && (rel == "internal/testenv" || strings.HasPrefix(rel, "internal/testenv/")) {
				t.Errorf("%s depends on %s: product code uses pkg/localdb and pkg/childproc, never a test harness", p.rel, rel)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no package under cmd/ or functions/ found")
	}
}

// TestProtocolIsTheCentre: the protocol package depends on no project
// package and, transitively, on no AWS module and no database driver
// (github.com/jackc/...: its statements live in pkg/postgres, behind the
// ports of pkg/rail/ports.go).
func TestProtocolIsTheCentre(t *testing.T) {
	found := false
	for _, p := range list(t) {
		if p.rel != "pkg/rail" {
			continue
		}
		found = true
		for _, d := range p.deps {
			if _, ok := project(d); ok {
				t.Errorf("pkg/rail depends on %s: the protocol imports no project package", d)
			}
			if strings.HasPrefix(d, "github.com/aws/") {
				t.Errorf("pkg/rail depends on %s: the protocol imports no AWS module", d)
			}
			if strings.HasPrefix(d, "github.com/jackc/") {
				t.Errorf("pkg/rail depends on %s: the protocol imports no database driver (its SQL lives in pkg/postgres)", d)
			}
		}
	}
	if !found {
		t.Fatal("pkg/rail not found")
	}
}

// awsFree are the inner packages that depend, even transitively, on no AWS
// module: the protocol and the Brief (whose Bedrock builder lives in its
// own room, pkg/aws/bedrock).
var awsFree = []string{"pkg/rail", "pkg/brief"}

// TestInnerPackagesImportNoAWS: the protocol and the Brief depend on no
// AWS module, directly or through another package.
func TestInnerPackagesImportNoAWS(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range list(t) {
		if !slices.Contains(awsFree, p.rel) {
			continue
		}
		seen[p.rel] = true
		for _, d := range p.deps {
			if strings.HasPrefix(d, "github.com/aws/") {
				t.Errorf("%s depends on %s: it imports no AWS module", p.rel, d)
			}
		}
	}
	for _, rel := range awsFree {
		if !seen[rel] {
			t.Errorf("%s not found", rel)
		}
	}
}

// TestProductImportsNoVerificationTool: no package outside internal/
// depends, even transitively, on the simulation or the model checker.
func TestProductImportsNoVerificationTool(t *testing.T) {
	for _, p := range list(t) {
		if isBeside(p.rel) {
			continue
		}
		for _, d := range p.deps {
			rel, ok := project(d)
			if !ok {
				continue
			}
			if slices.ContainsFunc([]string{"internal/verify"}, func(v string) bool {
				return rel == v || strings.HasPrefix(rel, v+"/")
			}) {
				t.Errorf("%s depends on %s", p.rel, rel)
			}
		}
	}
}

// rulesFile is where the ledger's rules are written (docs/ARCHITECTURE.md,
// "Each rule once").
const rulesFile = "pkg/postgres/rules.go"

// restatedOnPurpose are the files that restate a rule deliberately, each
// with its reason.
var restatedOnPurpose = map[string]string{
	"pkg/postgres/seed_test.go":       "it replays the seed design's own statements (on its own table) as a negative control",
	"internal/verify/sim/sim_test.go": "its negative controls swap in broken claims and gauges",
	"sql/migrations/001_ledger.sql":   "an applied migration (its sweep index was dropped by 004); never rewritten",
	"bench/cmd/rulecost/main.go":      "the experiment that compared SQL functions with these rules restates both",
	// The batch claim's function holds the statement pkg/postgres composes
	// from the rules, rendered: the Go text stays the definition, and
	// TestClaimFunctionRunsTheClaimStatement fails when the two differ.
	"sql/migrations/025_claim_matters_function.sql": "the batch claim rendered from rules.go word for word (bound by TestClaimFunctionRunsTheClaimStatement)",
	// The promise oracle reads the ledger in its own words, so a rule
	// broken in rules.go is not also broken in the check of it.
	"internal/verify/promise/check.go": "the oracle's independent reading of an outdated matter (VOutdatedLeft)",
	"internal/verify/promise/hops.go":  "the oracle's independent reading of a last attempt (the scenario of defect 6)",
}

// TestRulesDefinedOnce: each of the ledger's rules is written in the
// ledger's rules file only (docs/ARCHITECTURE.md, "Each rule once"); every
// other .go and .sql file composes it from there. Comments are ignored.
func TestRulesDefinedOnce(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	rules := []struct {
		name string
		re   *regexp.Regexp
	}{
		{"the fence (token compare)", regexp.MustCompile(`claimed_generation\s*=\s*(\$\d+|[a-z_]+\.token\b)`)},
		{"unserved demand", regexp.MustCompile(`requested_generation\s*>\s*([a-z_]+\.)?built_generation`)},
		{"lease expiry", regexp.MustCompile(`(^|[^.a-z_]|\bj\.)claimed_at\s*<\s*(clock_timestamp|now)\(\)`)},
		{"the claim predicate (backoff)", regexp.MustCompile(`not_before\s*(<=|IS NULL OR)`)},
		{"attempts left", regexp.MustCompile(`attempts\s*(<|>=)\s*(coalesce|\$\d)`)},
		{"built by another identity", regexp.MustCompile(`prompt_hash\)\s*IS DISTINCT FROM`)},
	}
	// Each pattern matches the SQL its rule renders, so a pattern that
	// drifted from the definition (and would then catch no restatement)
	// fails here.
	rendered := strings.Join([]string{
		postgres.SQLClaimable("j", "$1", "$2"), // unserved demand, lease expiry, attempts left, backoff
		postgres.SQLHoldsToken("j", "$3"),
		postgres.SQLBuiltByOther("f", "$1", "$2", "$3", "$4"),
	}, "\n")
	for _, r := range rules {
		if !r.re.MatchString(rendered) {
			t.Errorf("the pattern for %s matches nothing %s renders; keep it in step with the definition", r.name, rulesFile)
		}
	}
	found := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, ".sql") {
			return nil
		}
		if rel == rulesFile {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			code := stripComment(line)
			for _, r := range rules {
				if r.re.MatchString(code) {
					where := fmt.Sprintf("%s:%d", rel, i+1)
					if why, ok := restatedOnPurpose[rel]; ok {
						t.Logf("%s restates %s on purpose: %s", where, r.name, why)
						continue
					}
					found[r.name] = append(found[r.name], where+": "+strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, where := range found {
		t.Errorf("%s is restated outside %s (compose the statement from the rule instead):\n  %s", name, rulesFile, strings.Join(where, "\n  "))
	}
}

// stripComment drops a Go // comment or an SQL -- comment from a line.
func stripComment(line string) string {
	for _, marker := range []string{"//", "--"} {
		if i := strings.Index(line, marker); i >= 0 && !strings.Contains(line[:i], "://") {
			line = line[:i]
		}
	}
	return line
}
