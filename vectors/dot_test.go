package vectors

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotsInt16Int8 checks the assembly kernel against the portable loop
// (integer arithmetic: they must agree exactly), including the extreme
// components that would overflow a careless accumulator, for the
// dimensions of the embedders continuity knows and counts of vectors
// from none to a whole block.
func TestDotsInt16Int8(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{7, 32, 256, 384, 512, 768, 1536} {
		for _, n := range []int{0, 1, 3, 17, blockSize} {
			for _, kind := range []string{"random", "extreme", "alternating"} {
				q := make([]float32, dim)
				b := make([]int8, n*dim)
				for j := range q {
					switch kind {
					case "random":
						q[j] = float32(r.NormFloat64())
					case "extreme":
						q[j] = -1
					case "alternating":
						q[j] = float32(1 - 2*(j%2))
					}
				}
				for j := range b {
					switch kind {
					case "random":
						b[j] = int8(r.IntN(256) - 128)
					case "extreme":
						b[j] = -128
					case "alternating":
						b[j] = int8(127 * (1 - 2*(j%2)))
					}
				}
				qi, _ := quantizeQuery(q)
				want, got := make([]int32, n), make([]int32, n)
				dotsInt16Int8Go(qi, b, want)
				dotsInt16Int8(qi, b, got)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("dim %d, n %d, %s: vector %d: kernel %d, portable %d", dim, n, kind, i, got[i], want[i])
					}
					// No overflow: the exact sum in int64.
					var exact int64
					for j := range dim {
						exact += int64(qi[j]) * int64(b[i*dim+j])
					}
					if int64(want[i]) != exact {
						t.Fatalf("dim %d, %s: int32 sum %d, exact %d", dim, kind, want[i], exact)
					}
				}
			}
		}
	}
}

func TestQuantizeQuery(t *testing.T) {
	for _, q := range [][]float32{nil, {0, 0}, {float32(math.NaN()), 1}} {
		if _, s := quantizeQuery(q); s != 0 {
			t.Errorf("quantizeQuery(%v): scale %v, want 0 (similar to nothing)", q, s)
		}
	}
	qi, s := quantizeQuery([]float32{0.5, -0.25, 0})
	if qi[0] != 32767 || qi[1] != -16384 && qi[1] != -16383 || qi[2] != 0 || math.Abs(float64(s)*32767-0.5) > 1e-6 {
		t.Errorf("quantizeQuery: %v × %v", qi, s)
	}
}

// BenchmarkDots: one scan of 100k vectors of 512 dimensions on one core,
// the assembly kernel against the portable loop and the float32
// conversion the scan used before.
func BenchmarkDots(b *testing.B) {
	const n, dim = 100_000, 512
	r := rand.New(rand.NewPCG(5, 6))
	codes := make([]int8, n*dim)
	for j := range codes {
		codes[j] = int8(r.IntN(256) - 128)
	}
	q := randomUnit(r, dim)
	qi, _ := quantizeQuery(q)
	out := make([]int32, blockSize)
	scan := func(f func(q []int16, b []int8, out []int32)) {
		for i := 0; i < n; i += blockSize {
			m := min(blockSize, n-i)
			f(qi, codes[i*dim:(i+m)*dim], out[:m])
		}
	}
	b.Run(fmt.Sprintf("%dk/kernel", n/1000), func(b *testing.B) {
		for b.Loop() {
			scan(dotsInt16Int8)
		}
	})
	b.Run(fmt.Sprintf("%dk/portable", n/1000), func(b *testing.B) {
		for b.Loop() {
			scan(dotsInt16Int8Go)
		}
	})
	b.Run(fmt.Sprintf("%dk/float32", n/1000), func(b *testing.B) {
		var sink float32
		for b.Loop() {
			for i := range n {
				sink += dotInt8(q, codes[i*dim:(i+1)*dim])
			}
		}
		_ = sink
	})
}

// BenchmarkDotsInCache: the kernel over 1k vectors (512 KB, in L2), to
// tell its compute cost from the memory traffic of a whole scan.
func BenchmarkDotsInCache(b *testing.B) {
	const n, dim = 1000, 512
	r := rand.New(rand.NewPCG(5, 6))
	codes := make([]int8, n*dim)
	for j := range codes {
		codes[j] = int8(r.IntN(256) - 128)
	}
	qi, _ := quantizeQuery(randomUnit(r, dim))
	out := make([]int32, n)
	for b.Loop() {
		dotsInt16Int8(qi, codes, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/vector")
}
