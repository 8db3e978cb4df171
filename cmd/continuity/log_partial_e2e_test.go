package main

import (
	"strings"
	"testing"
	"time"
)

// TestLogAfterCrashedWriter: a writer crashed in the middle of a line
// (no "\n"); `continuity log` then appends an event. The fragment is
// rejected alone, with a reason, and the logged event is indexed.
func TestLogAfterCrashedWriter(t *testing.T) {
	ws := newWorkspace(t)
	// This machine's file, which `log` appends to (session-s~m1.jsonl).
	ws.appendRaw("session-s~m1.jsonl", []byte(exchangeLine("s", "e1", "before the crash", "ok")))
	ws.appendRaw("session-s~m1.jsonl", []byte(`{"type":"exchange","session_id":"s","user":"crashed mid-wr`))
	d := ws.startDaemon()
	defer d.stop(t)
	out, errs, code := ws.cli("log", "--session", "s", "--user", "logged after the crash", "--ai", "kept")
	if code != 0 {
		t.Fatalf("log: exit %d %s %s", code, out, errs)
	}
	eventually(t, 10*time.Second, "the logged event is indexed", func() bool {
		out, _, _ := ws.cli("search", "--json", "logged after the crash")
		return strings.Contains(out, `"user": "logged after the crash"`)
	})
	rs := ws.rejects()
	if len(rs) != 1 || rs[0].Line != 2 || !strings.Contains(rs[0].Reason, "invalid JSON") || strings.Contains(rs[0].Excerpt, "logged after") {
		t.Errorf("want the fragment alone rejected at line 2, got %+v", rs)
	}
	if st := ws.status(); st.Exchanges != 2 {
		t.Errorf("%d exchanges, want 2", st.Exchanges)
	}
}
