package railsql

import (
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// firstCheckedMigration is where the index rules below begin: 001-003 create
// their tables (an index on a table created in the same file locks nobody)
// and 004 documents its one blocking DROP INDEX.
const firstCheckedMigration = 5

var (
	indexStmt    = regexp.MustCompile(`(?i)\b(CREATE|DROP)\s+(UNIQUE\s+)?INDEX\b(\s+CONCURRENTLY)?[^;]*?\bON\s+([a-z_]+\.[a-z_]+)|(?i)\bDROP\s+INDEX\b(\s+CONCURRENTLY)?`)
	rollBack     = regexp.MustCompile(`(?i)--\s*roll\s?back`)
	createdTable = regexp.MustCompile(`(?i)\bCREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?([a-z_]+\.[a-z_]+)`)
	// CREATE INDEX CONCURRENTLY IF NOT EXISTS name, and DROP INDEX
	// CONCURRENTLY IF EXISTS [schema.]name.
	createIfNotExists = regexp.MustCompile(`(?i)\bCREATE\s+(UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+([a-z_][a-z0-9_]*)`)
	dropIfExists      = regexp.MustCompile(`(?i)\bDROP\s+INDEX\s+CONCURRENTLY\s+IF\s+EXISTS\s+(?:[a-z_]+\.)?([a-z_][a-z0-9_]*)`)
)

// ifNotExistsAllowed are the shipped migrations that break the
// IF-NOT-EXISTS rule, each with the reason it stays (migrations are
// append-only: a shipped file is never edited).
var ifNotExistsAllowed = map[string]string{
	"011_outbox_matter_index.sql": "shipped before the rule; the migration that repairs the outbox matter " +
		"index rebuilds it under a new name and drops this one, so an INVALID index it left is gone",
}

// TestMigrationsADBAWouldAccept: every migration says how to roll it back,
// and from 005 on an index change on an existing table is made without a
// blocking lock: CONCURRENTLY, in a file tern runs outside a transaction
// (its `---- tern: disable-tx ----` header).
func TestMigrationsADBAWouldAccept(t *testing.T) {
	names, err := fs.Glob(Migrations(), "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	for _, name := range names {
		b, err := fs.ReadFile(Migrations(), name)
		if err != nil {
			t.Fatal(err)
		}
		problems := migrationProblems(name, string(b))
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
	}
}

// migrationProblems lists what a DBA would refuse in one migration file.
func migrationProblems(name, sql string) []string {
	var out []string
	if !rollBack.MatchString(sql) {
		out = append(out, "no comment saying how to roll it back (\"-- Roll back: ...\")")
	}
	n, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
	if err != nil {
		return append(out, "not named NNN_name.sql")
	}
	if n < firstCheckedMigration {
		return out
	}
	created := map[string]bool{}
	code := stripSQLComments(sql)
	for _, m := range createdTable.FindAllStringSubmatch(code, -1) {
		created[strings.ToLower(m[2])] = true
	}
	disableTx := strings.HasPrefix(sql, "---- tern: disable-tx ----")
	for _, m := range indexStmt.FindAllStringSubmatch(code, -1) {
		concurrent := m[3] != "" || m[5] != ""
		table := strings.ToLower(m[4])
		if table != "" && created[table] {
			continue // a table this file creates is empty and unseen
		}
		stmt := strings.Join(strings.Fields(m[0]), " ")
		if !concurrent {
			out = append(out, "index change without CONCURRENTLY blocks writers: "+stmt)
		} else if !disableTx {
			out = append(out, "CONCURRENTLY needs the file to start with ---- tern: disable-tx ----: "+stmt)
		}
	}
	// A concurrent build that fails leaves an INVALID index under its
	// name; IF NOT EXISTS then skips it on the rerun and the migration
	// records success with an index the planner never uses. The file must
	// drop the same index (DROP INDEX CONCURRENTLY IF EXISTS) before it.
	if _, ok := ifNotExistsAllowed[name]; !ok {
		for _, loc := range createIfNotExists.FindAllStringSubmatchIndex(code, -1) {
			index := strings.ToLower(code[loc[4]:loc[5]])
			dropped := false
			for _, d := range dropIfExists.FindAllStringSubmatch(code[:loc[0]], -1) {
				dropped = dropped || strings.ToLower(d[1]) == index
			}
			if !dropped {
				out = append(out, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+index+
					" without a DROP INDEX CONCURRENTLY IF EXISTS of it first: a failed build's INVALID index would be kept and the migration recorded as done")
			}
		}
	}
	return out
}

func stripSQLComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// The rules catch what they are for (negative controls).
func TestMigrationRulesCatchBlockingIndexChanges(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		want      string
	}{
		{"013_x.sql", "CREATE INDEX foo ON ops.matter_frame_jobs (claimed_at);\n-- Roll back: DROP INDEX ...", "without CONCURRENTLY"},
		{"013_x.sql", "DROP INDEX ops.foo;\n-- Roll back: ...", "without CONCURRENTLY"},
		{"013_x.sql", "CREATE INDEX CONCURRENTLY foo ON ops.matter_frames (built_at);\n-- Roll back: ...", "disable-tx"},
		{"013_x.sql", "---- tern: disable-tx ----\nCREATE INDEX CONCURRENTLY foo ON ops.matter_frames (built_at);", "roll it back"},
		// migration 011's shape, under another name: a failed build's INVALID index survives a rerun
		{"013_x.sql", "---- tern: disable-tx ----\nCREATE INDEX CONCURRENTLY IF NOT EXISTS foo_idx ON ops.domain_event_outbox (matter_id);\n-- Roll back: ...", "IF NOT EXISTS foo_idx without a DROP"},
		// a drop of another index does not count
		{"013_x.sql", "---- tern: disable-tx ----\nDROP INDEX CONCURRENTLY IF EXISTS ops.bar_idx;\nCREATE INDEX CONCURRENTLY IF NOT EXISTS foo_idx ON ops.domain_event_outbox (matter_id);\n-- Roll back: ...", "IF NOT EXISTS foo_idx without a DROP"},
		// nor a drop after the create
		{"013_x.sql", "---- tern: disable-tx ----\nCREATE INDEX CONCURRENTLY IF NOT EXISTS foo_idx ON ops.domain_event_outbox (matter_id);\nDROP INDEX CONCURRENTLY IF EXISTS ops.foo_idx;\n-- Roll back: ...", "IF NOT EXISTS foo_idx without a DROP"},
	} {
		got := strings.Join(migrationProblems(c.name, c.sql), "; ")
		if !strings.Contains(got, c.want) {
			t.Errorf("%q: problems %q, want one about %q", c.sql, got, c.want)
		}
	}
	ok := "---- tern: disable-tx ----\nCREATE INDEX CONCURRENTLY foo ON ops.matter_frames (built_at);\n-- Roll back: DROP INDEX CONCURRENTLY foo;"
	if p := migrationProblems("013_x.sql", ok); len(p) > 0 {
		t.Errorf("a good migration was refused: %v", p)
	}
	dropFirst := "---- tern: disable-tx ----\nDROP INDEX CONCURRENTLY IF EXISTS ops.foo_idx;\nCREATE INDEX CONCURRENTLY IF NOT EXISTS foo_idx ON ops.domain_event_outbox (matter_id);\n-- Roll back: DROP INDEX CONCURRENTLY foo_idx;"
	if p := migrationProblems("013_x.sql", dropFirst); len(p) > 0 {
		t.Errorf("IF NOT EXISTS after a drop of the same index was refused: %v", p)
	}
	// The shipped file the rule was written for is refused without its
	// allow-list entry.
	b, err := fs.ReadFile(Migrations(), "011_outbox_matter_index.sql")
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(migrationProblems("013_x.sql", string(b)), "; "); !strings.Contains(p, "without a DROP") {
		t.Errorf("migration 011's text under another name: problems %q, want the IF NOT EXISTS one", p)
	}
	fresh := "CREATE TABLE ops.t (a int);\nCREATE INDEX t_a ON ops.t (a);\n-- Roll back: DROP TABLE ops.t;"
	if p := migrationProblems("013_x.sql", fresh); len(p) > 0 {
		t.Errorf("an index on a table the file creates was refused: %v", p)
	}
}
