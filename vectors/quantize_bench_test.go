package vectors

import (
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkQuantize(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	vec := randomUnit(r, 512)
	dst := make([]int8, 512)
	for b.Loop() {
		quantize(dst, vec, 1)
	}
}

func BenchmarkSignCode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	vec := randomUnit(r, 512)
	dst := make([]int8, 512)
	quantize(dst, vec, 1)
	s := make([]uint64, 8)
	for b.Loop() {
		signCode(s, dst)
	}
}

// quantizeOld is the previous quantize (float64, math.Round), kept here
// as the baseline of BenchmarkQuantize.
func quantizeOld(dst []int8, vec []float32, norm float64) float32 {
	var m float64
	for _, x := range vec {
		m = max(m, math.Abs(float64(x)))
	}
	m /= norm
	scale := m / 127
	for j, x := range vec {
		dst[j] = int8(math.Round(float64(x) / norm / scale))
	}
	return float32(scale)
}

func BenchmarkQuantizeOld(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	vec := randomUnit(r, 512)
	dst := make([]int8, 512)
	for b.Loop() {
		quantizeOld(dst, vec, 1)
	}
}
