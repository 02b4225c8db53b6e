// Package worker extracts PDF text in a child process with an OS memory
// limit and a wall-clock deadline, so that a file that crashes, exhausts
// or hangs the extraction costs that one upload and never the process
// that serves every firm.
//
// The child is the running binary itself (os.Executable), started with
// an environment variable this package's init recognises: any binary that
// imports the package can be its own worker, with no second binary to
// ship. A worker that finished a document is kept warm for the next one.
// A worker that dies (out of memory under its address-space limit, a
// crash), overruns its deadline or whose caller gives up is killed, and
// the call returns a *KilledError; the next call starts a fresh worker.
package worker

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
)

const (
	envWorker = "BRIEF_RAIL_PDF_WORKER" // set to the memory limit in bytes: be a worker
	// DefaultMemory is the address space a worker may map beyond what it
	// had at start-up.
	DefaultMemory = 512 << 20
	// DefaultGrace is how long past the extraction's own time limit a
	// worker may take before it is killed.
	DefaultGrace = 5 * time.Second
	// DefaultReuse is how many documents one warm worker extracts before
	// it is replaced.
	DefaultReuse = 64
)

func init() {
	if v := os.Getenv(envWorker); v != "" {
		mem, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mem <= 0 {
			mem = DefaultMemory
		}
		// The answers go to the real standard output; anything else that
		// prints there goes to standard error instead of into the stream.
		out := os.Stdout
		os.Stdout = os.Stderr
		os.Exit(serve(os.Stdin, out, mem))
	}
}

// ErrKilled matches every *KilledError.
var ErrKilled = errors.New("PDF extraction worker was killed")

// KilledError is a worker that did not answer: it died (Reason "died":
// out of memory under its limit, or a crash) or was killed at its
// deadline ("deadline") or because the caller's context ended
// ("canceled").
type KilledError struct {
	Reason string
	Limit  time.Duration // the deadline, for "deadline"
	Memory int64         // the worker's memory limit in bytes
	Stderr string        // the end of what the worker wrote to stderr
	cause  error
}

func (e *KilledError) Error() string {
	switch e.Reason {
	case "deadline":
		return fmt.Sprintf("PDF extraction worker killed after %v", e.Limit)
	case "canceled":
		return "PDF extraction worker killed: " + e.cause.Error()
	}
	s := fmt.Sprintf("PDF extraction worker died (memory limit %d MiB)", e.Memory>>20)
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	if e.Stderr != "" {
		s += ": " + firstLine(e.Stderr)
	}
	return s
}

func (e *KilledError) Is(target error) bool { return target == ErrKilled }
func (e *KilledError) Unwrap() error        { return e.cause }

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Pool runs extractions in worker processes, one at a time per warm
// worker; concurrent calls beyond the warm one start their own.
type Pool struct {
	Memory int64         // address space beyond start-up (DefaultMemory)
	Grace  time.Duration // past the extraction's time limit (DefaultGrace)
	Reuse  int           // documents per worker (DefaultReuse)

	mu   sync.Mutex
	idle *proc
}

var defaultPool = &Pool{}

// Default is the process's shared pool.
func Default() *Pool { return defaultPool }

// Extract is pdftext.ExtractContext in a worker: the same Document or the
// same typed errors (errors.Is with pdftext's values, errors.As with
// *pdftext.LimitError), or a *KilledError.
func (p *Pool) Extract(ctx context.Context, data []byte, lim pdftext.Limits) (pdftext.Document, error) {
	if err := ctx.Err(); err != nil {
		return pdftext.Document{}, &KilledError{Reason: "canceled", cause: err}
	}
	w, err := p.get()
	if err != nil {
		return pdftext.Document{}, fmt.Errorf("starting PDF extraction worker: %w", err)
	}
	deadline := lim.Time
	if deadline <= 0 {
		deadline = pdftext.MaxDuration
	}
	deadline += p.grace()
	timer := time.NewTimer(deadline)
	defer timer.Stop()

	done := make(chan response, 1)
	go func() { done <- w.call(request{Data: data, Limits: lim}) }()
	select {
	case r := <-done:
		if r.transport != nil {
			w.kill()
			return pdftext.Document{}, &KilledError{Reason: "died", Memory: p.memory(), Stderr: w.stderr.String(), cause: r.transport}
		}
		p.put(w)
		if r.Err != nil {
			return pdftext.Document{}, r.Err.typed()
		}
		return r.Doc, nil
	case <-timer.C:
		w.kill()
		<-done
		return pdftext.Document{}, &KilledError{Reason: "deadline", Limit: deadline, Memory: p.memory()}
	case <-ctx.Done():
		w.kill()
		<-done
		return pdftext.Document{}, &KilledError{Reason: "canceled", Memory: p.memory(), cause: ctx.Err()}
	}
}

// Close stops the warm worker, if any.
func (p *Pool) Close() {
	p.mu.Lock()
	w := p.idle
	p.idle = nil
	p.mu.Unlock()
	if w != nil {
		w.stop()
	}
}

func (p *Pool) memory() int64 {
	if p.Memory > 0 {
		return p.Memory
	}
	return DefaultMemory
}

func (p *Pool) grace() time.Duration {
	if p.Grace > 0 {
		return p.Grace
	}
	return DefaultGrace
}

func (p *Pool) get() (*proc, error) {
	p.mu.Lock()
	w := p.idle
	p.idle = nil
	p.mu.Unlock()
	if w != nil {
		return w, nil
	}
	return start(p.memory())
}

func (p *Pool) put(w *proc) {
	w.used++
	reuse := p.Reuse
	if reuse <= 0 {
		reuse = DefaultReuse
	}
	p.mu.Lock()
	if p.idle == nil && w.used < reuse {
		p.idle = w
		w = nil
	}
	p.mu.Unlock()
	if w != nil {
		w.stop()
	}
}

// proc is one worker process.
type proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr *tailBuffer
	used   int
	once   sync.Once
}

func start(memory int64) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envWorker+"="+strconv.FormatInt(memory, 10))
	cmd.SysProcAttr = procAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w := &proc{cmd: cmd, in: in, enc: gob.NewEncoder(in), dec: gob.NewDecoder(out), stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *proc) call(req request) (r response) {
	if err := w.enc.Encode(req); err != nil {
		return response{transport: err}
	}
	if err := w.dec.Decode(&r); err != nil {
		return response{transport: err}
	}
	return r
}

// kill ends the worker at once and reaps it.
func (w *proc) kill() {
	w.once.Do(func() {
		w.cmd.Process.Kill()
		w.in.Close()
		w.cmd.Wait()
	})
}

// stop ends an idle worker: closing its input ends its loop.
func (w *proc) stop() {
	w.once.Do(func() {
		w.in.Close()
		done := make(chan struct{})
		go func() { w.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			w.cmd.Process.Kill()
			<-done
		}
	})
}

// tailBuffer keeps the first max bytes written (a Go runtime's fatal
// error comes first).
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

type request struct {
	Data   []byte
	Limits pdftext.Limits
}

type response struct {
	Doc       pdftext.Document
	Err       *wireError
	transport error // not sent: the worker did not answer
}

// wireError carries a typed extraction error across the pipe.
type wireError struct {
	Kind  string // one of kinds' keys, or "" for an untyped error
	Limit pdftext.Limit
	Max   int64
	Msg   string
}

var kinds = map[string]error{
	"notpdf":    pdftext.ErrNotPDF,
	"corrupt":   pdftext.ErrCorrupt,
	"encrypted": pdftext.ErrEncrypted,
	"empty":     pdftext.ErrEmpty,
}

func toWire(err error, lim pdftext.Limits) *wireError {
	w := &wireError{Msg: err.Error()}
	var le *pdftext.LimitError
	if errors.As(err, &le) {
		w.Kind, w.Limit, w.Max = "limit", le.Limit, le.Max
		if w.Max == 0 && le.Limit == pdftext.LimitTime {
			w.Max = int64(lim.Time)
		}
		return w
	}
	for k, e := range kinds {
		if errors.Is(err, e) {
			w.Kind = k
		}
	}
	return w
}

// remoteError is the worker's error as the caller sees it: the worker's
// message, matching the same typed value.
type remoteError struct {
	msg string
	err error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.err }

func (w *wireError) typed() error {
	if w.Kind == "limit" {
		max := w.Max
		if max == 0 && w.Limit == pdftext.LimitTime {
			max = int64(pdftext.MaxDuration)
		}
		return &remoteError{w.Msg, &pdftext.LimitError{Limit: w.Limit, Max: max}}
	}
	if e, ok := kinds[w.Kind]; ok {
		return &remoteError{w.Msg, e}
	}
	return errors.New(w.Msg)
}

// serve is the worker's loop: one request, one response, until its input
// closes. It returns the process's exit code.
func serve(in io.Reader, out io.Writer, memory int64) int {
	if err := LimitAddressSpace(memory); err != nil {
		fmt.Fprintf(os.Stderr, "pdf worker: address-space limit: %v\n", err)
		return 3
	}
	// Collect garbage hard well before the hard limit.
	debug.SetMemoryLimit(memory * 3 / 4)
	dec, enc := gob.NewDecoder(in), gob.NewEncoder(out)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "pdf worker: reading request: %v\n", err)
			return 3
		}
		lim := req.Limits
		if lim.Time <= 0 {
			lim.Time = pdftext.MaxDuration
		}
		doc, err := pdftext.ExtractContext(context.Background(), req.Data, lim)
		var r response
		if err != nil {
			r.Err = toWire(err, lim)
		} else {
			r.Doc = doc
		}
		req = request{}
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(os.Stderr, "pdf worker: writing response: %v\n", err)
			return 3
		}
	}
}
