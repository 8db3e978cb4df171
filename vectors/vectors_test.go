package vectors

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// randomSpace is a space of n random unit vectors spread over sessions
// s0..s(sessions-1), timestamps 0..n-1.
func randomSpace(t testing.TB, n, dim, sessions int) (*Space, []vectorDoc) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	v := NewSpace("test")
	docs := make([]vectorDoc, n)
	for i := range docs {
		docs[i] = vectorDoc{row: int64(i + 1), session: fmt.Sprintf("s%d", i%sessions), ts: int64(i), vec: randomUnit(r, dim)}
	}
	if err := v.add(docs); err != nil {
		t.Fatal(err)
	}
	return v, docs
}

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var s float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		s += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
	return v
}

// bruteForce is the reference answer of Query.
func bruteForce(docs []vectorDoc, q []float32, n int, f Filter) []int64 {
	type hit struct {
		row int64
		sim float64
	}
	var hs []hit
	for _, d := range docs {
		if len(f.Sessions) > 0 && !slices.Contains(f.Sessions, d.session) ||
			f.Since != 0 && d.ts < f.Since || f.Until != 0 && d.ts >= f.Until {
			continue
		}
		// The same arithmetic as Query: this checks selection and
		// filtering, not rounding.
		codes := make([]int8, len(d.vec))
		scale := quantize(codes, d.vec, math.Sqrt(float64(Dot(d.vec, d.vec))))
		var sim float32
		if sq, ok := sparseOf(q); ok {
			sim = sq.dotInt8(codes) * scale
		} else {
			qi, _ := quantizeQuery(q)
			var d [1]int32
			dotsInt16Int8Go(qi, codes, d[:])
			sim = float32(d[0]) * scale
		}
		hs = append(hs, hit{d.row, float64(sim)})
	}
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].sim != hs[j].sim {
			return hs[i].sim > hs[j].sim
		}
		return hs[i].row > hs[j].row
	})
	var out []int64
	for _, h := range hs[:min(n, len(hs))] {
		out = append(out, h.row)
	}
	return out
}

// TestVectorsQueryFilters checks the filtered queries (a where filter for
// one session, over-fetching and post-filtering for several sessions and
// time ranges) against brute force, from filters that keep almost
// everything to filters that keep almost nothing.
func TestVectorsQueryFilters(t *testing.T) {
	// 2000 vectors are scanned on one core, 40000 on several.
	for _, n := range []int{2000, 40000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testVectorsQueryFilters(t, n) })
	}
}

func testVectorsQueryFilters(t *testing.T, n int) {
	const dim, sessions = 32, 100
	v, docs := randomSpace(t, n, dim, sessions)
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		f    Filter
		k    int
	}{
		{"none", Filter{}, 10},
		{"none, more than the space", Filter{}, 5000},
		{"one session", Filter{Sessions: []string{"s7"}}, 10},
		{"one session, all of it", Filter{Sessions: []string{"s7"}}, 100},
		{"two sessions", Filter{Sessions: []string{"s1", "s99"}}, 10},
		{"two sessions, all of them", Filter{Sessions: []string{"s1", "s99"}}, 50},
		{"half the sessions", Filter{Sessions: sessionNames(0, 50)}, 20},
		{"unknown session", Filter{Sessions: []string{"nope"}}, 10},
		{"unknown and known sessions", Filter{Sessions: []string{"nope", "s3"}}, 10},
		{"recent", Filter{Since: int64(n) - 30}, 10},
		{"old", Filter{Until: 25}, 10},
		{"narrow range", Filter{Since: 1000, Until: 1003}, 10},
		{"empty range", Filter{Since: int64(n)}, 10},
		{"sessions and range", Filter{Sessions: []string{"s5", "s6"}, Since: 500, Until: 1500}, 10},
		{"one session and range", Filter{Sessions: []string{"s5"}, Since: 500}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k := range 6 {
				q := randomUnit(r, dim)
				if k%2 == 1 {
					sparsify(r, q) // the sparse dot product's path
				}
				hits, err := v.Query(ctx, q, tc.k, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]int64, len(hits))
				for i, h := range hits {
					got[i] = h.Row
					if i > 0 && h.Score > hits[i-1].Score {
						t.Fatalf("hits out of order")
					}
				}
				if want := bruteForce(docs, q, tc.k, tc.f); !slices.Equal(got, want) {
					t.Fatalf("got %d hits %v...\nwant %d %v...", len(got), got[:min(10, len(got))], len(want), want[:min(10, len(want))])
				}
			}
		})
	}
}

// sparsify keeps a quarter of q's components (at least one) and zeroes
// the others, as short texts leave most of the builtin embedder's
// components at zero.
func sparsify(r *rand.Rand, q []float32) {
	keep := make([]bool, len(q))
	for range max(1, len(q)/4) {
		keep[r.IntN(len(q))] = true
	}
	for j := range q {
		if !keep[j] {
			q[j] = 0
		} else if q[j] == 0 {
			q[j] = 0.5
		}
	}
}

// TestSparseDot: the dot product over a query's non-zero components is
// the dense one, and dense queries keep the dense path.
func TestSparseDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{7, 32, 256, 768} {
		for range 50 {
			q := randomUnit(r, dim)
			if _, ok := sparseOf(q); ok {
				t.Fatalf("dim %d: a dense query took the sparse path", dim)
			}
			sparsify(r, q)
			sq, ok := sparseOf(q)
			if !ok {
				t.Fatalf("dim %d: a sparse query took the dense path", dim)
			}
			b := make([]int8, dim)
			for j := range b {
				b[j] = int8(r.IntN(255) - 127)
			}
			dense, sparse := dotInt8(q, b), sq.dotInt8(b)
			if math.Abs(float64(dense-sparse)) > 1e-4*(1+math.Abs(float64(dense))) {
				t.Fatalf("dim %d: sparse %v, dense %v", dim, sparse, dense)
			}
		}
	}
}

func sessionNames(from, to int) []string {
	var s []string
	for i := from; i < to; i++ {
		s = append(s, fmt.Sprintf("s%d", i))
	}
	return s
}

func TestVectorsAddAndRemove(t *testing.T) {
	v := NewSpace("test")
	if hits, err := v.Query(ctx, []float32{1, 0, 0}, 5, Filter{}); err != nil || hits != nil {
		t.Errorf("empty space: %v, %v", hits, err)
	}
	err := v.add([]vectorDoc{
		{row: 1, session: "a", vec: []float32{1, 0, 0}},
		{row: 2, session: "a", vec: []float32{0, 0, 0}}, // zero: similar to nothing, left out
		{row: 3, session: "b", vec: []float32{0, 3, 4}}, // not unit: normalised
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 2 {
		t.Errorf("Len %d, want 2", v.Len())
	}
	hits, err := v.Query(ctx, []float32{0, 0.6, 0.8}, 5, Filter{})
	if err != nil || len(hits) != 2 || hits[0].Row != 3 || math.Abs(hits[0].Score-1) > 1e-2 {
		t.Errorf("query: %+v, %v", hits, err)
	}
	if hits, _ := v.Query(ctx, []float32{0, 0, 0}, 5, Filter{}); hits != nil {
		t.Errorf("zero query: %v", hits)
	}
	if _, err := v.Query(ctx, []float32{1, 0}, 5, Filter{}); err == nil {
		t.Error("query of another dimension: no error")
	}
	if err := v.add([]vectorDoc{{row: 4, session: "a", vec: []float32{1, 0}}}); err == nil {
		t.Error("vector of another dimension: no error")
	}
	v.RemoveSession("a")
	v.RemoveSession("unknown")
	hits, err = v.Query(ctx, []float32{1, 0, 0}, 5, Filter{})
	if err != nil || len(hits) != 1 || hits[0].Row != 3 {
		t.Errorf("after RemoveSession: %+v, %v", hits, err)
	}
	if hits, _ := v.Query(ctx, []float32{1, 0, 0}, 5, Filter{Sessions: []string{"a"}}); len(hits) != 0 {
		t.Errorf("removed session still found: %v", hits)
	}
}

// TestVectorsRemoveSessionAcrossBlocks removes a session whose vectors are
// spread over several blocks and checks queries against brute force.
func TestVectorsRemoveSessionAcrossBlocks(t *testing.T) {
	v, docs := randomSpace(t, 3*blockSize+17, 8, 3)
	v.RemoveSession("s1")
	var kept []vectorDoc
	for _, d := range docs {
		if d.session != "s1" {
			kept = append(kept, d)
		}
	}
	if v.Len() != len(kept) {
		t.Fatalf("Len %d, want %d", v.Len(), len(kept))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 5 {
		q := randomUnit(r, 8)
		for _, f := range []Filter{{}, {Sessions: []string{"s2"}}, {Sessions: []string{"s1"}}} {
			hits, err := v.Query(ctx, q, 20, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, h := range hits {
				got = append(got, h.Row)
			}
			if want := bruteForce(kept, q, 20, f); !slices.Equal(got, want) {
				t.Fatalf("filter %+v: got %v, want %v", f, got, want)
			}
		}
	}
	// New vectors go after the compacted ones.
	if err := v.add([]vectorDoc{{row: 1 << 40, session: "s1", vec: docs[0].vec}}); err != nil {
		t.Fatal(err)
	}
	hits, err := v.Query(ctx, docs[0].vec, 1, Filter{Sessions: []string{"s1"}})
	if err != nil || len(hits) != 1 || hits[0].Row != 1<<40 {
		t.Errorf("after re-adding: %+v, %v", hits, err)
	}
}

// TestQuantizationError bounds how far quantised cosines are from the
// exact ones, on random unit vectors (the worst case for a per-vector
// scale is a vector with one large component).
func TestQuantizationError(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, dim := range []int{16, 256, 768} {
		var worst float64
		for range 2000 {
			a, b := randomUnit(r, dim), randomUnit(r, dim)
			codes := make([]int8, dim)
			scale := quantize(codes, b, 1)
			exact := float64(Dot(a, b))
			// As Query computes it: the query in int16, an integer dot product.
			qi, qscale := quantizeQuery(a)
			var d [1]int32
			dotsInt16Int8(qi, codes, d[:])
			worst = max(worst, math.Abs(float64(d[0])*float64(scale)*float64(qscale)-exact))
		}
		if worst > 0.01 {
			t.Errorf("dim %d: cosine off by up to %.4f", dim, worst)
		}
		t.Logf("dim %d: cosine off by up to %.4f", dim, worst)
	}
}

// dotInt8 is the float reference of the sparse path: the dot product of a float32 and an int8 vector of the same
// length, with eight independent accumulators (see dot).
func dotInt8(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * float32(b[i])
		s1 += a[i+1] * float32(b[i+1])
		s2 += a[i+2] * float32(b[i+2])
		s3 += a[i+3] * float32(b[i+3])
		s4 += a[i+4] * float32(b[i+4])
		s5 += a[i+5] * float32(b[i+5])
		s6 += a[i+6] * float32(b[i+6])
		s7 += a[i+7] * float32(b[i+7])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
