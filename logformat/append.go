//go:build unix

package logformat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
// A file that does not end in "\n" may hold the unfinished last line of a
// writer that crashed: the line is then written as "\n" + line, in the same
// single write, so that it starts on a fresh line instead of being glued
// onto the fragment (which becomes a line of its own, rejected alone with a
// reason, while this one is indexed). Another writer's line still being
// copied in is told apart by where the file ends (see fragment). After the
// write, the byte before the line is read back: if the line was glued onto
// something after all (a fragment that slipped in, or one taken for a write
// in progress), it is written once more, now on a fresh line (the glued
// copy is rejected; the second one is indexed). An error means the line may not be
// in the file whole: callers must not report success.
//
// This needs read access to the file; a write-only log is appended to
// without these checks.
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
// AppendLine (one O_APPEND write(2) per line, a fresh line after a crashed
// writer's fragment, a short write an error), for a writer with many lines
// for the same file: the file is opened once.
type Appender struct {
	f        *os.File
	path     string
	readable bool // the file could be opened for reading: the fragment checks run
}

// OpenAppender opens path for appending as AppendLine does: created 0600
// in a 0700 folder when missing, never through a symbolic link, regular
// files only.
func OpenAppender(path string) (*Appender, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	const flags = os.O_APPEND | os.O_CREATE | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_NOCTTY
	// Read access lets Append look at the byte before the line; a
	// write-only file is still appended to, without that check.
	f, err := os.OpenFile(path, os.O_RDWR|flags, 0o600)
	readable := err == nil
	if errors.Is(err, os.ErrPermission) {
		f, err = os.OpenFile(path, os.O_WRONLY|flags, 0o600)
	}
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
	return &Appender{f: f, path: path, readable: readable}, nil
}

// Append appends line, which must be one complete line ending in "\n", in
// one write(2) call (two when it had to be repeated on a fresh line; see
// AppendLine).
func (a *Appender) Append(line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return errors.New("logformat: AppendLine: line does not end in \"\\n\"")
	}
	if bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return errors.New("logformat: AppendLine: line holds more than one \"\\n\"")
	}
	f, path := a.f, a.path
	buf := line
	if a.readable {
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("logformat: AppendLine: %s: %w", path, err)
		}
		if !endsLine(f, fi.Size()) && fragment(fi.Size()) {
			buf = append([]byte{'\n'}, line...)
		}
	}
	for attempt := 0; ; attempt++ {
		n, err := writeOnce(f, buf)
		if err == nil && n != len(buf) {
			err = fmt.Errorf("logformat: AppendLine: short write to %s: %d of %d bytes", path, n, len(buf))
		}
		if err != nil {
			if n > 0 && n < len(buf) {
				writeOnce(f, []byte{'\n'}) // best effort: end the fragment
			}
			return err
		}
		if !a.readable {
			break
		}
		// With O_APPEND the file offset is now just past the bytes
		// written: check that the line starts a line.
		end, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return fmt.Errorf("logformat: AppendLine: %s: %w", path, err)
		}
		if start := end - int64(len(line)); start <= 0 || endsLine(f, start) {
			break
		}
		if attempt > 0 {
			return fmt.Errorf("logformat: AppendLine: %s: the line was glued onto another writer's unfinished line twice", path)
		}
		buf = line // the glued copy ended in "\n"
	}
	return nil
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }

// fragment reports whether a file of size bytes whose last byte is not
// "\n" ends in a crashed writer's fragment rather than in another
// writer's line still being copied into the file: a reader can see a large
// write half done, but only at a page boundary (the kernel copies a
// buffered write page by page, growing the file after each), so an
// unterminated end off a page boundary is a fragment. One on a boundary is
// left to the check after the write.
func fragment(size int64) bool {
	return size%int64(os.Getpagesize()) != 0
}

// endsLine reports whether the first size bytes of f are empty or end in
// "\n" (an unreadable byte counts as a line end: nothing to repair).
func endsLine(f *os.File, size int64) bool {
	if size <= 0 {
		return true
	}
	var b [1]byte
	if n, err := f.ReadAt(b[:], size-1); n != 1 && err != nil {
		return true
	}
	return b[0] == '\n'
}

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
