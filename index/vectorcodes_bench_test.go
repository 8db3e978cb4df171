package index

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// BenchmarkVectorCodesWorkspace measures VectorCodes (the codes of a
// large space's candidates: 5,000 random rows a query) on the workspace
// named by CONTINUITY_BENCH_WORKSPACE (see vectors.BenchmarkQueryWorkspace):
// 40–110 ms at 1M on the shared 2-core VM, a 16 KB page read a row.
func BenchmarkVectorCodesWorkspace(b *testing.B) {
	ws := os.Getenv("CONTINUITY_BENCH_WORKSPACE")
	if ws == "" {
		b.Skip("set CONTINUITY_BENCH_WORKSPACE to a workspace prepared by continuity-bench query --workspace")
	}
	db, err := Open(filepath.Join(ws, ".praxis-os", ".cache", "continuity"), Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var identity string
	if err := db.r.QueryRow(`SELECT identity FROM embedders LIMIT 1`).Scan(&identity); err != nil {
		b.Fatal(err)
	}
	lo, hi, err := db.VectorRows(ctx, identity)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	sets := make([][]int64, 20)
	for i := range sets {
		m := map[int64]bool{}
		for len(m) < 5000 {
			m[lo+r.Int64N(hi-lo+1)] = true
		}
		for row := range m {
			sets[i] = append(sets[i], row)
		}
		slices.Sort(sets[i])
	}
	i := 0
	for b.Loop() {
		n := 0
		if err := db.VectorCodes(ctx, identity, sets[i%len(sets)], func(int64, Quantized) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
