package search

import "math"

// The vector scan's inner product: the query quantised to int16 against
// the stored int8 vectors, summed in int32, exactly (integer arithmetic:
// the assembly kernel and dotsInt16Int8Go agree to the bit). Converting
// every stored component to float32 before multiplying, as the scan did
// before, cost several times as much (BenchmarkDots).

// dotsInt16Int8Go is the portable dotsInt16Int8.
func dotsInt16Int8Go(q []int16, b []int8, out []int32) {
	dim := len(q)
	for i := range out {
		v := b[i*dim : (i+1)*dim : (i+1)*dim]
		var s0, s1, s2, s3 int32
		j := 0
		for ; j+4 <= dim; j += 4 {
			s0 += int32(q[j]) * int32(v[j])
			s1 += int32(q[j+1]) * int32(v[j+1])
			s2 += int32(q[j+2]) * int32(v[j+2])
			s3 += int32(q[j+3]) * int32(v[j+3])
		}
		for ; j < dim; j++ {
			s0 += int32(q[j]) * int32(v[j])
		}
		out[i] = (s0 + s1) + (s2 + s3)
	}
}

// quantizeQuery returns q as int16 components and their scale (component
// j is about qi[j]·scale). The largest magnitude maps to the largest value
// for which no sum of dim products with int8 components (|x| ≤ 128) can
// overflow int32: 32767 up to 512 dimensions, less beyond.
func quantizeQuery(q []float32) (qi []int16, scale float32) {
	var m float64
	for _, x := range q {
		m = max(m, math.Abs(float64(x)))
	}
	qi = make([]int16, len(q))
	if m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return qi, 0
	}
	top := min(32767, math.Floor(float64(math.MaxInt32)/(128*float64(max(len(q), 1)))))
	s := m / top
	for j, x := range q {
		qi[j] = int16(math.Round(float64(x) / s))
	}
	return qi, float32(s)
}
