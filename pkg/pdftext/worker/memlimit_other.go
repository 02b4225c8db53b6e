//go:build !linux

package worker

import "runtime/debug"

// LimitAddressSpace has no OS limit to set on this system: it sets the Go
// runtime's soft memory limit instead (the deadline still ends the worker).
func LimitAddressSpace(extra int64) error {
	debug.SetMemoryLimit(extra)
	return nil
}

// PeakRSS is not measured on this system.
func PeakRSS() int64 { return 0 }
