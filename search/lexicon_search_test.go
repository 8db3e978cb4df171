package search

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/internal/indextest"
)

// TestSearchWithLexicon: Search gives the same results with the engine as
// without, in every mode, for plain words and for queries it leaves to
// FTS5 (CJK); and while the engine lags too far, FTS5 answers.
func TestSearchWithLexicon(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := newFixture(t)
	f.commit(indextest.Corpus(rng, 0, 800, 6)...)
	drainFullText(t, f.db) // the counts of plain's first query are read before Lexical catches FTS5 up
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	l, err := lexicon.New(lexicon.Config{DB: f.db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	plain := searcher(t, f.db, e, w)
	withLex, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space, Options: noFloor, Lexicon: l})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"東京 cache", "データ", "two weeks ago docker"}
	for range 60 {
		queries = append(queries, indextest.Query(rng))
	}
	for _, text := range queries {
		for _, q := range []Query{
			{Text: text, Mode: ModeLexical, Limit: 20},
			{Text: text, Limit: 20},
			{Text: text, Chain: "s4", Limit: 50},
			{Text: text, Since: at(100), Until: at(500), Mode: ModeLexical},
		} {
			want, err := plain.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := withLex.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("%+v:\nwith the engine %v\nwith FTS5       %v", q, ids(got), ids(want))
			}
			for i := range got {
				if got[i].Score != want[i].Score || got[i].Fused != want[i].Fused {
					t.Fatalf("%+v: result %d scores %v/%v with the engine, %v/%v with FTS5", q, i, got[i].Score, got[i].Fused, want[i].Score, want[i].Fused)
				}
			}
		}
	}
}
