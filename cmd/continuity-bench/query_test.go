package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/server"
)

// queryWorkspace is a workspace with a cache folder (where the lock and
// the socket live).
func queryWorkspace(t *testing.T) (ws, cache string) {
	t.Helper()
	// A short path: unix socket paths are limited to 108 bytes.
	ws, err := os.MkdirTemp("", "cbq")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	cache = filepath.Join(ws, ".praxis-os", ".cache", "continuity")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	return ws, cache
}

// fakeDaemon answers ping on the workspace's socket as pid would.
func fakeDaemon(t *testing.T, cache string, pid int) {
	t.Helper()
	srv := server.New(server.SocketPath(cache), nil)
	srv.Handle("ping", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"pid": pid, "version": "test"}, nil
	})
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// The query bench measures the daemon it starts, never one that already
// serves the workspace: it refuses, saying which process is in the way.
func TestQueryBenchRefusesAnotherDaemon(t *testing.T) {
	ctx := context.Background()
	t.Run("a daemon answers on the socket", func(t *testing.T) {
		ws, cache := queryWorkspace(t)
		fakeDaemon(t, cache, 4242)
		for _, f := range []func() error{
			func() error { return measureQuery(ctx, "/bin/true", ws, 10, 1) },
			func() error { return benchQuery(ctx, "/bin/true", ws, 10, vectorsSeed, 1, false) },
		} {
			err := f()
			if err == nil || !strings.Contains(err.Error(), "a continuity daemon (pid 4242) already serves "+ws) {
				t.Errorf("err = %v, want a refusal naming pid 4242", err)
			}
		}
		if _, err := os.Stat(filepath.Join(ws, "continuity-bench-size")); err == nil {
			t.Error("the workspace was prepared anyway")
		}
	})
	t.Run("a process holds the index lock", func(t *testing.T) {
		ws, cache := queryWorkspace(t)
		l, err := index.AcquireLock(cache)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		err = measureQuery(ctx, "/bin/true", ws, 10, 1)
		if err == nil || !strings.Contains(err.Error(), ws+" is in use") || !strings.Contains(err.Error(), "holds the index lock") {
			t.Errorf("err = %v, want a refusal naming the lock", err)
		}
	})
	t.Run("the daemon started exits", func(t *testing.T) {
		ws, _ := queryWorkspace(t)
		err := measureQuery(ctx, "/bin/false", ws, 10, 1)
		if err == nil || !strings.Contains(err.Error(), "the daemon (/bin/false) exited before it was ready") {
			t.Errorf("err = %v, want the daemon's early exit", err)
		}
	})
	t.Run("another process answers", func(t *testing.T) {
		_, cache := queryWorkspace(t)
		fakeDaemon(t, cache, 4242)
		err := checkServedBy(ctx, server.NewClient(server.SocketPath(cache)), 77)
		if err == nil || !strings.Contains(err.Error(), "served by pid 4242, not by the daemon the bench started (pid 77)") {
			t.Errorf("err = %v", err)
		}
		if err := checkServedBy(ctx, server.NewClient(server.SocketPath(cache)), 4242); err != nil {
			t.Errorf("served by the right pid: %v", err)
		}
	})
}
