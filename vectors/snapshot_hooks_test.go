//go:build continuity_testhooks

// The tests that hold the snapshot writer through testHookSnapshot
// (testhooks.go): go test -tags sqlite_fts5,continuity_testhooks ./vectors
// (.ci/run runs them).

package vectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/indextest"
)

// TestWorkerWaitsForSnapshot: a worker's Run returns only once the vector
// snapshot its load started is finished or given up (its context done),
// leaving no temporary file: a daemon that stops must not leave one.
func TestWorkerWaitsForSnapshot(t *testing.T) {
	oldMin, oldRewrite := snapshotMin, snapshotRewrite
	snapshotMin, snapshotRewrite = 50, 20
	t.Cleanup(func() { snapshotMin, snapshotRewrite, testHookSnapshot = oldMin, oldRewrite, nil })
	f := indextest.New(t)
	e := indextest.Hash(t, 64)
	var lines []string
	for i := range 80 {
		lines = append(lines, indextest.Exchange(fmt.Sprintf("x%d", i), "s", indextest.At(i), fmt.Sprintf("question %d", i), "answer"))
	}
	f.Commit(lines...)
	drain(t, f.DB, e)
	for _, p := range []string{SnapshotPath(f.DB, SpaceIdentity(e))} {
		os.Remove(p) // the next load reads the index, and writes a snapshot
	}
	started, release := make(chan struct{}), make(chan struct{})
	testHookSnapshot = func() { close(started); <-release }
	w, err := NewWorker(WorkerConfig{DB: f.DB, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot writer started")
	}
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while the snapshot writer was still running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once the writer could finish")
	}
	if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(SnapshotPath(f.DB, SpaceIdentity(e))), ".vectors-*.tmp")); len(tmps) > 0 {
		t.Errorf("left %v", tmps)
	}
}
