package hf

import (
	"math"
	"testing"
)

// TestGELU: the fast GELU is within 2e-7·max(1, |x|) of x·Φ(x) computed
// in float64 with math.Erf, over the range activations take.
func TestGELU(t *testing.T) {
	n := 200_001
	x := make([]float32, n)
	for i := range x {
		x[i] = -12 + 24*float32(i)/float32(n-1)
	}
	got := append([]float32(nil), x...)
	geluErf(got, make([]float32, 3*geluBlock))
	worst := 0.0
	for i, a := range x {
		f := float64(a)
		want := 0.5 * f * (1 + math.Erf(f/math.Sqrt2))
		err := math.Abs(float64(got[i])-want) / math.Max(1, math.Abs(f))
		worst = max(worst, err)
		if err > 2e-7 {
			t.Fatalf("gelu(%v) = %v, want %v", a, got[i], want)
		}
	}
	t.Logf("worst error %.3g", worst)
}
