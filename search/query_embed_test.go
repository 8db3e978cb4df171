package search

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
)

// queryEmbedder is an embedder whose model embeds queries differently
// (embed.QueryEmbedder): it embeds a query as its prefix + text.
type queryEmbedder struct {
	embed.Embedder
	queries atomic.Int64
	prefix  string
}

func (q *queryEmbedder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	q.queries.Add(1)
	p := make([]string, len(texts))
	for i, t := range texts {
		p[i] = q.prefix + t
	}
	return q.Embedder.Embed(ctx, p)
}

// TestQueryEmbedding: a search embeds its query with the embedder's
// EmbedQueries (an hf model's query prefix), the exchanges with Embed.
func TestQueryEmbedding(t *testing.T) {
	now := time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)
	f := newFixture(t)
	f.commit(
		exchange("a", "s1", now.Add(-time.Hour), "How do I fix the sqlite lock?", "Use a busy timeout."),
		exchange("b", "s1", now, "The concert downtown was loud", "Glad you liked it."),
	)
	e := builtin(t, 0)
	q := &queryEmbedder{Embedder: e, prefix: strings.Repeat("concert ", 20)}
	w := drain(t, f.db, q)
	s, err := New(Config{DB: f.db, Embedder: q, Vectors: w.Space, Options: noFloor})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(context.Background(), Query{Text: "sqlite lock", Now: now, Mode: ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if q.queries.Load() != 1 {
		t.Fatalf("EmbedQueries called %d times, want 1", q.queries.Load())
	}
	// The prefix outweighs the query's own words: only a query embedded
	// with it ranks the concert first.
	if len(res) == 0 || res[0].ID != "b" {
		t.Errorf("got %v, want the exchange the prefixed query is about first", ids(res))
	}
}
