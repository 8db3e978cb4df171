package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-os/continuity/vectors"
)

// EnvBench100k enables the 100k-exchange variant of BenchmarkSearch (its
// corpus takes about a minute to build).
const EnvBench100k = "CONTINUITY_BENCH_100K"

// BenchmarkSearch measures Search on a synthetic corpus of 10k exchanges
// (and 100k with CONTINUITY_BENCH_100K=1) in sessions of 50 exchanges
// chained by resumes, embedded with the builtin embedder:
//
//	go test -tags sqlite_fts5 -run '^$' -bench BenchmarkSearch -benchtime 200x ./search
//
// Besides ns/op it reports the median and 95th percentile latencies, the
// heap taken by the vector space and the process's resident memory.
func BenchmarkSearch(b *testing.B) {
	sizes := []int{10_000}
	if os.Getenv(EnvBench100k) != "" {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		c := benchCorpusOf(b, n)
		for _, bc := range []struct {
			name string
			q    func(i int) Query
		}{
			{"hybrid", func(i int) Query { return Query{Text: c.queries[i%len(c.queries)]} }},
			{"bm25", func(i int) Query { return Query{Text: c.queries[i%len(c.queries)], Mode: ModeLexical} }},
			{"vector", func(i int) Query { return Query{Text: c.queries[i%len(c.queries)], Mode: ModeVector} }},
			{"hybrid-session", func(i int) Query {
				return Query{Text: c.queries[i%len(c.queries)], Session: c.sessions[i%len(c.sessions)]}
			}},
			{"bm25-chain10", func(i int) Query {
				return Query{Text: c.queries[i%len(c.queries)], Chain: c.sessions[9], Mode: ModeLexical}
			}},
			{"vector-chain10", func(i int) Query {
				return Query{Text: c.queries[i%len(c.queries)], Chain: c.sessions[9], Mode: ModeVector}
			}},
			{"bm25-session", func(i int) Query {
				return Query{Text: c.queries[i%len(c.queries)], Session: c.sessions[i%len(c.sessions)], Mode: ModeLexical}
			}},
			{"vector-session", func(i int) Query {
				return Query{Text: c.queries[i%len(c.queries)], Session: c.sessions[i%len(c.sessions)], Mode: ModeVector}
			}},
			{"hybrid-chain10", func(i int) Query {
				// The chain of the tenth session: ten sessions.
				return Query{Text: c.queries[i%len(c.queries)], Chain: c.sessions[9]}
			}},
		} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, bc.name), func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					res, err := c.s.Search(ctx, bc.q(i))
					if err != nil {
						b.Fatal(err)
					}
					if len(res) == 0 && bc.name == "hybrid" {
						b.Fatal("no result")
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
				b.ReportMetric(c.vectorMB, "vectors-MB")
				b.ReportMetric(rssMB(), "rss-MB")
			})
		}
	}
}

// benchCorpus is an indexed, embedded synthetic corpus.
type benchCorpus struct {
	s        *Searcher
	queries  []string
	sessions []string
	vectorMB float64 // heap of the vector space, as Load builds it
}

var (
	benchMu      sync.Mutex
	benchCorpora = map[int]*benchCorpus{}
)

// benchCorpusOf builds the corpus of n exchanges once per process.
func benchCorpusOf(b testing.TB, n int) *benchCorpus {
	benchMu.Lock()
	defer benchMu.Unlock()
	if c := benchCorpora[n]; c != nil {
		return c
	}
	b.Helper()
	dir, err := os.MkdirTemp("", "continuity-search-bench-")
	if err != nil {
		b.Fatal(err)
	}
	// Benchmarks have no Cleanup that outlives one b.Run; the corpus is
	// removed at exit by TestMain.
	benchDirs = append(benchDirs, dir)
	tb := &dirTB{TB: b, dir: dir}
	f := newFixture(tb)

	start := time.Now()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	vocab := syntheticVocabulary(r, 20000)
	zipf := rand.NewZipf(r, 1.1, 5, uint64(len(vocab)-1))
	text := func(words int) string {
		var sb strings.Builder
		for i := range words {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(vocab[zipf.Uint64()])
		}
		return sb.String()
	}
	const perSession = 50
	c := &benchCorpus{}
	var lines []string
	for i := range n {
		if i%perSession == 0 {
			s := fmt.Sprintf("session-%05d", i/perSession)
			if len(c.sessions) > 0 {
				lines = append(lines, resume(c.sessions[len(c.sessions)-1], s, at(i)))
			}
			c.sessions = append(c.sessions, s)
		}
		lines = append(lines, exchange(fmt.Sprintf("ex-%d", i), c.sessions[len(c.sessions)-1], at(i),
			text(15+r.IntN(30)), text(60+r.IntN(150))))
		if len(lines) >= 2000 || i == n-1 {
			f.commit(lines...)
			lines = lines[:0]
		}
	}
	ingested := time.Since(start)

	e := builtin(b, 0)
	start = time.Now()
	drain(b, f.db, e)
	embedded := time.Since(start)

	// The heap a restart's Load takes: the steady state of the space.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v, err := vectors.Load(ctx, f.db, vectors.SpaceIdentity(e))
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	c.vectorMB = float64(after.HeapAlloc-before.HeapAlloc) / 1e6
	// Only the loaded space stays (as in a restarted daemon): the worker's
	// is garbage; give its memory back, so that rss-MB means something.
	debug.FreeOSMemory()

	c.s, err = New(Config{DB: f.db, Embedder: e, Vectors: func() *vectors.Space { return v }})
	if err != nil {
		b.Fatal(err)
	}
	for range 200 {
		var q []string
		for range 3 + r.IntN(5) {
			q = append(q, vocab[50+r.IntN(5000)])
		}
		c.queries = append(c.queries, strings.Join(q, " "))
	}
	b.Logf("corpus of %d exchanges: ingested in %s, embedded in %s, vector space %.0f MB", n,
		ingested.Round(time.Millisecond), embedded.Round(time.Millisecond), c.vectorMB)
	benchCorpora[n] = c
	return c
}

var benchDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// dirTB is a testing.TB whose TempDir is a given folder and whose Cleanup
// does nothing, for fixtures that outlive one benchmark run.
type dirTB struct {
	testing.TB
	dir string
}

func (d *dirTB) TempDir() string  { return d.dir }
func (d *dirTB) Cleanup(f func()) {}

// syntheticVocabulary returns n distinct pronounceable words.
func syntheticVocabulary(r *rand.Rand, n int) []string {
	syll := strings.Fields("ka ro mi tu se na lo pe di fa gu be ri to ma ne so li va de ku po ta ze mo ni sa le")
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var sb strings.Builder
		for range 2 + r.IntN(3) {
			sb.WriteString(syll[r.IntN(len(syll))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// rssMB is the process's resident set size, 0 where /proc is missing.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}
