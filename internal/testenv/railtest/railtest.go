// Package railtest gives tests a real, migrated PostgreSQL database each.
//
// A test binary calls Main from TestMain. When DATABASE_URL is set it is
// used as the admin connection (its role needs CREATEDB); otherwise a
// throwaway cluster is started from the local PostgreSQL binaries and
// removed afterwards. The schema is migrated once into a template database;
// every test gets its own database cloned from it, so tests run in parallel
// and see each other's nothing, while commits are visible across the
// test's own connections (races and fencing need that).
package railtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/localpg"
	railsql "github.com/pramaan/brief-rail/sql"
)

var (
	adminURL string // a URL on the admin database, with dbname replaced per test
	template string
	server   *localpg.Server
	seq      atomic.Int64
	setupMu  sync.Mutex
	setupErr error
	ready    bool
)

// Main sets up the database server for a test binary and runs its tests.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit, for a TestMain that has more to tear down
// (a moto_server, say): it runs the tests, removes the databases and returns
// the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	teardown()
	return code
}

func setup() error {
	setupMu.Lock()
	defer setupMu.Unlock()
	if ready || setupErr != nil {
		return setupErr
	}
	setupErr = doSetup()
	ready = setupErr == nil
	return setupErr
}

func doSetup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if u := os.Getenv("DATABASE_URL"); u != "" {
		adminURL = u
	} else {
		s, err := localpg.Start(ctx, localpg.Options{})
		if err != nil {
			return fmt.Errorf("start a throwaway PostgreSQL (or set DATABASE_URL): %w", err)
		}
		server = s
		adminURL = s.URL("postgres")
	}
	template = fmt.Sprintf("brief_rail_tpl_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	if err := adminExec(ctx, "CREATE DATABASE "+template); err != nil {
		return fmt.Errorf("create template database: %w", err)
	}
	conn, err := pgx.Connect(ctx, withDB(adminURL, template))
	if err != nil {
		return fmt.Errorf("connect template: %w", err)
	}
	if server != nil {
		// Our own cluster: the one-time bootstrap creates the rail's roles
		// (the migrations then only grant to them). Not on a DATABASE_URL
		// server, whose roles are the developer's.
		if err := railsql.Bootstrap(ctx, conn, ""); err != nil {
			conn.Close(ctx)
			return err
		}
	}
	_, err = railsql.Migrate(ctx, conn, nil)
	conn.Close(ctx)
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	return nil
}

// NewDBAsShipped13 creates a fresh database for t migrated the way a
// database on PostgreSQL 13 or 14 starts: CREATE on schema public granted
// to PUBLIC before the first migration (this machine's PostgreSQL 15 does
// not grant it). Slower than NewDB (it migrates from scratch).
func NewDBAsShipped13(t testing.TB) *DB {
	t.Helper()
	db := NewEmptyDBAsShipped13(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatalf("railtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := railsql.Migrate(ctx, conn, nil); err != nil {
		t.Fatalf("railtest: migrate: %v", err)
	}
	return db
}

// NewEmptyDBAsShipped13 is NewDBAsShipped13 before the first migration:
// a fresh database whose schema public belongs to the bootstrap superuser
// and is open to CREATE by every role, as PostgreSQL 13 and 14 create one.
func NewEmptyDBAsShipped13(t testing.TB) *DB {
	t.Helper()
	db := createDB(t, "pg13", "template0", 10)
	if _, err := db.Pool.Exec(context.Background(), `GRANT CREATE ON SCHEMA public TO PUBLIC`); err != nil {
		t.Fatalf("railtest: open schema public: %v", err)
	}
	return db
}

// AdminExec runs one statement as the admin role on the server's
// maintenance database (CREATE ROLE, DROP ROLE: cluster-wide objects).
func AdminExec(t testing.TB, sql string) {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("railtest: %v", err)
	}
	if err := adminExec(context.Background(), sql); err != nil {
		t.Fatalf("railtest: %s: %v", oneLine(sql), err)
	}
}

// OwnServer reports whether the tests run on a server railtest started
// (where the admin is a superuser and the bootstrap ran), not on a
// DATABASE_URL server.
func OwnServer() bool { return setup() == nil && server != nil }

// RoleURL is db's connection string logged in as role (the throwaway
// cluster trusts loopback logins), so the role's own settings
// (search_path, timeouts) apply as they do for a function.
func (db *DB) RoleURL(role string) string {
	if !strings.HasPrefix(db.URL, "postgres://") && !strings.HasPrefix(db.URL, "postgresql://") {
		return db.URL + " user=" + role
	}
	u, err := url.Parse(db.URL)
	if err != nil {
		panic(err)
	}
	u.User = url.User(role)
	return u.String()
}

func teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if server != nil {
		_ = server.Stop()
		return
	}
	if template != "" && adminURL != "" {
		_ = adminExec(ctx, "DROP DATABASE IF EXISTS "+template+" WITH (FORCE)")
	}
}

func adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDB swaps the database name in a connection string (URL or
// keyword/value form).
func withDB(conn, db string) string {
	if !strings.HasPrefix(conn, "postgres://") && !strings.HasPrefix(conn, "postgresql://") {
		return conn + " dbname=" + db // a later keyword wins
	}
	u, err := url.Parse(conn)
	if err != nil {
		panic(fmt.Sprintf("railtest: bad DATABASE_URL: %v", err))
	}
	u.Path = "/" + db
	return u.String()
}

// DB is one test's database.
type DB struct {
	Name string
	URL  string
	Pool *pgxpool.Pool
}

// NewDB creates a fresh migrated database for t, dropped at cleanup. The
// pool uses the exec query mode (what RDS Proxy allows) and fails the test
// if any statement is ever given a client timestamp.
func NewDB(t testing.TB) *DB {
	t.Helper()
	return createDB(t, "t", "", 80)
}

// NewDBWithRoleSettings is NewDB with the per-function roles' settings
// (migration 008's ALTER ROLE … IN DATABASE … SET statement_timeout,
// idle_in_transaction_session_timeout, lock_timeout, and any later
// migration's) copied from the migrated template: CREATE DATABASE …
// TEMPLATE does not copy them, and a test that connects as a function's
// role (a login, not SET ROLE) to run under the deployed settings needs
// them. Without roles (a migrating role that cannot create them) there is
// nothing to copy.
func NewDBWithRoleSettings(t testing.TB) *DB {
	t.Helper()
	db := NewDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatalf("railtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT format('ALTER ROLE %I IN DATABASE %I SET %s = %L', r.rolname, $2::text,
            split_part(c, '=', 1), substr(c, strpos(c, '=') + 1))
        FROM pg_db_role_setting s
        JOIN pg_database d ON d.oid = s.setdatabase
        JOIN pg_roles r ON r.oid = s.setrole, unnest(s.setconfig) AS c
        WHERE d.datname = $1`, template, db.Name)
	if err != nil {
		t.Fatalf("railtest: read role settings: %v", err)
	}
	stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("railtest: read role settings: %v", err)
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("railtest: %s: %v", s, err)
		}
	}
	return db
}

// URLAs is db's URL with its user replaced by role (the throwaway server
// trusts local connections; a login role of migration 008 has no
// password). It skips the test when DATABASE_URL is set: an external
// server may not trust the role.
func (db *DB) URLAs(t testing.TB, role string) string {
	t.Helper()
	if os.Getenv("DATABASE_URL") != "" {
		t.Skipf("connecting as %s needs the throwaway server's trust authentication", role)
	}
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatalf("railtest: %v", err)
	}
	u.User = url.User(role)
	return u.String()
}

// createDB creates a database named prefix_<pid>_<n> from tmpl (""; the
// migrated template), with a pool of maxConns, dropped at cleanup.
func createDB(t testing.TB, prefix, tmpl string, maxConns int32) *DB {
	t.Helper()
	if err := setup(); err != nil {
		t.Fatalf("railtest: %v", err)
	}
	if tmpl == "" {
		tmpl = template // set by setup
	}
	ctx := context.Background()
	name := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), seq.Add(1))
	var err error
	for i := 0; i < 50; i++ { // the template may be briefly busy
		err = adminExec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl)
		if err == nil || !strings.Contains(err.Error(), "being accessed by other users") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("railtest: create database: %v", err)
	}
	db := &DB{Name: name, URL: withDB(adminURL, name)}
	db.Pool = Pool(t, db.URL, maxConns)
	t.Cleanup(func() {
		db.Pool.Close()
		_ = adminExec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return db
}

// Pool opens a pool on url with the project's settings and the
// no-client-timestamps guard, closed at cleanup.
func Pool(t testing.TB, url string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("railtest: parse url: %v", err)
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.ConnConfig.Tracer = &NoClientTime{T: t}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("railtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NoClientTime is a pgx tracer that fails the test when a statement is
// given a time.Time argument: the rail writes only database-clock times.
// It also fails a statement whose text is over MaxStatementBytes: RDS
// Proxy pins the session of a statement over 16 KB (in the functions'
// exec mode the arguments travel apart from the text).
type NoClientTime struct{ T testing.TB }

// MaxStatementBytes is the largest statement text RDS Proxy multiplexes.
const MaxStatementBytes = 16 << 10

func (n *NoClientTime) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if len(data.SQL) > MaxStatementBytes {
		n.T.Errorf("statement of %d bytes (RDS Proxy pins a session over %d): %s", len(data.SQL), MaxStatementBytes, oneLine(data.SQL))
	}
	for i, a := range data.Args {
		switch a.(type) {
		case time.Time, *time.Time:
			n.T.Errorf("client timestamp passed as argument $%d to: %s", i+1, oneLine(data.SQL))
		}
	}
	return ctx
}

func (n *NoClientTime) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
