package engine

import (
	"bytes"
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
