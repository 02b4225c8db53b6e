//go:build !linux

package worker

import (
	"runtime/debug"
	"syscall"
)

// LimitAddressSpace has no OS limit to set on this system: it sets the Go
// runtime's soft memory limit instead (the deadline still ends the worker).
func LimitAddressSpace(extra int64) error {
	debug.SetMemoryLimit(extra)
	return nil
}

// PeakRSS is not measured on this system.
func PeakRSS() int64 { return 0 }

// procAttr has nothing to add on this system: a worker whose parent dies
// ends when its input closes.
func procAttr() *syscall.SysProcAttr { return nil }
