package vectors

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// clusteredSpace returns a space of n vectors around a few centres (as
// sentence embeddings of a few topics are), with session s<i%7>, and the
// centres.
func clusteredSpace(t testing.TB, n, dim int) (*Space, [][]float32) {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	centres := make([][]float32, 30)
	for i := range centres {
		centres[i] = randomUnit(r, dim)
	}
	v := NewSpace("test")
	docs := make([]vectorDoc, n)
	for i := range docs {
		c, noise := centres[r.IntN(len(centres))], randomUnit(r, dim)
		vec := make([]float32, dim)
		for j := range vec {
			vec[j] = c[j] + 0.6*noise[j]
		}
		docs[i] = vectorDoc{row: int64(i + 1), session: fmt.Sprintf("s%d", i%7), ts: int64(i), vec: vec}
	}
	if err := v.add(docs); err != nil {
		t.Fatal(err)
	}
	return v, centres
}

// rankedIdx is the indexes of a topN, best first.
func rankedIdx(ts ...topN) []int32 {
	var h []scoredIdx
	for _, t := range ts {
		h = append(h, t.h...)
	}
	slices.SortFunc(h, func(a, b scoredIdx) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(b.row - a.row)
	})
	out := make([]int32, len(h))
	for i, x := range h {
		out[i] = x.idx
	}
	return out
}

// TestTwoStage: with as many candidates as vectors the two-stage query is
// the exact one; with fewer it keeps most of the exact top n (the recall
// measured on real text is in BenchmarkPreselectWorkspace), and it never
// returns a vector the filter rejects.
func TestTwoStage(t *testing.T) {
	const n, dim, k = 3000, 512, 10
	v, centres := clusteredSpace(t, n, dim)
	r := rand.New(rand.NewPCG(13, 14))
	all := func(int) bool { return true }
	even := func(i int) bool { return v.session[i]%2 == 0 }
	var kept, total int
	for range 20 {
		q := randomUnit(r, dim)
		for j, c := range centres[r.IntN(len(centres))] {
			q[j] += c
		}
		qi, _ := quantizeQuery(q)
		exact := rankedIdx(v.exact(v.Vectors(), sparseQuery{}, false, qi, k, all, true)...)
		if got := rankedIdx(v.twoStage(q, qi, k, n, all, true)); !slices.Equal(got, exact) {
			t.Fatalf("every vector a candidate: %v, exact %v", got, exact)
		}
		exactEven := rankedIdx(v.exact(v.Vectors(), sparseQuery{}, false, qi, k, even, false)...)
		if got := rankedIdx(v.twoStage(q, qi, k, n, even, false)); !slices.Equal(got, exactEven) {
			t.Fatalf("filtered, every vector a candidate: %v, exact %v", got, exactEven)
		}
		few := rankedIdx(v.twoStage(q, qi, k, 300, even, false))
		if len(few) != k {
			t.Fatalf("%d results, want %d", len(few), k)
		}
		for _, i := range few {
			if !even(int(i)) {
				t.Fatalf("vector %d of session %d passed an even-session filter", i, v.session[i])
			}
			if slices.Contains(exactEven, i) {
				kept++
			}
		}
		total += k
	}
	if share := float64(kept) / float64(total); share < 0.9 {
		t.Errorf("300 candidates of %d kept %.2f of the exact top %d, want ≥ 0.9", n, share, k)
	}
}

// TestQueryPreselects: a space large enough for the two-stage path finds
// each vector first for itself, and a session filter holds.
func TestQueryPreselects(t *testing.T) {
	v, docs := randomSpace(t, preselectMin+1000, 64, 50)
	if !v.preselects(v.Len(), 10) {
		t.Fatal("the space does not take the two-stage path")
	}
	for _, i := range []int{0, 777, preselectMin + 999} {
		hits, err := v.Query(ctx, docs[i].vec, 10, Filter{})
		if err != nil || len(hits) != 10 || hits[0].Row != docs[i].row {
			t.Fatalf("vector %d: %+v, %v", i, hits[:min(len(hits), 2)], err)
		}
	}
	hits, err := v.Query(ctx, docs[3].vec, 5, Filter{Sessions: []string{"s3"}})
	if err != nil || len(hits) != 5 || hits[0].Row != docs[3].row {
		t.Fatalf("session filter: %+v, %v", hits, err)
	}
}

// TestTwoStageWorkers: stage 2 split over cores (each its best n, then
// the best n of those) gives the one-pass answer: with every vector a
// candidate, the exact top n.
func TestTwoStageWorkers(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: stage 2 runs in one pass")
	}
	v, docs := randomSpace(t, 2*parallelMin+100, 64, 50)
	all := func(int) bool { return true }
	for _, i := range []int{0, 5000, 2*parallelMin + 50} {
		qi, _ := quantizeQuery(docs[i].vec)
		exact := rankedIdx(v.exact(v.Vectors(), sparseQuery{}, false, qi, 50, all, true)...)[:50] // each worker's 50, merged
		if got := rankedIdx(v.twoStage(docs[i].vec, qi, 50, v.Len(), all, true)); !slices.Equal(got, exact) {
			t.Fatalf("vector %d: %v, exact %v", i, got, exact)
		}
	}
}
