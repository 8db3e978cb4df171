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

// TestEditWhileNoWatcherHeld: x.jsonl is edited in place, or by a new
// version renamed over it (its first line changed), while no watcher
// runs. The next watcher finds its first bytes
// changed, and a deleted log whose first bytes it cannot compare (x.jsonl
// is shorter than what was compared of that log): x.jsonl may be a copy
// of it still being written, and is held until its size settles. While
// it is held, x.jsonl's own generation (of its name, or its inode) must
// not be taken for one whose file is gone: once judged, x.jsonl is x.jsonl edited
// (protocol.md, section 8: changed while no daemon ran). Before, the pass
// that held it marked x.jsonl's generation gone, and x.jsonl was then
// read as a new log (its lines duplicates, the old first line kept
// indexed). Found by TestTailerModel with random seeds (delete, crash,
// edit-in-place, or delete, crash, edit-rename; 1 of 84 sequences of 120
// steps each).
func TestEditWhileNoWatcherHeld(t *testing.T) {
	t.Run("in-place", func(t *testing.T) { testEditWhileNoWatcherHeld(t, false) })
	t.Run("rename", func(t *testing.T) { testEditWhileNoWatcherHeld(t, true) })
}

func testEditWhileNoWatcherHeld(t *testing.T, rename bool) {
	ctx := context.Background()
	dir, db := logsAndIndex(t)
	line := func(id, ai string) string {
		return fmt.Sprintf(`{"type":"exchange","session_id":"m","id":%q,"user":"question %s","ai":%q}`, id, id, ai)
	}
	write := func(name string, ls []string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var x, other []string
	for i := 1; i <= 5; i++ {
		x = append(x, line(fmt.Sprint("X", i), "answer"))
	}
	for i := 1; i <= 12; i++ { // more than FingerprintSize bytes
		other = append(other, line(fmt.Sprint("O", i), "another log's answer"))
	}
	write("x.jsonl", x)
	write("other.jsonl", other)
	run := func(steps int, between func()) {
		t.Helper()
		w, err := watcher.New(watcher.Config{Dir: dir, NoNotify: true, Grace: time.Nanosecond, Settle: time.Nanosecond}, db)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for i := range steps {
			if err := w.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if i == 0 && between != nil {
				between()
			}
		}
	}
	// other.jsonl indexed, then deleted and seen gone.
	run(3, func() {
		if err := os.Remove(filepath.Join(dir, "other.jsonl")); err != nil {
			t.Fatal(err)
		}
	})
	// No watcher: x.jsonl rewritten in place, its first line changed.
	x[0] = line("X1", "edited answer")
	if rename {
		write(".sed-tmp", x)
		if err := os.Rename(filepath.Join(dir, ".sed-tmp"), filepath.Join(dir, "x.jsonl")); err != nil {
			t.Fatal(err)
		}
	} else {
		f, err := os.OpenFile(filepath.Join(dir, "x.jsonl"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Join(x, "\n") + "\n")
		f.Close()
	}
	run(3, nil)

	got := readIndexed(t, db)
	if got.n != 17 || got.lines["X1"] != x[0] || len(got.rejects) != 0 {
		t.Errorf("%d lines indexed (want 17), X1 %s (want the edited line), rejects %q (want none)", got.n, got.lines["X1"], got.rejects)
	}
}
