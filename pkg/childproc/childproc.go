// Package childproc is the process handling the rail's local servers and
// the test harnesses share (make run's PostgreSQL, moto_server, the Lambda
// emulator): a child started in a process group of its own, its output
// collected while it runs, a wait until it listens (or until any condition
// holds), and a stop that ends the whole group.
package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Buffer collects output written by a child process or by goroutines
// while a test reads it; it is safe for concurrent use. The zero value is
// an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago (the
// caller's child may still lose it to another process before binding it).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a started child, the leader of its own process group.
type Process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Start starts cmd and reaps it in the background. Unless the caller set
// cmd.SysProcAttr (which must then ask for Setpgid), the child gets a
// process group of its own, so Stop reaches everything it starts.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the child's process id (and its group's id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the child has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is cmd.Wait's result; call it after Exited is closed.
func (p *Process) Err() error {
	<-p.exited
	return p.waitErr
}

// Stop sends SIGTERM to the child's process group, SIGKILL after grace if
// the child has not exited by then, and waits until it has. The group is
// signalled only while its leader is unreaped: until then its id cannot
// name anyone else's processes. Stopping an exited child does nothing.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	pgid := p.Pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
}

// ErrExited is the waits' error when the watched process exited first.
var ErrExited = errors.New("process exited")

// Poll calls try, then again every interval, until it returns nil (Poll
// returns nil), the process behind exited ends first (ErrExited; exited may
// be nil) or ctx ends (ctx's error, with try's last error). The context try
// gets is cancelled when the process exits, so a pending attempt does not
// outlive it. It polls for a condition; the deadline is ctx's.
func Poll(ctx context.Context, every time.Duration, exited <-chan struct{}, try func(context.Context) error) error {
	tryCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if exited != nil {
		go func() {
			select {
			case <-exited:
				cancel()
			case <-tryCtx.Done():
			}
		}()
	}
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		lastErr := try(tryCtx)
		if lastErr == nil {
			return nil
		}
		select {
		case <-exited:
			return ErrExited
		default:
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w (last attempt: %v)", err, lastErr)
		}
		t.Reset(every)
		select {
		case <-exited:
			return ErrExited
		case <-ctx.Done():
			return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), lastErr)
		case <-t.C:
		}
	}
}

var errNotYet = errors.New("not yet")

// WaitFor polls with Poll until ready returns true.
func WaitFor(ctx context.Context, every time.Duration, exited <-chan struct{}, ready func() bool) error {
	return Poll(ctx, every, exited, func(context.Context) error {
		if ready() {
			return nil
		}
		return errNotYet
	})
}

// WaitPort polls with Poll until addr (host:port) accepts a TCP
// connection (each attempt bounded by a second).
func WaitPort(ctx context.Context, addr string, every time.Duration, exited <-chan struct{}) error {
	d := net.Dialer{Timeout: time.Second}
	return Poll(ctx, every, exited, func(ctx context.Context) error {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// PortRace stands in for a port picker in a test of a start that loses
// its port between picking and binding: the first Pick is a port a
// listener holds (Taken), later picks are free ports.
type PortRace struct {
	Taken int
	Picks int // how many times Pick was called
	l     net.Listener
}

// NewPortRace listens on a free port of 127.0.0.1 and holds it until Close.
func NewPortRace() (*PortRace, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &PortRace{Taken: l.Addr().(*net.TCPAddr).Port, l: l}, nil
}

// Pick returns Taken the first time, then FreePort's ports.
func (r *PortRace) Pick() (int, error) {
	r.Picks++
	if r.Picks == 1 {
		return r.Taken, nil
	}
	return FreePort()
}

// Close releases the taken port.
func (r *PortRace) Close() error { return r.l.Close() }
