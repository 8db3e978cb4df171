package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// An ingest that loads a space large enough for a vector snapshot (20k
// exchanges, more than search's snapshotMin) exits without leaving a
// temporary snapshot file in the cache folder, with a finished snapshot or
// none; a killed process's leftover is gone too.
func TestIngestLeavesNoSnapshotTemp(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 20k exchanges")
	}
	w := newWorkspace(t)
	f, err := os.OpenFile(filepath.Join(w.logs, "s.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for i := range 20500 {
		enc.Encode(map[string]string{"type": "exchange", "session_id": fmt.Sprintf("s%d", i%50),
			"timestamp": "2026-01-01T00:00:00Z", "user": fmt.Sprintf("question %d about sqlite", i), "ai": fmt.Sprintf("answer %d", i)})
	}
	f.Close()
	if _, errs, code := w.cli("ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	cache := filepath.Join(w.root, ".praxis-os", ".cache", "continuity")
	leftover := filepath.Join(cache, ".vectors-123.tmp")
	if err := os.WriteFile(leftover, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		// One more exchange: the next ingest loads 20k vectors from the
		// index (or the snapshot), which may start a snapshot.
		if err := appendLine(filepath.Join(w.logs, "s.jsonl"), fmt.Sprintf(`{"type":"exchange","session_id":"x","user":"one more %d"}`, i)); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := w.cli("ingest"); code != 0 {
			t.Fatalf("ingest %d: %s", i, errs)
		}
		tmps, _ := filepath.Glob(filepath.Join(cache, ".vectors-*"))
		if len(tmps) > 0 {
			t.Fatalf("ingest %d left %v", i, tmps)
		}
	}
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	return err
}
