package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/praxis-os/continuity/watcher"
)

// envTestFaultCommit names a file; while it exists, the daemon's commits
// fail with ENOSPC, as on a full disk. For the fault-matrix tests on
// machines where they cannot mount a small filesystem (not root); never set
// it otherwise.
const envTestFaultCommit = "CONTINUITY_TEST_FAULT_COMMIT"

// faultStore is a watcher.Store whose commits fail while a flag file
// exists (see envTestFaultCommit).
type faultStore struct {
	watcher.Store
	flag string
}

func (s faultStore) Commit(ctx context.Context, b watcher.Batch) error {
	if _, err := os.Stat(s.flag); err == nil {
		return fmt.Errorf("index: commit batch for %s: database or disk is full (injected by %s): %w", b.Gen.Path, envTestFaultCommit, syscall.ENOSPC)
	}
	return s.Store.Commit(ctx, b)
}

// withTestFaults wraps st when the test hook is set.
func withTestFaults(st watcher.Store) watcher.Store {
	if flag := os.Getenv(envTestFaultCommit); flag != "" {
		return faultStore{Store: st, flag: flag}
	}
	return st
}
