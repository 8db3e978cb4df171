package ui

import (
	"os/exec"
	"runtime"
)

// OpenBrowser asks the desktop to open url in the user's browser
// (xdg-open, open, or start), and reports whether a command for it was
// found and started. It never fails the caller: without a desktop, the
// URL printed is enough. The opener runs in its own process group, so
// that the Ctrl-C which stops the viewer does not close the browser it
// may have started.
func OpenBrowser(url string) bool {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name, args = "open", []string{url}
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	default:
		name, args = "xdg-open", []string{url}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return false
	}
	cmd := exec.Command(path, args...)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return false
	}
	go func() { _ = cmd.Wait() }() // reaped, never waited for
	return true
}
