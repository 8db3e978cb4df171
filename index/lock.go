package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFileName is the daemon lock's file name inside the cache folder.
const LockFileName = "daemon.lock"

// ErrLocked is wrapped by AcquireLock's error when another process holds
// the lock.
var ErrLocked = errors.New("index is locked by another process")

// Lock is the exclusive right to write the index of one workspace.
type Lock struct {
	f    *os.File
	path string
}

// AcquireLock takes the daemon lock in dir (created 0700 if needed) without
// waiting: flock(LOCK_EX|LOCK_NB) on dir/daemon.lock, which then holds the
// holder's pid for the error message of the next contender.
//
// The lock is the flock, not the file: the kernel drops it when the holder
// exits, even by kill -9, so a stale file never blocks. The file is never
// removed (removing it would let two processes lock two different files).
// flock locks belong to an open file description, so two AcquireLock calls
// in one process conflict too.
func AcquireLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFileName)
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("index: lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, fmt.Errorf("index: lock %s: %w", path, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := readPID(f); pid > 0 {
				return nil, fmt.Errorf("another continuity process (pid %d) holds the index lock at %s: %w", pid, path, ErrLocked)
			}
			return nil, fmt.Errorf("another continuity process holds the index lock at %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("index: lock %s: %w", path, err)
	}
	l := &Lock{f: f, path: path}
	if err := l.writePID(); err != nil {
		l.Close()
		return nil, fmt.Errorf("index: lock %s: %w", path, err)
	}
	return l, nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

func (l *Lock) writePID() error {
	if err := l.f.Chmod(filePerm); err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// ErrCacheGone is wrapped by the errors of Lock.Check and DB.CheckFiles
// when a file the process holds open was deleted or replaced under it
// (rm -rf of the cache folder): it then works on files nobody else sees.
var ErrCacheGone = errors.New("deleted or replaced under the running process")

// Check reports (ErrCacheGone) when the lock file at Path is no longer the
// file this lock holds: deleted or replaced, so that another process could
// take "the" lock while this one still believes it holds it.
func (l *Lock) Check() error {
	if l == nil || l.f == nil {
		return nil
	}
	return sameFile(l.f, l.path)
}

// sameFile reports ErrCacheGone when path does not name the open file f.
func sameFile(f *os.File, path string) error {
	held, err := f.Stat()
	if err != nil {
		return fmt.Errorf("index: stat %s: %w", path, err)
	}
	now, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", path, ErrCacheGone)
	case err != nil:
		return fmt.Errorf("index: stat %s: %w", path, err)
	case !os.SameFile(held, now):
		return fmt.Errorf("%s: %w (another file is there now)", path, ErrCacheGone)
	}
	return nil
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Close releases the lock. The file stays.
func (l *Lock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the only descriptor releases the flock
	l.f = nil
	if err != nil {
		return fmt.Errorf("index: unlock %s: %w", l.path, err)
	}
	return nil
}
