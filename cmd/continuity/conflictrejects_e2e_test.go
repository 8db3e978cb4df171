package main

import (
	"strings"
	"testing"
)

// TestConflictCopyRejectsCountedOnce: a bad line written once and synced
// into a log and its Syncthing conflict copy is rejected in each file
// ('continuity rejects' lists both, by file and line), but status counts
// one rejected line, and names the copy's apart. Before: "rejected lines
// 2" for one mistake. A bad line only in the copy still counts.
func TestConflictCopyRejectsCountedOnce(t *testing.T) {
	w := newWorkspace(t)
	lines := exchangeLine("s1", "e1", "u1", "a1") + `{"type":"exchange", bad` + "\n" + exchangeLine("s1", "e2", "u2", "a2")
	w.shellAppend("x~lap.jsonl", lines)
	w.shellAppend("x~lap.sync-conflict-20261129-101500-ABC.jsonl", lines+exchangeLine("s1", "e3", "u3", "a3"))
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	st := w.status()
	if st.Rejected.Invalid != 1 || st.Rejected.Copied != 1 || st.Rejected.Replayed != 2 {
		t.Errorf("one bad line in a log and its conflict copy: %+v; want 1 invalid, 1 in the copy, 2 replays", st.Rejected)
	}
	out, _, _ := w.cli("status")
	if !strings.Contains(out, "1 line of sync conflict copies that their logs have too") {
		t.Errorf("status does not name the copy's line apart:\n%s", out)
	}
	if out, _, _ := w.cli("rejects"); strings.Count(out, "invalid JSON") != 2 {
		t.Errorf("rejects should list the bad line of each file:\n%s", out)
	}
	// A bad line only in the copy is the copy's own mistake: counted.
	w.shellAppend("x~lap.sync-conflict-20261129-101500-ABC.jsonl", `{"type":"exchange", other bad`+"\n")
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	if st := w.status(); st.Rejected.Invalid != 2 || st.Rejected.Copied != 1 {
		t.Errorf("a bad line only in the copy: %+v; want 2 invalid, 1 in the copy", st.Rejected)
	}
}
