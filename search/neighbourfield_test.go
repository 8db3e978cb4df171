package search

import (
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/indextest"
)

// TestNeighbourField (issue 32, item 1): with the additive neighbour
// field, an exchange holding half of the query whose neighbour in its
// session holds the other half ranks above one holding the same half
// alone; the field is read as the index is now, so forgetting the
// neighbour takes the lift away, and the exchange is shown with its own
// text and lexical strength. Both ways of adding (term counts, strengths).
func TestNeighbourField(t *testing.T) {
	for _, combine := range []int{NeighbourField, NeighbourFieldMissing, NeighbourSum} {
		f := newFixture(t)
		t0 := indextest.At(0)
		f.commit(
			exchange("a", "s1", t0, "the alpha service keeps crashing", "Looking at its logs now."),
			exchange("b", "s1", t0.Add(time.Minute), "and then?", "It was the beta cache filling up."),
			exchange("c", "s2", t0.Add(time.Hour), "the alpha service keeps stalling", "Looking at its logs now."),
		)
		zero := 0.0
		search := func(nb float64) []Result {
			t.Helper()
			s, err := New(Config{DB: f.db, Options: Options{NeighbourLexical: nb, NeighbourCombine: combine}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Search(ctx, Query{Text: "alpha beta", Mode: ModeLexical, MinScore: &zero})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := search(-1); rankOf(res, "c") > rankOf(res, "a") {
			t.Fatalf("combine %d, off: %v; want c (as strong as a, newer) above a", combine, ids(res))
		}
		res := search(0.3)
		ra, rc := rankOf(res, "a"), rankOf(res, "c")
		if ra < 0 || rc >= 0 && rc < ra {
			t.Fatalf("combine %d, on: %v; want a (its neighbour holds beta) above c", combine, ids(res))
		}
		if a := res[ra]; a.User != "the alpha service keeps crashing" || a.Score <= a.Lexical {
			t.Errorf("combine %d: a shown as %q, score %.2f, lexical %.2f: want its own text, lifted above its own lexical strength", combine, a.User, a.Score, a.Lexical)
		}
		if _, err := f.db.DeleteEventsByID(ctx, []string{"b"}); err != nil {
			t.Fatal(err)
		}
		if res := search(0.3); rankOf(res, "c") > rankOf(res, "a") {
			t.Errorf("combine %d, b forgotten: %v; want c above a again (no neighbour holds beta)", combine, ids(res))
		}
	}
}
