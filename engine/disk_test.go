package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiskUsage(t *testing.T) {
	root := t.TempDir()
	cache, logs := filepath.Join(root, "cache"), filepath.Join(root, "logs")
	files := map[string]int{
		"logs/a.jsonl":                100,
		"logs/b.jsonl.1.gz":           50,
		"logs/notes.txt":              999, // not a log
		"cache/index.db":              1000,
		"cache/index.db-wal":          200,
		"cache/index.db-shm":          30,
		"cache/fulltext.db":           400,
		"cache/fulltext.db-wal":       4,
		"cache/bm25/seg-1.bm25":       70,
		"cache/bm25/manifest":         7,
		"cache/vectors-0123abcd.snap": 300,
		"cache/daemon.lock":           0,
		"cache/rejects.log":           9,
	}
	for name, n := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := diskUsage(cache, logs)
	want := DiskUsage{Logs: 150, Cache: 2020, Index: 1230, FullText: 404, BM25: 77, Snapshots: 300, Ratio: 2020.0 / 150}
	if d != want {
		t.Errorf("diskUsage = %+v\nwant %+v", d, want)
	}
	if s := d.Summary(); !strings.Contains(s, "13.5× the logs (150 B)") {
		t.Errorf("Summary = %q", s)
	}
	if p := d.Parts(); p != "index.db 1.2 KiB, fulltext.db 404 B, bm25 segments 77 B, vector snapshot 300 B, other 9 B" {
		t.Errorf("Parts = %q", p)
	}

	// Nothing yet: no folders, no ratio, no error.
	if d := diskUsage(filepath.Join(root, "none"), filepath.Join(root, "nologs")); d != (DiskUsage{}) || d.Summary() != "0 B (no logs)" || d.Parts() != "" {
		t.Errorf("empty workspace: %+v %q %q", d, d.Summary(), d.Parts())
	}
}
