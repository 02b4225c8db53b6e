package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// EnvStateDir overrides where the local rail keeps its state.
const EnvStateDir = "RAIL_STATE_DIR"

// rootStateBase is the state base when running as root: PostgreSQL refuses
// to run as root, so pkg/localdb runs it as the OS user postgres, which must be
// able to reach the data directory. Root's home (0700) and a clone under it
// or under `mktemp -d` are out of its reach; /var/lib is the system's place
// for such state and searchable by everyone.
const rootStateBase = "/var/lib/brief-rail"

// localStateDir is where `make run` / `make serve` keep the local
// PostgreSQL cluster of the clone at root (pg/) and its URL
// (database_url), outside the clone, so the server can reach it wherever
// the clone sits: $RAIL_STATE_DIR, else /var/lib/brief-rail when root,
// else $XDG_STATE_HOME/brief-rail or ~/.local/state/brief-rail; then one
// directory per clone, named after the clone and keyed by its absolute
// path (two clones never share a cluster).
func localStateDir(root string, getenv func(string) string, euid int) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		abs = p
	}
	base := getenv(EnvStateDir)
	switch {
	case base != "":
	case euid == 0:
		base = rootStateBase
	case getenv("XDG_STATE_HOME") != "":
		base = filepath.Join(getenv("XDG_STATE_HOME"), "brief-rail")
	default:
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("state directory: %w (set %s)", err, EnvStateDir)
		}
		base = filepath.Join(home, ".local", "state", "brief-rail")
	}
	base, err = filepath.Abs(base)
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6])), nil
}

// prepareStateDir creates dir and any missing parents mode 0755 whatever
// the umask, so the server user can reach the data directory inside it
// (pkg/localdb creates that one 0700, owned by the server user, and names any
// existing parent the server user cannot search), and records which clone
// the directory belongs to. Existing directories are left as they are.
func prepareStateDir(dir, root string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("state directory: %w", err)
		}
		if err := os.Chmod(missing[i], 0o755); err != nil {
			return fmt.Errorf("state directory: %w", err)
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "clone"), []byte(abs+"\n"), 0o644); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}
