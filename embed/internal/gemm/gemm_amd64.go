package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useFMA selects the assembly micro-kernel (AVX2 and FMA3).
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kernel2x16FMA(a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, k int)

//go:noescape
func kernel4x16FMA(a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, k int)

//go:noescape
func kernel6x16FMA(a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, k int)

// kernel6x16 computes a 6×16 block of C (see kernel6x16Go). The caller
// guarantees that a holds 6 rows of lda (≥ k), b k×16 and c 6 rows of ldc.
func kernel6x16(a []float32, lda int, b []float32, c []float32, ldc int, k int) {
	if !useFMA {
		kernel6x16Go(a, lda, b, c, ldc, k)
		return
	}
	_ = a[5*lda+k-1]
	_ = b[k*PanelWidth-1]
	_ = c[5*ldc+PanelWidth-1]
	kernel6x16FMA(unsafe.Pointer(&a[0]), uintptr(lda*4), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]), uintptr(ldc*4), k)
}

// kernelTail computes the first rows (1 to 6) of a 6×16 block of C, with
// the kernel of 2, 4 or 6 rows that covers them: a, b and c as for
// kernel6x16, of which the rows past those computed are not read.
func kernelTail(rows int, a []float32, lda int, b []float32, c []float32, ldc int, k int) {
	if !useFMA || rows > 4 {
		kernel6x16(a, lda, b, c, ldc, k)
		return
	}
	h := 2
	if rows > 2 {
		h = 4
	}
	_ = a[(h-1)*lda+k-1]
	_ = b[k*PanelWidth-1]
	_ = c[(h-1)*ldc+PanelWidth-1]
	f := kernel2x16FMA
	if h == 4 {
		f = kernel4x16FMA
	}
	f(unsafe.Pointer(&a[0]), uintptr(lda*4), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]), uintptr(ldc*4), k)
}
