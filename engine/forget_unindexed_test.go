package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForgetUnindexedSession: forgetting a session whose lines are in the
// logs but not indexed yet (no daemon ran: a fresh clone of synced logs)
// says the lines are not indexed and what to run, not only "unknown
// session", which read as a mistyped id.
func TestForgetUnindexedSession(t *testing.T) {
	ws := newLayout(t)
	e := openIngested(t, ws, Options{})
	defer e.Close()
	line := `{"type":"exchange","session_id":"late","user":"written after the ingest","ai":"a"}` + "\n"
	if err := os.WriteFile(filepath.Join(ws.Logs, "late.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.Forget(ctx, ForgetRequest{Session: "late"})
	if !IsBadRequest(err) || !strings.Contains(err.Error(), `unknown session "late"`) ||
		!strings.Contains(err.Error(), "1 line of the logs is not indexed yet") || !strings.Contains(err.Error(), "continuity ingest") {
		t.Errorf("forget of a session in lines not indexed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Logs, "late.jsonl")); err != nil {
		t.Fatal(err)
	}
}
