package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRotation: logrotate's ways (mv, then gzip; gzip keeping the file for
// a moment; copytruncate) never double a line while the daemon watches,
// and a rebuild of the cache reads the rotated and compressed logs as part
// of the history, each line once, rejects named by the rotated file.
// Before, a rebuild lost everything of x.jsonl.1 and x.jsonl.1.gz.
func TestRotation(t *testing.T) {
	if _, err := exec.LookPath("gzip"); err != nil {
		t.Skip("no gzip on this machine")
	}
	w := newWorkspace(t)
	n := 0
	add := func(k int) {
		for range k {
			n++
			w.shellAppend("x.jsonl", fmt.Sprintf(`{"type":"exchange","user":"line %d of the history, word%d","ai":"ok"}`+"\n", n, n))
		}
	}
	add(3)
	w.shellAppend("x.jsonl", "not json\n") // line 4: a reject
	d := w.startDaemon()
	w.waitExchanges(3, 30*time.Second)

	// Rotation by rename, a new live log, then compression.
	w.sh("mv x.jsonl x.jsonl.1")
	add(2)
	w.shellAppend("x.jsonl", "still not json\n") // its line 3: a reject
	w.waitExchanges(5, 30*time.Second)
	w.sh("gzip x.jsonl.1")
	w.waitFollowed("x.jsonl.1.gz")
	w.waitExchanges(5, 10*time.Second)

	// The next rotation: the old one moves on, gzip writes the copy
	// before it deletes the file it compressed. The daemon sees the copy
	// beside the log (as it may with plain gzip too, when a scan falls
	// between its write and its unlink): the log's lines, its reject
	// too, are the copy's once the log is gone.
	w.sh("mv x.jsonl.1.gz x.jsonl.2.gz && mv x.jsonl x.jsonl.1")
	add(1)
	w.waitExchanges(6, 30*time.Second)
	w.sh("gzip --keep x.jsonl.1")
	w.waitFollowed("x.jsonl.1.gz")
	w.sh("rm x.jsonl.1")
	add(1)
	w.waitExchanges(7, 30*time.Second)

	// copytruncate: the live log copied, then emptied in place.
	w.sh("cp x.jsonl x.jsonl.3 && : > x.jsonl")
	w.waitFollowed("x.jsonl.3")
	add(2)
	w.waitExchanges(9, 30*time.Second)
	w.caughtUp(10, 0) // every log read again since: nothing twice

	if rs := w.rejects(); !hasReject(rs, "x.jsonl.2.gz", 4, "invalid json") || !hasReject(rs, "x.jsonl.1.gz", 3, "invalid json") {
		t.Errorf("the rejected lines are not named by their rotated files: %+v", rs)
	}
	d.stop(t)

	// A rebuild reads the whole history once.
	if err := os.RemoveAll(filepath.Join(w.root, ".praxis-os", ".cache")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	if got := w.exchanges(); got != 10 {
		t.Fatalf("after a rebuild: %d exchanges, want 9 and the marker", got)
	}
	for i := 1; i <= 9; i++ {
		if texts := w.searchTexts("bm25", fmt.Sprintf("word%d", i)); len(texts) != 1 {
			t.Errorf("word%d found %d times after the rebuild: %q", i, len(texts), texts)
		}
	}
	if rs := w.rejects(); len(rs) != 2 || !hasReject(rs, "x.jsonl.2.gz", 4, "invalid json") || !hasReject(rs, "x.jsonl.1.gz", 3, "invalid json") {
		t.Errorf("rejects after the rebuild: %+v", rs)
	}
	out, _, _ := w.cli("sessions", "--json")
	if !strings.Contains(out, `"x"`) || strings.Contains(out, "jsonl") {
		t.Errorf("the rotated logs' lines are not all in session x: %s", out)
	}
}

// waitFollowed waits until a generation follows the file called name.
func (w *workspace) waitFollowed(name string) {
	w.t.Helper()
	eventually(w.t, 30*time.Second, name+" followed", func() bool {
		for _, f := range w.status().Files {
			if f.Path == name && !f.NotSeen && !f.Gone && !f.Missing && f.Lag == 0 {
				return true
			}
		}
		return false
	})
}
