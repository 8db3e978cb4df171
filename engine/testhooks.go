//go:build continuity_testhooks

// Fault injection for the end-to-end tests, compiled into their binary
// only (go build -tags sqlite_fts5,continuity_testhooks): environment
// variables that make commits fail as on a full disk, and slow the bm25
// engine's build down. The shipped binary has none (testhooks_off.go).

package engine

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
// machines where they cannot mount a small filesystem (not root).
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
// middle of a build.
const (
	envTestBM25Pause = "CONTINUITY_TEST_BM25_PAUSE"
	envTestBM25Flush = "CONTINUITY_TEST_BM25_FLUSH"
)

// lexiconConfig is the bm25 engine's set-up, with the test hooks.
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
