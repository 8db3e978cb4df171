package uselite

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useFMA selects the assembly micro-kernel (AVX2 and FMA3).
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

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
	_ = b[k*panelWidth-1]
	_ = c[5*ldc+panelWidth-1]
	kernel6x16FMA(unsafe.Pointer(&a[0]), uintptr(lda*4), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]), uintptr(ldc*4), k)
}
