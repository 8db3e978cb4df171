//go:build !unix

package logformat

import "errors"

// AppendLine is not supported on this system: it needs O_APPEND and
// O_NOFOLLOW semantics (see the unix version).
func AppendLine(path string, line []byte) error {
	return errors.New("logformat: AppendLine is supported on Unix systems only")
}

// Appender is not supported on this system (see AppendLine).
type Appender struct{}

// OpenAppender is not supported on this system.
func OpenAppender(path string) (*Appender, error) {
	return nil, errors.New("logformat: OpenAppender is supported on Unix systems only")
}

// Append is not supported on this system.
func (a *Appender) Append(line []byte) error { return errors.New("logformat: unsupported") }

// Close does nothing.
func (a *Appender) Close() error { return nil }
