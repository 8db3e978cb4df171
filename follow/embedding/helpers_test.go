package embedding

import (
	"context"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
)

var ctx = context.Background()

// drain embeds everything pending with e and returns the worker.
func drain(t testing.TB, db *index.DB, e embed.Embedder) *Worker {
	t.Helper()
	w, err := New(Config{DB: db, Embedder: e})
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
