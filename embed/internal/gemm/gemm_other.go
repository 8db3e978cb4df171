//go:build !amd64

package gemm

func kernel6x16(a []float32, lda int, b []float32, c []float32, ldc int, k int) {
	kernel6x16Go(a, lda, b, c, ldc, k)
}

func kernelTail(rows int, a []float32, lda int, b []float32, c []float32, ldc int, k int) {
	kernel6x16Go(a, lda, b, c, ldc, k)
}
