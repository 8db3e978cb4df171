package vectors

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/internal/indextest"
)

// TestDiskSameAnswers: a space past MemoryCodes, which reads some or all
// of its codes from the index, answers every query as the same space with
// its codes in memory does, to the bit: two-stage queries (lowered
// thresholds, so that a small space preselects), exact ones (a limit too
// large to preselect, a sparse query, filters), the codes read row by row
// and by walking the table; loaded past the threshold (no code in memory,
// a third) or crossing it as the embedding worker adds vectors; after
// vectors are removed and their exchanges deleted from the index.
func TestDiskSameAnswers(t *testing.T) {
	defer func(a, b, c, d int) { MemoryCodes, preselectMin, preselectFloor, storedStreamMin = a, b, c, d }(MemoryCodes, preselectMin, preselectFloor, storedStreamMin)
	preselectMin, preselectFloor = 500, 300

	const n, dim = 3000, 64
	id := "test-model#" + TextPromptAnswer
	f := indextest.New(t)
	for b := 0; b < n; b += 500 {
		var lines []string
		for i := b; i < b+500; i++ {
			lines = append(lines, indextest.Exchange(fmt.Sprintf("e%d", i), fmt.Sprintf("s%d", i%7), indextest.At(i), fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)))
		}
		f.Commit(lines...)
	}
	items, err := f.DB.PendingEmbeddings(ctx, id, 0)
	if err != nil || len(items) != n {
		t.Fatalf("%d pending, %v", len(items), err)
	}
	// Vectors around a few centres (sign codes then preselect as on
	// text), some slots zero.
	r := rand.New(rand.NewPCG(7, 8))
	centres := make([][]float32, 12)
	for i := range centres {
		centres[i] = randomUnit(r, dim)
	}
	vec := func() []float32 {
		c, noise := centres[r.IntN(len(centres))], randomUnit(r, dim)
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.7*noise[j]
		}
		return v
	}
	rows := make([]int64, n)
	blobs := make([][]float32, n)
	var entries []Entry
	for i, it := range items {
		rows[i] = it.Row
		blob := make([]float32, 2*dim)
		if i%11 != 0 {
			copy(blob, vec())
		}
		if i%5 != 0 {
			copy(blob[dim:], vec())
		}
		blobs[i] = blob
		for k := range 2 {
			entries = append(entries, Entry{Row: it.Row, Session: fmt.Sprintf("s%d", i%7), TS: indextest.At(i).UnixNano(), Slot: k, Vec: blob[k*dim : (k+1)*dim]})
		}
	}
	store := func(lo, hi int) {
		t.Helper()
		if err := f.DB.StoreVectors(ctx, id, rows[lo:hi], blobs[lo:hi]); err != nil {
			t.Fatal(err)
		}
	}
	load := func(budget int) *Space {
		t.Helper()
		MemoryCodes = budget
		v, err := Load(ctx, f.DB, id)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// grown: loaded in memory with half the vectors, then given the
	// others as the worker gives them (stored, then added), past
	// MemoryCodes.
	store(0, n/2)
	grown := load(1 << 40)
	if in, all := grown.CodesInMemory(); in != all {
		t.Fatalf("a space under MemoryCodes has %d of %d codes in memory", in, all)
	}
	store(n/2, n)
	in, _ := grown.CodesInMemory()
	grown.budget = (in + 300) * dim // crossed by the second half (a space keeps the MemoryCodes it was made with)
	if err := grown.Add(entries[n:]); err != nil {
		t.Fatal(err)
	}
	mem, disk, third := load(1<<40), load(0), load(n/3*2*dim)
	// Past MemoryCodes a space is loaded without codes; FillCodes reads
	// those that fit.
	if in, _ := third.CodesInMemory(); in != 0 {
		t.Errorf("loaded past MemoryCodes with %d codes in memory", in)
	}
	if err := third.FillCodes(ctx); err != nil {
		t.Fatal(err)
	}
	spaces := map[string]*Space{"disk": disk, "grown": grown, "third": third}
	for name, want := range map[string][2]float64{"memory": {1, 1}, "disk": {0, 0}, "grown": {0.5, 0.7}, "third": {0.3, 0.4}} {
		v := spaces[name]
		if name == "memory" {
			v = mem
		}
		in, all := v.CodesInMemory()
		if share := float64(in) / float64(all); share < want[0] || share > want[1] || all != mem.Vectors() {
			t.Errorf("%s: %d of %d codes in memory, want a share in %v of %d", name, in, all, want, mem.Vectors())
		}
	}
	for name, v := range spaces {
		if err := sameSpace(mem, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	sparse := make([]float32, dim)
	for j := range sparse {
		if j%4 == 0 {
			sparse[j] = float32(r.NormFloat64())
		}
	}
	queries := map[string][]float32{"random": randomUnit(r, dim), "near a vector": blobs[17][dim:], "sparse": sparse}
	// The vectors on either side of the third's split: the last with its
	// code in memory, the first read from the index.
	for k, name := range []string{"last in memory", "first in the index"} {
		in, _ := third.CodesInMemory()
		i := in - 1 + k
		row, slot := third.rows[i], int(third.slot[i])
		queries[name] = blobs[slices.Index(rows, row)][slot*dim : (slot+1)*dim]
	}
	filters := []Filter{{}, {Sessions: []string{"s1", "s3"}}, {Since: indextest.At(500).UnixNano(), Until: indextest.At(2200).UnixNano()}, {Sessions: []string{"s4"}, Since: indextest.At(2900).UnixNano()}}
	check := func(when string) {
		t.Helper()
		preselected := 0
		for qname, q := range queries {
			for _, fl := range filters {
				for _, limit := range []int{1, 10, 50, 2000} {
					want, err := mem.Query(ctx, q, limit, fl)
					if err != nil {
						t.Fatal(err)
					}
					if _, sp := sparseOf(q); !sp && mem.preselects(mem.Vectors(), 2*limit) && fl.Sessions == nil {
						preselected++
					}
					for name, v := range spaces {
						got, err := v.Query(ctx, q, limit, fl)
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(got, want) {
							t.Errorf("%s, %s, query %s, filter %+v, limit %d: %d hits %v..., want %d %v...", when, name, qname, fl, limit, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
						}
					}
				}
			}
		}
		if preselected == 0 {
			t.Errorf("%s: no query took the two-stage path", when)
		}
	}
	check("loaded")
	storedStreamMin = 10 // the codes of many rows read by walking the table
	check("walked")
	storedStreamMin = 50_000

	// Removed from the spaces, then deleted from the index.
	for _, v := range []*Space{mem, disk, grown, third} {
		v.RemoveSession("s2")
		v.RemoveRows(rows[100:400])
	}
	check("removed")
	if _, err := f.DB.DeleteSession(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	check("deleted")

	// A fill that meets a row deleted from the index (the space has not
	// heard of it yet) stops there, and goes on once the space has.
	late := load(n / 3 * 2 * dim)
	late.RemoveSession("s2")
	late.RemoveRows(rows[100:400])
	if _, err := f.DB.DeleteSession(ctx, "s6"); err != nil {
		t.Fatal(err)
	}
	if err := late.FillCodes(ctx); err != nil {
		t.Fatal(err)
	}
	if in, _ := late.CodesInMemory(); in >= blockSize {
		t.Errorf("%d codes filled past a deleted row", in)
	}
	for _, v := range []*Space{mem, disk, grown, third, late} {
		v.RemoveSession("s6")
	}
	if err := late.FillCodes(ctx); err != nil {
		t.Fatal(err)
	}
	if in, all := late.CodesInMemory(); in == 0 || in == all || in > MemoryCodes/dim {
		t.Errorf("%d of %d codes filled, want %d", in, all, min(all, MemoryCodes/dim))
	}
	spaces["late"] = late
	check("filled late")
	// A session deleted from the index before the spaces hear of it:
	// the space on disk skips its rows (search drops deleted rows
	// either way), and answers with the others.
	if _, err := f.DB.DeleteSession(ctx, "s5"); err != nil {
		t.Fatal(err)
	}
	got, err := disk.Query(ctx, queries["random"], 20, Filter{Sessions: []string{"s5", "s4"}})
	if err != nil || len(got) != 20 {
		t.Fatalf("after a deletion the space has not heard of: %d hits, %v", len(got), err)
	}
	for _, h := range got {
		var s5 bool
		for i, row := range rows {
			if row == h.Row && i%7 == 5 {
				s5 = true
			}
		}
		if s5 {
			t.Errorf("row %d of the deleted session s5 answered", h.Row)
		}
	}
}
