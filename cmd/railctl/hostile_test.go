package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// Every hostile shape, uploaded with the default limits, ends by itself
// within 30 s, with a typed refusal or as text, and writes nothing when
// refused; a real filing then uploads normally in the same process. The
// extraction runs in a worker process with a 512 MiB limit (the default).
func TestUploadHostileShapes(t *testing.T) {
	c, firm, matter := newCLI(t)
	dir := t.TempDir()
	for _, s := range pdftexttest.Hostile() {
		p := writeFile(t, dir, s.Name+".pdf", s.Make())
		start := time.Now()
		code, out, errOut := c.run("upload", "--firm", firm, "--matter", matter, p)
		took := time.Since(start)
		t.Logf("%s: exit %d in %v: %s%s", s.Name, code, took.Round(time.Millisecond), strings.TrimSpace(out), strings.TrimSpace(errOut))
		if took > uploadWall {
			t.Errorf("%s: upload took %v", s.Name, took)
		}
		switch code {
		case 0:
			if !strings.Contains(out, "uploaded "+s.Name+".pdf") {
				t.Errorf("%s: exit 0 without an upload: %s", s.Name, out)
			}
		case exitError:
			if !strings.Contains(errOut, "nothing uploaded") || !strings.Contains(errOut, "the PDF") {
				t.Errorf("%s: refusal does not say why: %s", s.Name, errOut)
			}
		default:
			t.Errorf("%s: exit %d: %s", s.Name, code, errOut)
		}
	}
	real, err := os.ReadFile(filepath.Join("..", "..", "testdata", "filings", "ca1-12-2209-order.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	out := c.must("upload", "--firm", firm, "--matter", matter, writeFile(t, dir, "order.pdf", real))
	if !strings.Contains(out, "uploaded order.pdf") || !strings.Contains(out, "2 page(s)") {
		t.Fatalf("real filing after the hostile ones: %s", out)
	}
}

const mainArgsEnv = "RAILCTL_TEST_MAIN_ARGS"

// uploadWall is the bound on one hostile upload: 30 s, tripled under the
// race detector (make test), where the worker is this test binary and runs
// several times slower.
var uploadWall = map[bool]time.Duration{false: 30 * time.Second, true: 90 * time.Second}[raceEnabled]

// TestMainChild is railctl's main, for TestUploadStopsOnSIGTERM: the same
// signal handling, in a process of its own.
func TestMainChild(t *testing.T) {
	args := os.Getenv(mainArgsEnv)
	if args == "" {
		t.Skip("run by TestUploadStopsOnSIGTERM")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, strings.Split(args, "\x1f"), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// SIGTERM stops an upload whose extraction would run for seconds: the
// worker is killed and railctl exits at once, having written nothing. (As
// it was, the signal cancelled a context the parser never read.)
func TestUploadStopsOnSIGTERM(t *testing.T) {
	c, firm, matter := newCLI(t)
	// 2,000 pages of 160 lines: many seconds of extraction, within every
	// limit (24 MB of text).
	long := func(i int) []string {
		var ls []string
		for k := 0; k < 4; k++ {
			ls = append(ls, pdftexttest.FilingPage(4*i+k)...)
		}
		return ls
	}
	p := writeFile(t, t.TempDir(), "long.pdf", pdftexttest.Pages(2000, long))
	args := []string{"--database-url", c.url, "upload", "--firm", firm, "--matter", matter, p}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\x1f"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(map[bool]time.Duration{false: 1500 * time.Millisecond, true: 4 * time.Second}[raceEnabled])
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("exit after SIGTERM in %v: %v\n%s", time.Since(sent).Round(time.Millisecond), err, out.String())
		if !strings.Contains(out.String(), "nothing uploaded") || !strings.Contains(out.String(), "stopped") {
			t.Errorf("output does not say the upload stopped:\n%s", out.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("railctl upload still running 5 s after SIGTERM\n%s", out.String())
	}
	if docs, _ := written(t, c.url); docs != 0 {
		t.Errorf("wrote %d documents", docs)
	}
}
