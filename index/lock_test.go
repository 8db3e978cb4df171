package index

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLockContentionAndRelease(t *testing.T) {
	dir := testDir(t)
	l1, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, LockFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v", fi, err)
	}
	_, err = AcquireLock(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second AcquireLock = %v, want ErrLocked", err)
	}
	if want := fmt.Sprintf("another continuity process (pid %d) holds the index lock at %s", os.Getpid(), filepath.Join(dir, LockFileName)); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if err := l1.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("AcquireLock after release: %v", err)
	}
	l2.Close()
	l2.Close() // idempotent
}

// A holder killed with SIGKILL leaves the file, never the lock.
func TestLockReleasedWhenHolderKilled(t *testing.T) {
	dir := testDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CONTINUITY_INDEX_HELPER=lock", "CONTINUITY_INDEX_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = AcquireLock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "(pid "+strconv.Itoa(cmd.Process.Pid)+")") {
		t.Fatalf("AcquireLock while the child holds it = %v, want ErrLocked naming pid %d", err, cmd.Process.Pid)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, LockFileName)); err != nil {
		t.Fatalf("lock file gone: %v", err)
	}
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("AcquireLock after the holder was killed: %v", err)
	}
	l.Close()
}

func helperLock(dir string) {
	l, err := AcquireLock(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	l.Close()
}
