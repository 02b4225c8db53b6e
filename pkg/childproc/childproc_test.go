package childproc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/childproc"
)

// Stop ends the child's whole group: a grandchild the child started in the
// background is gone too (signal 0 to its pid fails), and the child's
// output collected on the way is all there.
func TestStopEndsTheGroup(t *testing.T) {
	out := &childproc.Buffer{}
	cmd := exec.Command("sh", "-c", `sleep 600 & echo "child $!"; wait`)
	cmd.Stdout, cmd.Stderr = out, out
	// Without the group stop, the grandchild would hold the output pipe
	// open and Wait with it: fail instead of hanging.
	cmd.WaitDelay = time.Second
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := childproc.WaitFor(ctx, 10*time.Millisecond, p.Exited(), func() bool {
		return strings.Contains(out.String(), "\n")
	}); err != nil {
		t.Fatalf("no output from the child: %v (%q)", err, out.String())
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out.String(), "child ")))
	if err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if err := syscall.Kill(grandchild, 0); err != nil {
		t.Fatalf("grandchild %d not running before Stop: %v", grandchild, err)
	}
	p.Stop(10 * time.Second)
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the child exited")
	}
	// The grandchild is not ours to reap: poll until it is gone or a zombie.
	if err := childproc.WaitFor(ctx, 10*time.Millisecond, nil, func() bool { return gone(grandchild) }); err != nil {
		t.Fatalf("grandchild %d still running after Stop: %v", grandchild, err)
	}
	var ee *exec.ExitError
	if err := p.Err(); !errors.As(err, &ee) {
		t.Fatalf("Err after a SIGTERM: %v, want an *exec.ExitError", err)
	}
	p.Stop(time.Second) // a second Stop does nothing
}

// gone reports whether pid has ended: no such process, or a zombie waiting
// for its new parent to reap it.
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may hold spaces, the state follows its ")".
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// A child that ignores SIGTERM is killed after the grace period.
func TestStopKillsAfterGrace(t *testing.T) {
	out := &childproc.Buffer{}
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo ready; while :; do sleep 1; done`)
	cmd.Stdout = out
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := childproc.WaitFor(ctx, 10*time.Millisecond, p.Exited(), func() bool {
		return strings.Contains(out.String(), "ready")
	}); err != nil {
		t.Fatalf("child not ready: %v", err)
	}
	p.Stop(100 * time.Millisecond)
	var ee *exec.ExitError
	if err := p.Err(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Err: %v, want killed by SIGKILL", err)
	}
}

func TestWaitPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := childproc.WaitPort(ctx, l.Addr().String(), 10*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("process exited", func(t *testing.T) {
		port, err := childproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		p, err := childproc.Start(exec.Command("true"))
		if err != nil {
			t.Fatal(err)
		}
		err = childproc.WaitPort(ctx, fmt.Sprintf("127.0.0.1:%d", port), 10*time.Millisecond, p.Exited())
		if !errors.Is(err, childproc.ErrExited) {
			t.Fatalf("got %v, want ErrExited", err)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		port, err := childproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		err = childproc.WaitPort(short, fmt.Sprintf("127.0.0.1:%d", port), 10*time.Millisecond, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the context's deadline", err)
		}
	})
}

// WaitFor asks first, before any wait, and stops as soon as ready says so.
func TestWaitForAsksFirst(t *testing.T) {
	calls := 0
	err := childproc.WaitFor(context.Background(), time.Hour, nil, func() bool { calls++; return true })
	if err != nil || calls != 1 {
		t.Fatalf("err %v after %d calls, want nil after 1", err, calls)
	}
}

// Buffer takes writes from many goroutines (run with -race).
func TestBufferConcurrent(t *testing.T) {
	var b childproc.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}

// A pending attempt ends when the process exits (its context is
// cancelled), and Poll reports the exit; at ctx's end it names the last
// attempt's error.
func TestPollStopsWithTheProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command("sh", "-c", "read line")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	attempts := 0
	err = childproc.Poll(ctx, 10*time.Millisecond, p.Exited(), func(ctx context.Context) error {
		attempts++
		if attempts == 1 {
			return errors.New("not yet")
		}
		stdin.Close() // the child exits while this attempt waits
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, childproc.ErrExited) || attempts != 2 {
		t.Fatalf("Poll: %v after %d attempts, want ErrExited after 2", err, attempts)
	}

	short, cancelShort := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancelShort()
	err = childproc.Poll(short, 10*time.Millisecond, nil, func(context.Context) error { return errors.New("refused") })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "(last attempt: refused)") {
		t.Fatalf("Poll at the deadline: %v", err)
	}
}
