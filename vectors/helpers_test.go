package vectors

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
)

var ctx = context.Background()

// fill embeds every pending exchange of db with e, stores the vectors in
// the index and returns the space that holds them, as the embedding
// worker does (follow/embedding: EmbedTexts under e's recipe, slot 0
// always embedded, an empty later slot a zero vector, then StoreVectors
// and Space.Add) but without it, since the worker's package imports this
// one. The worker's own tests check its live space against Load.
func fill(t testing.TB, db *index.DB, e embed.Embedder) *Space {
	t.Helper()
	id := SpaceIdentity(e)
	recipe := RecipeOf(e)
	v := NewSpace(id)
	items, err := db.PendingEmbeddings(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int64, len(items))
	for i, it := range items {
		rows[i] = it.Row
	}
	evs, err := db.EventsByRows(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	var prev map[int64]string
	if recipe == TextUserPrev {
		if prev, err = db.PreviousUserTexts(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	var entries []Entry
	stored := make([][]float32, 0, len(rows))
	for _, r := range rows {
		ev := evs[r]
		var blob []float32
		for k, text := range EmbedTexts(recipe, ev, prev[r]) {
			var vec []float32
			if k == 0 || text != "" {
				vs, err := e.Embed(ctx, []string{text})
				if err != nil {
					t.Fatal(err)
				}
				vec = vs[0]
			} else {
				vec = make([]float32, e.Dimension())
			}
			blob = append(blob, vec...)
			entries = append(entries, Entry{Row: r, Session: ev.SessionID, TS: ev.Timestamp.UnixNano(), Slot: k, Vec: vec})
		}
		stored = append(stored, blob)
	}
	if err := db.StoreVectors(ctx, id, rows, stored); err != nil {
		t.Fatal(err)
	}
	if err := v.Add(entries); err != nil {
		t.Fatal(err)
	}
	return v
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// quantize stores the unit vector vec/norm into dst as int8 components
// and returns their scale: the largest magnitude maps to ±127. The space's
// quantisation before the index stored int8 (index.QuantizeUnit is it
// now): the tests check the two agree to the bit.
func quantize(dst []int8, vec []float32, norm float64) float32 {
	var m float32
	for _, x := range vec {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	inv := float64(127 / m)
	dst = dst[:len(vec)]
	for j, x := range vec {
		// RoundToEven is one instruction on amd64 (ROUNDSD), and
		// branch-free: the signs of the components are random.
		dst[j] = int8(math.RoundToEven(float64(x) * inv))
	}
	return float32(float64(m) / norm / 127)
}
