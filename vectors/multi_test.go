package vectors

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/indextest"
)

// TestSeveralVectorsPerRow: in a space whose recipe gives an exchange two
// vectors, a query returns each row once, ranked by its most similar
// vector, as brute force over the vectors would (exact scan, two-stage
// scan and filters alike); rows whose second vector is zero are found by
// their first.
func TestSeveralVectorsPerRow(t *testing.T) {
	for _, n := range []int{300, preselectMin/2 + 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			v := NewSpace("test#" + TextPromptAnswer)
			var docs []vectorDoc
			for i := range n {
				row := int64(i + 1)
				d := vectorDoc{row: row, session: fmt.Sprintf("s%d", i%7), ts: int64(i), vec: randomUnit(r, 64)}
				docs = append(docs, d)
				if i%5 == 0 {
					// No answer: a zero second vector.
					d.vec = make([]float32, 64)
				} else {
					d.vec = randomUnit(r, 64)
				}
				docs = append(docs, d)
			}
			if err := v.add(docs); err != nil {
				t.Fatal(err)
			}
			// The reference: zero vectors are similar to nothing, not
			// scored 0.
			nonZero := slices.DeleteFunc(slices.Clone(docs), func(d vectorDoc) bool { return Dot(d.vec, d.vec) == 0 })
			if v.Len() != n || v.Vectors() != n+n*4/5 {
				t.Fatalf("Len %d (want %d), Vectors %d", v.Len(), n, v.Vectors())
			}
			for _, f := range []Filter{{}, {Sessions: []string{"s2", "s5"}}, {Since: int64(n / 3), Until: int64(n / 2)}} {
				for _, limit := range []int{1, 10, 100} {
					q := randomUnit(r, 64)
					if n > 1000 && limit == 10 {
						q = docs[2*(n/2)+1].vec // an answer's own vector
					}
					hits, err := v.Query(ctx, q, limit, f)
					if err != nil {
						t.Fatal(err)
					}
					got := make([]int64, len(hits))
					for i, h := range hits {
						got[i] = h.Row
					}
					var want []int64
					for _, row := range bruteForce(nonZero, q, len(nonZero), f) {
						if !slices.Contains(want, row) {
							want = append(want, row)
						}
					}
					want = want[:min(limit, len(want))]
					// The two-stage scan keeps the exact top n in all
					// but rare cases; compare the first results.
					k := len(want)
					if v.preselects(len(docs), limit*2) {
						k = min(k, 3)
					}
					if !slices.Equal(got[:min(k, len(got))], want[:k]) {
						t.Errorf("filter %+v limit %d: got %v, want %v", f, limit, got[:min(k, len(got))], want[:k])
					}
					if len(got) != len(want) {
						t.Errorf("filter %+v limit %d: %d rows, want %d", f, limit, len(got), len(want))
					}
				}
			}
		})
	}
}

// TestEmbedTexts: what each recipe embeds of an exchange.
func TestEmbedTexts(t *testing.T) {
	e := func(user, ai string) index.Event { return index.Event{User: user, AI: ai} }
	for _, tt := range []struct {
		recipe string
		ev     index.Event
		want   []string
	}{
		{TextUser, e(" go on ", "Fixed the retry."), []string{"go on"}},
		{TextUser, e("", "Fixed the retry."), []string{"Fixed the retry."}},
		{TextPromptAnswer, e(" go on ", " Fixed the retry. "), []string{"go on", "Fixed the retry."}},
		// An orphan answer is the first vector already.
		{TextPromptAnswer, e("", "Fixed the retry."), []string{"Fixed the retry.", ""}},
		{TextPromptAnswer, e("why?", ""), []string{"why?", ""}},
		{TextPromptAnswer, e("", ""), []string{"", ""}},
		{TextAI, e("why?", " because "), []string{"because"}},
	} {
		if got := EmbedTexts(tt.recipe, tt.ev, ""); !slices.Equal(got, tt.want) {
			t.Errorf("%s %q/%q: %q, want %q", tt.recipe, tt.ev.User, tt.ev.AI, got, tt.want)
		}
		if n := len(tt.want); n != VectorsPer(tt.recipe) {
			t.Errorf("VectorsPer(%s) = %d, want %d", tt.recipe, VectorsPer(tt.recipe), n)
		}
	}
	for id, want := range map[string]string{
		"uselite:use-lite-en-0.2.0-f16:512#user|ai": TextPromptAnswer,
		"builtin:hash-v2:64#user":                   TextUser,
		"remote-model":                              DefaultText,
	} {
		if got := RecipeOfIdentity(id); got != want {
			t.Errorf("RecipeOfIdentity(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestAnswerSideFound: with the default recipe, an exchange whose prompt
// says nothing ("status update please") is found by vectors for what its
// answer says, after a restart too (the space loaded from the index's
// int8 vectors, which is the space filled in memory to the bit); with the prompt alone
// embedded it is not.
func TestAnswerSideFound(t *testing.T) {
	f := indextest.New(t)
	f.Commit(
		indextest.Exchange("a", "s", indextest.At(0), "status update please", "The mail worker sent duplicates: the job was acked after sending. We now ack first and dedupe by message key."),
		indextest.Exchange("b", "s", indextest.At(1), "status update please", "Bumped the frontend build to Node 22 and cleared the cache."),
		indextest.Exchange("c", "s", indextest.At(2), "what about the flaky login test?", ""),
		indextest.Exchange("d", "s", indextest.At(3), "", "An orphan answer about the payment provider."),
	)
	q := "duplicates mail worker dedupe message key"
	for _, tt := range []struct {
		recipe string
		found  bool
	}{{TextPromptAnswer, true}, {TextUser, false}} {
		e, err := WithTextRecipe(indextest.Hash(t, 256), tt.recipe)
		if err != nil {
			t.Fatal(err)
		}
		filled := fill(t, f.DB, e)
		qv, err := e.Embed(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := load(ctx, f.DB, SpaceIdentity(e), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameSpace(filled, loaded); err != nil {
			t.Errorf("%s: the space loaded from the index is not the one filled in memory: %v", tt.recipe, err)
		}
		for name, v := range map[string]*Space{"filled": filled, "loaded": loaded} {
			hits, err := v.Query(ctx, qv[0], 1, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			a := rowOf(t, f.DB, "a")
			if got := len(hits) > 0 && hits[0].Row == a && hits[0].Score > 0.1; got != tt.found {
				t.Errorf("%s, %s: found %v (%+v), want %v", tt.recipe, name, got, hits, tt.found)
			}
			if want := 4; tt.recipe == TextPromptAnswer && v.Len() != want {
				t.Errorf("%s, %s: %d exchanges with vectors, want %d", tt.recipe, name, v.Len(), want)
			}
		}
	}
}

// rowOf is the index row of the event with this id.
func rowOf(t *testing.T, db *index.DB, id string) int64 {
	t.Helper()
	ev, ok, err := db.EventByID(ctx, id)
	if err != nil || !ok {
		t.Fatalf("event %s: %v %v", id, ok, err)
	}
	return ev.Row
}

// sameSpace compares two spaces to the bit: rows, sessions, times,
// scales, slots, sign codes and (when both hold them) codes of every
// vector.
func sameSpace(a, b *Space) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	b.mu.RLock()
	defer b.mu.RUnlock()
	if len(a.rows) != len(b.rows) || a.dim != b.dim {
		return fmt.Errorf("%d vectors of %d components against %d of %d", len(a.rows), a.dim, len(b.rows), b.dim)
	}
	for i := range a.rows {
		if a.rows[i] != b.rows[i] || a.ts[i] != b.ts[i] || a.sessions[a.session[i]] != b.sessions[b.session[i]] {
			return fmt.Errorf("vector %d: row %d/%d", i, a.rows[i], b.rows[i])
		}
		if a.scale[i] != b.scale[i] {
			return fmt.Errorf("vector %d (row %d): scale %g against %g", i, a.rows[i], a.scale[i], b.scale[i])
		}
		if a.slot[i] != b.slot[i] || !slices.Equal(a.signCode(i), b.signCode(i)) ||
			i < a.inMem && i < b.inMem && !slices.Equal(a.vector(i), b.vector(i)) {
			return fmt.Errorf("vector %d (row %d): codes differ", i, a.rows[i])
		}
	}
	return nil
}

// The index decides how many vectors an exchange has from the space
// identity (it stores and converts them): the same number as the space.
func TestVectorsPerIdentity(t *testing.T) {
	for _, r := range textRecipes {
		id := "builtin:x:8#" + r
		if got, want := index.VectorsPerIdentity(id), VectorsPer(RecipeOfIdentity(id)); got != want {
			t.Errorf("%s: index says %d vectors an exchange, the space %d", id, got, want)
		}
	}
	if got, want := index.VectorsPerIdentity("noreceipe"), VectorsPer(RecipeOfIdentity("noreceipe")); got != want {
		t.Errorf("no recipe: index says %d, the space %d", got, want)
	}
}
