package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOversizeLine: a line over the maximum line size is rejected with a
// reason naming the limit and the flag that raises it; with the flag
// raised (the cache rebuilt, as the reason says) the line is indexed.
// Before, the reason named neither, and --max-line-bytes over 1 MiB did
// not help: the parser still held the line to 1 MiB.
func TestOversizeLine(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	big := exchangeLine("big", "b1", "bigword "+strings.Repeat("x ", 1<<20), "ok")
	w.shellAppend("s.jsonl", exchangeLine("big", "b0", "small one", "ok"))
	w.appendRaw("s.jsonl", []byte(big))
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	n := len(big) - 1
	rs := w.rejects()
	if len(rs) != 1 || !strings.Contains(rs[0].Reason, "maximum line size of 1048576 bytes (1.0 MiB)") ||
		!strings.Contains(rs[0].Reason, "--max-line-bytes "+strconv.Itoa(n)) {
		t.Fatalf("rejects: %+v", rs)
	}
	if err := os.RemoveAll(filepath.Join(w.root, ".praxis-os", ".cache")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.cli("ingest", "--no-embed", "--max-line-bytes", "3000000"); code != 0 {
		t.Fatalf("ingest --max-line-bytes: %s", errs)
	}
	if rs := w.rejects(); len(rs) != 0 {
		t.Errorf("rejects with --max-line-bytes 3000000: %+v", rs)
	}
	if got := w.exchanges(); got != 2 {
		t.Errorf("%d exchanges, want 2", got)
	}
}
