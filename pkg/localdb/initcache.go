//go:build unix

package localdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Throwaway clusters are copies of one initdb result cached in the temp
// directory: initdb takes seconds (bootstrap and post-bootstrap run whole
// SQL scripts), copying the ~40 MB it produces takes a fraction of that, and
// every test binary needs a cluster. The cache entry is keyed by the
// binaries, the initdb flags and the owner, built in a private directory and
// renamed into place, so concurrent test binaries never see half of one.

const initdbCacheVersion = "1" // bump when the initdb flags change

// copyCachedCluster fills s.dataDir (missing) with a fresh cluster.
func (s *Server) copyCachedCluster(ctx context.Context, cred *syscall.Credential) error {
	cache, err := s.cachedCluster(ctx, cred)
	if err != nil || cache == "" {
		return err
	}
	if err := copyTree(cache, s.dataDir, cred); err != nil {
		return fmt.Errorf("localdb: copy the cached cluster %s: %w", cache, err)
	}
	return nil
}

// cacheMu makes the throwaway clusters of one process share a single initdb
// (other processes may race, which the rename below settles).
var cacheMu sync.Mutex

// cachedCluster returns the cache entry for our binaries, creating it if
// needed. If the entry cannot be used, it moves the cluster it built to
// s.dataDir and returns "".
func (s *Server) cachedCluster(ctx context.Context, cred *syscall.Credential) (string, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	uid := uint32(os.Geteuid())
	if cred != nil {
		uid = cred.Uid
	}
	h := sha256.New()
	fmt.Fprintln(h, initdbCacheVersion, uid)
	for _, name := range needed {
		p := filepath.Join(s.binDir, name)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", fmt.Errorf("localdb: %w", err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return "", fmt.Errorf("localdb: %w", err)
		}
		fmt.Fprintln(h, real, fi.Size(), fi.ModTime().UnixNano())
	}
	cache := filepath.Join(os.TempDir(), "localpg-initdb-"+hex.EncodeToString(h.Sum(nil))[:16])
	if trustedCache(cache, uid) {
		return cache, nil
	}

	build, err := os.MkdirTemp(os.TempDir(), "localpg-initdb-build-")
	if err != nil {
		return "", fmt.Errorf("localdb: %w", err)
	}
	defer os.RemoveAll(build)
	if err := chownTo(build, cred); err != nil {
		return "", err
	}
	data := filepath.Join(build, "data")
	s.logf("localdb: initdb %s (cached as %s for later throwaway clusters)", data, cache)
	if err := s.initdb(ctx, cred, data, true); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(data, ".localpg-complete"), nil, 0o600); err != nil {
		return "", fmt.Errorf("localdb: %w", err)
	}
	if err := chownTo(filepath.Join(data, ".localpg-complete"), cred); err != nil {
		return "", err
	}
	if err := os.Rename(data, cache); err != nil {
		// Another process may have won the race; use its entry if sound.
		if trustedCache(cache, uid) {
			return cache, nil
		}
		// Otherwise this run gets the cluster just built.
		s.logf("localdb: cannot cache the cluster at %s (%v); using it directly", cache, err)
		if err := os.Rename(data, s.dataDir); err != nil {
			return "", fmt.Errorf("localdb: %w", err)
		}
		return "", nil
	}
	return cache, nil
}

// trustedCache reports whether dir is a complete cache entry owned by uid
// that nobody else can write (the temp directory is shared).
func trustedCache(dir string, uid uint32) bool {
	for _, p := range []string{dir, filepath.Join(dir, ".localpg-complete"), filepath.Join(dir, "PG_VERSION")} {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			return false
		}
	}
	return true
}

// copyTree copies the regular files, directories and symlinks under src to
// dst (which must not exist), keeping permission bits and handing everything
// to cred when non-nil.
func copyTree(src, dst string, cred *syscall.Credential) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == ".localpg-complete" {
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, info.Mode().Perm()); err != nil {
				return err
			}
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
		case d.Type().IsRegular():
			if err := copyFile(path, target, info.Mode().Perm()); err != nil {
				return err
			}
		default:
			return errors.New("unexpected file type at " + path + ": " + strconv.Quote(d.Type().String()))
		}
		return chownTo(target, cred)
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
