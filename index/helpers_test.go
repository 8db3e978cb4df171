package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/watcher"
)

func TestMain(m *testing.M) {
	switch os.Getenv("CONTINUITY_INDEX_HELPER") {
	case "lock":
		helperLock(os.Getenv("CONTINUITY_INDEX_DIR"))
		return
	case "commit":
		helperCommit(os.Getenv("CONTINUITY_INDEX_DIR"))
		return
	}
	code := m.Run()
	removeCorpora()
	os.Exit(code)
}

var ctx = context.Background()

var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func testDir(t testing.TB) string {
	return filepath.Join(t.TempDir(), ".praxis-os", ".cache", "continuity")
}

func openTest(t testing.TB, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// feeder builds batches of consecutive lines for one generation, as the
// watcher would.
type feeder struct {
	gen watcher.Generation
}

func newFeeder(t testing.TB, db *DB, path string) *feeder {
	t.Helper()
	g := watcher.Generation{Path: path, Dev: 1, Ino: 42}
	id, err := db.CreateGeneration(ctx, g, 0)
	if err != nil {
		t.Fatalf("CreateGeneration: %v", err)
	}
	g.ID = id
	return &feeder{gen: g}
}

// batch appends texts as lines; a text "OVERSIZE:<n>" stands for an
// oversize line of n bytes, and "" for a blank line (not in Lines).
func (f *feeder) batch(texts ...string) watcher.Batch {
	var lines []watcher.Line
	for _, s := range texts {
		l := watcher.Line{Number: f.gen.Line + 1, Start: f.gen.Offset, Data: []byte(s)}
		if n, ok := strings.CutPrefix(s, "OVERSIZE:"); ok {
			var size int64
			fmt.Sscan(n, &size)
			l.Oversize, l.Limit = true, 1<<20
			l.Data = []byte(strings.Repeat("x", watcher.ExcerptSize))
			l.End = l.Start + size + 1
		} else {
			l.End = l.Start + int64(len(s)) + 1
		}
		f.gen.Offset = l.End
		f.gen.Line++
		f.gen.Tail = watcher.Fingerprint{Len: 7, Sum: uint64(l.End) | 1<<63}
		if s != "" {
			lines = append(lines, l)
		}
	}
	return watcher.Batch{Gen: f.gen, Lines: lines}
}

func commit(t testing.TB, db *DB, b watcher.Batch) {
	t.Helper()
	if err := db.Commit(ctx, b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

func exchange(session, id, user string) string {
	s := `{"type":"exchange","timestamp":"2025-01-02T03:04:05Z","user":` + quote(user) + `,"ai":"sure"`
	if session != "" {
		s += `,"session_id":` + quote(session)
	}
	if id != "" {
		s += `,"id":` + quote(id)
	}
	return s + "}"
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func mustStatus(t testing.TB, db *DB) Status {
	t.Helper()
	st, err := db.Status(ctx)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	return st
}

func rawTexts(t testing.TB, db *DB) []string {
	t.Helper()
	raws, err := db.RawLines(ctx)
	if err != nil {
		t.Fatalf("RawLines: %v", err)
	}
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = string(r.Raw)
	}
	return out
}
