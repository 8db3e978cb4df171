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

	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/watcher"
)

// envTestFaultCommit names a file; while it exists, the daemon's commits
// fail with ENOSPC, as on a full disk. For the fault-matrix tests on
// machines where they cannot mount a small filesystem (not root).
const envTestFaultCommit = "CONTINUITY_TEST_FAULT_COMMIT"

// envTestEditPause (a duration) pauses the daemon before and after it
// applies an edit of a log in place (watcher.EditPlan.Apply), logging
// "test hook: pausing" each time: for the tests that kill it there.
const envTestEditPause = "CONTINUITY_TEST_EDIT_PAUSE"

// indexStore is what the watcher uses of the index.
type indexStore interface {
	watcher.Store
	watcher.Editor
	watcher.LineMatcher
}

// faultStore is the index whose commits fail while a flag file exists
// (see envTestFaultCommit) and whose edits pause (envTestEditPause).
type faultStore struct {
	indexStore
	flag  string
	pause time.Duration
}

func (s faultStore) Commit(ctx context.Context, b watcher.Batch) error {
	if _, err := os.Stat(s.flag); s.flag != "" && err == nil {
		return fmt.Errorf("index: commit batch for %s: database or disk is full (injected by %s): %w", b.Gen.Path, envTestFaultCommit, syscall.ENOSPC)
	}
	return s.indexStore.Commit(ctx, b)
}

func (s faultStore) PlanEdit(ctx context.Context, prev watcher.Generation, name string, read func(func([]watcher.Line) error) error) (watcher.EditPlan, error) {
	p, err := s.indexStore.PlanEdit(ctx, prev, name, read)
	if err != nil || s.pause <= 0 {
		return p, err
	}
	return pausedEdit{EditPlan: p, pause: s.pause}, nil
}

// pausedEdit pauses before and after it applies an edit.
type pausedEdit struct {
	watcher.EditPlan
	pause time.Duration
}

func (p pausedEdit) Apply(ctx context.Context, g watcher.Generation) (int64, []int64, error) {
	fmt.Fprintf(os.Stderr, "test hook: pausing before applying the edit of %s\n", g.Path)
	time.Sleep(p.pause)
	id, removed, err := p.EditPlan.Apply(ctx, g)
	fmt.Fprintf(os.Stderr, "test hook: pausing after applying the edit of %s (err %v)\n", g.Path, err)
	time.Sleep(p.pause)
	return id, removed, err
}

// withTestFaults wraps db when a test hook is set.
func withTestFaults(db *index.DB) watcher.Store {
	flag := os.Getenv(envTestFaultCommit)
	pause, _ := time.ParseDuration(os.Getenv(envTestEditPause))
	if flag != "" || pause > 0 {
		return faultStore{indexStore: db, flag: flag, pause: pause}
	}
	return db
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
func lexiconConfig(db *index.DB, log *slog.Logger) lexicon.Config {
	cfg := lexicon.Config{DB: db, Logger: log}
	if d, err := time.ParseDuration(os.Getenv(envTestBM25Pause)); err == nil {
		cfg.StepPause = d
	}
	if n, err := strconv.Atoi(os.Getenv(envTestBM25Flush)); err == nil {
		cfg.FlushDocs = n
	}
	return cfg
}
