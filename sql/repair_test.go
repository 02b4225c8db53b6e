package railsql_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	railsql "github.com/pramaan/brief-rail/sql"
)

func TestMain(m *testing.M) { railtest.Main(m) }

// migrationNamed returns the one migration whose name ends in suffix.
func migrationNamed(t *testing.T, suffix string) string {
	t.Helper()
	names, err := fs.Glob(railsql.Migrations(), "*"+suffix)
	if err != nil || len(names) != 1 {
		t.Fatalf("migration *%s: %v %v", suffix, names, err)
	}
	b, err := fs.ReadFile(railsql.Migrations(), names[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statements splits a disable-tx migration into its statements, as tern
// runs them (one at a time, outside a transaction).
func statements(sql string) []string {
	var code strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		code.WriteString(line + "\n")
	}
	var out []string
	for _, s := range strings.Split(code.String(), ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

type outboxIndex struct {
	name  string
	valid bool
}

func matterIndexes(t *testing.T, conn *pgx.Conn) []outboxIndex {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT c.relname, i.indisvalid
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'ops.domain_event_outbox'::regclass
          AND pg_get_indexdef(i.indexrelid) LIKE '%(matter_id, occurred_at)%'
        ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (outboxIndex, error) {
		var x outboxIndex
		return x, r.Scan(&x.name, &x.valid)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Migration 011's failure mode, then the repair: a concurrent build of the
// matter index that failed leaves it INVALID (here marked so in the
// catalog, as the failed build leaves it), and rerunning 011 keeps it. The
// repair migration leaves exactly one valid (matter_id, occurred_at) index,
// and a rerun of the repair (after a failure half-way) does the same.
func TestRepairMigrationRebuildsAnInvalidMatterIndex(t *testing.T) {
	db := railtest.NewDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		for _, s := range statements(sql) {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	// The state after 011's build failed: the repair's index not yet
	// there, 011's index INVALID.
	exec(`DROP INDEX ops.domain_event_outbox_by_matter_idx;
        CREATE INDEX domain_event_outbox_matter_idx ON ops.domain_event_outbox (matter_id, occurred_at) WHERE matter_id IS NOT NULL;
        UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'ops.domain_event_outbox_matter_idx'::regclass`)
	exec(migrationNamed(t, "_outbox_matter_index.sql")) // 011 rerun: IF NOT EXISTS keeps the invalid index
	if got := matterIndexes(t, conn); len(got) != 1 || got[0].valid {
		t.Fatalf("after rerunning 011: %+v; want its INVALID index kept (the defect the repair exists for)", got)
	}
	repair := migrationNamed(t, "_outbox_matter_index_repair.sql")
	exec(repair)
	if got := matterIndexes(t, conn); len(got) != 1 || !got[0].valid || got[0].name != "domain_event_outbox_by_matter_idx" {
		t.Fatalf("after the repair: %+v; want one valid index", got)
	}
	// A repair that failed after its build (its own index INVALID, 011's
	// still there) is simply run again.
	exec(`CREATE INDEX domain_event_outbox_matter_idx ON ops.domain_event_outbox (matter_id, occurred_at) WHERE matter_id IS NOT NULL;
        UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'ops.domain_event_outbox_by_matter_idx'::regclass`)
	exec(repair)
	if got := matterIndexes(t, conn); len(got) != 1 || !got[0].valid {
		t.Fatalf("after rerunning the repair: %+v; want one valid index", got)
	}
}
