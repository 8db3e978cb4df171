//go:build sqlite_fts5

package bm25

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-os/continuity/analyze"
)

// Benchmarks against FTS5 in the same run. The corpus is the LongMemEval
// dev set's exchanges, analysed, repeated under new rows up to
// $BM25_BENCH_DOCS documents (100k by default; synthetic Zipf text when
// the set is absent); the queries are its questions, analysed as search
// does (word terms, the terms held by more than 5% of the documents
// dropped: search.dropCommon).
//
//	CONTINUITY_EVAL_DATA=../shared/data/longmemeval-s-dev go test -tags sqlite_fts5 ./bm25 -run '^$' -bench . -benchtime 200x

func benchDocs() int {
	if n, err := strconv.Atoi(os.Getenv("BM25_BENCH_DOCS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

var bench struct {
	once    sync.Once
	docs    []Doc
	queries [][]string
	fts     *ftsIndex
	ftsDir  string
	err     error
}

// benchCorpus builds the documents and queries once per process.
func benchCorpus(b *testing.B) ([]Doc, [][]string) {
	bench.once.Do(func() {
		n := benchDocs()
		base := longMemEvalDocs(b, 1<<30)
		if base == nil {
			b.Log("LongMemEval dev set absent: synthetic Zipf texts")
			base = syntheticDocs(rand.New(rand.NewPCG(9, 9)), 30000, 0)
		}
		docs := make([]Doc, 0, n)
		row := int64(0)
		for rep := 0; len(docs) < n; rep++ {
			for _, d := range base {
				if len(docs) == n {
					break
				}
				row += 1 + row%2
				d.Row = row
				d.Session = fmt.Sprintf("%d/%s", rep, d.Session)
				docs = append(docs, d)
			}
		}
		bench.docs = docs
		bench.queries = benchQueries(b)
	})
	return bench.docs, bench.queries
}

// benchQueries are the dev set's questions as word terms (all of them;
// common ones are dropped per index by dropCommon).
func benchQueries(b *testing.B) [][]string {
	var qs [][]string
	if dir := evalData(); dir != "" {
		f, err := os.Open(filepath.Join(dir, "queries.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			var q struct{ Question string }
			if json.Unmarshal(sc.Bytes(), &q) == nil && q.Question != "" {
				var terms []string
				for _, w := range analyze.Words(q.Question) {
					for _, t := range analyze.WordTerms(w) {
						if t.Key != "" {
							terms = append(terms, t.Key)
						}
					}
				}
				if len(terms) > 0 {
					qs = append(qs, terms)
				}
			}
		}
	}
	if len(qs) == 0 {
		rng := rand.New(rand.NewPCG(7, 7))
		for range 100 {
			var terms []string
			for range 1 + rng.IntN(8) {
				terms = append(terms, fmt.Sprintf("w%x%c", rng.IntN(3000), 'a'+rune(rng.IntN(26))))
			}
			qs = append(qs, terms)
		}
	}
	return qs
}

// dropCommon is search.dropCommon: terms in more than 5% of the
// documents (and at least 1000) left out, the two rarest kept when all
// are.
func dropCommon(ix *Index, terms []string) []string {
	df, n, err := ix.DocFreq(terms)
	if err != nil {
		return terms
	}
	limit := max(int64(0.05*float64(n)), 1000)
	var kept []string
	for i, t := range terms {
		if df[i] <= limit {
			kept = append(kept, t)
		}
	}
	if len(kept) > 0 || len(terms) <= 1 {
		if len(kept) == 0 {
			return terms
		}
		return kept
	}
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return df[order[a]] < df[order[b]] })
	out := []string{terms[order[0]]}
	if len(order) > 1 {
		out = append(out, terms[order[1]])
	}
	return out
}

// BenchmarkSearch: one op is every query once, on the engine and on FTS5
// (as index.DB.Lexical asks it: bm25(5, 1), LIMIT 200), same index, same
// run; reported per query, with their ratio.
func BenchmarkSearch(b *testing.B) {
	docs, queries := benchCorpus(b)
	dir := b.TempDir()
	ix, err := Open(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { ix.Close() }()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	if err := ix.Add(docs); err != nil {
		b.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		b.Fatal(err)
	}
	build := time.Since(t0)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	size := dirSize(b, dir)
	// Reopening: what a daemon start costs (checksums of everything but
	// the postings, read through the file; mappings).
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	t0 = time.Now()
	if ix, err = Open(dir, "bench"); err != nil || ix.Len() != len(docs) {
		b.Fatalf("reopen: %v, %d docs", err, ix.Len())
	}
	b.Logf("engine: reopened %d docs in %v", ix.Len(), time.Since(t0).Round(time.Millisecond))
	b.Logf("engine: %d docs in %d segments built in %v (%.0f docs/s), files %.1f MB (%.0f B/doc), heap after build %.1f MB (%+.1f MB)",
		len(docs), len(ix.segs), build.Round(time.Millisecond), float64(len(docs))/build.Seconds(), float64(size)/1e6, float64(size)/float64(len(docs)),
		float64(after.HeapInuse)/1e6, (float64(after.HeapInuse)-float64(before.HeapInuse))/1e6)

	withFTS := len(docs) <= 200_000 || os.Getenv("BM25_BENCH_FTS5") != ""
	var fts *ftsIndex
	if withFTS {
		fts = openFTS(b)
		t0 = time.Now()
		fts.add(b, docs)
		b.Logf("fts5: built in %v (%.0f docs/s)", time.Since(t0).Round(time.Millisecond), float64(len(docs))/time.Since(t0).Seconds())
	}
	qs := make([][]string, len(queries))
	for i, q := range queries {
		qs[i] = dropCommon(ix, q)
	}
	w := [2]float64{5, 1}
	// Same answers, checked once (the bench measures the same work).
	if withFTS {
		for _, q := range qs {
			got, _ := ix.Search(q, w, Filter{}, 200)
			want := fts.search(b, q, w, Filter{}, 200)
			if !slices.Equal(got, want) {
				b.Fatalf("query %q: engine and FTS5 differ", q)
			}
		}
	}
	var engine, ftsTime []time.Duration
	b.ResetTimer()
	for range b.N {
		for _, q := range qs {
			t := time.Now()
			if _, err := ix.Search(q, w, Filter{}, 200); err != nil {
				b.Fatal(err)
			}
			engine = append(engine, time.Since(t))
			if withFTS {
				t = time.Now()
				fts.search(b, q, w, Filter{}, 200)
				ftsTime = append(ftsTime, time.Since(t))
			}
		}
	}
	b.StopTimer()
	b.Logf("process after the queries: %s (RssFile includes the mapped segment pages the queries touched, and SQLite's)", rss())
	e50, e95 := pct(engine, 50), pct(engine, 95)
	b.ReportMetric(float64(e50.Microseconds())/1000, "engine-p50-ms")
	b.ReportMetric(float64(e95.Microseconds())/1000, "engine-p95-ms")
	if withFTS {
		f50, f95 := pct(ftsTime, 50), pct(ftsTime, 95)
		b.ReportMetric(float64(f50.Microseconds())/1000, "fts5-p50-ms")
		b.ReportMetric(float64(f95.Microseconds())/1000, "fts5-p95-ms")
		b.ReportMetric(float64(f50)/float64(e50), "p50-speedup")
		b.Logf("%d docs, %d queries: engine p50 %v p95 %v; FTS5 p50 %v p95 %v; FTS5/engine p50 %.1fx",
			len(docs), len(qs), e50, e95, f50, f95, float64(f50)/float64(e50))
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, len(s)*p/100)]
}

func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkBuild: documents added and sealed per second (one op: the
// whole corpus into a new index, flushed).
func BenchmarkBuild(b *testing.B) {
	docs, _ := benchCorpus(b)
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	b.ResetTimer()
	for op := range b.N {
		dir := b.TempDir()
		ix, err := Open(dir, "bench")
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(docs); i += 2000 {
			if err := ix.Add(docs[i:min(i+2000, len(docs))]); err != nil {
				b.Fatal(err)
			}
			if op == 0 && ix.tail.docs.n() <= SealDocs && ix.tail.docs.n()+2000 > SealDocs {
				// The tail at its largest: the engine's peak heap.
				b.StopTimer()
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				b.ReportMetric((float64(m.HeapInuse)-float64(base.HeapInuse))/1e6, "tail-heap-MB")
				b.Logf("tail of %d docs: %d terms, heap %+.1f MB", ix.tail.docs.n(), ix.tail.terms.len(), (float64(m.HeapInuse)-float64(base.HeapInuse))/1e6)
				b.StartTimer()
			}
		}
		if err := ix.Flush(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(dirSize(b, dir))/float64(len(docs)), "file-B/doc")
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(docs))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkLengthCache: the same queries on the same index, alternating
// query by query between lengthNorm per posting and the per-search cache
// (so that the machine's load falls on both alike).
func BenchmarkLengthCache(b *testing.B) {
	docs, queries := benchCorpus(b)
	ix, err := Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(docs); err != nil {
		b.Fatal(err)
	}
	qs := make([][]string, len(queries))
	for i, q := range queries {
		qs[i] = dropCommon(ix, q)
	}
	defer func() { noLengthCache = false }()
	var with, without time.Duration
	b.ResetTimer()
	for range b.N {
		for _, q := range qs {
			for _, off := range []bool{false, true} {
				noLengthCache = off
				t := time.Now()
				if _, err := ix.Search(q, [2]float64{5, 1}, Filter{}, 200); err != nil {
					b.Fatal(err)
				}
				if off {
					without += time.Since(t)
				} else {
					with += time.Since(t)
				}
			}
		}
	}
	b.ReportMetric(float64(without)/float64(with), "speedup")
	b.Logf("per-posting norm %v, cached %v: %.2fx", without, with, float64(without)/float64(with))
}

// BenchmarkDecode: every posting of every term of a segment of the
// corpus's first 64k documents, decoded (ns per posting).
func BenchmarkDecode(b *testing.B) {
	docs, _ := benchCorpus(b)
	ix, err := Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(docs[:min(len(docs), SealDocs)]); err != nil {
		b.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		b.Fatal(err)
	}
	s := ix.segs[0]
	var n int
	b.ResetTimer()
	for range b.N {
		for i := range s.nTerms {
			it := newPostingIter(s.post[s.postOf[i]:s.postOf[i+1]], s.docs.n())
			for {
				_, _, _, ok := it.next()
				if !ok {
					break
				}
				n++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/posting")
}

// rss returns the process's resident memory lines from /proc/self/status.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "RssAnon") || strings.HasPrefix(l, "RssFile") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}
