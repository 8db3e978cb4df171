package gemm

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// TestPackedMul checks the packed product (assembly kernel where the CPU
// has AVX2/FMA, the Go kernel otherwise, and the Go kernel always) against
// a naive product, for row counts that exercise full and partial kernel
// blocks and several row blocks, with one and several goroutines.
func TestPackedMul(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Widths that are not a multiple of 16 (a partial last panel) and a
	// depth past 1536 (the tail buffer grows) included.
	for _, sh := range [][3]int{{1, 32, 16}, {5, 256, 48}, {6, 64, 32}, {13, 512, 64}, {200, 96, 160}, {7, 40, 20}, {13, 33, 8}, {100, 64, 312}, {9, 3072, 40}} {
		m, k, n := sh[0], sh[1], sh[2]
		a, w := randomMatrix(r, m*k), randomMatrix(r, k*n)
		want := make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				for kk := 0; kk < k; kk++ {
					want[i*n+j] += float64(a[i*k+kk]) * float64(w[kk*n+j])
				}
			}
		}
		p := Pack(k, n, w)
		var reused Packed
		PackInto(&reused, 100, 100, make([]float32, 10000)) // storage to reuse, stale values in it
		for i := range reused.Data {
			reused.Data[i] = 7
		}
		PackInto(&reused, k, n, w)
		for _, threads := range []int{1, 3, -1} {
			got := make([]float32, m*n)
			if threads < 0 {
				reused.Mul(got, a, m, 1)
			} else {
				p.Mul(got, a, m, threads)
			}
			for i := range got {
				if math.Abs(float64(got[i])-want[i]) > 1e-3 {
					t.Fatalf("%v threads %d: c[%d] = %v, want %v", sh, threads, i, got[i], want[i])
				}
			}
		}
		if m >= kernelRows && n >= PanelWidth {
			c := make([]float32, kernelRows*PanelWidth)
			kernel6x16Go(a, k, p.Data, c, PanelWidth, k)
			for rr := 0; rr < kernelRows; rr++ {
				for j := 0; j < PanelWidth; j++ {
					if math.Abs(float64(c[rr*PanelWidth+j])-want[rr*n+j]) > 1e-3 {
						t.Fatalf("%v: Go kernel c[%d][%d] = %v, want %v", sh, rr, j, c[rr*PanelWidth+j], want[rr*n+j])
					}
				}
			}
		}
	}
}

// TestTailKernels: the kernels of 2 and 4 rows that compute the last rows
// of a product give the 6-row kernel's sums bit for bit (the same fused
// multiply-adds in the same order), for every tail height.
func TestTailKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 7, 256, 1536} {
		a, b := randomMatrix(r, kernelRows*k), randomMatrix(r, k*PanelWidth)
		want := make([]float32, kernelRows*PanelWidth)
		kernel6x16(a, k, b, want, PanelWidth, k)
		for rows := 1; rows <= kernelRows; rows++ {
			got := make([]float32, kernelRows*PanelWidth)
			kernelTail(rows, a, k, b, got, PanelWidth, k)
			for i := range rows * PanelWidth {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("k %d, %d rows: c[%d] = %v, 6-row kernel %v", k, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMulYield: MulYield gives Mul's product bit for bit and calls yield
// before every panel of every block of rows, on one goroutine and on
// several; Flops counts 2·m·K·N a product.
func TestMulYield(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const m, k, n = 200, 64, 40 // 3 blocks of rows, 3 panels (the last partial)
	a, w := randomMatrix(r, m*k), randomMatrix(r, k*n)
	p := Pack(k, n, w)
	want := make([]float32, m*n)
	p.Mul(want, a, m, 1)
	for _, threads := range []int{1, 3} {
		var yields atomic.Int64
		got := make([]float32, m*n)
		f0 := Flops()
		p.MulYield(got, a, m, threads, func() { yields.Add(1) })
		if d := Flops() - f0; d != 2*m*k*n {
			t.Errorf("Flops grew by %d, want %d", d, 2*m*k*n)
		}
		blocks := (m + rowBlock - 1) / rowBlock
		if y := yields.Load(); y != int64(blocks*p.Panels()) {
			t.Errorf("%d threads: %d yields, want %d (%d blocks of rows × %d panels)", threads, y, blocks*p.Panels(), blocks, p.Panels())
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d threads: c[%d] = %v, Mul %v", threads, i, got[i], want[i])
			}
		}
	}
}

// randomMatrix returns n values uniform in [-1, 1).
func randomMatrix(r *rand.Rand, n int) []float32 {
	a := make([]float32, n)
	for i := range a {
		a[i] = r.Float32()*2 - 1
	}
	return a
}
