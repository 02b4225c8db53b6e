//go:build unix

package localdb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/pkg/childproc"
)

func startServer(t *testing.T, opt Options) *Server {
	t.Helper()
	if _, err := FindBinaries(); err != nil {
		ci.MissingTool(t, err.Error())
	}
	t0 := time.Now()
	opt.Logf = func(f string, a ...any) {
		t.Logf("+%v "+f, append([]any{time.Since(t0).Round(time.Millisecond)}, a...)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // initdb alone took a minute on a loaded 2-core machine
	defer cancel()
	s, err := Start(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func connect(t *testing.T, s *Server, db string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.URL(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func scalar[T any](t *testing.T, conn *pgx.Conn, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func exec1(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// childPIDs lists the processes whose parent is pid (Linux /proc).
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid ...
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/stat"))
			kids = append(kids, n)
		}
	}
	return kids
}

func TestTempClusterLifecycle(t *testing.T) {
	t.Parallel()
	s := startServer(t, Options{})
	ctx := context.Background()

	if !strings.HasPrefix(s.URL("x"), "postgres://postgres@127.0.0.1:") || !strings.HasSuffix(s.URL("x"), "/x?sslmode=disable") {
		t.Fatalf("URL = %s", s.URL("x"))
	}
	conn := connect(t, s, "postgres")
	if got := scalar[int](t, conn, "SELECT $1::int + 1", 41); got != 42 {
		t.Fatalf("got %d", got)
	}
	for setting, want := range map[string]string{
		"max_connections": "300", "fsync": "off", "synchronous_commit": "off",
		"full_page_writes": "off", "listen_addresses": "127.0.0.1", "unix_socket_directories": "",
	} {
		if got := scalar[string](t, conn, "SELECT current_setting($1)", setting); got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	if !scalar[bool](t, conn, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user") {
		t.Error("postgres is not a superuser")
	}

	// A template with one table, copied and then dropped while in use.
	if err := s.CreateDatabase(ctx, "tmpl", ""); err != nil {
		t.Fatal(err)
	}
	tc, err := pgx.Connect(ctx, s.URL("tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	exec1(t, tc, "CREATE TABLE widgets (id int primary key); INSERT INTO widgets VALUES (1), (2)")
	if err := tc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDatabase(ctx, "test-copy", "tmpl"); err != nil { // name needs quoting
		t.Fatal(err)
	}
	cc := connect(t, s, "test-copy")
	if n := scalar[int](t, cc, "SELECT count(*) FROM widgets"); n != 2 {
		t.Fatalf("copied %d rows, want 2", n)
	}
	if err := s.DropDatabase(ctx, "test-copy"); err != nil { // cc is still connected
		t.Fatal(err)
	}
	if scalar[bool](t, conn, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = 'test-copy')") {
		t.Fatal("test-copy still exists after DropDatabase")
	}
	if err := s.DropDatabase(ctx, "never-created"); err != nil {
		t.Fatalf("dropping a missing database: %v", err)
	}

	pid := s.PID()
	var kids []int
	if runtime.GOOS == "linux" {
		kids = childPIDs(t, pid)
		if len(kids) == 0 {
			t.Fatal("found no postgres child processes to watch")
		}
	}
	dir, port := s.tempDir, s.Port()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
		c.Close()
		t.Errorf("port %d still accepts connections after Stop", port)
	}
	for _, p := range append([]int{pid}, kids...) {
		if processAlive(p) {
			t.Errorf("process %d (postmaster %d or child) still alive after Stop", p, pid)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temp dir %s not removed: %v", dir, err)
	}
}

// CreateDatabase waits out a session on the template that closes soon.
func TestCreateDatabaseWaitsForTemplateSessions(t *testing.T) {
	t.Parallel()
	s := startServer(t, Options{MaxConnections: 20})
	ctx := context.Background()
	if err := s.CreateDatabase(ctx, "tmpl", ""); err != nil {
		t.Fatal(err)
	}
	tc, err := pgx.Connect(ctx, s.URL("tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = tc.Close(context.Background())
	}()
	if err := s.CreateDatabase(ctx, "copy", "tmpl"); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, s, "postgres")
	if got := scalar[string](t, conn, "SELECT current_setting('max_connections')"); got != "20" {
		t.Errorf("max_connections = %s, want 20", got)
	}
}

func TestPersistentDataDir(t *testing.T) {
	t.Parallel()
	base := publicTempDir(t)
	dataDir := filepath.Join(base, "state", "pg") // parents do not exist yet
	ctx := context.Background()

	s := startServer(t, Options{DataDir: dataDir})
	conn := connect(t, s, "postgres")
	if got := scalar[string](t, conn, "SELECT current_setting('fsync')"); got != "on" {
		t.Errorf("persistent cluster has fsync=%s, want on", got)
	}
	exec1(t, conn, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('hello')")
	conn.Close(ctx)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err != nil {
		t.Fatalf("Stop removed the persistent cluster: %v", err)
	}

	// Leave a postmaster.pid naming a dead process, as a crash would.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dataDir, "postmaster.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(dead.Process.Pid)+"\n"+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	s2 := startServer(t, Options{DataDir: dataDir})
	conn2 := connect(t, s2, "postgres")
	if got := scalar[string](t, conn2, "SELECT v FROM kept"); got != "hello" {
		t.Fatalf("kept = %q", got)
	}

	// While s2 runs, a second server on the same directory is refused.
	_, err := Start(ctx, Options{DataDir: dataDir})
	if err == nil || !strings.Contains(err.Error(), "in use by a running postgres") {
		t.Fatalf("second Start on a live data dir: %v", err)
	}
	conn2.Close(ctx)
	if err := s2.Stop(); err != nil {
		t.Fatal(err)
	}
}

// publicTempDir is a temp dir the postgres OS user can reach when we are
// root (t.TempDir's parent is 0700).
func publicTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "localpg-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBadDataDirsRefused(t *testing.T) {
	t.Parallel()
	if _, err := FindBinaries(); err != nil {
		ci.MissingTool(t, err.Error())
	}
	dir := publicTempDir(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Options{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "neither empty nor a PostgreSQL data directory") {
		t.Fatalf("Start on a non-empty non-cluster directory: %v", err)
	}

	if os.Geteuid() == 0 {
		hidden := filepath.Join(t.TempDir(), "pg") // parent is 0700 root
		_, err := Start(context.Background(), Options{DataDir: hidden})
		if err == nil || !strings.Contains(err.Error(), "not searchable by the OS user postgres") {
			t.Fatalf("Start as root under a 0700 root dir: %v", err)
		}
	}
}

// A port taken between picking and binding makes Start try another one.
// Not parallel: it swaps pickPort.
func TestPortRaceRetries(t *testing.T) {
	race, err := childproc.NewPortRace()
	if err != nil {
		t.Fatal(err)
	}
	defer race.Close()
	pickPort = race.Pick
	defer func() { pickPort = childproc.FreePort }()

	s := startServer(t, Options{})
	if race.Picks < 2 || s.Port() == race.Taken {
		t.Fatalf("Start used port %d after %d picks; the taken port was %d", s.Port(), race.Picks, race.Taken)
	}
	// With an explicit port there is no retry, and the error shows the log.
	_, err = Start(context.Background(), Options{Port: race.Taken})
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("Start on a taken explicit port: %v", err)
	}
}

func TestMissingBinariesSayHowToInstall(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	_, err := Start(context.Background(), Options{})
	if !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "install") {
		t.Fatalf("Start without binaries: %v", err)
	}
	t.Log(err)
}

// A test binary that dies without calling Stop takes its postmaster with it
// (Linux: parent-death signal). The child half of this test is the same
// binary run again with crashChildEnv set.
const crashChildEnv = "LOCALPG_TEST_CRASH_CHILD"

func TestCrashedParentLeavesNoPostmaster(t *testing.T) {
	if os.Getenv(crashChildEnv) == "1" {
		s, err := Start(context.Background(), Options{})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		fmt.Println("SERVER", s.PID(), s.tempDir)
		os.Exit(0) // no Stop
	}
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signal is Linux only")
	}
	if _, err := FindBinaries(); err != nil {
		ci.MissingTool(t, err.Error())
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashedParentLeavesNoPostmaster$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	out, err := cmd.Output()
	var pid int
	var dir string
	for _, line := range strings.Split(string(out), "\n") {
		if _, scanErr := fmt.Sscanf(line, "SERVER %d %s", &pid, &dir); scanErr == nil {
			break
		}
	}
	if err != nil || pid == 0 {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // only Stop removes it
	deadline := time.Now().Add(15 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
			t.Fatalf("postmaster %d still running 15s after its parent exited", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The default max_connections really admits a few hundred sessions at once
// (shared memory and semaphores suffice).
func TestManyConnections(t *testing.T) {
	t.Parallel()
	s := startServer(t, Options{})
	ctx := context.Background()
	const n = DefaultMaxConnections - 10 // superuser_reserved_connections is 3
	conns := make([]*pgx.Conn, n)
	errs := make(chan error, n)
	for i := range conns {
		go func() {
			c, err := pgx.Connect(ctx, s.URL("postgres"))
			conns[i] = c
			errs <- err
		}()
	}
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close(ctx)
			}
		}
	})
	var firstErr error
	for range n { // wait for every goroutine before failing
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	var backends int
	if err := conns[0].QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'").Scan(&backends); err != nil {
		t.Fatal(err)
	}
	if backends < n {
		t.Fatalf("%d client backends, want at least %d", backends, n)
	}
}
