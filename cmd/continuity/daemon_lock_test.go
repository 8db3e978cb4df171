package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/server"
)

// servingPID is the pid of the process answering the workspace's query
// socket, 0 when none answers.
func servingPID(ws *workspace) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out engine.PingReply
	sock := server.SocketPath(filepath.Join(ws.root, ".praxis-os", ".cache", "continuity"))
	if err := server.NewClient(sock).Call(ctx, "ping", struct{}{}, &out); err != nil {
		return 0
	}
	return out.PID
}

// TestDaemonWaitLock: a second daemon fails at once naming the first;
// with --wait-lock it waits, takes over when the first exits, and indexes
// what was appended meanwhile; stopped while waiting, it exits cleanly.
func TestDaemonWaitLock(t *testing.T) {
	ws := newWorkspace(t)
	first := ws.startDaemon()
	eventually(t, 10*time.Second, "the first daemon answers", func() bool { return servingPID(ws) == first.cmd.Process.Pid })

	_, errs, code := ws.cli("daemon")
	if code != 1 || !strings.Contains(errs, fmt.Sprintf("pid %d", first.cmd.Process.Pid)) {
		t.Fatalf("second daemon: exit %d, stderr %s; want 1 and the first's pid", code, errs)
	}

	waiter := ws.startDaemon("--wait-lock")
	stopped := ws.startDaemon("--wait-lock")
	eventually(t, 10*time.Second, "the waiters say they wait", func() bool {
		return strings.Contains(waiter.stderr.String(), "waiting for the workspace") &&
			strings.Contains(stopped.stderr.String(), "waiting for the workspace")
	})
	time.Sleep(2 * time.Second) // twice the lock poll of --wait-lock
	waiter.alive(t)
	stopped.alive(t)
	stopped.stop(t) // SIGTERM while waiting: exit 0

	ws.appendRaw("a.jsonl", []byte(exchangeLine("s1", "e1", "before the takeover", "ok")))
	first.stop(t)
	eventually(t, 10*time.Second, "the waiter takes over", func() bool { return servingPID(ws) == waiter.cmd.Process.Pid })
	ws.appendRaw("a.jsonl", []byte(exchangeLine("s1", "e2", "after the takeover", "ok")))
	eventually(t, 10*time.Second, "both lines indexed", func() bool { return ws.status().Exchanges == 2 })
	if !strings.Contains(waiter.stderr.String(), "took over the workspace") {
		t.Errorf("the waiter does not log its takeover:\n%s", waiter.stderr)
	}
	waiter.stop(t)
}
