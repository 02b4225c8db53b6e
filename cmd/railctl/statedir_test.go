package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/pkg/localdb"
)

// The local rail's database boots from a clone in a directory only its
// owner may enter (as root: any clone under /root or `mktemp -d`, which the
// OS user postgres running the server cannot search): the cluster lives in
// the clone's state directory outside the clone, reachable by the server,
// and the runner says where. The old layout (data inside the clone) fails
// there, as a negative control, when running as root.
func TestLocalDatabaseBootsFromAPrivateClone(t *testing.T) {
	if _, err := localdb.FindBinaries(); err != nil {
		ci.MissingTool(t, err.Error())
	}
	t.Parallel()
	parent := t.TempDir() // 0700: only we may enter it
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(parent, "clone")
	if err := os.Mkdir(clone, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module example.com/clone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "DATABASE_URL", EnvStateDir:
			return "" // the default location is what is under test
		}
		return os.Getenv(k)
	}
	state, err := localStateDir(clone, getenv, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(state, parent) {
		t.Fatalf("state directory %s is inside the private parent %s", state, parent)
	}
	t.Cleanup(func() { _ = os.RemoveAll(state) })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	g := &globals{stdout: &out, stderr: &out, getenv: getenv, root: clone}
	url, stop, err := localDatabase(ctx, g, newProgress(&out, slog.LevelInfo))
	if err != nil {
		t.Fatalf("boot from a private clone: %v\n%s", err, out.String())
	}
	defer stop()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var db string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil || db != "brief_rail" {
		t.Fatalf("database %q %v", db, err)
	}
	conn.Close(ctx)
	dataDir := filepath.Join(state, "pg")
	if !strings.Contains(out.String(), "data in "+dataDir) || !strings.Contains(out.String(), "rm -rf "+state) {
		t.Fatalf("the runner did not say where the data lives and how to remove it:\n%s", out.String())
	}
	if b, err := os.ReadFile(filepath.Join(state, "clone")); err != nil || strings.TrimSpace(string(b)) != clone {
		t.Fatalf("state directory does not name its clone: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err != nil {
		t.Fatalf("no cluster in %s: %v", dataDir, err)
	}
	if _, err := os.Stat(filepath.Join(clone, ".local")); err == nil {
		t.Fatal("the runner still writes into the clone")
	}
	// A second boot reuses the cluster (kept between runs).
	stop()
	url2, stop2, err := localDatabase(ctx, g, newProgress(&out, slog.LevelInfo))
	if err != nil {
		t.Fatalf("second boot: %v", err)
	}
	stop2()
	if url2 == "" {
		t.Fatal("no URL on the second boot")
	}

	if os.Geteuid() == 0 {
		// Negative control: the old layout, the cluster inside the clone.
		_, err := localdb.Start(ctx, localdb.Options{DataDir: filepath.Join(clone, ".local", "pg")})
		if err == nil || !strings.Contains(err.Error(), "is not searchable by the OS user postgres") {
			t.Fatalf("a cluster inside a private clone started as root (or failed otherwise): %v", err)
		}
	}
}

func TestLocalStateDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	a, _ := localStateDir("/src/one/brief-rail", env(map[string]string{"XDG_STATE_HOME": "/home/u/.state"}), 1000)
	b, _ := localStateDir("/src/two/brief-rail", env(map[string]string{"XDG_STATE_HOME": "/home/u/.state"}), 1000)
	if a == b || !strings.HasPrefix(a, "/home/u/.state/brief-rail/brief-rail-") {
		t.Fatalf("two clones: %s %s", a, b)
	}
	if r, _ := localStateDir("/root/brief-rail", env(nil), 0); !strings.HasPrefix(r, rootStateBase+"/brief-rail-") {
		t.Fatalf("as root: %s", r)
	}
	if o, _ := localStateDir("/root/brief-rail", env(map[string]string{EnvStateDir: "/srv/state"}), 0); !strings.HasPrefix(o, "/srv/state/brief-rail-") {
		t.Fatalf("%s: %s", EnvStateDir, o)
	}
}
