package vectors

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernel of dotsInt16Int8.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func dotsInt16Int8AVX2(q *int16, b *int8, dim int, n int, out *int32)

// dotsInt16Int8 sets out[i] to the dot product of q and the i-th vector of
// b (len(q) components each), for i < len(out).
func dotsInt16Int8(q []int16, b []int8, out []int32) {
	dim, n := len(q), len(out)
	if n == 0 {
		return
	}
	if !useAVX2 || dim%32 != 0 {
		dotsInt16Int8Go(q, b, out)
		return
	}
	_ = b[n*dim-1]
	dotsInt16Int8AVX2(&q[0], &b[0], dim, n, &out[0])
}
