package vectors

import (
	"math/bits"
	"runtime"
	"sync"

	"github.com/praxis-os/continuity/index"
)

// Two-stage search for large spaces. A scan reads every vector (512 bytes
// each for a 512-dimension model), so at hundreds of thousands of
// exchanges the exact scan is bound by memory bandwidth, whatever the
// arithmetic (BenchmarkDots: a vector in cache against one from memory).
// So beyond preselectMin vectors the scan reads a sign code per vector
// instead (one bit per component, 64 bytes for 512 components: an eighth
// of the traffic), keeps the candidates nearest to the query's own sign
// code in Hamming distance (preselectFactor × n of them, at least
// preselectFloor, and all those as near as the farthest taken), and
// scores those exactly, as the exact scan would: the scores are the same,
// only a vector that the sign codes put outside the candidates can be
// missed. How much of the exact top n it keeps, and what it saves, is
// measured by BenchmarkPreselectWorkspace (docs/performance.md, "Figures behind design
// choices"). Spaces below preselectMin (every per-question workspace of
// the evaluations) are scanned exactly.
var (
	preselectMin   = 65536 // variables for tests (disk_test.go)
	preselectFloor = 4000
)

const preselectFactor = 20

// preselects reports whether a dense query for n vectors of a space of
// total vectors takes the two-stage path.
func (v *Space) preselects(total, n int) bool {
	return total >= preselectMin && n*preselectFactor < total/4
}

// preselectWant is how many candidates stage 1 keeps for a query of n.
func preselectWant(n int) int { return max(n*preselectFactor, preselectFloor) }

// signCode sets the bits of dst (len(code)/64 words, rounded up) to the
// signs of code: bit j is set when component j is positive.
// index.SignCode: the index stores the sign codes of large spaces
// (vector_signs), which must be these.
func signCode(dst []uint64, code []int8) { index.SignCode(dst, code) }

// signCodeFloat is signCode of a float vector.
func signCodeFloat(dst []uint64, q []float32) {
	clear(dst)
	for j, c := range q {
		if c > 0 {
			dst[j/64] |= 1 << (j % 64)
		}
	}
}

// twoStage is the query of q (qi quantised) for the best n vectors that
// pass the filter, through sign-code candidates.
// want is how many candidates stage 1 keeps (see preselectWant).
func (v *Space) twoStage(q []float32, qi []int16, n, want int, pass func(int) bool, unfiltered bool) topN {
	dist, t, done := v.preselect(q, want, pass, unfiltered)
	defer done()
	total := len(v.rows)
	workers := max(1, min(runtime.GOMAXPROCS(0), total/parallelMin))
	var wg sync.WaitGroup

	// Stage 2: exact scores of the candidates, each core the best n of
	// its share, then the best n of those (the same n as one pass: the
	// order of (score, row) is total).
	tops := make([]topN, workers)
	for w := range workers {
		lo, hi := total*w/workers, total*(w+1)/workers
		wg.Go(func() {
			top := topN{n: n}
			var dot [1]int32
			for i := lo; i < hi; i++ {
				if int(dist[i]) > t {
					continue
				}
				dotsInt16Int8(qi, v.vector(i), dot[:])
				top.offer(float32(dot[0])*v.scale[i], int32(i), v.rows[i])
			}
			tops[w] = top
		})
	}
	wg.Wait()
	if workers == 1 {
		return tops[0]
	}
	top := topN{n: n}
	for _, tw := range tops {
		for _, x := range tw.h {
			top.offer(x.score, x.idx, x.row)
		}
	}
	return top
}

// preselect is stage 1 of twoStage: the Hamming distance of each vector's
// sign code to q's (0xffff: filtered out) and the threshold t: the
// candidates are the vectors at distance t or nearer. done gives dist
// back to its pool.
func (v *Space) preselect(q []float32, want int, pass func(int) bool, unfiltered bool) (dist []uint16, t int, done func()) {
	total := len(v.rows)
	qs := make([]uint64, v.words)
	signCodeFloat(qs, q)

	// Stage 1: Hamming distances (0xffff: filtered out) and their
	// histogram, on every core.
	dp := distPool.Get().(*[]uint16)
	if cap(*dp) < total {
		*dp = make([]uint16, total)
	}
	dist = (*dp)[:total] // every entry is written below
	workers := max(1, min(runtime.GOMAXPROCS(0), total/parallelMin))
	hists := make([][]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := total*w/workers, total*(w+1)/workers
		wg.Go(func() {
			h := make([]int, v.dim+1)
			v.hamming(qs, lo, hi, dist, pass, unfiltered, h)
			hists[w] = h
		})
	}
	wg.Wait()
	hist := hists[0]
	for _, h := range hists[1:] {
		for d, c := range h {
			hist[d] += c
		}
	}
	// The threshold: every vector at distance t or nearer is a
	// candidate, t the smallest that gives want (all of distance t, not
	// the first ones in the space's order, which depends on how it was
	// loaded: the answer must not).
	below := 0
	for t < v.dim && below+hist[t] < want {
		below += hist[t]
		t++
	}
	return dist, t, func() { distPool.Put(dp) }
}

// distPool holds the distance buffers of twoStage (2 bytes a vector: 2 MB
// at 1M), which would otherwise be allocated and cleared at each query.
var distPool = sync.Pool{New: func() any { return new([]uint16) }}

// hamming sets dist[i] for i in [lo, hi) to the Hamming distance between
// qs and vector i's sign code (0xffff when it does not pass) and counts
// the distances in hist.
func (v *Space) hamming(qs []uint64, lo, hi int, dist []uint16, pass func(int) bool, unfiltered bool, hist []int) {
	for i := lo; i < hi; {
		end := min(hi, (i/blockSize+1)*blockSize)
		b := v.signs[i/blockSize]
		o := (i % blockSize) * v.words
		if v.words == 8 {
			q0, q1, q2, q3, q4, q5, q6, q7 := qs[0], qs[1], qs[2], qs[3], qs[4], qs[5], qs[6], qs[7]
			for k := i; k < end; k++ {
				c := b[o : o+8 : o+8]
				o += 8
				if !unfiltered && !pass(k) {
					dist[k] = 0xffff
					continue
				}
				d := bits.OnesCount64(c[0]^q0) + bits.OnesCount64(c[1]^q1) + bits.OnesCount64(c[2]^q2) + bits.OnesCount64(c[3]^q3) +
					bits.OnesCount64(c[4]^q4) + bits.OnesCount64(c[5]^q5) + bits.OnesCount64(c[6]^q6) + bits.OnesCount64(c[7]^q7)
				dist[k] = uint16(d)
				hist[d]++
			}
		} else {
			for k := i; k < end; k++ {
				c := b[o : o+v.words : o+v.words]
				o += v.words
				if !unfiltered && !pass(k) {
					dist[k] = 0xffff
					continue
				}
				d := 0
				for j, x := range c {
					d += bits.OnesCount64(x ^ qs[j])
				}
				dist[k] = uint16(d)
				hist[d]++
			}
		}
		i = end
	}
}
