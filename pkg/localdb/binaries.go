package localdb

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// BinDirEnv names the environment variable that, when set, is the only
// place FindBinaries looks.
const BinDirEnv = "LOCALPG_BINDIR"

// ErrNoBinaries is wrapped by the error FindBinaries returns when no
// PostgreSQL installation is found.
var ErrNoBinaries = errors.New("localdb: PostgreSQL server binaries (initdb, postgres) not found")

// needed are the programs localdb runs; all must sit in the same directory.
var needed = []string{"initdb", "postgres"}

// FindBinaries returns the directory holding initdb and postgres. It looks
// in $LOCALPG_BINDIR if set (and nowhere else), then at initdb on $PATH, then
// in the newest /usr/lib/postgresql/<version>/bin (Debian, Ubuntu), then in
// Homebrew's locations. The error, if none is found, says how to install
// PostgreSQL.
func FindBinaries() (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		if err := hasBinaries(dir); err != nil {
			return "", fmt.Errorf("%w: $%s=%s: %v; install them with %s, or fix $%s",
				ErrNoBinaries, BinDirEnv, dir, err, installHint(), BinDirEnv)
		}
		return dir, nil
	}
	var candidates []string
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
		// A symlink farm (/usr/local/bin -> /usr/lib/postgresql/15/bin)
		// may hold initdb but not postgres; try the link's target too.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(real))
		}
	}
	candidates = append(candidates, versionedDirs("/usr/lib/postgresql/*/bin")...)
	candidates = append(candidates, versionedDirs("/usr/pgsql-*/bin")...) // RHEL, PGDG packages
	candidates = append(candidates, versionedDirs("/opt/homebrew/opt/postgresql@*/bin")...)
	candidates = append(candidates, versionedDirs("/usr/local/opt/postgresql@*/bin")...)
	candidates = append(candidates, "/opt/homebrew/bin", "/usr/local/bin",
		"/Applications/Postgres.app/Contents/Versions/latest/bin")
	for _, dir := range candidates {
		if hasBinaries(dir) == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("%w; install them with %s, or set $%s to the directory that holds them",
		ErrNoBinaries, installHint(), BinDirEnv)
}

func installHint() string {
	switch runtime.GOOS {
	case "darwin":
		return "`brew install postgresql`"
	case "linux":
		return "`apt-get install postgresql` (Debian/Ubuntu; the server binaries land in /usr/lib/postgresql/<version>/bin)"
	default:
		return "`apt-get install postgresql` on Debian/Ubuntu or `brew install postgresql` on macOS"
	}
}

func hasBinaries(dir string) error {
	for _, name := range needed {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("no %s in %s", name, dir)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("%s in %s is not executable", name, dir)
		}
	}
	return nil
}

// versionedDirs expands a glob with one '*' standing for a version number
// and returns the matches newest version first.
func versionedDirs(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	star := strings.Index(pattern, "*")
	prefix, suffix := pattern[:star], pattern[star+1:]
	version := func(m string) float64 {
		v := strings.TrimSuffix(strings.TrimPrefix(m, prefix), suffix)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return -1
		}
		return f
	}
	sort.SliceStable(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return matches
}
