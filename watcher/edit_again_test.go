package watcher_test

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

// TestEditedAgainWhileRecorded: a log is edited by renaming a new version
// over it, or in place (line 4 removed), and edited again in place (line 3
// changed, made longer) just after the watcher recorded the first edit,
// before it read the file on. Both edits are followed: the index holds
// lines 1, 2, 3 (changed) and 5, nothing is rejected. Before, the watcher recorded the first edit's
// generation, failed to read the file after it ("read x.jsonl after its
// edit: file truncated or rewritten") and forgot that generation: the file
// was then read as a new log (its lines duplicates, line 3's old version
// left indexed); and an edit in place went on reading at the recorded
// offset in bytes that had moved.
// Found by FuzzTailerModel (edit-rename, then edit-in-place; 1 replay in
// 20).
func TestEditedAgainWhileRecorded(t *testing.T) {
	t.Run("rename", func(t *testing.T) { testEditedAgainWhileRecorded(t, false) })
	t.Run("in-place", func(t *testing.T) { testEditedAgainWhileRecorded(t, true) })
}

func testEditedAgainWhileRecorded(t *testing.T, inPlace bool) {
	ctx := context.Background()
	dir, db := logsAndIndex(t)
	var lines []string
	for i := 1; i <= 5; i++ {
		lines = append(lines, fmt.Sprintf(`{"type":"exchange","session_id":"m","id":"L%d","user":"question %d","ai":"answer %d"}`, i, i, i))
	}
	x := filepath.Join(dir, "x.jsonl")
	write := func(path string, ls []string) {
		if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
			t.Error(err)
		}
	}
	write(x, lines)
	edits := 0
	cfg := watcher.Config{Dir: dir, NoNotify: true, Grace: time.Hour, Settle: time.Nanosecond,
		OnEdit: func(watcher.Edit) {
			edits++
			if edits == 1 { // the second edit, in place, lands now
				lines[2] = strings.Replace(lines[2], `"ai":"answer 3"`, `"ai":"answer 3, edited at length to make the file longer than it was"`, 1)
				write(x, lines)
			}
		}}
	w, err := watcher.New(cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	step := func() {
		t.Helper()
		if err := w.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step()
	lines = append(lines[:3], lines[4:]...)
	if inPlace {
		write(x, lines)
	} else {
		tmp := filepath.Join(dir, ".sed-tmp")
		write(tmp, lines)
		if err := os.Rename(tmp, x); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		step()
	}

	ix := readIndexed(t, db)
	if got := ix.ids(); strings.Join(got, " ") != "L1 L2 L3 L5" || ix.n != len(got) || ix.lines["L3"] != lines[2] || len(ix.rejects) != 0 || edits != 2 {
		t.Errorf("indexed %v (%d lines; L3 %s), rejects %q, %d edits; want L1 L2 L3 L5 (L3 edited at length), none, 2", got, ix.n, ix.lines["L3"], ix.rejects, edits)
	}
}
