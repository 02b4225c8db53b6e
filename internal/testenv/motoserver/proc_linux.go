//go:build linux

package motoserver

import "syscall"

// procAttr gives moto_server its own process group, so Stop reaches the
// Python interpreter behind shims such as pyenv's, and has the kernel send it
// SIGTERM when the thread that started it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
