//go:build unix

package ui

import (
	"os/exec"
	"syscall"
)

// detach puts cmd in a process group of its own.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
