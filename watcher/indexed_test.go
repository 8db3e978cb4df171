package watcher_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/index"
)

// logsAndIndex makes a logs folder and opens a real index beside it,
// closed when the test ends: the setup of the tests that follow edits
// through the index (the edit is judged against what it stored).
func logsAndIndex(t *testing.T) (dir string, db *index.DB) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "logs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(filepath.Join(root, "index"), index.Options{NoRedaction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return dir, db
}

// indexed is what an index holds of the logs: each indexed line by its
// event id, how many lines in all (more than ids: a line indexed twice),
// and the rejects as "file:line: reason" (and as stored).
type indexed struct {
	lines    map[string]string
	n        int
	rejects  []string
	rejected []index.Reject
}

func readIndexed(t *testing.T, db *index.DB) indexed {
	t.Helper()
	ctx := context.Background()
	raws, err := db.RawLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x := indexed{lines: map[string]string{}, n: len(raws)}
	for _, r := range raws {
		x.lines[r.EventID] = string(r.Raw)
	}
	if x.rejected, err = db.Rejects(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range x.rejected {
		x.rejects = append(x.rejects, fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Reason))
	}
	return x
}

// ids are the indexed lines' event ids, sorted.
func (x indexed) ids() []string {
	ids := make([]string, 0, len(x.lines))
	for id := range x.lines {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
