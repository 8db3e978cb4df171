package search

import (
	"testing"
)

// TestInterleaveByMeaning: under a closed gate, the closest by meaning and
// the best by score alternate, each hit once, those without a vector only
// in the score's order.
func TestInterleaveByMeaning(t *testing.T) {
	mk := func(row int64, cos float64, vec bool) *hit {
		return &hit{c: &candidate{row: row, cos: cos, hasVec: vec}}
	}
	// In score order: 1 (lexical only), 2, 3, 4 (closest by meaning), 5.
	hits := []*hit{mk(1, 0, false), mk(2, 0.30, true), mk(3, 0.20, true), mk(4, 0.60, true), mk(5, 0.40, true)}
	got := interleaveByMeaning(hits)
	want := []int64{4, 1, 5, 2, 3}
	if len(got) != len(want) {
		t.Fatalf("%d hits, want %d", len(got), len(want))
	}
	for i, h := range got {
		if h.c.row != want[i] {
			var rows []int64
			for _, h := range got {
				rows = append(rows, h.c.row)
			}
			t.Fatalf("order %v, want %v", rows, want)
		}
	}
}
