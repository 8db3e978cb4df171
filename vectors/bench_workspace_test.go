package vectors

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// envBenchWorkspace names a workspace prepared by `continuity-bench query
// --workspace DIR` (real LongMemEval text, vectors of the default
// embedder seeded for every exchange); see search.BenchmarkSearchWorkspace.
const envBenchWorkspace = "CONTINUITY_BENCH_WORKSPACE"

// BenchmarkLoadWorkspace measures Load, the daemon's start-to-ready, on a
// workspace continuity-bench prepared (see BenchmarkSearchWorkspace);
// CONTINUITY_BENCH_MEMORY_CODES_MIB sets MemoryCodes.
func BenchmarkLoadWorkspace(b *testing.B) {
	db, e := openBenchWorkspace(b)
	if mib, err := strconv.Atoi(os.Getenv("CONTINUITY_BENCH_MEMORY_CODES_MIB")); err == nil {
		defer func(m int) { MemoryCodes = m }(MemoryCodes)
		MemoryCodes = mib << 20
	}
	for b.Loop() {
		v, err := Load(ctx, db, SpaceIdentity(e))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(v.Len()), "vectors")
	}
}

// BenchmarkPreselectWorkspace measures how much of the exact top k the
// two-stage query (preselect.go) keeps, on the vectors of a workspace
// continuity-bench prepared and the embedded LongMemEval questions, and
// the time of each path.
func BenchmarkPreselectWorkspace(b *testing.B) {
	db, e := openBenchWorkspace(b)
	defer func(m int) { MemoryCodes = m }(MemoryCodes)
	MemoryCodes = 1 << 50 // the codes in memory: exact and twoStage read them there
	v, err := Load(ctx, db, SpaceIdentity(e))
	if err != nil {
		b.Fatal(err)
	}
	qs := shareddata.LongMemEvalQuestions()
	if len(qs) == 0 {
		b.Skipf("no LongMemEval questions in %s", shareddata.LongMemEval())
	}
	qs = qs[:min(len(qs), 200)]
	qvs, err := e.Embed(ctx, qs)
	if err != nil {
		b.Fatal(err)
	}
	all := func(int) bool { return true }
	const n = 200
	recall := map[int]float64{}
	for _, q := range qvs {
		qi, _ := quantizeQuery(q)
		tops := v.exact(v.Vectors(), sparseQuery{}, false, qi, n, all, true)
		var merged topN
		merged.n = n
		for _, t := range tops {
			for _, x := range t.h {
				merged.offer(x.score, x.idx, x.row)
			}
		}
		ex := rankedIdx(merged)
		two := rankedIdx(v.twoStage(q, qi, n, preselectWant(n), all, true))
		for _, k := range []int{10, 50, 200} {
			got := 0
			for _, r := range ex[:k] {
				if slices.Contains(two[:k], r) {
					got++
				}
			}
			recall[k] += float64(got) / float64(k) / float64(len(qvs))
		}
	}
	b.Logf("%d vectors, %d questions: two-stage keeps of the exact top 10/50/200: %.4f / %.4f / %.4f", v.Len(), len(qvs), recall[10], recall[50], recall[200])
	for _, path := range []string{"exact", "two-stage"} {
		b.Run(path, func(b *testing.B) {
			i := 0
			for b.Loop() {
				q := qvs[i%len(qvs)]
				qi, _ := quantizeQuery(q)
				if path == "exact" {
					v.exact(v.Vectors(), sparseQuery{}, false, qi, n, all, true)
				} else {
					v.twoStage(q, qi, n, preselectWant(n), all, true)
				}
				i++
			}
		})
	}
	b.ReportMetric(recall[10], "recall@10")
}

// openBenchWorkspace opens, read-only, the index of the workspace named
// by envBenchWorkspace (skipping without one) and the default embedder.
func openBenchWorkspace(b *testing.B) (*index.DB, embed.Embedder) {
	ws := os.Getenv(envBenchWorkspace)
	if ws == "" {
		b.Skipf("set %s to a workspace prepared by continuity-bench query --workspace", envBenchWorkspace)
	}
	db, err := index.Open(filepath.Join(ws, ".praxis-os", ".cache", "continuity"), index.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	e, err := embed.New(embed.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return db, e
}

// BenchmarkQueryWorkspace measures Query (search's depth of 200 rows, no
// filter) on a workspace continuity-bench prepared, with MemoryCodes's
// share of the codes in memory (default), none (disk) and all (memory),
// for the embedded LongMemEval questions; the spaces must give the same
// answers.
func BenchmarkQueryWorkspace(b *testing.B) {
	db, e := openBenchWorkspace(b)
	qs := shareddata.LongMemEvalQuestions()
	if len(qs) == 0 {
		b.Skipf("no LongMemEval questions in %s", shareddata.LongMemEval())
	}
	qs = qs[:min(len(qs), 200)]
	qvs, err := e.Embed(ctx, qs)
	if err != nil {
		b.Fatal(err)
	}
	const depth = 200 // search.MaxLimit, search's depth
	defer func(m int) { MemoryCodes = m }(MemoryCodes)
	var first [][]Hit
	budget := MemoryCodes
	if mib, err := strconv.Atoi(os.Getenv("CONTINUITY_BENCH_MEMORY_CODES_MIB")); err == nil {
		budget = mib << 20 // the default share measured with another budget
	}
	for _, mode := range []string{"default", "disk", "memory"} {
		switch mode {
		case "default":
			MemoryCodes = budget
		case "disk":
			MemoryCodes = 0
		case "memory":
			MemoryCodes = 1 << 50
		}
		v, err := Load(ctx, db, SpaceIdentity(e))
		if err != nil {
			b.Fatal(err)
		}
		if err := v.FillCodes(ctx); err != nil { // as the daemon does
			b.Fatal(err)
		}
		in, all := v.CodesInMemory()
		b.Logf("%s: %d of %d codes in memory", mode, in, all)
		var answers [][]Hit
		for _, q := range qvs {
			hits, err := v.Query(ctx, q, depth, Filter{})
			if err != nil {
				b.Fatal(err)
			}
			answers = append(answers, hits)
		}
		if first == nil {
			first = answers
		} else if !slices.EqualFunc(first, answers, slices.Equal) {
			b.Errorf("%s: the answers differ from the other space's", mode)
		}
		b.Run(mode, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := v.Query(ctx, qvs[i%len(qvs)], depth, Filter{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
