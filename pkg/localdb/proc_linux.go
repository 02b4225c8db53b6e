//go:build linux

package localdb

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procAttr runs the child in its own process group, as cred when non-nil, and
// asks the kernel to send it deathSig when the thread that started it dies,
// so a crashed caller does not leave a postmaster behind. Go applies the
// credential before the death signal, so the kernel does not clear it.
func procAttr(cred *syscall.Credential, deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: deathSig}
}

// isPostgres reports whether the live process pid runs a postgres binary.
func isPostgres(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return processAlive(pid) // no /proc: assume the worst
	}
	comm := strings.TrimSpace(string(b))
	return comm == "postgres" || comm == "postmaster"
}

// processAlive reports whether pid names a process that has not exited
// (zombies, which hold no resources, count as exited).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return signalZero(pid)
	}
	// Format: pid (comm) state ...; comm may hold spaces and parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
