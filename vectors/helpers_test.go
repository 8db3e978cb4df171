package vectors

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
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
func drain(t testing.TB, db *index.DB, e embed.Embedder) *Worker {
	t.Helper()
	w, err := NewWorker(WorkerConfig{DB: db, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return w
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// kubeLog is a small history: session b resumes a, c resumes b; x is
// unrelated (the same as the search tests').
func kubeLog(f *fixture) {
	f.commit(
		exchange("a1", "a", at(0), "How do I deploy the kubernetes ingress controller?", "Install the ingress chart with helm."),
		exchange("a2", "a", at(1), "The kubernetes pods keep crashing after the deploy.", "Check the liveness probes first."),
		resume("a", "b", at(24)),
		exchange("b1", "b", at(24), "Back to the kubernetes ingress: the TLS certificates expired.", "cert-manager renews them."),
		resume("b", "c", at(48)),
		exchange("c1", "c", at(48), "Autoscaling kubernetes ingress pods under load?", "A HorizontalPodAutoscaler on CPU."),
		exchange("x1", "x", at(72), "Running kubernetes on my laptop with kind.", "kind needs extra port mappings for ingress."),
		exchange("x2", "x", at(73), "Kubernetes homework: explain what a pod is.", "The smallest deployable unit."),
		exchange("x3", "x", at(74), "How do I deploy the kubernetes ingress controller?", "Install the ingress chart with helm."),
	)
}
