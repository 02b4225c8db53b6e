// Package proc is the tests' name for pkg/childproc, the process handling
// the product's local servers and the test harnesses share (a child in its
// own process group, its output, waits, a stop that ends the group).
// Everything here is pkg/childproc's; nothing is restated.
package proc

import (
	"context"
	"os/exec"
	"time"

	"github.com/pramaan/brief-rail/pkg/childproc"
)

// Types of pkg/childproc.
type (
	Buffer   = childproc.Buffer
	Process  = childproc.Process
	PortRace = childproc.PortRace
)

// ErrExited: the process exited while waited for.
var ErrExited = childproc.ErrExited

// FreePort is childproc.FreePort.
func FreePort() (int, error) { return childproc.FreePort() }

// Start is childproc.Start.
func Start(cmd *exec.Cmd) (*Process, error) { return childproc.Start(cmd) }

// Poll is childproc.Poll.
func Poll(ctx context.Context, every time.Duration, exited <-chan struct{}, try func(context.Context) error) error {
	return childproc.Poll(ctx, every, exited, try)
}

// WaitFor is childproc.WaitFor.
func WaitFor(ctx context.Context, every time.Duration, exited <-chan struct{}, ready func() bool) error {
	return childproc.WaitFor(ctx, every, exited, ready)
}

// WaitPort is childproc.WaitPort.
func WaitPort(ctx context.Context, addr string, every time.Duration, exited <-chan struct{}) error {
	return childproc.WaitPort(ctx, addr, every, exited)
}

// NewPortRace is childproc.NewPortRace.
func NewPortRace() (*PortRace, error) { return childproc.NewPortRace() }
