package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
)

// The embedding worker's effects as search sees them (the worker's own
// tests are in package vectors).

// TestSearchOrphanReply: an exchange without a user text is embedded by
// its assistant's text, and found by vectors.
func TestSearchOrphanReply(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	f.commit(exchange("empty", "x", at(80), "?!", ""), exchange("orphan", "x", at(81), "", "An answer without a question about kubernetes."))
	e := builtin(t, 64)
	s := searcher(t, f.db, e, drain(t, f.db, e))
	res, err := s.Search(ctx, Query{Text: "answer without a question", Mode: ModeVector, Limit: 1})
	if err != nil || len(res) != 1 || res[0].ID != "orphan" {
		t.Errorf("orphan reply: %v, %v", ids(res), err)
	}
}

// refusing is an embedder that rejects with HTTP 400 any batch holding a
// text with poison, as a server does a text too long for its model.
type refusing struct {
	embed.Embedder
	poison string
}

func (r refusing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, r.poison) {
			return nil, &embed.StatusError{StatusCode: 400, Status: "400 Bad Request", URL: "http://127.0.0.1:11434/api/embeddings"}
		}
	}
	return r.Embedder.Embed(ctx, texts)
}

// TestSearchRejectedText: an exchange the embedder refused has no vector
// but is still found by BM25 (and so by hybrid search).
func TestSearchRejectedText(t *testing.T) {
	f := newFixture(t)
	f.commit(
		exchange("ok1", "s", at(0), "a question about gardening tomatoes", "water them"),
		exchange("bad", "s", at(1), "POISON a question about gardening roses", "POISON prune them"),
		exchange("ok2", "s", at(2), "a question about gardening basil", "pinch it"),
	)
	e := refusing{Embedder: builtin(t, 32), poison: "POISON"}
	s := searcher(t, f.db, e, drain(t, f.db, e))
	for _, tc := range []struct {
		mode Mode
		bad  bool
	}{{ModeVector, false}, {ModeLexical, true}, {ModeHybrid, true}} {
		res, err := s.Search(ctx, Query{Text: "gardening roses", Mode: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(ids(res), " "), "bad"); got != tc.bad {
			t.Errorf("%s: results %v", tc.mode, ids(res))
		}
	}
}

// TestSearchUnresolvedEmbedder: with a remote embedder that cannot be
// reached, the worker has no space and hybrid search is BM25 alone.
func TestSearchUnresolvedEmbedder(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	e, err := embed.New(embed.Config{Provider: "ollama", URL: "http://127.0.0.1:1", Model: "m", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := embedding.New(embedding.Config{DB: f.db, Embedder: e, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err == nil {
		t.Fatal("Drain: no error")
	}
	s := searcher(t, f.db, e, w)
	res, err := s.Search(ctx, Query{Text: "kubernetes ingress"})
	if err != nil || len(res) == 0 {
		t.Errorf("hybrid search without vectors: %v, %v", ids(res), err)
	}
}
