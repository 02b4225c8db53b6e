//go:build unix

package localdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/childproc"
)

// Superuser is the name of the cluster's superuser; loopback connections
// need no password.
const Superuser = "postgres"

// DefaultMaxConnections is max_connections when Options.MaxConnections is 0.
// It covers several pools of 50–100 connections and still fits in the shared
// memory of a default Linux or Docker setup (PostgreSQL's main segment is an
// anonymous mmap and its semaphores are unnamed POSIX ones on Linux).
const DefaultMaxConnections = 300

const (
	defaultStartTimeout = 60 * time.Second
	portAttempts        = 5
	fastStopTimeout     = 30 * time.Second
	logTailBytes        = 4 << 10
)

// Options configures Start.
type Options struct {
	// DataDir is the cluster directory (PGDATA). Empty: a fresh cluster in
	// a temporary directory that Stop removes, run with fsync,
	// synchronous_commit and full_page_writes off. Non-empty: created with
	// initdb when missing or empty and reused as is otherwise, so its data
	// survives between runs (project-local state for `make run`).
	DataDir string
	// Port is the TCP port on 127.0.0.1. 0 picks a free one (and picks
	// another if that one is taken before the server binds it).
	Port int
	// MaxConnections is max_connections; 0 means DefaultMaxConnections.
	MaxConnections int
	// Settings are extra server settings passed as -c name=value.
	Settings map[string]string
	// Logf, if set, receives progress messages.
	Logf func(format string, args ...any)
}

// Server is a running postmaster started by Start. Its methods are safe for
// concurrent use.
type Server struct {
	binDir  string
	dataDir string
	tempDir string // removed by Stop; "" for a persistent DataDir
	logPath string
	port    int
	logf    func(string, ...any)

	cmd  *exec.Cmd
	proc *childproc.Process // the postmaster, reaped in the background

	stopOnce sync.Once
	stopErr  error
}

// errPortInUse marks a start that failed because the port was taken.
var errPortInUse = errors.New("port already in use")

// Start brings up a PostgreSQL server as described by opt and returns once it
// accepts connections. ctx bounds the startup only (initdb included; one
// minute if ctx has no deadline); the server runs until Stop.
func Start(ctx context.Context, opt Options) (*Server, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	logf := opt.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	binDir, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := runAsCredential()
	if err != nil {
		return nil, err
	}
	s := &Server{binDir: binDir, logf: logf}

	if opt.DataDir == "" {
		s.tempDir, err = os.MkdirTemp("", "localpg-")
		if err != nil {
			return nil, fmt.Errorf("localdb: %w", err)
		}
		s.dataDir = filepath.Join(s.tempDir, "data")
		s.logPath = filepath.Join(s.tempDir, "postgres.log")
		if err := chownTo(s.tempDir, cred); err != nil {
			_ = os.RemoveAll(s.tempDir)
			return nil, err
		}
	} else {
		s.dataDir, err = filepath.Abs(opt.DataDir)
		if err != nil {
			return nil, fmt.Errorf("localdb: %w", err)
		}
		s.logPath = filepath.Join(s.dataDir, "localpg.log")
	}
	fail := func(err error) (*Server, error) {
		if s.tempDir != "" {
			_ = os.RemoveAll(s.tempDir)
		}
		return nil, err
	}

	if err := s.prepareCluster(ctx, cred); err != nil {
		return fail(err)
	}

	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": "", // TCP only: no socket path length or permission trouble
		"max_connections":         strconv.Itoa(orDefault(opt.MaxConnections, DefaultMaxConnections)),
		"lc_messages":             "C", // the port-in-use check below reads English messages
	}
	if s.tempDir != "" {
		settings["fsync"] = "off"
		settings["synchronous_commit"] = "off"
		settings["full_page_writes"] = "off"
	}
	for k, v := range opt.Settings {
		settings[k] = v
	}

	for attempt := 1; ; attempt++ {
		port := opt.Port
		if port == 0 {
			if port, err = pickPort(); err != nil {
				return fail(fmt.Errorf("localdb: %w", err))
			}
		}
		err = s.run(ctx, cred, port, settings)
		if err == nil {
			logf("localdb: PostgreSQL ready on 127.0.0.1:%d (data %s, log %s)", port, s.dataDir, s.logPath)
			return s, nil
		}
		if errors.Is(err, errPortInUse) && opt.Port == 0 && attempt < portAttempts && ctx.Err() == nil {
			logf("localdb: port %d was taken before the server bound it; trying another", port)
			continue
		}
		return fail(err)
	}
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// prepareCluster makes s.dataDir hold a cluster the server user can use:
// initdb when it is missing or empty, ownership and permissions fixed and a
// stale postmaster.pid removed when it is reused.
func (s *Server) prepareCluster(ctx context.Context, cred *syscall.Credential) error {
	if cred != nil {
		if err := checkSearchable(filepath.Dir(s.dataDir), cred); err != nil {
			return err
		}
	}
	if s.tempDir != "" {
		return s.copyCachedCluster(ctx, cred)
	}
	_, err := os.Stat(filepath.Join(s.dataDir, "PG_VERSION"))
	switch {
	case err == nil:
		s.logf("localdb: reusing the cluster in %s", s.dataDir)
		if cred != nil {
			if err := chownTree(s.dataDir, cred); err != nil {
				return err
			}
		}
		if err := os.Chmod(s.dataDir, 0o700); err != nil {
			return fmt.Errorf("localdb: %w", err)
		}
		return s.clearStalePID()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("localdb: %w", err)
	}

	entries, err := os.ReadDir(s.dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(s.dataDir), 0o755); err != nil {
			return fmt.Errorf("localdb: %w", err)
		}
		if err := os.Mkdir(s.dataDir, 0o700); err != nil {
			return fmt.Errorf("localdb: %w", err)
		}
	case err != nil:
		return fmt.Errorf("localdb: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("localdb: %s is neither empty nor a PostgreSQL data directory (no PG_VERSION); "+
			"remove it or choose another DataDir", s.dataDir)
	}
	if err := chownTo(s.dataDir, cred); err != nil {
		return err
	}

	s.logf("localdb: initdb %s", s.dataDir)
	return s.initdb(ctx, cred, s.dataDir, false)
}

// initdb creates a cluster in dir, which must be missing or empty and
// reachable by the server user.
func (s *Server) initdb(ctx context.Context, cred *syscall.Credential, dir string, noSync bool) error {
	args := []string{"-D", dir, "-U", Superuser, "--auth=trust", "--encoding=UTF8", "--locale=C"}
	if noSync {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, "initdb"), args...)
	cmd.Dir = "/"
	cmd.Env = serverEnv()
	cmd.SysProcAttr = procAttr(cred, syscall.SIGKILL)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("localdb: initdb -D %s: %w\n%s", dir, err, tail(out))
	}
	return nil
}

// clearStalePID removes a postmaster.pid left by a server that no longer
// runs, and refuses to go on if that server still runs.
func (s *Server) clearStalePID() error {
	pidFile := filepath.Join(s.dataDir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("localdb: %w", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	if pid < 0 { // single-user mode writes -pid
		pid = -pid
	}
	if pid > 0 && pid != os.Getpid() && processAlive(pid) && isPostgres(pid) {
		return fmt.Errorf("localdb: %s is in use by a running postgres (pid %d); stop it first "+
			"(pg_ctl -D %s stop -m fast, or kill -INT %d) or use another DataDir", s.dataDir, pid, s.dataDir, pid)
	}
	s.logf("localdb: removing stale %s (pid %d is not running)", pidFile, pid)
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("localdb: %w", err)
	}
	return nil
}

// run starts the postmaster on port and waits until it accepts connections.
// On failure the postmaster is gone when run returns.
func (s *Server) run(ctx context.Context, cred *syscall.Credential, port int, settings map[string]string) error {
	if err := s.clearStalePID(); err != nil {
		return err
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("localdb: %w", err)
	}
	defer logFile.Close() // the child holds its own copy of the descriptor
	if err := chownTo(s.logPath, cred); err != nil {
		return err
	}

	args := []string{"-D", s.dataDir, "-c", "port=" + strconv.Itoa(port)}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+settings[k])
	}
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), args...)
	cmd.Dir = s.dataDir
	cmd.Env = serverEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// If we die without Stop: a throwaway cluster gets an immediate
	// shutdown, a persistent one a clean fast shutdown.
	deathSig := syscall.SIGINT
	if s.tempDir != "" {
		deathSig = syscall.SIGQUIT
	}
	cmd.SysProcAttr = procAttr(cred, deathSig)
	s.logf("localdb: starting postgres on 127.0.0.1:%d", port)
	p, err := childproc.Start(cmd)
	if err != nil {
		return fmt.Errorf("localdb: start postgres: %w", err)
	}
	s.cmd, s.proc, s.port = cmd, p, port

	if err := s.waitReady(ctx); err != nil {
		s.kill()
		return err
	}
	return nil
}

// waitReady polls with real connections until the server answers, it exits
// or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	// A connection attempt does not outlive the postmaster: when it exits
	// (say it lost the port to a listener that never answers), Poll stops.
	err := childproc.Poll(ctx, 50*time.Millisecond, s.proc.Exited(), s.ping)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, childproc.ErrExited):
		logTail := s.logTail()
		err := fmt.Errorf("localdb: postgres exited during startup (%v); log %s:\n%s", s.proc.Err(), s.logPath, logTail)
		if strings.Contains(logTail, "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortInUse, err)
		}
		return err
	default:
		return fmt.Errorf("localdb: postgres on port %d not ready: %w; log %s:\n%s", s.port, err, s.logPath, s.logTail())
	}
}

// ping connects and checks that the server answering is ours, not another
// one that happened to own the port.
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var dir string
	if err := conn.QueryRow(ctx, "SELECT current_setting('data_directory')").Scan(&dir); err != nil {
		return err
	}
	if !sameDir(dir, s.dataDir) {
		return fmt.Errorf("port %d is served by another server (data directory %s)", s.port, dir)
	}
	return nil
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// kill stops a postmaster that failed to come up.
func (s *Server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.proc.Exited():
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.proc.Exited()
	}
}

// URL returns a connection string for database dbname as the superuser.
func (s *Server) URL(dbname string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on at 127.0.0.1.
func (s *Server) Port() int { return s.port }

// DataDir is the cluster directory.
func (s *Server) DataDir() string { return s.dataDir }

// LogPath is the file that receives the server's log.
func (s *Server) LogPath() string { return s.logPath }

// PID is the postmaster's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop shuts the server down (fast shutdown: sessions are disconnected,
// open transactions rolled back) and waits until the postmaster and its
// children have exited, escalating to an immediate shutdown and then SIGKILL
// if that takes too long. It removes the temporary directory of a throwaway
// cluster. Calling Stop again returns the first result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	var errs []error
	select {
	case <-s.proc.Exited():
		errs = append(errs, fmt.Errorf("localdb: postgres had already exited (%v); log %s:\n%s", s.proc.Err(), s.logPath, s.logTail()))
	default:
		s.logf("localdb: stopping postgres on port %d", s.port)
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.proc.Exited():
		case <-time.After(fastStopTimeout):
			errs = append(errs, fmt.Errorf("localdb: fast shutdown took over %s; sent SIGQUIT", fastStopTimeout))
			s.kill()
		}
	}
	if s.tempDir != "" {
		if err := os.RemoveAll(s.tempDir); err != nil {
			errs = append(errs, fmt.Errorf("localdb: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (s *Server) logTail() string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > logTailBytes {
		_, _ = f.Seek(fi.Size()-logTailBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return tail(b)
}

// tail returns the last lines of b, trimmed to logTailBytes.
func tail(b []byte) string {
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}

// runAsCredential returns nil when we may run postgres ourselves, and the
// postgres OS user's credential when we are root.
func runAsCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("localdb: running as root, and PostgreSQL refuses to run as root, "+
			"but there is no \"postgres\" OS user to run it as (%v); create one (useradd --system postgres) "+
			"or run as a non-root user", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("localdb: OS user postgres: %w", err)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(n))
			}
		}
	}
	return cred, nil
}

func chownTo(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("localdb: %w", err)
	}
	return nil
}

// chownTree hands a reused data directory to the server user if it belongs
// to someone else (for example it was created by a non-root run).
func chownTree(dir string, cred *syscall.Credential) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("localdb: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == cred.Uid {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return chownTo(path, cred)
	})
}

// checkSearchable fails with advice when the server user cannot reach dir.
func checkSearchable(dir string, cred *syscall.Credential) error {
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			// Will be created 0755 by MkdirAll; check the existing part.
		} else if err != nil {
			return fmt.Errorf("localdb: %w", err)
		} else if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			perm := fi.Mode().Perm()
			var ok bool
			switch {
			case st.Uid == cred.Uid:
				ok = perm&0o100 != 0
			case st.Gid == cred.Gid || slices.Contains(cred.Groups, st.Gid):
				ok = perm&0o010 != 0
			default:
				ok = perm&0o001 != 0
			}
			if !ok {
				return fmt.Errorf("localdb: %s (mode %v) is not searchable by the OS user postgres (uid %d), "+
					"which must run the server because we are root; choose a DataDir it can reach or run chmod o+x %s",
					p, perm, cred.Uid, p)
			}
		}
		if parent := filepath.Dir(p); parent == p {
			return nil
		}
	}
}

// pickPort chooses the port for a start when Options.Port is 0 (a variable
// so the port-race test can hand out a taken port).
var pickPort = childproc.FreePort

// serverEnv is our environment without PG* variables (PGDATA, PGPORT, ...),
// which would otherwise leak into initdb and postgres.
func serverEnv() []string {
	env := os.Environ()
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PG") })
}
