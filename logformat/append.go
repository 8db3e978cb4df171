//go:build unix

package logformat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// AppendLine appends line, which must be one complete line ending in "\n",
// to the log file at path, creating the file (mode 0600) and its parent
// directory (0700) when missing.
//
// Several agents may append to the same file at once, and the daemon may be
// reading it. The file is opened with O_APPEND, so that every write goes to
// the current end of the file, and the whole line is passed to a single
// write(2) call: on Linux local filesystems (ext4, xfs, btrfs, tmpfs) one
// O_APPEND write is done under the inode lock, as one unit, so lines of
// concurrent writers never interleave, whatever their size (PIPE_BUF only
// bounds atomicity for pipes). Splitting the line over several writes, as
// os.File.Write does after a short write and stdio-buffered writers such as
// jq do for lines over 4096 bytes, loses that guarantee; so a short write is
// an error here, and a best-effort "\n" then ends the fragment so that the
// next line is not glued to it (the daemon rejects the fragment alone).
// Network filesystems such as NFS give no such guarantee.
//
// The last path element must be a regular file: O_NOFOLLOW refuses a
// symbolic link, and FIFOs, devices, sockets and directories are refused
// (O_NONBLOCK keeps a FIFO from blocking the open).
func AppendLine(path string, line []byte) error {
	a, err := OpenAppender(path)
	if err != nil {
		return err
	}
	if err := a.Append(line); err != nil {
		a.Close()
		return err
	}
	return a.Close()
}

// Appender appends lines to one log file, each with the guarantees of
// AppendLine (one O_APPEND write(2) per line, a short write an error), for
// a writer with many lines for the same file: the file is opened once.
type Appender struct {
	f    *os.File
	path string
}

// OpenAppender opens path for appending as AppendLine does: created 0600
// in a 0700 folder when missing, never through a symbolic link, regular
// files only.
func OpenAppender(path string) (*Appender, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("logformat: AppendLine: %s is a symbolic link: %w", path, err)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("logformat: AppendLine: %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return &Appender{f: f, path: path}, nil
}

// Append appends line, which must be one complete line ending in "\n", in
// one write(2) call.
func (a *Appender) Append(line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return errors.New("logformat: AppendLine: line does not end in \"\\n\"")
	}
	if bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return errors.New("logformat: AppendLine: line holds more than one \"\\n\"")
	}
	n, err := writeOnce(a.f, line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("logformat: AppendLine: short write to %s: %d of %d bytes", a.path, n, len(line))
	}
	if err != nil {
		if n > 0 && n < len(line) {
			writeOnce(a.f, []byte{'\n'}) // best effort: end the fragment
		}
		return err
	}
	return nil
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }

// writeOnce makes exactly one write(2) call (repeated only when it was
// interrupted before writing anything). os.File.Write would loop over short
// writes, splitting the line.
func writeOnce(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if werr != syscall.EINTR {
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	if werr != nil {
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: werr}
	}
	return n, nil
}
