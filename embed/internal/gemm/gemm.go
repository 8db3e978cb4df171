// Package gemm is the matrix product of the in-process embedders' dense
// layers, C = A·W with W a fixed weight matrix, shared by embed/uselite
// and embed/hf.
//
// W is packed once, at load, into panels of 16 columns stored k-major, so
// that a micro-kernel computing a 6×16 block of C streams one panel
// sequentially while 6 rows of A are broadcast from cache (12 AVX2
// accumulators, 2 loads per 12 FMAs; gemm_amd64.s, a portable Go kernel
// elsewhere). Rows are cut into blocks that stay in L2 while every panel
// passes over them; the panels are shared among goroutines. A width that
// is not a multiple of 16 is padded with zero columns in the last panel,
// whose block of C goes through a scratch buffer.
package gemm

import (
	"sync"
	"sync/atomic"
)

const (
	// PanelWidth is the number of columns of W per packed panel.
	PanelWidth = 16
	kernelRows = 6
	rowBlock   = 96 // rows of A per block: 96 × 1536 floats = 576 KB at most
)

// Packed is a K×N weight matrix in panels of PanelWidth columns:
// Data[p·K·16 + k·16 + c] = W[k][p·16 + c] (zero past column N). It is
// read-only once packed, so one Packed serves any number of goroutines.
type Packed struct {
	K, N int
	Data []float32
}

// Panels is the number of panels, ⌈N/16⌉.
func (w *Packed) Panels() int { return (w.N + PanelWidth - 1) / PanelWidth }

// Pack packs the row-major k×n matrix w.
func Pack(k, n int, w []float32) Packed {
	var p Packed
	PackInto(&p, k, n, w)
	return p
}

// PackInto packs the row-major k×n matrix w into p, reusing p's storage
// when it is large enough: for products with a matrix that changes at
// each call (attention's keys and values).
func PackInto(p *Packed, k, n int, w []float32) {
	if len(w) != k*n {
		panic("gemm: matrix data does not match its shape")
	}
	p.K, p.N = k, n
	panels := p.Panels()
	size := panels * k * PanelWidth
	if cap(p.Data) < size {
		p.Data = make([]float32, size)
	}
	p.Data = p.Data[:size]
	if n%PanelWidth != 0 {
		clear(p.Data[(panels-1)*k*PanelWidth:]) // the padding of the last panel
	}
	for pi := range panels {
		dst := p.Data[pi*k*PanelWidth:]
		c0 := pi * PanelWidth
		c1 := min(c0+PanelWidth, n)
		for kk := range k {
			copy(dst[kk*PanelWidth:kk*PanelWidth+c1-c0], w[kk*n+c0:kk*n+c1])
		}
	}
}

// flops counts the floating-point operations of every product (2·m·K·N
// each), for benchmarks (Flops).
var flops atomic.Int64

// Flops is the number of floating-point operations of the products
// computed so far in this process (a multiply-add counts 2).
func Flops() int64 { return flops.Load() }

// Mul sets c (m×N) to a (m×K) times w, with up to threads goroutines.
func (w *Packed) Mul(c, a []float32, m, threads int) {
	w.MulYield(c, a, m, threads, nil)
}

// MulYield is Mul calling yield, when not nil, before each panel of each
// block of rows (a few tens of microseconds of work apart): a background
// product waits there while a query runs (package cores).
func (w *Packed) MulYield(c, a []float32, m, threads int, yield func()) {
	flops.Add(2 * int64(m) * int64(w.K) * int64(w.N))
	panels := w.Panels()
	threads = max(1, min(threads, panels, (m*w.K*w.N)/(1<<18)+1)) // small products: one goroutine
	if threads == 1 {
		tb := getTail(w.K)
		w.mulPanels(c, a, m, 0, panels, tb, yield)
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
		tb := getTail(w.K)
		defer tailPool.Put(tb)
		for {
			lo := int(next.Add(int64(claim))) - claim
			if lo >= panels {
				return
			}
			w.mulPanels(c, a, m, lo, min(lo+claim, panels), tb, yield)
		}
	}
	var wg sync.WaitGroup
	for t := 1; t < threads; t++ {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// claimPanels is how many panels a goroutine of Mul claims at once in a
// product of one row block (a query).
const claimPanels = 2

// tailBuf holds the last rows of A (fewer than kernelRows), padded with
// zeros, and a block of C: one per goroutine of a product, from a pool,
// not a buffer allocated and cleared at every call of mulPanels.
type tailBuf struct {
	a []float32
	c [kernelRows * PanelWidth]float32
}

var tailPool = sync.Pool{New: func() any { return new(tailBuf) }}

// getTail returns a tail buffer with room for kernelRows rows of k.
func getTail(k int) *tailBuf {
	tb := tailPool.Get().(*tailBuf)
	if cap(tb.a) < kernelRows*k {
		tb.a = make([]float32, kernelRows*max(k, 1536))
	}
	return tb
}

// mulPanels computes the columns of panels [p0, p1) of c, calling yield
// (when not nil) before each panel of each block of rows.
func (w *Packed) mulPanels(c, a []float32, m, p0, p1 int, tb *tailBuf, yield func()) {
	K, N := w.K, w.N
	padA, padC := tb.a, tb.c[:]
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
			if yield != nil {
				yield()
			}
			panel := w.Data[p*K*PanelWidth : (p+1)*K*PanelWidth]
			c0 := p * PanelWidth
			if cols := N - c0; cols < PanelWidth {
				// A partial last panel: each block of C through padC.
				for i := i0; i < full; i += kernelRows {
					kernel6x16(a[i*K:], K, panel, padC, PanelWidth, K)
					for r := range kernelRows {
						copy(c[(i+r)*N+c0:(i+r)*N+N], padC[r*PanelWidth:r*PanelWidth+cols])
					}
				}
				if tail > 0 {
					kernelTail(tail, padA, K, panel, padC, PanelWidth, K)
					for r := range tail {
						copy(c[(full+r)*N+c0:(full+r)*N+N], padC[r*PanelWidth:r*PanelWidth+cols])
					}
				}
				continue
			}
			for i := i0; i < full; i += kernelRows {
				kernel6x16(a[i*K:], K, panel, c[i*N+c0:], N, K)
			}
			if tail > 0 {
				kernelTail(tail, padA, K, panel, padC, PanelWidth, K)
				for r := range tail {
					copy(c[(full+r)*N+c0:(full+r)*N+c0+PanelWidth], padC[r*PanelWidth:(r+1)*PanelWidth])
				}
			}
		}
	}
}

// kernel6x16Go is the portable micro-kernel: c[r·ldc + j] = Σ_k a[r·lda + k]·b[k·16 + j]
// for r < 6, j < 16.
func kernel6x16Go(a []float32, lda int, b []float32, c []float32, ldc int, k int) {
	var acc [kernelRows][PanelWidth]float32
	for kk := 0; kk < k; kk++ {
		brow := b[kk*PanelWidth : (kk+1)*PanelWidth]
		for r := 0; r < kernelRows; r++ {
			x := a[r*lda+kk]
			for j, y := range brow {
				acc[r][j] += x * y
			}
		}
	}
	for r := 0; r < kernelRows; r++ {
		copy(c[r*ldc:r*ldc+PanelWidth], acc[r][:])
	}
}
