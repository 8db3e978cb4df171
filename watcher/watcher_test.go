package watcher

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// step changes the folder, then the store must hold want (as a multiset).
type step struct {
	do   func(t *testing.T, dir string)
	want []string
}

func appendTo(name, s string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
}

func truncate(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		if err := os.Truncate(filepath.Join(dir, name), 0); err != nil {
			t.Fatal(err)
		}
	}
}

func rename(from, to string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// restore replaces name by a new file (new inode) holding content, as git
// checkout does: write a temporary file, rename it over.
func restore(name, content string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		tmp := filepath.Join(dir, ".restore.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func rmrf(t *testing.T, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func symlinkOutside(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		outside := filepath.Join(filepath.Dir(dir), "outside.jsonl")
		if err := os.WriteFile(outside, []byte("secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func mkfifo(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func nothing(*testing.T, string) {}

// gzipFile compresses name into name.gz, as gzip does: the compressed file
// is written whole, then the original deleted (unless keep).
func gzipFile(name string, keep bool) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		writeGzip(t, filepath.Join(dir, name+".gz"), data)
		if !keep {
			remove(name)(t, dir)
		}
	}
}

func writeGzip(t *testing.T, path string, data []byte) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	// Written whole under another name, then renamed: a file seen half
	// written is skipped for a moment, which the scenarios do not wait
	// out (the end-to-end tests run the real gzip).
	if err := os.WriteFile(path+".tmp", b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

var scenarios = []struct {
	name    string
	maxLine int
	steps   []step
	skipped []string // file names that must be listed as skipped at the end
}{
	{name: "append and partial line", steps: []step{
		{appendTo("x.jsonl", "a\nb"), []string{"a"}},
		{appendTo("x.jsonl", "c\n"), []string{"a", "bc"}},
	}},
	{name: "crlf and blank lines", steps: []step{
		{appendTo("x.jsonl", "a\r\n\n  \n\r\nb\n"), []string{"a", "b"}},
	}},
	{name: "truncate then new lines", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{truncate("x.jsonl"), []string{"a", "b"}},
		{appendTo("x.jsonl", "c\n"), []string{"a", "b", "c"}},
	}},
	{name: "truncate and rewrite longer", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{func(t *testing.T, dir string) {
			truncate("x.jsonl")(t, dir)
			appendTo("x.jsonl", "cccc\ndddd\n")(t, dir)
		}, []string{"a", "b", "cccc", "dddd"}},
	}},
	{name: "rename inside the folder", steps: []step{
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
		{rename("x.jsonl", "y.jsonl"), []string{"a"}},
		{appendTo("y.jsonl", "b\n"), []string{"a", "b"}},
	}},
	{name: "rename away and recreate", steps: []step{
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
		{rename("x.jsonl", "x.jsonl.1"), []string{"a"}},
		{appendTo("x.jsonl", "c\n"), []string{"a", "c"}},
	}},
	{name: "rotated, then compressed", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{rename("x.jsonl", "x.jsonl.1"), []string{"a", "b"}},
		{appendTo("x.jsonl", "c\n"), []string{"a", "b", "c"}},
		{gzipFile("x.jsonl.1", false), []string{"a", "b", "c"}},
		{rename("x.jsonl.1.gz", "x.jsonl.2.gz"), []string{"a", "b", "c"}},
	}},
	{name: "compressed copy beside the rotated log", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{rename("x.jsonl", "x.jsonl.1"), []string{"a", "b"}},
		{gzipFile("x.jsonl.1", true), []string{"a", "b"}},
		{remove("x.jsonl.1"), []string{"a", "b"}},
	}},
	{name: "compressed logs found as they are", steps: []step{
		{func(t *testing.T, dir string) {
			writeGzip(t, filepath.Join(dir, "x.jsonl.2.gz"), []byte("a\nb\n"))
			writeGzip(t, filepath.Join(dir, "x.jsonl.gz"), []byte("c\nunfinished"))
			appendTo("x.jsonl.1", "d\n")(t, dir)
			appendTo("x.jsonl.9999.tmp", "no\n")(t, dir)
		}, []string{"a", "b", "c", "d"}},
	}},
	{name: "not a gzip file", steps: []step{
		{appendTo("x.jsonl.1.gz", "plain text\n"), nil},
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
	}, skipped: []string{"x.jsonl.1.gz"}},
	{name: "delete and recreate", steps: []step{
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
		{remove("x.jsonl"), []string{"a"}},
		{appendTo("x.jsonl", "b\n"), []string{"a", "b"}},
	}},
	{name: "rm -rf folder and recreate", steps: []step{
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
		{rmrf, []string{"a"}},
		{appendTo("x.jsonl", "b\n"), []string{"a", "b"}},
	}},
	{name: "git restore of identical file", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{restore("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{appendTo("x.jsonl", "c\n"), []string{"a", "b", "c"}},
	}},
	{name: "deleted then restored identical", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{remove("x.jsonl"), []string{"a", "b"}},
		{restore("x.jsonl", "a\nb\nc\n"), []string{"a", "b", "c"}},
	}},
	{name: "replaced by other content", steps: []step{
		{appendTo("x.jsonl", "a\nb\n"), []string{"a", "b"}},
		{restore("x.jsonl", "a\nz\n"), []string{"a", "b", "a", "z"}},
	}},
	{name: "symlink to a file outside", steps: []step{
		{symlinkOutside("s.jsonl"), nil},
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
	}, skipped: []string{"s.jsonl"}},
	{name: "fifo named like a log", steps: []step{
		{mkfifo("p.jsonl"), nil},
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
	}, skipped: []string{"p.jsonl"}},
	{name: "directory named like a log", steps: []step{
		{func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700) }, nil},
		{appendTo("x.jsonl", "a\n"), []string{"a"}},
	}, skipped: []string{"d.jsonl"}},
	{name: "oversize line", maxLine: 100, steps: []step{
		{appendTo("x.jsonl", "a\n"+strings.Repeat("x", 300)+"\nb\n"), []string{"a", "OVERSIZE(301>100)", "b"}},
	}},
	{name: "oversize line written in parts", maxLine: 100, steps: []step{
		{appendTo("x.jsonl", strings.Repeat("x", 150)), nil},
		{appendTo("x.jsonl", strings.Repeat("y", 150)), nil},
		{appendTo("x.jsonl", "\nc\n"), []string{"OVERSIZE(301>100)", "c"}},
	}},
	{name: "line exactly at the limit", maxLine: 100, steps: []step{
		{appendTo("x.jsonl", strings.Repeat("x", 100)+"\n"), []string{strings.Repeat("x", 100)}},
	}},
	{name: "other names ignored", steps: []step{
		{appendTo("notes.txt", "a\n"), nil},
		{appendTo("x.jsonl", "b\n"), []string{"b"}},
	}},
}

// TestScenariosRestart runs every scenario with a fresh watcher (a restart)
// catching up after each step.
func TestScenariosRestart(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			os.Mkdir(dir, 0o700)
			st := newMemStore()
			for i, s := range sc.steps {
				s.do(t, dir)
				w, err := New(Config{Dir: dir, MaxLineBytes: sc.maxLine}, st)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.CatchUp(context.Background()); err != nil {
					t.Fatal(err)
				}
				checkTexts(t, i, st.texts(), s.want)
			}
			checkSkipped(t, st, sc.skipped)
			if st.dups != 0 {
				t.Errorf("%d lines committed twice", st.dups)
			}
		})
	}
}

// TestScenariosLive runs every scenario under a running watcher, with and
// without fsnotify.
func TestScenariosLive(t *testing.T) {
	for _, notify := range []bool{true, false} {
		for _, sc := range scenarios {
			name := sc.name + "/notify"
			if !notify {
				name = sc.name + "/rescan-only"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), "logs")
				st := newMemStore()
				rescan := 50 * time.Millisecond
				w, err := New(Config{Dir: dir, MaxLineBytes: sc.maxLine, NoNotify: !notify, Rescan: rescan, Grace: 100 * time.Millisecond}, st)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx) }()
				defer func() {
					cancel()
					if err := <-done; err != nil {
						t.Error(err)
					}
				}()
				waitFor(t, func() bool { _, err := os.Stat(dir); return err == nil })
				for i, s := range sc.steps {
					s.do(t, dir)
					// Convergence within two rescan periods (plus slack for
					// a loaded machine) is what the design promises.
					deadline := time.Now().Add(2*rescan + 2*time.Second)
					for time.Now().Before(deadline) && !sameTexts(st.texts(), s.want) {
						time.Sleep(5 * time.Millisecond)
					}
					checkTexts(t, i, st.texts(), s.want)
				}
				checkSkipped(t, st, sc.skipped)
				if st.dups != 0 {
					t.Errorf("%d lines committed twice", st.dups)
				}
			})
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sameTexts(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

func checkTexts(t *testing.T, step int, got, want []string) {
	t.Helper()
	if !sameTexts(got, want) {
		t.Fatalf("after step %d: lines %q, want %q", step, got, want)
	}
}

func checkSkipped(t *testing.T, st *memStore, want []string) {
	t.Helper()
	got := st.skippedCopy()
	for _, name := range want {
		if got[name] == "" {
			t.Errorf("%s not listed as skipped (skipped: %v)", name, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("skipped files %v, want exactly %v", got, want)
	}
}

// TestCommitFailureRetries checks that a failed commit loses nothing: the
// lines are read again from the committed offset once the store recovers.
func TestCommitFailureRetries(t *testing.T) {
	dir := t.TempDir()
	st := newMemStore()
	appendTo("x.jsonl", "a\nb\n")(t, dir)
	st.failCommit = os.ErrPermission
	w, _ := New(Config{Dir: dir}, st)
	if err := w.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkTexts(t, 0, st.texts(), nil)
	st.failCommit = nil
	w, _ = New(Config{Dir: dir}, st)
	if err := w.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkTexts(t, 1, st.texts(), []string{"a", "b"})
}

// TestBatchLimits checks that big backlogs are committed in bounded batches
// that end on line boundaries, with line numbers and offsets that add up.
func TestBatchLimits(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 0; i < 1000; i++ {
		sb.WriteString("line\n")
	}
	appendTo("x.jsonl", sb.String())(t, dir)
	st := newMemStore()
	var batches []Batch
	w, _ := New(Config{Dir: dir, BatchLines: 64, OnCommit: func(b Batch) { batches = append(batches, b) }}, st)
	if err := w.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 16 {
		t.Errorf("%d batches, want 16", len(batches))
	}
	var prev int64
	for _, b := range batches {
		if len(b.Lines) > 64 {
			t.Errorf("batch of %d lines", len(b.Lines))
		}
		for _, l := range b.Lines {
			if l.Start != prev || l.End != l.Start+5 || l.Number != l.Start/5+1 {
				t.Fatalf("line %+v after offset %d", l, prev)
			}
			prev = l.End
		}
		if b.Gen.Offset != prev {
			t.Errorf("batch offset %d, last line ends at %d", b.Gen.Offset, prev)
		}
	}
}
