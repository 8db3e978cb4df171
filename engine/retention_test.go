package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxis-os/continuity/workspace"
)

// TestRetainSeesEventsStoredDuringAPass: a session older than the
// retention that is stored while a retention pass runs (the daemon's
// first catch-up runs beside its first pass) is forgotten by the next
// pass, within seconds. Before, the pass recorded the index's mark read
// after it, which took that session in: it stayed until the next period
// (up to an hour; CI's TestRetention hung on it under -race).
func TestRetainSeesEventsStoredDuringAPass(t *testing.T) {
	ws := workspace.At(t.TempDir())
	if err := os.MkdirAll(ws.Logs, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	line := func(id, session string, at time.Time) string {
		return fmt.Sprintf(`{"type":"exchange","id":%q,"session_id":%q,"timestamp":%q,"user":"u","ai":"a"}`+"\n", id, session, at.Format(time.RFC3339))
	}
	log := filepath.Join(ws.Logs, "a.jsonl")
	if err := os.WriteFile(log, []byte(line("n1", "recent", now.Add(-time.Hour))), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := Open(ws, Options{Embedder: hashEmbedder(t), Retain: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var stored atomic.Bool
	retainPassed = func() {
		if stored.Load() {
			return
		}
		// During the first pass: an old session arrives.
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(line("o1", "late", now.AddDate(0, 0, -40)))
			f.Close()
		}
		if err == nil {
			_, err = e.CatchUp(ctx, nil)
		}
		if err != nil {
			t.Errorf("storing the old session during the pass: %v", err)
		}
		stored.Store(true)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.retain(rctx) }()
	defer func() {
		cancel()
		<-done
		retainPassed = nil
	}()
	// The pass forgets, then counts: both are waited for.
	waitFor(t, "the old session stored during the first pass to be forgotten, and counted", func() bool {
		ok, err := e.db.SessionExists(ctx, "late")
		return stored.Load() && err == nil && !ok && e.retention.report(e.opts.Retain).Forgotten == 1
	})
	if ok, err := e.db.SessionExists(ctx, "recent"); err != nil || !ok {
		t.Errorf("the recent session: exists %v, %v; want kept", ok, err)
	}
}
