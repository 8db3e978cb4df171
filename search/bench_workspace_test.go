package search

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/vectors"

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
// same run; "hybrid-novfloor" with the vector floor off (fusion.go);
// "bm25-context" and "hybrid-context" with the neighbour context
// (neighbours.go) on, whatever the defaults.
func BenchmarkSearchWorkspace(b *testing.B) {
	// Opened as the daemon opens it, as the writer: the searcher keeps
	// term counts between queries only there (Searcher.termDocs). No
	// daemon may run on the workspace meanwhile. With
	// CONTINUITY_BENCH_READONLY=1 it is opened read-only (a shared
	// workspace; BM25 then counts terms at every query).
	opts := index.Options{ReadOnly: os.Getenv("CONTINUITY_BENCH_READONLY") == "1"}
	ws, db, e := openBenchWorkspace(b, opts)
	start := time.Now()
	v, err := vectors.Load(ctx, db, vectors.SpaceIdentity(e))
	if err != nil {
		b.Fatal(err)
	}
	if v.Len() == 0 {
		b.Fatalf("no vector of %s in %s: prepare it with continuity-bench query", vectors.SpaceIdentity(e), ws)
	}
	b.Logf("%d vectors of %s loaded in %s", v.Len(), v.Identity(), time.Since(start).Round(time.Millisecond))
	// The bm25 engine, built (the first time) or opened from its files
	// in the workspace's cache folder, as the daemon does.
	lex, err := lexicon.New(lexicon.Config{DB: db})
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
	vecs := func() *vectors.Space { return v }
	s, err := New(Config{DB: db, Embedder: e, Vectors: vecs, Lexicon: lex})
	if err != nil {
		b.Fatal(err)
	}
	// The baseline of the same run: FTS5 answers BM25.
	fts, err := New(Config{DB: db, Embedder: e, Vectors: vecs})
	if err != nil {
		b.Fatal(err)
	}
	// The neighbour context (neighbours.go) on, whatever the defaults:
	// its cost beside "hybrid" and "bm25" in the same run.
	nb, err := New(Config{DB: db, Embedder: e, Vectors: vecs, Lexicon: lex, Options: Options{NeighbourLexical: 0.5, NeighbourVector: 0.5}})
	if err != nil {
		b.Fatal(err)
	}
	// The vector floor off (as before issue 32 item 2): the baseline of
	// "hybrid" in the same run.
	novf, err := New(Config{DB: db, Embedder: e, Vectors: vecs, Lexicon: lex, Options: Options{VectorFloor: -1}})
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
		{"hybrid-novfloor", func(q string) error { _, err := novf.Search(ctx, Query{Text: q}); return err }},
		{"bm25-context", func(q string) error { _, err := nb.Search(ctx, Query{Text: q, Mode: ModeLexical}); return err }},
		{"hybrid-context", func(q string) error { _, err := nb.Search(ctx, Query{Text: q}); return err }},
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
		l, err := lexicon.New(lexicon.Config{DB: db, Dir: b.TempDir()})
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

// benchQuestions are the LongMemEval questions when the dataset is
// there, else a few coding questions.
func benchQuestions() []string {
	qs := shareddata.LongMemEvalQuestions()
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
