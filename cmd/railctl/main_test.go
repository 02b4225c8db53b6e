package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func TestMain(m *testing.M) { railtest.Main(m) }

type cli struct {
	t            *testing.T
	url          string
	env          map[string]string // over the process environment; "" unsets
	beforeCommit func(context.Context, rail.Claim)
}

func (c cli) run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	getenv := func(k string) string {
		if v, ok := c.env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	g := &globals{stdout: &o, stderr: &e, getenv: getenv, beforeCommit: c.beforeCommit}
	code = runGlobals(context.Background(), g, append([]string{"--database-url", c.url}, args...))
	return code, o.String(), e.String()
}

// withEnv returns the same CLI run with env over the process environment.
func (c cli) withEnv(env map[string]string) cli {
	c.env = env
	return c
}

func (c cli) must(args ...string) string {
	c.t.Helper()
	code, out, errOut := c.run(args...)
	if code != 0 {
		c.t.Fatalf("railctl %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out
}

func newCLI(t *testing.T) (cli, string, string) {
	t.Parallel()
	db := railtest.NewDB(t)
	c := cli{t: t, url: db.URL}
	firm, matter := uuid.NewString(), uuid.NewString()
	c.must("migrate")
	c.must("matter", "add", "--firm", firm, "--matter", matter, "--title", "Harlow v. Penmark")
	return c, firm, matter
}

func TestBuildExitCodes(t *testing.T) {
	c, firm, matter := newCLI(t)
	text := filepath.Join(t.TempDir(), "complaint.txt")
	if err := os.WriteFile(text, []byte("page one\fpage two"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := c.must("doc", "add", "--firm", firm, "--matter", matter, "--name", "complaint.txt", "--text-file", text)
	if !strings.Contains(out, "2 pages") {
		t.Fatalf("doc add: %s", out)
	}
	if code, _, _ := c.run("build", "--firm", firm, "--matter", matter); code != exitNothing {
		t.Fatalf("build with no demand: exit %d, want %d", code, exitNothing)
	}
	c.must("demand", "--firm", firm, "--matter", matter)
	if out := c.must("build", "--firm", firm, "--matter", matter); !strings.Contains(out, "landed: token 1") {
		t.Fatalf("build: %s", out)
	}
	if code, _, _ := c.run("build", "--firm", firm, "--matter", matter); code != exitNothing {
		t.Fatalf("build after the demand was served: exit %d, want %d", code, exitNothing)
	}

	if out := c.must("status", "--firm", firm, "--matter", matter); !strings.Contains(out, "current") ||
		!strings.Contains(out, "last runs") || !strings.Contains(out, "landed") {
		t.Fatalf("status lacks currency or the last runs:\n%s", out)
	}
	if os.Getenv("RAIL_BEDROCK_MODEL_ID") == "" {
		if code, _, errOut := c.run("build", "--firm", firm, "--matter", matter, "--builder", "bedrock"); code != exitUsage ||
			!strings.Contains(errOut, "RAIL_BEDROCK_MODEL_ID") {
			t.Fatalf("bedrock without a model id: exit %d %q", code, errOut)
		}
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(c.must("status", "--firm", firm, "--matter", matter, "--json")), &row); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requested_generation", "claimed_generation", "target_generation", "built_generation",
		"run_status", "claimed_at", "attempts", "rebuild_needed"} {
		if _, ok := row[k]; !ok {
			t.Errorf("status --json lacks %q", k)
		}
	}
	if row["built_generation"].(float64) != 1 || row["current"] != true {
		t.Fatalf("status after build: %v", row)
	}

	// A stalled worker is fenced: it stalls past its lease (no heartbeats),
	// another worker reclaims and lands, then the staller's commit is
	// refused. The stall ends on that condition, not after a time, and the
	// lease passes by time travel on the row: nothing here depends on how
	// fast the machine is.
	c.must("demand", "--firm", firm, "--matter", matter)
	zombie := c
	stalled, release := make(chan struct{}), make(chan struct{})
	zombie.beforeCommit = func(ctx context.Context, _ rail.Claim) {
		close(stalled)
		<-release
	}
	var wg sync.WaitGroup
	var stalledCode int
	var stalledOut string
	wg.Add(1)
	go func() {
		defer wg.Done()
		stalledCode, stalledOut, _ = zombie.run("build", "--firm", firm, "--matter", matter, "--worker", "zombie")
	}()
	select {
	case <-stalled:
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("the zombie never reached its commit")
	}
	if code, out, _ := c.run("build", "--firm", firm, "--matter", matter, "--worker", "fresh"); code != exitNothing {
		close(release)
		t.Fatalf("a second worker took over a live lease: exit %d: %s", code, out)
	}
	expireLease(t, c.url, matter)
	if code, out, errOut := c.run("build", "--firm", firm, "--matter", matter, "--worker", "fresh"); code != 0 {
		close(release)
		t.Fatalf("reclaim after the lease expired: exit %d: %s %s", code, out, errOut)
	}
	close(release)
	wg.Wait()
	if stalledCode != exitFenced {
		t.Fatalf("stalled build: exit %d (%s), want %d", stalledCode, stalledOut, exitFenced)
	}
	out = c.must("runs", "--firm", firm, "--matter", matter)
	for _, want := range []string{"fenced", "landed", "zombie", "fresh"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs output lacks %q:\n%s", want, out)
		}
	}
}

func TestBadInput(t *testing.T) {
	c, firm, matter := newCLI(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"demand", "--firm", "not-a-uuid", "--matter", matter}, exitUsage, "not a uuid"},
		{[]string{"demand", "--firm", firm}, exitUsage, "required"},
		{[]string{"demand", "--firm", firm, "--matter", uuid.NewString()}, exitError, "unknown matter"},
		{[]string{"demand", "--firm", uuid.NewString(), "--matter", matter}, exitError, "another firm"},
		{[]string{"build", "--firm", firm, "--matter", uuid.NewString()}, exitError, "unknown matter"},
		{[]string{"status", "--firm", firm, "--matter", uuid.NewString()}, exitError, "unknown matter"},
		{[]string{"regenerate", "--firm", firm, "--matter", uuid.NewString()}, exitError, "unknown matter"},
		{[]string{"regenerate", "--firm", uuid.NewString(), "--matter", matter}, exitError, "another firm"},
		{[]string{"release", "--firm", firm, "--matter", uuid.NewString()}, exitError, "unknown matter"},
		{[]string{"runs", "--firm", firm, "--matter", matter, "extra"}, exitUsage, "unexpected arguments: extra"},
		{[]string{"sweep", "--firm", firm}, exitUsage, "flag provided but not defined: -firm"},
		{[]string{"doc", "add", "--firm", firm, "--matter", matter, "--name", "x", "--text-file", "/nonexistent"}, exitError, "read text file"},
		{[]string{"frobnicate"}, exitUsage, "unknown command"},
	}
	for _, tc := range cases {
		code, _, errOut := c.run(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("railctl %v: exit %d stderr %q; want exit %d containing %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
	// Closed matter: the demand is recorded and held (what the trigger does
	// with a fact for a closed matter), not refused.
	c.must("matter", "close", "--firm", firm, "--matter", matter)
	if out := c.must("demand", "--firm", firm, "--matter", matter); !strings.Contains(out, "held: the matter is closed") {
		t.Fatalf("demand on a closed matter: %q; want it recorded and held", out)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(c.must("status", "--firm", firm, "--matter", matter, "--json")), &row); err != nil {
		t.Fatal(err)
	}
	if row["requested_generation"].(float64) != 1 || row["held_demands"].(float64) != 1 {
		t.Fatalf("a closed matter's demand was not held: %v", row)
	}
	if code, _, _ := c.run("--database-url", "", "status", "--firm", firm, "--matter", matter); code != exitUsage {
		t.Fatalf("no database: exit %d, want %d", code, exitUsage)
	}
}

// status and sweep say what a closed matter's demand is: held until the
// matter is re-opened, not unserved.
func TestStatusOfAClosedMatter(t *testing.T) {
	c, firm, matter := newCLI(t)
	c.must("demand", "--firm", firm, "--matter", matter)
	c.must("demand", "--firm", firm, "--matter", matter)
	c.must("matter", "close", "--firm", firm, "--matter", matter)
	out := c.must("status", "--firm", firm, "--matter", matter)
	for _, want := range []string{"2 demand(s) held until re-opened", "held: the matter is closed"} {
		if !strings.Contains(out, want) {
			t.Errorf("status of a closed matter lacks %q:\n%s", want, out)
		}
	}
	if out := c.must("sweep"); !strings.Contains(out, "matters behind: 0") || !strings.Contains(out, "closed with demand held: 1") {
		t.Errorf("sweep with a closed matter:\n%s", out)
	}
	c.must("matter", "open", "--firm", firm, "--matter", matter)
	out = c.must("status", "--firm", firm, "--matter", matter)
	if strings.Contains(out, "held") || !strings.Contains(out, "oldest unserved demand") {
		t.Errorf("status after re-opening:\n%s", out)
	}
}

// expireLease moves a running row's lease start back an hour, as if its
// worker had been silent that long (the ledger only ever writes claimed_at
// from the database clock).
func expireLease(t *testing.T, url, matter string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(context.Background(), `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
        WHERE matter_id = $1 AND run_status = 'running'`, matter)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("expire lease: %v (rows %d)", err, tag.RowsAffected())
	}
}
