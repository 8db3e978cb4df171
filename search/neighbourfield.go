package search

// The additive neighbour field (issue 32 item 1): an exchange's
// neighbours in its session add to its own evidence instead of standing
// in for it (the larger of the two: NeighbourMax). Two ways:
//
//   - NeighbourSum: its lexical strength is its own plus NeighbourLexical
//     times the sum of its neighbours' (clamped to 1); in hybrid mode its
//     semantic strength likewise with NeighbourVector.
//   - NeighbourField: its neighbours' words are a field of its own with a
//     low weight, as if indexed with the exchange: a term's strength is
//     f/(f+k), f = the exchange's own weighted count + NeighbourLexical
//     times its neighbours' (k the exchange's own, length-normalised), so
//     an exchange that holds half of the query and whose neighbour holds
//     the other half rises, and two adjacent exchanges that each hold a
//     part lift each other. Semantic strength as NeighbourSum.
//
// Both are read at query time from the scored candidates (the first
// poolSize of the fusion) as stored now: nothing is indexed twice, and an
// edit, forget or redaction of a neighbour changes the field at once.

// Ways of combining an exchange's own evidence with its neighbours'
// (Options.NeighbourCombine).
const (
	// NeighbourMax: the larger of its own strength and the weighted
	// neighbour's (the first design; neighbours.go).
	NeighbourMax = iota
	// NeighbourSum: its own plus the weighted sum of its neighbours'.
	NeighbourSum
	// NeighbourField: the neighbours' term counts added to its own at a
	// low weight (a BM25 field).
	NeighbourField
	// NeighbourFieldMissing: as NeighbourField, for the terms the
	// exchange does not hold itself only.
	NeighbourFieldMissing
	// NeighbourFieldPrev: as NeighbourField, from the exchange just
	// before only (the question a "go with it" answers).
	NeighbourFieldPrev
	// NeighbourFieldCapped and NeighbourFieldPrevCapped: as
	// NeighbourField and NeighbourFieldPrev, but an exchange lifted by
	// its neighbours scores under the neighbour that lifts it (a step
	// under its lexical strength), unless its own is higher: the
	// neighbour of a match rises next to it, never past it.
	NeighbourFieldCapped
	NeighbourFieldPrevCapped
)

// termFreqs returns the weighted count f = 5·(count in user) + (count in
// ai) of each of terms in an exchange (the f of termStrengths).
func termFreqs(terms []lexTerm, user, ai string) []float64 {
	user, ai = head(user), head(ai)
	cu, ca := make([]int, len(terms)), make([]int, len(terms))
	countTerms(terms, user, ai, cu, ca)
	out := make([]float64, len(terms))
	for i := range terms {
		out[i] = 5*float64(cu[i]) + float64(ca[i])
	}
	return out
}

// neighbourField sets the field lexical strength of each hit
// (candidate.fieldLexical): its own term counts plus r.nbLex times those
// of its neighbours among hits (byRow).
func (s *Searcher) neighbourField(r *ranking, hits []*hit, byRow map[int64]*candidate) {
	if len(r.lts) == 0 {
		return
	}
	freqs := make(map[int64][]float64, len(hits))
	for _, h := range hits {
		freqs[h.c.row] = termFreqs(r.lts, h.e.User, searchableAI(h.e))
	}
	extra := make([]float64, len(r.lts))
	for _, h := range hits {
		clear(extra)
		a := r.adj[h.c.row]
		any := false
		ns := [2]int64{a.Prev, a.Next}
		if r.nbCombine == NeighbourFieldPrev || r.nbCombine == NeighbourFieldPrevCapped {
			ns[1] = 0
		}
		lender := 0.0
		for _, n := range ns {
			if f, ok := freqs[n]; n != 0 && ok && byRow[n] != nil {
				lender = max(lender, byRow[n].lexical)
				own := freqs[h.c.row]
				for i, x := range f {
					if r.nbCombine == NeighbourFieldMissing && own[i] > 0 {
						continue
					}
					extra[i] += r.nbLex * x
					any = any || x > 0
				}
			}
		}
		if !any {
			h.c.fieldLexical = h.c.lexical
			continue
		}
		l := lexicalScoreField(r.lts, r.ids, h.e.User, searchableAI(h.e), r.ln, extra)
		if r.nbCombine == NeighbourFieldCapped || r.nbCombine == NeighbourFieldPrevCapped {
			l = min(l, lender-ScoreStep)
		}
		h.c.fieldLexical = max(h.c.lexical, l)
	}
}
