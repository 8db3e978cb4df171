package watcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
			deadline := time.Now().Add(3 * time.Second)
			for time.Now().Before(deadline) && !sameTexts(st.texts(), c.want) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // and nothing more arrives
			checkTexts(t, 0, st.texts(), c.want)
			if st.dups != 0 {
				t.Errorf("%d lines committed twice", st.dups)
			}
		})
	}
}
