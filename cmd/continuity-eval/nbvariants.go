package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/praxis-os/continuity/search"
)

// Neighbour-context variants (issue 32 item 1), named by their weights:
// "nb:L:V" is hybrid with Options.NeighbourLexical L and NeighbourVector
// V, "nbbm25:L" BM25 alone with NeighbourLexical L, "nbvec:V" ... (a
// weight 0 turns that side off: -1 to search). "nboff" and "nboffbm25" are
// hybrid and BM25 with the neighbour field off, whatever the defaults.
func neighbourVariant(name string) (variant, bool) {
	parts := strings.Split(name, ":")
	w := func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 {
			return 0, false
		}
		if f == 0 {
			f = -1
		}
		return f, true
	}
	switch {
	case name == "nboff":
		return variant{Name: "hybrid, no neighbours", Mode: search.ModeHybrid, Options: search.Options{NeighbourLexical: -1, NeighbourVector: -1}}, true
	case name == "nboffbm25":
		return variant{Name: "bm25, no neighbours", Mode: search.ModeLexical, Options: search.Options{NeighbourLexical: -1, NeighbourVector: -1}}, true
	case parts[0] == "nb" && len(parts) == 3:
		l, ok1 := w(parts[1])
		v, ok2 := w(parts[2])
		if ok1 && ok2 {
			return variant{Name: fmt.Sprintf("hybrid, neighbours %s/%s", parts[1], parts[2]), Mode: search.ModeHybrid,
				Options: search.Options{NeighbourLexical: l, NeighbourVector: v}}, true
		}
	case parts[0] == "vfb" && len(parts) == 3:
		// vfb:F:T: vector floor F applied when the best lexical strength
		// is under T.
		f, err1 := strconv.ParseFloat(parts[1], 64)
		t, err2 := strconv.ParseFloat(parts[2], 64)
		if err1 == nil && err2 == nil {
			return variant{Name: fmt.Sprintf("hybrid, vector floor %s under lexical %s", parts[1], parts[2]), Mode: search.ModeHybrid,
				Options: search.Options{VectorFloor: f, VectorFloorBelow: t}}, true
		}
	case parts[0] == "vft" && len(parts) == 4:
		// vft:F:T:N: vector floor F under lexical T, for the N best
		// cosines only.
		f, err1 := strconv.ParseFloat(parts[1], 64)
		t, err2 := strconv.ParseFloat(parts[2], 64)
		n, err3 := strconv.Atoi(parts[3])
		if err1 == nil && err2 == nil && err3 == nil {
			return variant{Name: fmt.Sprintf("hybrid, vfloor %s<%s top %d", parts[1], parts[2], n), Mode: search.ModeHybrid,
				Options: search.Options{VectorFloor: f, VectorFloorBelow: t, VectorFloorTop: n}}, true
		}
	case parts[0] == "vfr" && len(parts) == 4:
		// vfr:F:T:N: vft with the strength relative to the candidates'
		// own cosines too.
		f, err1 := strconv.ParseFloat(parts[1], 64)
		t, err2 := strconv.ParseFloat(parts[2], 64)
		n, err3 := strconv.Atoi(parts[3])
		if err1 == nil && err2 == nil && err3 == nil {
			return variant{Name: fmt.Sprintf("hybrid, vfloor rel %s<%s top %d", parts[1], parts[2], n), Mode: search.ModeHybrid,
				Options: search.Options{VectorFloor: f, VectorFloorBelow: t, VectorFloorTop: n, VectorFloorRelative: true}}, true
		}
	case parts[0] == "nbvfb" && len(parts) == 5:
		// nbvfb:L:V:F:T: neighbours L/V and vector floor F under T.
		l, ok1 := w(parts[1])
		v, ok2 := w(parts[2])
		f, err1 := strconv.ParseFloat(parts[3], 64)
		t, err2 := strconv.ParseFloat(parts[4], 64)
		if ok1 && ok2 && err1 == nil && err2 == nil {
			return variant{Name: fmt.Sprintf("hybrid, nb %s/%s, vfloor %s<%s", parts[1], parts[2], parts[3], parts[4]), Mode: search.ModeHybrid,
				Options: search.Options{NeighbourLexical: l, NeighbourVector: v, VectorFloor: f, VectorFloorBelow: t}}, true
		}
	case (parts[0] == "nbs" || parts[0] == "nbf" || parts[0] == "nbc" || parts[0] == "nbp" || parts[0] == "nbk" || parts[0] == "nbpk") && len(parts) == 3:
		// Additive neighbours: nbs sums strengths, nbf adds the
		// neighbours' term counts as a low-weight field.
		l, ok1 := w(parts[1])
		v, ok2 := w(parts[2])
		if ok1 && ok2 {
			return variant{Name: fmt.Sprintf("hybrid, %s %s/%s", parts[0], parts[1], parts[2]), Mode: search.ModeHybrid,
				Options: search.Options{NeighbourLexical: l, NeighbourVector: v, NeighbourCombine: combineOf(parts[0])}}, true
		}
	case (parts[0] == "nbsbm25" || parts[0] == "nbfbm25") && len(parts) == 2:
		if l, ok := w(parts[1]); ok {
			return variant{Name: fmt.Sprintf("bm25, %s %s", parts[0][:3], parts[1]), Mode: search.ModeLexical,
				Options: search.Options{NeighbourLexical: l, NeighbourCombine: combineOf(parts[0][:3])}}, true
		}
	case name == "vfoff":
		// Before the vector floor was on by default (issue 32 item 2).
		return variant{Name: "hybrid, no vector floor", Mode: search.ModeHybrid, Options: search.Options{VectorFloor: -1}}, true
	case name == "weakscore":
		// Before issue 32: weak matches in the order of their scores.
		return variant{Name: "hybrid, weak matches by score", Mode: search.ModeHybrid, Options: search.Options{WeakScoreOrder: true}}, true
	case parts[0] == "nbbm25" && len(parts) == 2:
		if l, ok := w(parts[1]); ok {
			return variant{Name: "bm25, neighbours " + parts[1], Mode: search.ModeLexical, Options: search.Options{NeighbourLexical: l}}, true
		}
	}
	return variant{}, false
}

// combineOf is the neighbour combination a variant's prefix names.
func combineOf(prefix string) int {
	switch prefix {
	case "nbf":
		return search.NeighbourField
	case "nbc":
		return search.NeighbourFieldMissing
	case "nbp":
		return search.NeighbourFieldPrev
	case "nbk":
		return search.NeighbourFieldCapped
	case "nbpk":
		return search.NeighbourFieldPrevCapped
	}
	return search.NeighbourSum
}
