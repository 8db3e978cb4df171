package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/watcher"
	"github.com/praxis-os/continuity/workspace"
)

// TestCompleteLines: what a search waits for in a log is its complete
// lines past the committed offset; a line still being written (no newline
// yet) is not written.
func TestCompleteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	tests := []struct {
		text         string
		from         int64
		bytes, lines int64
	}{
		{"{}\n{}\n", 0, 6, 2},
		{"{}\n{}\n", 3, 3, 1},
		{"{}\n{}\n", 6, 0, 0},
		{"{}\n{\"partial", 3, 0, 0},
		{"{}\n{}\n{\"partial", 0, 6, 2},
		{strings.Repeat("x", maxTailCheck+10) + "\n", 0, maxTailCheck + 11, -1}, // too long to read: all of it
	}
	for _, tc := range tests {
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		b, l := completeLines(path, tc.from, int64(len(tc.text)))
		if b != tc.bytes || l != tc.lines {
			t.Errorf("%.20q from %d: %d bytes, %d lines; want %d, %d", tc.text, tc.from, b, l, tc.bytes, tc.lines)
		}
	}
	if u := (unindexed{bytes: 10, lines: 1}); u.words() != "1 line" {
		t.Errorf("words %q", u.words())
	}
	if u := (unindexed{bytes: 10, lines: -1}); u.words() != "10 bytes of lines" {
		t.Errorf("words %q", u.words())
	}
}

// TestReaderSaysFullTextLag: a search answered from the index by a reader
// (no daemon, or another embedder than the daemon's) cannot add to the
// full-text index what the writer committed since it last indexed; it
// says so, and its "nothing found" does not read as "not discussed" (CI
// saw a pinned-embedder search come back empty, with no note, moments
// after the daemon committed the lines).
func TestReaderSaysFullTextLag(t *testing.T) {
	ws := newLayout(t)
	openIngested(t, ws, Options{}).Close()
	// Two exchanges committed by a writer that does not index them in
	// full text (as the daemon's tailer commits before its full-text
	// view runs), from a log no longer on disk: nothing of the logs is
	// behind, only the full-text index.
	db, err := index.Open(ws.Cache, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := watcher.Generation{Path: "gone.jsonl", Dev: 1, Ino: 4242}
	if g.ID, err = db.CreateGeneration(ctx, g, 0); err != nil {
		t.Fatal(err)
	}
	var lines []watcher.Line
	for i, s := range []string{
		`{"type":"exchange","id":"z1","session_id":"z","timestamp":"2026-01-03T10:00:00Z","user":"the zeppelin manifest","ai":"noted"}`,
		`{"type":"exchange","id":"z2","session_id":"z","timestamp":"2026-01-03T10:01:00Z","user":"zeppelin again","ai":"noted"}`,
	} {
		l := watcher.Line{Number: int64(i + 1), Start: g.Offset, Data: []byte(s)}
		l.End = l.Start + int64(len(s)) + 1
		g.Offset, g.Line = l.End, l.Number
		lines = append(lines, l)
	}
	g.Tail = watcher.Fingerprint{Len: 7, Sum: uint64(g.Offset) | 1<<63}
	if err := db.Commit(ctx, watcher.Batch{Gen: g, Lines: lines}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	c := NewClient(ws, func() (embed.Embedder, error) { return hashEmbedder(t), nil }, nil)
	for _, mode := range []string{"bm25", "hybrid"} {
		r, err := c.Search(ctx, SearchRequest{Query: "zeppelin manifest", Mode: mode, Limit: 3})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if r.Pending == nil || r.Pending.NotInFullText != 2 || r.Pending.Bytes != 0 ||
			!strings.Contains(r.Pending.Note, "2 indexed exchanges are not in the full-text index yet, so this search finds them by their meaning only (no daemon is running to add them: start") {
			t.Errorf("%s: pending %+v; want the 2 exchanges the full-text index lacks named", mode, r.Pending)
		}
	}
	p, err := c.Resume(ctx, ResumeRequest{Session: "z", Query: "zeppelin"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Pending == nil || p.Pending.NotInFullText != 2 || !strings.Contains(p.Pending.Note, "this resume finds them by their meaning only") {
		t.Errorf("resume: pending %+v; want the lag named", p.Pending)
	}

	// Once the writer indexed them, nothing is said.
	openIngestedAgain(t, ws).Close()
	r, err := c.Search(ctx, SearchRequest{Query: "zeppelin manifest", Mode: "bm25", Limit: 3})
	if err != nil || r.Pending != nil || len(r.Results) == 0 {
		t.Errorf("after the writer caught up: %+v, %v; want the exchanges found and no note", r, err)
	}
}

// openIngestedAgain opens an ingested ws again and catches it up (the
// full-text index too), as a second `continuity ingest` does.
func openIngestedAgain(t *testing.T, ws workspace.Layout) *Engine {
	t.Helper()
	e, err := Open(ws, Options{Embedder: hashEmbedder(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return e
}
