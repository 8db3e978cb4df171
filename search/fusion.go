package search

import "sort"

// interleaveByMeaning reorders the hits of a query whose gate closed
// (unless Options.WeakScoreOrder): the closest by meaning first (the largest
// cosine, as vector-only search ranks), then the best by score (as
// hybrid ranks), and so on alternately, each hit once. When no result
// reaches the floor, the words matched weakly and the score, which counts
// a cosine under the embedder's unrelated level as nothing, cannot tell
// the weak matches apart: the two retrievers' orders then both get
// their best in front. Chosen on the tune halves and kept because no
// held-out figure fell (docs/search.md, "Weak matches"): on the developers'
// set's held-out half hybrid any@1/3/5 went from 1/3/4 to 2/4/6 of 32, on
// the coding set's from 8/18/22 to 9/19/24 of 50; LongMemEval's questions
// never close the gate, so nothing changed there.
func interleaveByMeaning(hits []*hit) []*hit {
	if len(hits) < 2 {
		return hits
	}
	byCos := make([]*hit, len(hits))
	copy(byCos, hits)
	sort.SliceStable(byCos, func(i, j int) bool { return byCos[i].c.cos > byCos[j].c.cos })
	out := make([]*hit, 0, len(hits))
	seen := make(map[*hit]bool, len(hits))
	i, j := 0, 0
	for len(out) < len(hits) {
		for ; i < len(byCos); i++ {
			if h := byCos[i]; !seen[h] && h.c.hasVec {
				seen[h] = true
				out = append(out, h)
				i++
				break
			}
		}
		for ; j < len(hits); j++ {
			if h := hits[j]; !seen[h] {
				seen[h] = true
				out = append(out, h)
				j++
				break
			}
		}
		if i >= len(byCos) && j >= len(hits) {
			break
		}
	}
	return out
}

// The vector floor's defaults (Options.VectorFloor, VectorFloorBelow,
// VectorFloorTop): in hybrid mode, when no scored candidate's words
// reach a lexical strength of 0.3, the candidate closest in meaning (the
// largest cosine) scores at least its semantic strength V, not only
// 1-(1-L)(1-V²/2): a strong match by meaning is not buried under weak word
// overlap, while words that match well keep their order, and only the
// one best match by meaning is lifted (the model's cosines separate a
// paraphrase from a merely related text too poorly to lift more). Chosen
// on the tune halves (docs/search.md, "Fusion"): the developers' set's
// any@1/3/5 went from 1/4/4 to 2/5/5 of 32, the coding set's from 9/19/22
// to 9/19/23 of 44, LongMemEval's from 31/38/39 to 30/38/39 of 45; no
// held-out figure changed.
const (
	DefaultVectorFloor      = 1
	DefaultVectorFloorBelow = 0.3
	DefaultVectorFloorTop   = 1
)

// vectorFloorHits returns the n hits with the largest cosines (those
// with a vector), to which the vector floor applies (Options.
// VectorFloorTop); nil when n is 0: all.
func vectorFloorHits(hits []*hit, n int) map[*hit]bool {
	if n <= 0 {
		return nil
	}
	byCos := make([]*hit, 0, len(hits))
	for _, h := range hits {
		if h.c.hasVec {
			byCos = append(byCos, h)
		}
	}
	sort.SliceStable(byCos, func(i, j int) bool { return byCos[i].c.cos > byCos[j].c.cos })
	out := make(map[*hit]bool, n)
	for _, h := range byCos[:min(n, len(byCos))] {
		out[h] = true
	}
	return out
}

// relativeStrength is the semantic strength of cosine cos measured
// against the hits' own cosines (Options.VectorFloorRelative): from the
// relativeRank-th largest among them (0) to the "same meaning" level of
// cal (1). A match that stands out from the query's other candidates is
// strong even where the model's cosines all run high or low.
func relativeStrength(hits []*hit, cos float64, cal calibration) float64 {
	var cs []float64
	for _, h := range hits {
		if h.c.hasVec {
			cs = append(cs, h.c.cos)
		}
	}
	if len(cs) <= relativeRank {
		return 0
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(cs)))
	base := cs[relativeRank]
	if cal.same <= base {
		return 0
	}
	return clamp01((cos - base) / (cal.same - base))
}

// relativeRank is the rank (from 0) of the cosine relativeStrength
// measures from.
const relativeRank = 9
