// Package indextest is the tests' index: a temporary index fed through
// the real commit path, as the watcher feeds it, and the lines to feed it
// with. For the tests of the packages above the index (search, vectors).
package indextest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/watcher"
)

// T0 is the time of the test exchanges; At(h) is h hours later.
var T0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// At is h hours after T0.
func At(h int) time.Time { return T0.Add(time.Duration(h) * time.Hour) }

// Fixture is a temporary index, open for writing, fed through the real
// Commit path: consecutive lines of one log file.
type Fixture struct {
	t   testing.TB
	DB  *index.DB
	gen watcher.Generation
}

// New opens a fixture in a temporary folder, closed when t ends.
func New(t testing.TB) *Fixture {
	t.Helper()
	db, err := index.Open(filepath.Join(t.TempDir(), ".praxis-os", ".cache", "continuity"), index.Options{})
	if err != nil {
		t.Fatalf("index.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	g := watcher.Generation{Path: "log.jsonl", Dev: 1, Ino: 1}
	if g.ID, err = db.CreateGeneration(context.Background(), g, 0); err != nil {
		t.Fatalf("CreateGeneration: %v", err)
	}
	return &Fixture{t: t, DB: db, gen: g}
}

// Commit appends lines to the log and commits them in one batch.
func (f *Fixture) Commit(lines ...string) {
	f.t.Helper()
	var ls []watcher.Line
	for _, s := range lines {
		l := watcher.Line{Number: f.gen.Line + 1, Start: f.gen.Offset, End: f.gen.Offset + int64(len(s)) + 1, Data: []byte(s)}
		f.gen.Offset, f.gen.Line = l.End, f.gen.Line+1
		ls = append(ls, l)
	}
	f.gen.Tail = watcher.Fingerprint{Len: 1, Sum: uint64(f.gen.Offset)}
	if err := f.DB.Commit(context.Background(), watcher.Batch{Gen: f.gen, Lines: ls}); err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
}

// Line is a JSON line of fields.
func Line(fields map[string]any) string {
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Exchange is an exchange line with a producer id.
func Exchange(id, session string, ts time.Time, user, ai string) string {
	return Line(map[string]any{"type": "exchange", "id": id, "session_id": session,
		"timestamp": ts.Format(time.RFC3339), "user": user, "ai": ai})
}

// Resume is a session_resume line: next resumes prev.
func Resume(prev, next string, ts time.Time) string {
	return Line(map[string]any{"type": "session_resume", "previous_session": prev, "new_session": next,
		"timestamp": ts.Format(time.RFC3339)})
}

// KubeLog commits a small history: session b resumes a, c resumes b; x is
// unrelated. Every exchange mentions kubernetes, so that a query for it
// finds all of them in every mode; x3 repeats a1's text word for word.
func KubeLog(f *Fixture) {
	f.Commit(
		Exchange("a1", "a", At(0), "How do I deploy the kubernetes ingress controller?", "Install the ingress chart with helm."),
		Exchange("a2", "a", At(1), "The kubernetes pods keep crashing after the deploy.", "Check the liveness probes first."),
		Resume("a", "b", At(24)),
		Exchange("b1", "b", At(24), "Back to the kubernetes ingress: the TLS certificates expired.", "cert-manager renews them."),
		Resume("b", "c", At(48)),
		Exchange("c1", "c", At(48), "Autoscaling kubernetes ingress pods under load?", "A HorizontalPodAutoscaler on CPU."),
		Exchange("x1", "x", At(72), "Running kubernetes on my laptop with kind.", "kind needs extra port mappings for ingress."),
		Exchange("x2", "x", At(73), "Kubernetes homework: explain what a pod is.", "The smallest deployable unit."),
		Exchange("x3", "x", At(74), "How do I deploy the kubernetes ingress controller?", "Install the ingress chart with helm."),
	)
}

// Hash is the hashed n-gram embedder of dim dimensions: fast, offline,
// deterministic.
func Hash(t testing.TB, dim int) embed.Embedder {
	t.Helper()
	e, err := embed.New(embed.Config{Provider: embed.ProviderHash, Dimension: dim})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
