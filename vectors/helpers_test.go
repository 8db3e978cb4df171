package vectors

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
)

var ctx = context.Background()

// drain embeds everything pending with e and returns the worker.
func drain(t testing.TB, db *index.DB, e embed.Embedder) *Worker {
	t.Helper()
	w, err := NewWorker(WorkerConfig{DB: db, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return w
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// quantize stores the unit vector vec/norm into dst as int8 components
// and returns their scale: the largest magnitude maps to ±127. The space's
// quantisation before the index stored int8 (index.QuantizeUnit is it
// now): the tests check the two agree to the bit.
func quantize(dst []int8, vec []float32, norm float64) float32 {
	var m float32
	for _, x := range vec {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	inv := float64(127 / m)
	dst = dst[:len(vec)]
	for j, x := range vec {
		// RoundToEven is one instruction on amd64 (ROUNDSD), and
		// branch-free: the signs of the components are random.
		dst[j] = int8(math.RoundToEven(float64(x) * inv))
	}
	return float32(float64(m) / norm / 127)
}
