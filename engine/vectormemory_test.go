package engine

import (
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/vectors"
)

// TestStatusVectorMemory: status says how many of the daemon's vectors
// have their codes in memory, and the budget, so that a user whose
// searches slowed past the budget sees why and which flag changes it.
func TestStatusVectorMemory(t *testing.T) {
	for _, c := range []struct {
		name     string
		budget   int // bytes
		inMemory func(n int) bool
	}{
		{"all fit", 384 << 20, func(n int) bool { return n == 20 }},
		{"past the budget", 4 * 256, func(n int) bool { return n < 20 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(old int) { vectors.MemoryCodes = old }(vectors.MemoryCodes)
			vectors.MemoryCodes = c.budget
			ws := newLayout(t)
			openIngested(t, ws, Options{}).Close() // the vectors stored, so that the daemon loads them
			e, err := Open(ws, Options{Embedder: hashEmbedder(t), Socket: true})
			if err != nil {
				t.Fatal(err)
			}
			defer runDaemon(t, e)()
			c2 := NewClient(ws, func() (embed.Embedder, error) { return hashEmbedder(t), nil }, nil)
			var r StatusReport
			waitFor(t, "the daemon's vector space in status", func() bool {
				r, err = c2.Status(ctx)
				return err == nil && r.VectorMemory != nil
			})
			m := r.VectorMemory
			if m.Vectors != 20 || !c.inMemory(m.InMemory) || m.BudgetMiB != c.budget>>20 {
				t.Errorf("vector memory %+v; want 20 vectors (10 exchanges, two each), in memory as the budget allows, budget %d MiB", m, c.budget>>20)
			}
		})
	}
}
