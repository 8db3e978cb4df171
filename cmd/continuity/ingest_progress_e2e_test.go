package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestIngestEmbedProgress: ingest's embedding phase shows how far it got,
// with the rate and the time left, and says that Ctrl-C is safe; off a
// terminal, as plain lines every --progress-every. Before, it said
// nothing until it was done (9 minutes at 50k exchanges). The period is
// a millisecond and the backlog 2,000 exchanges, so that lines come
// whatever the machine's speed: with 50 ms a quiet machine embedded all
// 600 (hashed) before the first line was due.
func TestIngestEmbedProgress(t *testing.T) {
	w := newWorkspace(t)
	for part := range 10 { // appended 200 lines at a time (an argument's size limit)
		var b strings.Builder
		for i := part * 200; i < (part+1)*200; i++ {
			b.WriteString(exchangeLine(fmt.Sprintf("s%d", i/20), fmt.Sprintf("e%d", i), fmt.Sprintf("question %d about the watcher and its offsets", i), fmt.Sprintf("answer %d: the daemon keeps them in SQLite", i)))
		}
		w.shellAppend("a.jsonl", b.String())
	}
	_, errs, code := w.cli("ingest", "--progress-every", "1ms")
	if code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "Ctrl-C is safe: the vectors stored are kept and the daemon computes the rest") {
		t.Errorf("ingest does not say Ctrl-C is safe:\n%s", errs)
	}
	var lines []string
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, "embedding: ") {
			lines = append(lines, l)
		}
	}
	rated := false
	for _, l := range lines {
		if strings.Contains(l, " of 2000 exchanges (") && strings.Contains(l, "/s") {
			rated = true
		}
	}
	if len(lines) == 0 || !rated || strings.Contains(errs, "\r") {
		t.Errorf("progress lines (want plain lines with the count and the rate):\n%s", errs)
	}
}
