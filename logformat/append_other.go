//go:build !unix

package logformat

import "errors"

// AppendLine is not supported on this system: it needs O_APPEND and
// O_NOFOLLOW semantics (see the unix version).
func AppendLine(path string, line []byte) error {
	return errors.New("logformat: AppendLine is supported on Unix systems only")
}
