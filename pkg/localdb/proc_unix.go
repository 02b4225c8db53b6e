//go:build unix

package localdb

import (
	"errors"
	"syscall"
)

// signalZero probes pid with signal 0: alive unless the kernel says no such
// process (EPERM means it exists but belongs to someone else).
func signalZero(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
