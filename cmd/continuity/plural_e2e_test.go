package main

import (
	"strings"
	"testing"
)

// TestOneEventWording: a session of one event is "1 event" in forget's
// dry run and answer and in export's heading ("forgot 1 events of s").
func TestOneEventWording(t *testing.T) {
	ws := newWorkspace(t)
	ws.appendRaw("one.jsonl", []byte(exchangeLine("one", "o1", "a single question", "a single answer")))
	if _, errs, code := ws.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %d %s", code, errs)
	}
	if out, _, _ := ws.cli("export", "--session", "one"); !strings.Contains(out, "· 1 event\n") {
		t.Errorf("export of one event:\n%s", out)
	}
	if out, _, _ := ws.cli("forget", "--session", "one", "--dry-run"); !strings.Contains(out, "would forget 1 event of one\n") {
		t.Errorf("forget --dry-run of one event:\n%s", out)
	}
	if out, _, _ := ws.cli("forget", "--session", "one"); !strings.Contains(out, "forgot 1 event of one\n") {
		t.Errorf("forget of one event:\n%s", out)
	}
}
