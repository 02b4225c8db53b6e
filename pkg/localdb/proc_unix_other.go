//go:build unix && !linux

package localdb

import "syscall"

// procAttr runs the child in its own process group and as cred when non-nil.
// Outside Linux there is no parent-death signal: a caller that crashes
// without calling Stop leaves the postmaster running.
func procAttr(cred *syscall.Credential, _ syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}

// isPostgres cannot check the program without /proc; a live pid is assumed
// to be a postgres so that a running server is never disturbed.
func isPostgres(pid int) bool { return processAlive(pid) }

func processAlive(pid int) bool { return pid > 0 && signalZero(pid) }
