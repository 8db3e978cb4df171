package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/indextest"
)

// topicEmbedder is a model-like embedder (not the hashed one: it gets a
// model's calibration, "unrelated" at a cosine of 0.5) whose vectors say
// by construction what relates: a text naming postgres points one way,
// the query "which database did we pick" at a cosine of 0.65 from it
// (semantic strength 0.375), everything else the third way (cosine 0).
type topicEmbedder struct{}

func (topicEmbedder) Identity() string { return "test:topics:3" }
func (topicEmbedder) Dimension() int   { return 3 }
func (topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		t = strings.ToLower(t)
		switch {
		case strings.Contains(t, "which database did we pick"):
			out[i] = []float32{0.65, 0.76, 0}
		case strings.Contains(t, "postgres"):
			out[i] = []float32{1, 0, 0}
		default:
			out[i] = []float32{0, 0, 1}
		}
	}
	return out, nil
}

// TestVectorFloor (issue 32, item 2: a fusion that never loses to its
// parts): when the query's words match weakly everywhere (lexical
// strength under 0.3), the exchange closest in meaning scores at least its
// semantic strength, so it ranks first instead of being dropped under the
// weak word overlap (1-(1-L)(1-V²/2) gave it 0.07, under the floor). The
// lifted score never opens the floor's gate on its own.
func TestVectorFloor(t *testing.T) {
	f := newFixture(t)
	t0 := indextest.At(0)
	f.commit(
		exchange("pg", "s1", t0, "go with postgres, the multi server one", "Done: Postgres 16 with the pgx driver."),
		exchange("w1", "s2", t0.Add(time.Minute), "fix the lint warnings", "Fixed them; the database tests pass again. "+strings.Repeat("The linter flagged unused parameters and shadowed errors in the handlers. ", 5)),
		exchange("w2", "s3", t0.Add(2*time.Minute), "update the readme", "Updated; it says which port the server listens on."),
	)
	e := topicEmbedder{}
	w := drain(t, f.db, e)
	search := func(o Options, text string) []Result {
		t.Helper()
		s, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space, Options: o})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Search(ctx, Query{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// The first search of a fresh index weighs the words otherwise than
	// the next ones (w1's lexical strength 0.33, then 0.23): the test is
	// of the steady state.
	search(Options{}, "which database did we pick")
	res := search(Options{}, "which database did we pick")
	logs := func(res []Result) {
		for _, r := range res {
			t.Logf("%s score %.2f weak %v lexical %.2f semantic %.2f", r.ID, r.Score, r.Weak, r.Lexical, r.Semantic)
		}
	}
	logs(res)
	if len(res) == 0 || res[0].ID != "pg" {
		t.Fatalf("default: %v; want pg (the best match by meaning, no word shared) first", ids(res))
	}
	if res[0].Weak || res[0].Score < 0.37 {
		t.Errorf("pg: score %.2f weak %v; want at least its semantic strength 0.37, not weak (the words opened the gate)", res[0].Score, res[0].Weak)
	}
	if res := search(Options{VectorFloor: -1}, "which database did we pick"); rankOf(res, "pg") == 0 {
		logs(res)
		t.Errorf("vector floor off: %v; want pg not first (buried under the weak word overlap, as before)", ids(res))
	}
}
