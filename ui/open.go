package ui

import (
	"context"
	"os/exec"
	"runtime"
	"time"
)

// OpenBrowser asks the desktop to open url in the user's browser
// (xdg-open, open, or start), and reports whether a command for it was
// found and started. It never fails the caller: without a desktop, the
// URL printed is enough.
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, path, args...)
	if err := cmd.Start(); err != nil {
		cancel()
		return false
	}
	go func() {
		defer cancel()
		_ = cmd.Wait()
	}()
	return true
}
