// Package server lets the daemon answer queries (search, resume, ...) for
// other processes of the same user: JSON over HTTP on a unix socket that
// only the user can reach. The CLI and the MCP server call it when a daemon
// runs, and otherwise open the index themselves, so the answers are the
// same either way.
package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// SocketName is the socket's file name in the cache folder.
const SocketName = "daemon.sock"

// maxSocketPath is the longest unix socket path the kernel takes (108 bytes
// on Linux, less elsewhere), with a margin.
const maxSocketPath = 100

// SocketPath is where the daemon of the workspace whose cache folder is
// cacheDir listens. It is in the cache folder when the path is short enough
// for a unix socket; otherwise in a private per-user folder under
// $XDG_RUNTIME_DIR (or the temp folder), named by a hash of cacheDir.
func SocketPath(cacheDir string) string {
	p := filepath.Join(cacheDir, SocketName)
	if len(p) <= maxSocketPath {
		return p
	}
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" {
		base = os.TempDir()
	}
	sum := sha256.Sum256([]byte(cacheDir))
	return filepath.Join(base, fmt.Sprintf("continuity-%d", os.Getuid()), hex.EncodeToString(sum[:8])+".sock")
}
