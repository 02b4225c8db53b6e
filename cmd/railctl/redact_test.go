package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
)

// No railctl output carries the database password: not the global flag's
// default in help or a usage error, not a connection error, not a
// command's own error, for a URL from $DATABASE_URL or from the flag, nor
// PGPASSWORD.
func TestNoPasswordInAnyOutput(t *testing.T) {
	const pw = "s3cr3t-Pa55word"
	urls := []string{
		"postgres://oncall:" + pw + "@127.0.0.1:1/brief?sslmode=disable&connect_timeout=1",
		"host=127.0.0.1 port=1 user=oncall password=" + pw + " dbname=brief connect_timeout=1",
	}
	for _, u := range urls {
		for _, viaFlag := range []bool{false, true} {
			for _, args := range [][]string{
				{"help"}, {}, {"--no-such-flag"}, {"no-such-command"},
				{"status", "--firm", "x"}, // a usage error of a command
				{"status", "--firm", "11111111-1111-4111-8111-111111111111", "--matter", "22222222-2222-4222-8222-222222222222"}, // cannot connect
				{"stale"},
			} {
				env := map[string]string{"DATABASE_URL": u, "PGPASSWORD": pw}
				a := args
				if viaFlag {
					env["DATABASE_URL"] = ""
					a = append([]string{"--database-url", u}, args...)
				}
				var o, e bytes.Buffer
				g := &globals{stdout: &o, stderr: &e, getenv: func(k string) string { return env[k] }}
				runGlobals(context.Background(), g, a)
				if out := o.String() + e.String(); strings.Contains(out, pw) {
					t.Errorf("railctl %q (url via flag %v) printed the password:\n%s", a, viaFlag, out)
				}
			}
		}
	}
}

// railctl emit cannot pair one firm with another firm's matter: the
// outbox's key to app.matters refuses the fact, and nothing is recorded.
func TestEmitRefusesAnotherFirmsMatter(t *testing.T) {
	c, _, matter := newCLI(t)
	other := "99999999-9999-4999-8999-999999999999"
	code, _, errOut := c.run("emit", "--firm", other, "--matter", matter, "--name", "brief.regeneration_requested")
	if code == exitOK {
		t.Fatalf("emit with firm B and firm A's matter succeeded")
	}
	if !strings.Contains(errOut, "foreign key") && !strings.Contains(errOut, "matter") {
		t.Errorf("emit's error does not say why: %s", errOut)
	}
	conn, err := pgx.Connect(context.Background(), c.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM ops.domain_event_outbox WHERE firm_id = $1`, other).Scan(&n); err != nil || n != 0 {
		t.Errorf("the refused fact is in the outbox: %d rows (%v)", n, err)
	}
	t.Logf("refused: %s", strings.TrimSpace(errOut))
}

// On-call runs railctl as brief_oncall (no DDL, no CREATEROLE): its read
// models and commands work under that role's grants.
func TestOnCallCommandsRunAsTheOnCallRole(t *testing.T) {
	t.Parallel()
	db := railtest.NewDB(t)
	owner := cli{t: t, url: db.URL}
	firm, matter := uuid.NewString(), uuid.NewString()
	owner.must("matter", "add", "--firm", firm, "--matter", matter, "--title", "Harlow v. Penmark")
	text := filepath.Join(t.TempDir(), "complaint.txt")
	if err := os.WriteFile(text, []byte("page one\fpage two"), 0o644); err != nil {
		t.Fatal(err)
	}
	owner.must("doc", "add", "--firm", firm, "--matter", matter, "--name", "complaint.txt", "--text-file", text)
	var exists bool
	if err := db.Pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = 'brief_oncall')`).Scan(&exists); err != nil || !exists {
		t.Skip("no brief_oncall role (no bootstrap on this server)")
	}
	oc := cli{t: t, url: db.RoleURL("brief_oncall")}
	m := []string{"--firm", firm, "--matter", matter}
	for _, args := range [][]string{
		append([]string{"regenerate"}, m...),
		append([]string{"demand"}, m...),
		append([]string{"status"}, m...),
		append([]string{"runs"}, m...),
		append([]string{"why"}, m...),
		{"stale"},
		{"outbox", "parked"},
		{"backfill", "status"},
		{"backfill", "pause"},
		{"backfill", "resume"},
	} {
		if code, out, errOut := oc.run(args...); code != exitOK && code != exitNothing {
			t.Errorf("railctl %v as brief_oncall: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	if _, err := db.Pool.Exec(context.Background(), `UPDATE ops.matter_frame_jobs SET run_status = 'quarantined'
        WHERE matter_id = $1`, matter); err != nil {
		t.Fatal(err)
	}
	oc.must(append([]string{"release"}, m...)...)
}
