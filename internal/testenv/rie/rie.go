// Package rie runs a Lambda function's bootstrap under the AWS Lambda
// Runtime Interface Emulator (aws-lambda-rie), the component `sam local
// invoke` runs inside its container, without Docker: the emulator serves
// the Runtime API to the bootstrap exactly as Lambda does and accepts
// invocations on POST /2015-03-31/functions/function/invocations.
//
// `make tools` installs the emulator into ./.local/bin (see Version); Find
// also looks in $RIE_BIN, $(go env GOPATH)/bin and PATH.
package rie

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/proc"
)

// Version is the emulator version `make tools` installs (a pseudo-version:
// the module publishes no semver tags the Go proxy serves).
const Version = "v0.0.0-20261030222936-bef5c4ba774d"

// Module is the emulator's Go package path.
const Module = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"

// BinaryName is the installed command's name.
const BinaryName = "aws-lambda-rie"

// ErrNotInstalled is returned by Find when no emulator binary exists.
var ErrNotInstalled = errors.New("rie: aws-lambda-rie not found (make tools installs it into .local/bin)")

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("rie: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Find returns the emulator's path: $RIE_BIN, <module root>/.local/bin,
// $(go env GOPATH)/bin (or ~/go/bin), then PATH.
func Find() (string, error) {
	var cands []string
	if p := os.Getenv("RIE_BIN"); p != "" {
		cands = append(cands, p)
	}
	if root, err := ModuleRoot(); err == nil {
		cands = append(cands, filepath.Join(root, ".local", "bin", BinaryName))
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		cands = append(cands, filepath.Join(strings.Split(gp, string(os.PathListSeparator))[0], "bin", BinaryName))
	}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, "go", "bin", BinaryName))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	if p, err := exec.LookPath(BinaryName); err == nil {
		return p, nil
	}
	return "", ErrNotInstalled
}

// BuildBootstraps builds the Go main packages pkgs (like ./functions/relay,
// relative to the module root) for the host, the way the template builds
// them for Lambda (static, no cgo, -tags lambda.norpc), in one go build,
// into dir/<last path element>/bootstrap. It returns the paths by package.
func BuildBootstraps(ctx context.Context, dir string, pkgs ...string) (map[string]string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, pkg := range pkgs {
		d := filepath.Join(dir, filepath.Base(pkg))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", filepath.Join(d, "bootstrap"), pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("rie: build %s: %w\n%s", pkg, err, b)
		}
		out[pkg] = filepath.Join(d, "bootstrap")
	}
	return out, nil
}

// HostBinDir is where tests and benchmarks keep the host bootstraps:
// <module root>/bin/host (bin/ is ignored by git).
func HostBinDir() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "host"), nil
}

// Options start one emulated function.
type Options struct {
	Bootstrap    string   // path of the bootstrap executable
	Env          []string // the function's environment (the emulator passes its own on)
	FunctionName string
	TimeoutSec   int // the function's timeout (AWS_LAMBDA_FUNCTION_TIMEOUT)
	MemoryMB     int // the function's memory size
}

// Emulator is a running aws-lambda-rie with one function.
type Emulator struct {
	proc   *proc.Process
	addr   string
	out    *proc.Buffer
	client *http.Client
	stop   sync.Once
}

// Start starts the emulator at bin with the function o on free loopback
// ports. The bootstrap itself starts at the first invocation (cold start).
func Start(ctx context.Context, bin string, o Options) (*Emulator, error) {
	invokePort, err := proc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("rie: %w", err)
	}
	apiPort, err := proc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("rie: %w", err)
	}
	e := &Emulator{addr: fmt.Sprintf("127.0.0.1:%d", invokePort), out: &proc.Buffer{}, client: &http.Client{}}
	cmd := exec.Command(bin,
		"--runtime-interface-emulator-address", e.addr,
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", apiPort),
		"--log-level", "info",
		o.Bootstrap)
	cmd.Dir = filepath.Dir(o.Bootstrap)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC"}
	if o.FunctionName != "" {
		env = append(env, "AWS_LAMBDA_FUNCTION_NAME="+o.FunctionName)
	}
	if o.TimeoutSec > 0 {
		env = append(env, "AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(o.TimeoutSec))
	}
	if o.MemoryMB > 0 {
		env = append(env, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(o.MemoryMB))
	}
	cmd.Env = append(env, o.Env...)
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if e.proc, err = proc.Start(cmd); err != nil {
		return nil, fmt.Errorf("rie: start %s: %w", bin, err)
	}
	// Wait for the invoke port.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch err := proc.WaitPort(wctx, e.addr, 20*time.Millisecond, e.proc.Exited()); {
	case err == nil:
		return e, nil
	case errors.Is(err, proc.ErrExited):
		return nil, fmt.Errorf("rie: emulator exited before listening:\n%s", e.out.String())
	case ctx.Err() != nil:
		e.Stop()
		return nil, ctx.Err()
	default:
		e.Stop()
		return nil, fmt.Errorf("rie: emulator not listening on %s after 30s:\n%s", e.addr, e.out.String())
	}
}

// Result is one invocation's outcome.
type Result struct {
	Status int
	Body   []byte
	// ErrorType and ErrorMessage are set when the function failed (the
	// handler returned an error, panicked, or its cold start exited).
	ErrorType    string
	ErrorMessage string
}

// Failed reports whether the invocation failed.
func (r Result) Failed() bool {
	return r.Status != http.StatusOK || r.ErrorType != "" || r.ErrorMessage != ""
}

// Invoke sends payload as one invocation and waits for the function's reply.
func (e *Emulator) Invoke(ctx context.Context, payload []byte) (Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://"+e.addr+"/2015-03-31/functions/function/invocations", bytes.NewReader(payload))
	if err != nil {
		return Result{}, err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("rie: invoke: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Result{}, fmt.Errorf("rie: read reply: %w", err)
	}
	r := Result{Status: resp.StatusCode, Body: body}
	var fe struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &fe) == nil {
		r.ErrorType, r.ErrorMessage = fe.ErrorType, fe.ErrorMessage
	}
	return r, nil
}

// Output is everything the emulator and the function wrote so far (the
// function's logs, EMF lines and the START/END/REPORT lines).
func (e *Emulator) Output() string { return e.out.String() }

// Report is one REPORT line.
type Report struct {
	RequestID  string
	InitMS     float64 // the emulator's own figure; see Emulator.InitMS
	DurationMS float64
}

var (
	reportRE = regexp.MustCompile(`REPORT RequestId: (\S+)\s+(?:Init Duration: ([0-9.]+) ms\s+)?Duration: ([0-9.]+) ms`)
	initRE   = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
)

// InitMS is the cold start's init duration: from the bootstrap's exec to
// its first request for an event, as the emulator's "INIT REPORT" line
// gives it (its REPORT line's "Init Duration" does not time the runtime's
// own initialisation). Zero before the first invocation.
func (e *Emulator) InitMS() float64 {
	m := initRE.FindStringSubmatch(e.Output())
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// WaitInitMS is InitMS once the emulator's INIT REPORT line has reached
// Output, waiting up to timeout for it (zero if it never does). The
// emulator's output reaches Output through a pipe copied by another
// goroutine, so a line the emulator wrote before an invocation's reply can
// still be on its way when Invoke returns (seen on a loaded machine).
func (e *Emulator) WaitInitMS(timeout time.Duration) float64 {
	deadline := time.Now().Add(timeout)
	for {
		if v := e.InitMS(); v > 0 || !time.Now().Before(deadline) {
			return v
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Reports parses the REPORT lines written so far.
func (e *Emulator) Reports() []Report {
	var out []Report
	sc := bufio.NewScanner(strings.NewReader(e.Output()))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := reportRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r := Report{RequestID: m[1]}
		r.InitMS, _ = strconv.ParseFloat(m[2], 64)
		r.DurationMS, _ = strconv.ParseFloat(m[3], 64)
		out = append(out, r)
	}
	return out
}

// RuntimeMaxRSSKB is the bootstrap process's peak resident set (VmHWM) in
// KiB, read from /proc while it runs (Linux only). The emulator's own
// REPORT line repeats the configured memory size instead of measuring it.
func (e *Emulator) RuntimeMaxRSSKB() (int64, error) {
	pids, err := children(e.proc.Pid())
	if err != nil {
		return 0, err
	}
	var best int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					n, _ := strconv.ParseInt(f[0], 10, 64)
					best = max(best, n)
				}
			}
		}
	}
	if best == 0 {
		return 0, errors.New("rie: no running bootstrap process found")
	}
	return best, nil
}

// children lists the direct children of pid (the emulator starts the
// bootstrap in a process group of its own).
func children(pid int) ([]int, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, fmt.Errorf("rie: list tasks: %w", err)
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// Stop ends the function's process and the emulator (SIGTERM, then SIGKILL),
// and waits for the emulator.
func (e *Emulator) Stop() {
	e.stop.Do(func() {
		kids, _ := children(e.proc.Pid())
		e.proc.Stop(5 * time.Second)
		// The emulator kills its runtime on shutdown; make sure of it.
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
	})
}
