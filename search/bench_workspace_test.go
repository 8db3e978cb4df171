package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// EnvBenchWorkspace names a workspace prepared by `continuity-bench query
// --workspace DIR` (real LongMemEval text, vectors of the default embedder
// seeded for every exchange) for BenchmarkSearchWorkspace.
const EnvBenchWorkspace = "CONTINUITY_BENCH_WORKSPACE"

// BenchmarkSearchWorkspace measures Search in process with the default
// embedder (uselite) on a workspace continuity-bench prepared, e.g. of
// 100k exchanges:
//
//	CONTINUITY_EVAL_DATA=../shared/data/longmemeval-s-dev go run -tags sqlite_fts5 ./cmd/continuity-bench query --lines 100000 --workspace /tmp/ws100k
//	CONTINUITY_BENCH_WORKSPACE=/tmp/ws100k go test -tags sqlite_fts5 -run '^$' -bench SearchWorkspace -benchtime 200x ./search
//
// The queries are the LongMemEval questions ($CONTINUITY_EVAL_DATA, or
// ../shared/data/longmemeval-s-dev), else a fixed list. "embed" is the
// query's embedding alone, which hybrid and vector searches include;
// "bm25" and "hybrid" rank BM25 with the bm25 engine (Lexicon: built in
// the workspace's cache folder on the first run, opened from its files
// after), "bm25-fts5" and "hybrid-fts5" with FTS5: the baselines of the
// same run.
func BenchmarkSearchWorkspace(b *testing.B) {
	// Opened as the daemon opens it, as the writer: the searcher keeps
	// term counts between queries only there (Searcher.termDocs). No
	// daemon may run on the workspace meanwhile. With
	// CONTINUITY_BENCH_READONLY=1 it is opened read-only (a shared
	// workspace; BM25 then counts terms at every query).
	opts := index.Options{ReadOnly: os.Getenv("CONTINUITY_BENCH_READONLY") == "1"}
	ws, db, e := openBenchWorkspace(b, opts)
	start := time.Now()
	v, err := Load(ctx, db, SpaceIdentity(e))
	if err != nil {
		b.Fatal(err)
	}
	if v.Len() == 0 {
		b.Fatalf("no vector of %s in %s: prepare it with continuity-bench query", SpaceIdentity(e), ws)
	}
	b.Logf("%d vectors of %s loaded in %s", v.Len(), v.Identity(), time.Since(start).Round(time.Millisecond))
	// The bm25 engine, built (the first time) or opened from its files
	// in the workspace's cache folder, as the daemon does.
	lex, err := NewLexicon(LexiconConfig{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	defer lex.Close()
	start = time.Now()
	if err := lex.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	st := lex.Status(ctx)
	b.Logf("bm25 engine %s with %d exchanges in %s (a build: %.1fs)", st.State, st.Docs, time.Since(start).Round(time.Millisecond), st.BuildSeconds)
	vecs := func() *Vectors { return v }
	s, err := New(Config{DB: db, Embedder: e, Vectors: vecs, Lexicon: lex})
	if err != nil {
		b.Fatal(err)
	}
	// The baseline of the same run: FTS5 answers BM25.
	fts, err := New(Config{DB: db, Embedder: e, Vectors: vecs})
	if err != nil {
		b.Fatal(err)
	}
	queries := benchQuestions()
	if _, err := e.Embed(ctx, queries[:1]); err != nil { // load the model
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		run  func(q string) error
	}{
		{"bm25-fts5", func(q string) error { _, err := fts.Search(ctx, Query{Text: q, Mode: ModeLexical}); return err }},
		{"bm25", func(q string) error { _, err := s.Search(ctx, Query{Text: q, Mode: ModeLexical}); return err }},
		{"embed", func(q string) error { _, err := e.Embed(ctx, []string{q}); return err }},
		{"vector", func(q string) error { _, err := s.Search(ctx, Query{Text: q, Mode: ModeVector}); return err }},
		{"hybrid-fts5", func(q string) error { _, err := fts.Search(ctx, Query{Text: q}); return err }},
		{"hybrid", func(q string) error { _, err := s.Search(ctx, Query{Text: q}); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			i := 0
			cpu0 := processCPU()
			for b.Loop() {
				t := time.Now()
				if err := bc.run(queries[i%len(queries)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
				i++
			}
			// CPU time per query, all goroutines: on a loaded machine
			// the latencies also hold the waits for a core.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// BenchmarkLexiconBuildWorkspace measures a build of the bm25 engine from
// scratch (Lexicon.CatchUp from nothing: reading the exchanges, analysing
// them, adding them, flushing), in a temporary folder, on a workspace
// continuity-bench prepared (see BenchmarkSearchWorkspace).
func BenchmarkLexiconBuildWorkspace(b *testing.B) {
	_, db, _ := openBenchWorkspace(b, index.Options{})
	for b.Loop() {
		l, err := NewLexicon(LexiconConfig{DB: db, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.CatchUp(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(l.Status(ctx).Docs), "docs")
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadWorkspace measures Load, the daemon's start-to-ready, on a
// workspace continuity-bench prepared (see BenchmarkSearchWorkspace).
func BenchmarkLoadWorkspace(b *testing.B) {
	_, db, e := openBenchWorkspace(b, index.Options{ReadOnly: true})
	for b.Loop() {
		v, err := Load(ctx, db, SpaceIdentity(e))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(v.Len()), "vectors")
	}
}

// benchQuestions are the LongMemEval questions when the dataset is
// there, else a few coding questions.
func benchQuestions() []string {
	var qs []string
	if data, err := os.ReadFile(filepath.Join(evalDataDir(), "queries.jsonl")); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			var x struct{ Question string }
			if json.Unmarshal([]byte(l), &x) == nil && x.Question != "" {
				qs = append(qs, x.Question)
			}
		}
	}
	if len(qs) == 0 {
		qs = []string{
			"how did we fix the payment provider resending the same notification",
			"why does the build fail without gcc",
			"which flag turns off the embedder during ingest",
			"what did we decide about the retry backoff for the daemon socket",
		}
	}
	return qs
}

// evalDataDir is the LongMemEval dev set: $CONTINUITY_EVAL_DATA, or
// ../shared/data/longmemeval-s-dev beside the repository.
func evalDataDir() string {
	return shareddata.LongMemEval()
}

// BenchmarkPreselectWorkspace measures how much of the exact top k the
// two-stage query (preselect.go) keeps, on the vectors of a workspace
// continuity-bench prepared and the embedded LongMemEval questions, and
// the time of each path.
func BenchmarkPreselectWorkspace(b *testing.B) {
	_, db, e := openBenchWorkspace(b, index.Options{ReadOnly: true})
	v, err := Load(ctx, db, SpaceIdentity(e))
	if err != nil {
		b.Fatal(err)
	}
	qs := benchQuestions()
	qs = qs[:min(len(qs), 200)]
	qvs, err := e.Embed(ctx, qs)
	if err != nil {
		b.Fatal(err)
	}
	all := func(int) bool { return true }
	const n = 200
	rows := func(t topN) []int32 {
		h := slices.Clone(t.h)
		slices.SortFunc(h, func(a, b scoredIdx) int {
			if a.score != b.score {
				if a.score > b.score {
					return -1
				}
				return 1
			}
			return int(b.row - a.row)
		})
		out := make([]int32, len(h))
		for i, x := range h {
			out[i] = x.idx
		}
		return out
	}
	recall := map[int]float64{}
	for _, q := range qvs {
		qi, _ := quantizeQuery(q)
		tops := v.exact(sparseQuery{}, false, qi, n, all, true)
		var merged topN
		merged.n = n
		for _, t := range tops {
			for _, x := range t.h {
				merged.offer(x.score, x.idx, x.row)
			}
		}
		ex := rows(merged)
		two := rows(v.twoStage(q, qi, n, preselectWant(n), all, true))
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
					v.exact(sparseQuery{}, false, qi, n, all, true)
				} else {
					v.twoStage(q, qi, n, preselectWant(n), all, true)
				}
				i++
			}
		})
	}
	b.ReportMetric(recall[10], "recall@10")
}

// openBenchWorkspace opens the index of the workspace named by
// EnvBenchWorkspace (skipping without one) and the default embedder.
func openBenchWorkspace(b *testing.B, opts index.Options) (string, *index.DB, embed.Embedder) {
	ws := os.Getenv(EnvBenchWorkspace)
	if ws == "" {
		b.Skipf("set %s to a workspace prepared by continuity-bench query --workspace", EnvBenchWorkspace)
	}
	db, err := index.Open(filepath.Join(ws, ".praxis-os", ".cache", "continuity"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	e, err := embed.New(embed.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return ws, db, e
}
