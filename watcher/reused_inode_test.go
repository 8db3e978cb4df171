package watcher_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/watcher"
)

// TestEditWhileNoWatcherReusedInode: x.jsonl is edited by renaming a new
// version over it while no watcher runs, and the new version's inode
// number is one a deleted log had (the file system reuses freed inode
// numbers): that log's generation, deleted while the last watcher still
// read it within Grace (a crash before it was marked gone), carries that
// inode. The new x.jsonl is x.jsonl edited (a new file that takes the
// name of a log changed while no watcher ran, protocol.md, section 8),
// not an edit of the other log, whose name it does not have. Before, the
// generation of the same inode was taken first whatever its name:
// compared with it, x.jsonl was another log, read as new (its lines
// duplicates, the changed one a duplicate_id, its old version kept
// indexed). Found by TestTailerModel with random seeds (1 in 80 sequences
// of 120 steps: gzip, delete the .gz, crash, edit-rename another log);
// here the reuse is written into the index as it was then, the file
// system does not reuse an inode on demand.
func TestEditWhileNoWatcherReusedInode(t *testing.T) {
	ctx := context.Background()
	dir, db := logsAndIndex(t)
	line := func(id string, ai string) string {
		return fmt.Sprintf(`{"type":"exchange","session_id":"m","id":%q,"user":"question %s","ai":%q}`, id, id, ai)
	}
	var x []string
	for i := 1; i <= 5; i++ {
		x = append(x, line(fmt.Sprint("X", i), "answer"))
	}
	write := func(path string, ls []string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "x.jsonl"), x)
	write(filepath.Join(dir, "other.jsonl"), []string{line("O1", "other"), line("O2", "other")})
	run := func() {
		t.Helper()
		w, err := watcher.New(watcher.Config{Dir: dir, NoNotify: true, Grace: time.Hour, Settle: time.Nanosecond}, db)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for range 2 {
			if err := w.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()

	// No watcher now: other.jsonl deleted, x.jsonl edited (line 4
	// changed) by a new file renamed over it.
	if err := os.Remove(filepath.Join(dir, "other.jsonl")); err != nil {
		t.Fatal(err)
	}
	x[3] = line("X4", "edited answer")
	tmp := filepath.Join(dir, ".sed-tmp")
	write(tmp, x)
	if err := os.Rename(tmp, filepath.Join(dir, "x.jsonl")); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "x.jsonl"), &st); err != nil {
		t.Fatal(err)
	}
	// The new x.jsonl has the inode number other.jsonl had.
	gens, err := db.Generations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		if g.Path == "other.jsonl" {
			g.Dev, g.Ino = uint64(st.Dev), st.Ino
			if err := db.UpdateGeneration(ctx, g); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()

	got := readIndexed(t, db)
	if got.n != 7 || got.lines["X4"] != x[3] || len(got.rejects) != 0 {
		t.Errorf("%d lines indexed (want 7), X4 %s (want the edited line), rejects %q (want none)", got.n, got.lines["X4"], got.rejects)
	}
}
