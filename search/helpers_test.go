package search

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/indextest"
)

// The tests' index and lines (internal/indextest), under the short names
// the tests use.
var (
	ctx      = context.Background()
	t0       = indextest.T0
	at       = indextest.At
	exchange = indextest.Exchange
	resume   = indextest.Resume
	builtin  = indextest.Hash
)

// fixture is a temporary index fed through the real Commit path.
type fixture struct {
	*indextest.Fixture
	db *index.DB
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := indextest.New(t)
	return &fixture{Fixture: f, db: f.DB}
}

// commit appends lines to the log and commits them in one batch.
func (f *fixture) commit(lines ...string) { f.Commit(lines...) }

// kubeLog is indextest.KubeLog: a small history of chained sessions.
func kubeLog(f *fixture) { indextest.KubeLog(f.Fixture) }

// drain embeds everything pending with e and returns the worker.
func drain(t testing.TB, db *index.DB, e embed.Embedder) *embedding.Worker {
	t.Helper()
	w, err := embedding.New(embedding.Config{DB: db, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return w
}

func searcher(t testing.TB, db *index.DB, e embed.Embedder, w *embedding.Worker) *Searcher {
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

const day = 24 * time.Hour
