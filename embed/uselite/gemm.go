package uselite

import (
	"sync"
	"sync/atomic"
)

// The matrix products of the dense layers, C = A·W with W a fixed weight
// matrix: W is packed once, at load, into panels of 16 columns stored
// k-major, so that a micro-kernel computing a 6×16 block of C streams one
// panel sequentially while 6 rows of A are broadcast from cache (12 AVX2
// accumulators, 2 loads per 12 FMAs). Rows are cut into blocks that stay in
// L2 while every panel passes over them; the panels are shared among
// goroutines.

const (
	panelWidth = 16
	kernelRows = 6
	rowBlock   = 96 // rows of A per block: 96 × 1536 floats = 576 KB at most
)

// packed is a K×N weight matrix in panels of panelWidth columns:
// data[p·K·16 + k·16 + c] = W[k][p·16 + c].
type packed struct {
	k, n int
	data []float32
}

func pack(w matrix) packed {
	if w.cols%panelWidth != 0 {
		panic("uselite: weight width not a multiple of 16")
	}
	p := packed{k: w.rows, n: w.cols, data: make([]float32, len(w.data))}
	for pi := 0; pi < w.cols/panelWidth; pi++ {
		dst := p.data[pi*w.rows*panelWidth:]
		for k := 0; k < w.rows; k++ {
			copy(dst[k*panelWidth:(k+1)*panelWidth], w.data[k*w.cols+pi*panelWidth:])
		}
	}
	return p
}

// mul sets c (m×n) to a (m×k) times w, with up to threads goroutines.
func (w *packed) mul(c, a []float32, m, threads int) {
	panels := w.n / panelWidth
	threads = max(1, min(threads, panels, (m*w.k*w.n)/(1<<18)+1)) // small products: one goroutine
	if threads == 1 {
		tb := tailPool.Get().(*tailBuf)
		w.mulPanels(c, a, m, 0, panels, tb)
		tailPool.Put(tb)
		return
	}
	// The panels are claimed a few at a time from a shared counter, and
	// the calling goroutine works too: when a helper does not get a core
	// (a search's BM25 holds the other one), the caller does its share
	// instead of waiting for it. Each panel is computed the same way
	// whoever claims it.
	// A product of more than one row block (a batch) claims a goroutine's
	// share at once: mulPanels walks all the row blocks per claim, and
	// the rows of A would be read again from L3 at each small claim.
	claim := claimPanels
	if m > rowBlock {
		claim = (panels + threads - 1) / threads
	}
	var next atomic.Int64
	work := func() {
		tb := tailPool.Get().(*tailBuf)
		defer tailPool.Put(tb)
		for {
			lo := int(next.Add(int64(claim))) - claim
			if lo >= panels {
				return
			}
			w.mulPanels(c, a, m, lo, min(lo+claim, panels), tb)
		}
	}
	var wg sync.WaitGroup
	for t := 1; t < threads; t++ {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// claimPanels is how many panels a goroutine of mul claims at once in a
// product of one row block (a query).
const claimPanels = 2

// tailBuf holds the last rows of A (fewer than kernelRows), padded with
// zeros, and their block of C: one per goroutine of a product, from a
// pool, not a 36 KB array cleared at every call of mulPanels.
type tailBuf struct {
	a [kernelRows * 1536]float32
	c [kernelRows * panelWidth]float32
}

var tailPool = sync.Pool{New: func() any { return new(tailBuf) }}

// mulPanels computes the columns of panels [p0, p1) of c.
func (w *packed) mulPanels(c, a []float32, m, p0, p1 int, tb *tailBuf) {
	K, N := w.k, w.n
	padA, padC := tb.a[:], tb.c[:]
	for i0 := 0; i0 < m; i0 += rowBlock {
		i1 := min(i0+rowBlock, m)
		full := i0 + (i1-i0)/kernelRows*kernelRows
		tail := i1 - full
		if tail > 0 {
			pa := padA[:kernelRows*K]
			clear(pa)
			copy(pa, a[full*K:i1*K])
		}
		for p := p0; p < p1; p++ {
			panel := w.data[p*K*panelWidth : (p+1)*K*panelWidth]
			for i := i0; i < full; i += kernelRows {
				kernel6x16(a[i*K:], K, panel, c[i*N+p*panelWidth:], N, K)
			}
			if tail > 0 {
				kernelTail(tail, padA, K, panel, padC, panelWidth, K)
				for r := 0; r < tail; r++ {
					copy(c[(full+r)*N+p*panelWidth:(full+r)*N+(p+1)*panelWidth], padC[r*panelWidth:(r+1)*panelWidth])
				}
			}
		}
	}
}

// kernel6x16Go is the portable micro-kernel: c[r·ldc + j] = Σ_k a[r·lda + k]·b[k·16 + j]
// for r < 6, j < 16.
func kernel6x16Go(a []float32, lda int, b []float32, c []float32, ldc int, k int) {
	var acc [kernelRows][panelWidth]float32
	for kk := 0; kk < k; kk++ {
		brow := b[kk*panelWidth : (kk+1)*panelWidth]
		for r := 0; r < kernelRows; r++ {
			x := a[r*lda+kk]
			for j, y := range brow {
				acc[r][j] += x * y
			}
		}
	}
	for r := 0; r < kernelRows; r++ {
		copy(c[r*ldc:r*ldc+panelWidth], acc[r][:])
	}
}
