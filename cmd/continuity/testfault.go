package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
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

// envTestBM25Pause (a duration) slows the daemon's bm25 engine build down,
// a pause after each step, and envTestBM25Flush (a count of exchanges)
// makes it flush that often: for the tests that kill the daemon in the
// middle of a build. Never set them otherwise.
const (
	envTestBM25Pause = "CONTINUITY_TEST_BM25_PAUSE"
	envTestBM25Flush = "CONTINUITY_TEST_BM25_FLUSH"
)

// lexiconConfig is the daemon's bm25 engine set-up, with the test hooks.
func lexiconConfig(db *index.DB, log *slog.Logger) search.LexiconConfig {
	cfg := search.LexiconConfig{DB: db, Logger: log}
	if d, err := time.ParseDuration(os.Getenv(envTestBM25Pause)); err == nil {
		cfg.StepPause = d
	}
	if n, err := strconv.Atoi(os.Getenv(envTestBM25Flush)); err == nil {
		cfg.FlushDocs = n
	}
	return cfg
}
