package watcher

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCopyBeingWritten covers file identity while a copy is still being
// written (issue 11, item 1): a restored or rewritten log is compared with
// the indexed one only once it holds the indexed bytes, or its size
// settles. The copies are written in pieces with pauses longer than the
// rescan period, so the watcher sees them mid-write.
func TestCopyBeingWritten(t *testing.T) {
	var lines []string
	var content strings.Builder
	for i := 0; i < 60; i++ {
		l := fmt.Sprintf("line %02d %s", i, strings.Repeat("x", 60))
		lines = append(lines, l)
		content.WriteString(l + "\n")
	}
	full := content.String() // 4.2 KB: longer than a head fingerprint
	cases := []struct {
		name    string
		inPlace bool   // rewrite the same file (cp over it) instead of rm + create
		write   string // what is written back, in pieces
		want    []string
	}{
		{"restore written in pieces", false, full, lines},
		{"rewrite in place in pieces", true, full, lines},
		{"restore with a line more", false, full + "new\n", append(append([]string{}, lines...), "new")},
		// An older, shorter version settles shorter: read as a new log
		// (documented in protocol.md section 8).
		{"older shorter version", false, full[:len(full)/2], append(append([]string{}, lines...), lines[:30]...)},
		// A small new file whose first line differs from the gone log's
		// is read at once, not held.
		{"other small file", false, "other\n", append(append([]string{}, lines...), "other")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "x.jsonl")
			if err := os.WriteFile(path, []byte(full), 0o600); err != nil {
				t.Fatal(err)
			}
			st := newMemStore()
			w, err := New(Config{Dir: dir, Rescan: 20 * time.Millisecond, Grace: 50 * time.Millisecond, Settle: 500 * time.Millisecond}, st)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			defer func() { cancel(); <-done }()
			waitFor(t, func() bool { return len(st.texts()) == len(lines) })

			flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if !c.inPlace {
				os.Remove(path)
				time.Sleep(30 * time.Millisecond)
			}
			f, err := os.OpenFile(path, flags, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < len(c.write); off += 1500 {
				time.Sleep(60 * time.Millisecond) // the watcher looks meanwhile
				if _, err := f.WriteString(c.write[off:min(off+1500, len(c.write))]); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			// Caught up: the file followed to its end; anything read
			// twice would be in by then.
			deadline := time.Now().Add(5 * time.Second)
			for !followedTo(t, st, path, int64(len(c.write))) {
				if time.Now().After(deadline) {
					gens, _ := st.Generations(ctx)
					t.Fatalf("x.jsonl not followed to its end (%d bytes) in 5 s: %+v", len(c.write), gens)
				}
				time.Sleep(5 * time.Millisecond)
			}
			checkTexts(t, 0, st.texts(), c.want)
			if st.dups != 0 {
				t.Errorf("%d lines committed twice", st.dups)
			}
		})
	}
}

// TestRestoreAfterRewriteUnwatched: a log rewritten with other lines
// while no daemon ran (or deleted, and its inode number reused by a new
// log) starts a new generation; a backup of the old version copied back
// later is still recognised by its fingerprints and not indexed again
// (protocol.md, section 8, Restore). Before, the new generation ended the
// old one, whose fingerprints were then forgotten: the backup's lines
// were indexed a second time (found by TestTailerModel: a log deleted,
// the daemon killed before it noticed, a new log on the freed inode).
func TestRestoreAfterRewriteUnwatched(t *testing.T) {
	dir := t.TempDir()
	st := newMemStore()
	catchUp := func() {
		t.Helper()
		w, err := New(Config{Dir: dir, Settle: 50 * time.Millisecond}, st)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.CatchUp(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "x.jsonl")
	old := "old line one\nold line two\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	catchUp()
	// Rewritten in place (the same inode) with other lines, unwatched.
	if err := os.WriteFile(path, []byte("a new line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	catchUp()
	checkTexts(t, 1, st.texts(), []string{"old line one", "old line two", "a new line"})
	// The old version restored from a backup, under another name.
	if err := os.WriteFile(filepath.Join(dir, "y.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	catchUp()
	checkTexts(t, 2, st.texts(), []string{"old line one", "old line two", "a new line"})
}

// TestRotatedCopyWrittenInParts: logrotate's copytruncate copies the live
// log (cp writes a large file in parts) before it empties it. A copy seen
// half written starts like the open log but holds less than was read from
// it: it waits to be whole, then is recognised as the log's lines, not
// read again. Before, it was read at once as a new log: the log's lines
// indexed twice (found by TestTailerModel).
func TestRotatedCopyWrittenInParts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	var full string
	var want []string
	for i := range 40 {
		l := fmt.Sprintf("line %d of the live log, long enough to pass the fingerprint size in a few lines", i)
		full += l + "\n"
		want = append(want, l)
	}
	if err := os.WriteFile(path, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	var logs syncBuffer
	w, err := New(Config{Dir: dir, Rescan: 10 * time.Millisecond, NoNotify: true, Settle: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool { return len(st.texts()) == len(want) })

	// Copies seen empty, shorter than a fingerprint, longer: each held
	// (the watcher says so) while it is written.
	parts := map[string]string{"x.jsonl.1": "", "x.jsonl.2": full[:100], "x.jsonl.3": full[:2000]}
	for name, part := range parts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(part), 0o600); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool {
			return strings.Contains(logs.String(), "waiting for it to be written whole\" file="+name+" ")
		})
	}
	for name := range parts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(full), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for name := range parts {
		waitFor(t, func() bool { return followedTo(t, st, filepath.Join(dir, name), int64(len(full))) })
	}
	checkTexts(t, 0, st.texts(), want)
	if st.dups != 0 {
		t.Errorf("%d lines committed twice", st.dups)
	}
}

// followedTo reports whether a live generation of st follows the file at
// path (by device and inode) committed up to offset.
func followedTo(t *testing.T, st *memStore, path string, offset int64) bool {
	t.Helper()
	var s syscall.Stat_t
	if err := syscall.Stat(path, &s); err != nil {
		t.Fatal(err)
	}
	gens, _ := st.Generations(context.Background())
	for _, g := range gens {
		if !g.Gone && g.Dev == uint64(s.Dev) && g.Ino == s.Ino && g.Offset == offset {
			return true
		}
	}
	return false
}

// syncBuffer is a log destination safe for the watcher's goroutine and
// the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCopyTruncateUnreadLines: lines appended just before logrotate's
// copytruncate, not read yet when the log is emptied, are in the copy
// only: they are read from it, once. Before, the copy was taken as
// holding only what the log would read from its own file, and those
// lines were lost (found by TestTailerModel). The watcher's passes are
// driven by hand, so that it sees nothing between the append and the
// rotation.
func TestCopyTruncateUnreadLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	st := newMemStore()
	w, err := New(Config{Dir: dir, NoNotify: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	defer w.closeAll()
	pass := func() {
		t.Helper()
		if err := w.scan(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w.drainAll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("read before the rotation\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pass()
	checkTexts(t, 1, st.texts(), []string{"read before the rotation"})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("appended just before the rotation\n")
	f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl.1"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	pass()
	pass()
	checkTexts(t, 2, st.texts(), []string{"read before the rotation", "appended just before the rotation"})
	if st.dups != 0 {
		t.Errorf("%d lines committed twice", st.dups)
	}
}
