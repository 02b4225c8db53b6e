package worker

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// LimitAddressSpace caps this process's address space (RLIMIT_AS) at what
// it has mapped now plus extra bytes, so that any further allocation past
// extra fails and the Go runtime exits ("out of memory") instead of the
// machine swapping. The cap counts from the current size because the Go
// runtime reserves several hundred MiB of address space at start-up that
// it never touches; a cap set before start-up would stop it starting.
func LimitAddressSpace(extra int64) error {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return err
	}
	f := bytes.Fields(statm)
	if len(f) == 0 {
		return syscall.EINVAL
	}
	pages, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return err
	}
	limit := uint64(pages*int64(os.Getpagesize()) + extra)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

// PeakRSS is the largest resident set size of this process so far.
func PeakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// procAttr makes the kernel kill a worker whose parent dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
