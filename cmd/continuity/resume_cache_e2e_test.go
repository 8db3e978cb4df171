package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestResumeCacheFollowsChanges: the daemon keeps what resume needs
// between calls (resume.Cache). After each change made while it runs —
// an exchange appended with a real `>>`, a context reset, a new
// session_resume link, a forgotten session — its next packs show the
// change, and its last pack is byte for byte the one computed in process,
// without any cache, once it has stopped.
func TestResumeCacheFollowsChanges(t *testing.T) {
	ws := newWorkspace(t)
	line := func(v map[string]string) string {
		b, _ := json.Marshal(v)
		return string(b) + "\n"
	}
	ex := func(session, ts, user, ai string) string {
		return line(map[string]string{"type": "exchange", "session_id": session, "timestamp": ts, "user": user, "ai": ai})
	}
	ws.shellAppend("session-a.jsonl", ex("a", "2026-11-01T10:00:00Z", "how do we store the parser state", "in sqlite, one row per file")+
		ex("a", "2026-11-01T10:05:00Z", "and retries", "exponential backoff, capped at a minute"))
	ws.shellAppend("session-b.jsonl", line(map[string]string{"type": "session_resume", "previous_session": "a", "new_session": "b", "timestamp": "2026-11-02T09:00:00Z"})+
		ex("b", "2026-11-02T09:01:00Z", "resume the parser work", "the parser now skips blank lines")+
		line(map[string]string{"type": "context_reset", "session_id": "b", "timestamp": "2026-11-02T09:02:00Z"})+
		ex("b", "2026-11-02T09:03:00Z", "after the reset", "still in the window"))
	d := ws.startDaemon()
	eventually(t, 15*time.Second, "the daemon answering", func() bool { return ws.status().Daemon.Running })

	var last string
	resume := func() (string, bool) {
		out, _, code := ws.cli("resume", "--session", "b", "--query", "parser", "--json")
		last = out
		return out, code == 0
	}
	wait := func(what string, cond func(out string) bool) {
		t.Helper()
		// Whole: not an answer that says lines are still pending (given
		// in-process while the daemon started, or before the full-text
		// index caught up), which the next answer would not repeat.
		eventually(t, 15*time.Second, what, func() bool {
			out, ok := resume()
			return ok && !strings.Contains(out, `"pending"`) && cond(out)
		})
		// Asked again: from the warm cache, the same pack.
		if again, _ := resume(); again != last {
			t.Fatalf("%s: a second resume differs:\n%s\nvs\n%s", what, again, last)
		}
	}
	wait("a's exchanges in b's pack", func(out string) bool { return strings.Contains(out, "how do we store the parser state") })

	ws.shellAppend("session-a.jsonl", ex("a", "2026-11-01T10:10:00Z", "one more parser question", "appended while the daemon ran"))
	wait("an exchange appended with >>", func(out string) bool { return strings.Contains(out, "appended while the daemon ran") })

	ws.shellAppend("session-b.jsonl", ex("b", "2026-11-02T09:04:00Z", "more parser work in b", "done")+
		line(map[string]string{"type": "context_reset", "session_id": "b", "timestamp": "2026-11-02T09:05:00Z"}))
	wait("a new context reset moves the boundary", func(out string) bool {
		return strings.Contains(out, "still in the window") && !strings.Contains(out, `"in_context": 1`) && !strings.Contains(out, `"in_context":1`)
	})

	ws.shellAppend("session-c.jsonl", ex("c", "2026-10-30T08:00:00Z", "the parser design from before", "a hand-written scanner")+
		line(map[string]string{"type": "session_resume", "previous_session": "c", "new_session": "b", "timestamp": "2026-11-02T09:06:00Z"}))
	wait("a new link extends the chain", func(out string) bool { return strings.Contains(out, "a hand-written scanner") })

	if out, errs, code := ws.cli("forget", "--session", "a", "--json"); code != 0 {
		t.Fatalf("forget: exit %d: %s %s", code, out, errs)
	}
	wait("a forgotten session leaves the pack", func(out string) bool {
		return !strings.Contains(out, "how do we store the parser state") && !strings.Contains(out, "appended while the daemon ran") &&
			strings.Contains(out, "a hand-written scanner")
	})

	viaDaemon := last
	d.stop(t)
	inProcess, errs, code := ws.cli("resume", "--session", "b", "--query", "parser", "--json")
	if code != 0 || inProcess != viaDaemon {
		t.Errorf("in-process, uncached answer (exit %d, %s) differs:\n%s\nvs the daemon's:\n%s", code, errs, inProcess, viaDaemon)
	}
}
