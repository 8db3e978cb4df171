package search

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/watcher"
)

var ctx = context.Background()

// t0 is the time of the test exchanges; at(h) is h hours later.
var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

// fixture is a temporary index fed through the real Commit path, as the
// watcher would feed it: consecutive lines of one log file.
type fixture struct {
	t   testing.TB
	db  *index.DB
	gen watcher.Generation
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	db, err := index.Open(filepath.Join(t.TempDir(), ".praxis-os", ".cache", "continuity"), index.Options{})
	if err != nil {
		t.Fatalf("index.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	g := watcher.Generation{Path: "log.jsonl", Dev: 1, Ino: 1}
	if g.ID, err = db.CreateGeneration(ctx, g, 0); err != nil {
		t.Fatalf("CreateGeneration: %v", err)
	}
	return &fixture{t: t, db: db, gen: g}
}

// commit appends lines to the log and commits them in one batch.
func (f *fixture) commit(lines ...string) {
	f.t.Helper()
	var ls []watcher.Line
	for _, s := range lines {
		l := watcher.Line{Number: f.gen.Line + 1, Start: f.gen.Offset, End: f.gen.Offset + int64(len(s)) + 1, Data: []byte(s)}
		f.gen.Offset, f.gen.Line = l.End, f.gen.Line+1
		ls = append(ls, l)
	}
	f.gen.Tail = watcher.Fingerprint{Len: 1, Sum: uint64(f.gen.Offset)}
	if err := f.db.Commit(ctx, watcher.Batch{Gen: f.gen, Lines: ls}); err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
}

func line(fields map[string]any) string {
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// exchange is an exchange line with a producer id.
func exchange(id, session string, ts time.Time, user, ai string) string {
	return line(map[string]any{"type": "exchange", "id": id, "session_id": session,
		"timestamp": ts.Format(time.RFC3339), "user": user, "ai": ai})
}

// resume is a session_resume line: next resumes prev.
func resume(prev, next string, ts time.Time) string {
	return line(map[string]any{"type": "session_resume", "previous_session": prev, "new_session": next,
		"timestamp": ts.Format(time.RFC3339)})
}

func builtin(t testing.TB, dim int) embed.Embedder {
	t.Helper()
	e, err := embed.New(embed.Config{Provider: embed.ProviderHash, Dimension: dim})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// drain embeds everything pending with e and returns the worker.
func drain(t testing.TB, db *index.DB, e embed.Embedder) *vectors.Worker {
	t.Helper()
	w, err := vectors.NewWorker(vectors.WorkerConfig{DB: db, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return w
}

func searcher(t testing.TB, db *index.DB, e embed.Embedder, w *vectors.Worker) *Searcher {
	t.Helper()
	cfg := Config{DB: db, Embedder: e, Options: noFloor}
	if w != nil {
		cfg.Vectors = w.Space
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// noFloor: searchers of tests about ranking and filters keep every
// result, however weak (the floor has its own tests).
var noFloor = Options{MinScore: -1}
