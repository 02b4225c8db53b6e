//go:build unix && !linux

package motoserver

import "syscall"

// procAttr gives moto_server its own process group, so Stop reaches the
// Python interpreter behind shims such as pyenv's.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
