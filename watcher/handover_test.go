package watcher_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/watcher"
)

// TestRotatedCopyTakesTheLines: gzip x.jsonl.1 writes x.jsonl.1.gz, then
// deletes x.jsonl.1. A scan that falls between the two sees the copy
// beside the log (a rotated copy with a generation of its own); one after
// both sees only the copy (it continues the log's generation). Either
// way, once the log is gone its lines are the copy's: the reject of
// line 4 is named by the copy, and by its next name (x.jsonl.2.gz), and
// no line is indexed twice. Before, the first order left the reject
// named x.jsonl.1, a file that was no more (TestRotation's flake).
func TestRotatedCopyTakesTheLines(t *testing.T) {
	lines := ""
	for i := 1; i <= 3; i++ {
		lines += fmt.Sprintf(`{"type":"exchange","user":"line %d","ai":"ok"}`+"\n", i)
	}
	lines += "not json\n"
	gz := func(t *testing.T, dir string) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		data, err := os.ReadFile(filepath.Join(dir, "x.jsonl.1"))
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(data)
		zw.Close()
		if err := os.WriteFile(filepath.Join(dir, "x.jsonl.1.gz"), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mv := func(from, to string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
				t.Fatal(err)
			}
		}
	}
	rm := func(t *testing.T, dir string) {
		if err := os.Remove(filepath.Join(dir, "x.jsonl.1")); err != nil {
			t.Fatal(err)
		}
	}
	cp := func(t *testing.T, dir string) {
		data, err := os.ReadFile(filepath.Join(dir, "x.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "x.jsonl.3"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	empty := func(t *testing.T, dir string) {
		if err := os.Truncate(filepath.Join(dir, "x.jsonl"), 0); err != nil {
			t.Fatal(err)
		}
	}
	type op = func(*testing.T, string)
	var step op // nil: a pass of the watcher
	for _, tc := range []struct {
		name string
		ops  []op // step marks where the watcher looks
		want string
	}{
		{"copy seen beside the log", []op{mv("x.jsonl", "x.jsonl.1"), step, gz, step, rm, step, mv("x.jsonl.1.gz", "x.jsonl.2.gz"), step}, "x.jsonl.2.gz"},
		{"copy seen after the log left", []op{mv("x.jsonl", "x.jsonl.1"), step, gz, rm, step, mv("x.jsonl.1.gz", "x.jsonl.2.gz"), step}, "x.jsonl.2.gz"},
		{"copy seen beside the log, then moved on as it leaves", []op{mv("x.jsonl", "x.jsonl.1"), step, gz, step, rm, mv("x.jsonl.1.gz", "x.jsonl.2.gz"), step}, "x.jsonl.2.gz"},
		// copytruncate: the log stays, emptied; its lines are the copy's.
		// An emptied log is held for Settle (a rewrite?): two passes.
		// With a restart, a watcher starts while x.jsonl.3 is beside the
		// log it copies: the log (its generation's own inode) is opened
		// before the copy, which is then recognised as one (before, the
		// copy, older and opened first, took the log's generation by its
		// content, and x.jsonl was read again: its lines duplicates, its
		// invalid line rejected twice).
		{"copytruncate, copy seen before the log is emptied", []op{step, cp, step, empty, step, step}, "x.jsonl.3"},
		{"copytruncate seen at once", []op{step, cp, empty, step, step}, "x.jsonl.3"},
	} {
		for _, restart := range []bool{false, true} {
			name := tc.name + "/live"
			if restart {
				name = tc.name + "/restart"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				root := t.TempDir()
				dir := filepath.Join(root, "logs")
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(lines), 0o600); err != nil {
					t.Fatal(err)
				}
				db, err := index.Open(filepath.Join(root, "index"), index.Options{NoRedaction: true})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var w *watcher.Watcher
				pass := func() {
					if w == nil || restart {
						if w != nil {
							w.Close()
						}
						// Grace 1ns: a file that left is closed in the pass that
						// sees it gone; Settle 1ns: an emptied log is judged in
						// the next pass.
						if w, err = watcher.New(watcher.Config{Dir: dir, NoNotify: true, Grace: time.Nanosecond, Settle: time.Nanosecond}, db); err != nil {
							t.Fatal(err)
						}
					}
					if err := w.Step(ctx); err != nil {
						t.Fatal(err)
					}
				}
				pass()
				for _, o := range tc.ops {
					if o == nil {
						pass()
						continue
					}
					o(t, dir)
				}
				// The daemon started last keeps running: two more passes
				// of it (a file held after a start, an emptied log, is
				// judged once it settled, which a watcher started anew
				// each pass never sees).
				restart = false
				pass()
				pass()
				w.Close()
				rs, err := db.Rejects(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) != 1 || rs[0].File != tc.want || rs[0].Line != 4 {
					t.Errorf("rejects %+v; want line 4 of %s", rs, tc.want)
				}
				st, err := db.Status(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Exchanges != 3 || st.DuplicatesSkipped != 0 {
					t.Errorf("%d exchanges, %d duplicates skipped; want 3 and 0", st.Exchanges, st.DuplicatesSkipped)
				}
			})
		}
	}
}

// TestRotatedCopyOfUnfinishedLog: a log whose only line was still being
// written when last read (nothing committed of it) is completed, renamed
// and gzipped before the next pass, which sees the copy beside it: the
// log is read first, and the copy recognised as its copy. Before, the
// copy was read as a new log: its line a duplicate of the log's (found by
// FuzzTailerModel: partial line, complete it, rotate, gzip).
func TestRotatedCopyOfUnfinishedLog(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "logs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"exchange","id":"L1","user":"a question","ai":"an answer"}` + "\n"
	x := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(x, []byte(line[:20]), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(filepath.Join(root, "index"), index.Options{NoRedaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := watcher.New(watcher.Config{Dir: dir, NoNotify: true, Grace: time.Nanosecond, Settle: time.Nanosecond}, db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	step := func() {
		if err := w.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step() // the unfinished line: nothing committed
	f, err := os.OpenFile(x, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line[20:])
	f.Close()
	if err := os.Rename(x, x+".1"); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(line))
	zw.Close()
	if err := os.WriteFile(x+".1.gz", b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	step() // x.jsonl.1 renamed, x.jsonl.1.gz beside it
	if err := os.Remove(x + ".1"); err != nil {
		t.Fatal(err)
	}
	step()
	step()
	st, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Rejects(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Exchanges != 1 || st.DuplicatesSkipped != 0 || len(rs) != 0 {
		t.Errorf("%d exchanges, %d duplicates skipped, rejects %+v; want 1, 0 and none", st.Exchanges, st.DuplicatesSkipped, rs)
	}
}
