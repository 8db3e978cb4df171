package engine

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFollowTombstonesWarnsOnce: a tombstone file with a line that is not
// a forget is tried again at every look, but warned of once until the
// files change (it was warned of every second); once fixed, its forgets
// are carried out.
func TestFollowTombstonesWarnsOnce(t *testing.T) {
	ws := newLayout(t)
	var logs lockedBuffer
	e := openIngested(t, ws, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer e.Close()
	file := filepath.Join(ws.Logs, ".forgotten.desktop")
	if err := os.WriteFile(file, []byte("<<<<<<< HEAD\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var f tombstoneFollow
	for range 3 {
		e.followStep(ctx, &f)
	}
	if n := strings.Count(logs.String(), "cannot carry out the forgets"); n != 1 {
		t.Errorf("%d warnings for three looks at one broken file, want 1:\n%s", n, logs.String())
	}
	if err := os.WriteFile(file, []byte(`{"session":"b","forgotten_at":"2026-11-29T00:00:00Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.followStep(ctx, &f)
	if ok, err := e.db.SessionExists(ctx, "b"); err != nil || ok {
		t.Errorf("session b after the file was fixed: exists %v, %v", ok, err)
	}
	if f.warned != "" || f.last == "" {
		t.Errorf("after the fix: %+v", f)
	}
}

// TestFollowTombstonesFromStart: another machine's forget synced after
// the daemon opened the index (its tombstones applied) but before it
// started following them is carried out at the first look. Before, the
// follower took the files' signature when it started, with that forget in
// it, and carried it out only at the next change of the files (CI:
// TestTwoMachinesRandom, a forget synced while a rebuilt daemon started).
func TestFollowTombstonesFromStart(t *testing.T) {
	ws := newLayout(t)
	e := openIngested(t, ws, Options{})
	defer e.Close()
	if err := os.WriteFile(filepath.Join(ws.Logs, ".forgotten.desktop"), []byte(`{"session":"b","forgotten_at":"2026-11-29T00:00:00Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.followTombstones(rctx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor(t, "session b forgotten by the forget synced before the follower started", func() bool {
		ok, err := e.db.SessionExists(ctx, "b")
		return err == nil && !ok
	})
	if ok, err := e.db.SessionExists(ctx, "a"); err != nil || !ok {
		t.Errorf("session a: exists %v, %v; want kept", ok, err)
	}
}
