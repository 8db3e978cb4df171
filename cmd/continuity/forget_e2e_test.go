package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// TestForget: a forgotten session stays gone after a restart and a full
// replay of its log lines; other sessions are intact.
func TestForget(t *testing.T) {
	ws := newWorkspace(t)
	mixed := exchangeLine("keep", "k1", "kubernetes ingress for keep", "a") +
		exchangeLine("drop", "d1", "private matter zanzibar one", "b") +
		exchangeLine("drop", "d2", "private matter zanzibar two", "c") +
		exchangeLine("keep", "k2", "second keep question", "d")
	ws.appendRaw("mixed.jsonl", []byte(mixed))
	ws.appendRaw("session-drop.jsonl", []byte(exchangeLine("drop", "d3", "zanzibar alone", "e")))
	d := ws.startDaemon()
	eventually(t, 10*time.Second, "indexed", func() bool { return ws.status().Exchanges == 5 })

	out, errs, code := ws.cli("forget", "--session", "drop", "--json")
	if code != 0 || !strings.Contains(out, `"events": 3`) {
		t.Fatalf("forget through the daemon: %d %s %s", code, out, errs)
	}
	// Forgotten at once in the daemon's answers too (vectors included).
	if out, _, _ := ws.cli("search", "--json", "zanzibar"); strings.Contains(out, `"id": "d`) {
		t.Fatalf("search still finds the forgotten session: %s", out)
	}

	// Crash, then make the daemon read every line again: the file is
	// rewritten in place (a new generation, read from offset 0).
	d.kill()
	path := filepath.Join(ws.logs, "mixed.jsonl")
	if err := os.WriteFile(path, []byte(mixed+exchangeLine("drop", "d4", "zanzibar after forget", "f")), 0o600); err != nil {
		t.Fatal(err)
	}
	d = ws.startDaemon()
	eventually(t, 10*time.Second, "replayed", func() bool {
		for _, f := range ws.status().Files {
			if f.Path == "mixed.jsonl" && f.Lag == 0 && f.Offset > 0 {
				return true
			}
		}
		return false
	})
	st := ws.status()
	if st.Exchanges != 2 || st.Sessions != 1 {
		t.Errorf("after replay: %d exchanges in %d sessions, want 2 in 1", st.Exchanges, st.Sessions)
	}
	out, _, _ = ws.cli("sessions", "--json")
	var ss engine.SessionsResponse
	json.Unmarshal([]byte(out), &ss)
	if len(ss.Sessions) != 1 || ss.Sessions[0].ID != "keep" || ss.Sessions[0].Exchanges != 2 {
		t.Errorf("sessions after replay: %s", out)
	}
	if out, _, _ := ws.cli("search", "--json", "zanzibar"); strings.Contains(out, `"id": "d`) {
		t.Errorf("search finds the forgotten session after replay: %s", out)
	}
	if out, _, _ := ws.cli("search", "--json", "kubernetes ingress"); !strings.Contains(out, `"id": "k1"`) {
		t.Errorf("other session lost: %s", out)
	}
	d.stop(t)

	// Without a daemon; --purge-logs deletes only files holding nothing else.
	out, errs, code = ws.cli("forget", "--session", "drop", "--purge-logs", "--yes", "--json")
	if code != 0 || !strings.Contains(out, `"purged": [`+"\n"+`    "session-drop.jsonl"`) || !strings.Contains(out, `"mixed.jsonl"`) {
		t.Fatalf("forget --purge-logs: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("mixed log deleted: %v", err)
	}
	if _, _, code := ws.cli("forget", "--session", "never-seen"); code != 2 {
		t.Errorf("unknown session: exit %d, want 2", code)
	}
}
