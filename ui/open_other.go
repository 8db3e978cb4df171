//go:build !unix

package ui

import "os/exec"

func detach(*exec.Cmd) {}
