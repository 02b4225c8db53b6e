package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// pgbenchRunner runs the pgbench binary against the run's pgbench database.
type pgbenchRunner struct {
	bin  string
	args []string // connection arguments
	env  []string
	db   string
	dir  string // holds the custom script
}

// The single-row write transaction: one autocommit UPDATE on a random row,
// the shape of one ledger statement.
const singleUpdateScript = `\set aid random(1, 100000 * :scale)
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
`

func newPgbench(ctx context.Context, e *env, bin string, scale int) (*pgbenchRunner, error) {
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("pgbench not found (%s): %w", bin, err)
	}
	host, port, user, extra, err := e.pgbenchConn()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "railbench-pgbench-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "single_update.sql"), []byte(singleUpdateScript), 0o644); err != nil {
		return nil, err
	}
	p := &pgbenchRunner{
		bin:  bin,
		args: []string{"-h", host, "-p", strconv.Itoa(port), "-U", user},
		env:  append(os.Environ(), extra...),
		db:   e.pgbenchDB,
		dir:  dir,
	}
	if _, err := p.run(ctx, "-i", "-q", "-s", strconv.Itoa(scale)); err != nil {
		return nil, fmt.Errorf("pgbench -i: %w", err)
	}
	return p, nil
}

func (p *pgbenchRunner) close() { _ = os.RemoveAll(p.dir) }

func (p *pgbenchRunner) run(ctx context.Context, args ...string) (string, error) {
	all := append(append([]string{}, p.args...), args...)
	all = append(all, p.db)
	cmd := exec.CommandContext(ctx, p.bin, all...)
	cmd.Env = p.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %v: %w\n%s", p.bin, args, err, out.String())
	}
	return out.String(), nil
}

var tpsRE = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// tps runs pgbench for dur with `clients` clients on 2 threads and returns
// its transactions per second. script "" means the built-in `-N`
// (simple-update) transaction; otherwise a file in p.dir.
func (p *pgbenchRunner) tps(ctx context.Context, script string, clients int, dur time.Duration) (float64, string, error) {
	args := []string{"-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(int(dur.Seconds())), "-n"}
	if script == "" {
		args = append(args, "-N")
	} else {
		args = append(args, "-f", filepath.Join(p.dir, script))
	}
	out, err := p.run(ctx, args...)
	if err != nil {
		return 0, out, err
	}
	m := tpsRE.FindStringSubmatch(out)
	if m == nil {
		return 0, out, fmt.Errorf("pgbench: no tps in output:\n%s", out)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, out, err
}
