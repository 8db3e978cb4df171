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
// text. Every way of adding (term counts, the missing terms', strengths,
// the previous exchange's term counts only).
func TestNeighbourField(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		combine                 int
		lifted, rival, neighbor string
	}{
		{"field", NeighbourField, "a", "c", "b"},
		{"missing", NeighbourFieldMissing, "a", "c", "b"},
		{"sum", NeighbourSum, "a", "c", "b"},
		// Only the exchange before counts: b is lifted by a, its question.
		{"prev", NeighbourFieldPrev, "b", "d", "a"},
	} {
		f := newFixture(t)
		t0 := indextest.At(0)
		f.commit(
			exchange("a", "s1", t0, "the alpha service keeps crashing", "Looking at its logs now."),
			exchange("b", "s1", t0.Add(time.Minute), "and then?", "It was the beta cache filling up."),
			exchange("c", "s2", t0.Add(time.Hour), "the alpha service keeps stalling", "Looking at its logs now."),
			exchange("d", "s3", t0.Add(2*time.Hour), "so then?", "It was the beta cache getting full."),
		)
		zero := 0.0
		search := func(nb float64) []Result {
			t.Helper()
			s, err := New(Config{DB: f.db, Options: Options{NeighbourLexical: nb, NeighbourCombine: tc.combine}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Search(ctx, Query{Text: "alpha beta", Mode: ModeLexical, MinScore: &zero})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := search(-1); rankOf(res, tc.rival) > rankOf(res, tc.lifted) {
			t.Fatalf("%s, off: %v; want %s (as strong as %s, newer) above it", tc.name, ids(res), tc.rival, tc.lifted)
		}
		res := search(0.3)
		rl, rr := rankOf(res, tc.lifted), rankOf(res, tc.rival)
		if rl < 0 || rr >= 0 && rr < rl {
			t.Fatalf("%s, on: %v; want %s (its neighbour %s holds the other word) above %s", tc.name, ids(res), tc.lifted, tc.neighbor, tc.rival)
		}
		if l := res[rl]; l.Score <= l.Lexical {
			t.Errorf("%s: %s scores %.2f, its own lexical strength %.2f: want it lifted", tc.name, tc.lifted, l.Score, l.Lexical)
		}
		if tc.lifted == "a" && res[rl].User != "the alpha service keeps crashing" {
			t.Errorf("%s: a shown as %q, want its own text", tc.name, res[rl].User)
		}
		if _, err := f.db.DeleteEventsByID(ctx, []string{tc.neighbor}); err != nil {
			t.Fatal(err)
		}
		if res := search(0.3); rankOf(res, tc.rival) > rankOf(res, tc.lifted) {
			t.Errorf("%s, %s forgotten: %v; want %s above %s again", tc.name, tc.neighbor, ids(res), tc.rival, tc.lifted)
		}
	}
}

// TestNeighbourFieldCapped: a capped field lifts the exchange after a
// question ("go with it") by the question's words, but never past the
// question itself; without the field no word of the query finds it.
func TestNeighbourFieldCapped(t *testing.T) {
	f := newFixture(t)
	t0 := indextest.At(0)
	f.commit(
		exchange("q", "s1", t0, "alpha or beta for the cache?", "Alpha is simpler, beta scales."),
		exchange("d", "s1", t0.Add(time.Minute), "go with it, the one that scales", "Done: switched the cache over."),
	)
	zero := 0.0
	for _, combine := range []int{NeighbourFieldCapped, NeighbourFieldPrevCapped} {
		for _, nb := range []float64{-1, 0.5, 1} {
			s, err := New(Config{DB: f.db, Options: Options{NeighbourLexical: nb, NeighbourCombine: combine}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Search(ctx, Query{Text: "alpha beta", Mode: ModeLexical, MinScore: &zero})
			if err != nil {
				t.Fatal(err)
			}
			rq, rd := rankOf(res, "q"), rankOf(res, "d")
			switch {
			case nb < 0 && rd >= 0:
				t.Errorf("combine %d, off: %v; want d not found (no word of the query)", combine, ids(res))
			case nb > 0 && (rq != 0 || rd != 1):
				t.Errorf("combine %d, weight %g: %v; want q, then d lifted by it", combine, nb, ids(res))
			case nb > 0 && res[1].Score >= res[0].Score:
				t.Errorf("combine %d, weight %g: d scores %.2f, q %.2f: want d under the question that lifts it", combine, nb, res[1].Score, res[0].Score)
			}
		}
	}
}
