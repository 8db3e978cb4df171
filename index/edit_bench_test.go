package index

import (
	"fmt"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/watcher"
)

// editBench stores a log of 20,000 lines and returns the plan of an edit
// of its line 10,001, whose text changes.
func editBench(b *testing.B) (*DB, watcher.Generation, watcher.Batch) {
	db := openTest(b, testDir(b))
	f := newFeeder(b, db, "a.jsonl")
	var lines []string
	for i := range 20000 {
		lines = append(lines, exchange(fmt.Sprintf("s%d", i/100), "", fmt.Sprintf("question %d %s", i, strings.Repeat("about the build and its cache ", 8))))
	}
	for i := 0; i < len(lines); i += 2000 {
		commit(b, db, f.batch(lines[i:i+2000]...))
	}
	edited := append([]string(nil), lines...)
	edited[10000] = strings.Replace(edited[10000], "question", "changed question", 1)
	nf := &feeder{gen: watcher.Generation{Path: "a.jsonl", Dev: 1, Ino: 43}}
	return db, f.gen, nf.batch(edited...)
}

// BenchmarkPlanEdit: comparing a log of 20,000 lines with one line changed
// with what was stored from it (what an edit costs before it is applied).
func BenchmarkPlanEdit(b *testing.B) {
	db, gen, batch := editBench(b)
	f := &feeder{gen: gen}
	b.ResetTimer()
	for range b.N {
		p, err := db.PlanEdit(ctx, f.gen, "a.jsonl", func(yield func([]watcher.Line) error) error { return yield(batch.Lines) })
		if err != nil {
			b.Fatal(err)
		}
		if s := p.Summary(); !s.Same || s.Changed != 1 {
			b.Fatalf("%+v", s)
		}
	}
}

// BenchmarkApplyEdit: applying that edit (20,000 rows moved to the new
// generation, one deleted), in its transaction.
func BenchmarkApplyEdit(b *testing.B) {
	for range b.N {
		b.StopTimer()
		db, gen, batch := editBench(b)
		p, err := db.PlanEdit(ctx, gen, "a.jsonl", func(yield func([]watcher.Line) error) error { return yield(batch.Lines) })
		if err != nil {
			b.Fatal(err)
		}
		g := batch.Gen
		g.Offset, g.Line = p.Summary().KeptTo, p.Summary().KeptLines
		b.StartTimer()
		if _, _, err := p.Apply(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
}
