package resume

// BenchmarkResume: latency of a resume (chain, timeline, ranking, reading
// and cutting exchanges, rendering, exact token count) on an indexed
// workspace of 10k exchanges, and of 100k with CONTINUITY_BENCH_100K=1.
//
// The workspace: 100 sessions, each resuming the previous one, with a
// context reset every 40 exchanges; exchanges of 30-80 words asked and
// 100-300 answered, from a 2000-word vocabulary. The resume is of the last
// session with the default depth cap (100: all 100 sessions, 10k or 100k
// candidate exchanges less those in context), a two-word query ranked by the hybrid search
// (BM25 and the builtin embedder's vectors, in memory as in the daemon)
// and the default budget. Reported: p50 and p95 over the iterations, in
// milliseconds, with a Cache (cache: as the daemon resumes) and without
// (nocache: as a one-off resume without a daemon).
//
//	go test -tags sqlite_fts5 ./resume -run XXX -bench Resume/10k/cache -benchtime 200x -cpuprofile cpu.prof
//	CONTINUITY_BENCH_100K=1 go test -tags sqlite_fts5 ./resume -run XXX -bench Resume/100k -benchtime 100x

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/shareddata"
	"github.com/praxis-os/continuity/search"
)

func BenchmarkResume(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			if n > 10_000 && os.Getenv("CONTINUITY_BENCH_100K") == "" {
				b.Skip("set CONTINUITY_BENCH_100K=1 to run the 100k-exchange workspace")
			}
			// CONTINUITY_BENCH_DIR keeps the workspaces between runs.
			root := b.TempDir()
			if d := os.Getenv("CONTINUITY_BENCH_DIR"); d != "" {
				root = filepath.Join(d, fmt.Sprintf("ws%dk", n/1000))
			}
			vocab := benchVocab()
			last := fmt.Sprintf("sess-%03d", benchSessions-1)
			if _, err := os.Stat(filepath.Join(root, ".praxis-os", ".conversations")); err != nil {
				writeBenchLogs(b, root, n, vocab)
			}
			db, err := indexDir(root)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			// Hybrid ranking, as the daemon does: the builtin embedder's
			// vectors, built once (kept in the index between runs).
			s := hybridSearcher(b, db, embed.ProviderBuiltin)
			for _, cached := range []bool{true, false} {
				name := "nocache"
				if cached {
					name = "cache"
				}
				b.Run(name, func(b *testing.B) {
					// With a Cache, as the daemon does: what does not
					// depend on the query is kept between packs.
					src := &IndexSource{DB: db, Ranker: SearchRanker(s)}
					if cached {
						src.Cache = NewCache(CacheConfig{})
					}
					r := rand.New(rand.NewPCG(1, 2))
					var lats []time.Duration
					for b.Loop() {
						q := vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
						start := time.Now()
						p, err := Build(ctx, src, Options{Session: last, Query: q})
						if err != nil {
							b.Fatal(err)
						}
						lats = append(lats, time.Since(start))
						if p.Tokens > p.Budget {
							b.Fatalf("over budget: %d", p.Tokens)
						}
					}
					slices.Sort(lats)
					ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
					b.ReportMetric(ms(lats[len(lats)/2]), "p50-ms")
					b.ReportMetric(ms(lats[max(0, (len(lats)*95+99)/100-1)]), "p95-ms")
				})
			}
		})
	}
}

func benchVocab() []string {
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	var out []string
	for len(out) < 2000 {
		n := 3 + r.IntN(8)
		w := make([]byte, n)
		for i := range w {
			w[i] = byte('a' + r.IntN(26))
		}
		if !seen[string(w)] {
			seen[string(w)] = true
			out = append(out, string(w))
		}
	}
	return out
}

const benchSessions = 100

// writeBenchLogs writes n exchanges in benchSessions chained sessions
// under root.
func writeBenchLogs(b *testing.B, root string, n int, vocab []string) {
	dir := filepath.Join(root, ".praxis-os", ".conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	text := func(lo, hi int) string {
		k := lo + r.IntN(hi-lo)
		var s strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				if i%12 == 0 {
					s.WriteString(". ")
				} else {
					s.WriteByte(' ')
				}
			}
			// Zipf-like: common words often, rare ones seldom.
			s.WriteString(vocab[int(float64(len(vocab))*r.Float64()*r.Float64())])
		}
		return s.String()
	}
	per := n / benchSessions
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var id string
	for s := 0; s < benchSessions; s++ {
		prev := id
		id = fmt.Sprintf("sess-%03d", s)
		f, err := os.Create(filepath.Join(dir, "session-"+id+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		if prev != "" {
			enc.Encode(map[string]any{"type": "session_resume", "timestamp": t.Format(time.RFC3339), "previous_session": prev, "new_session": id})
		}
		for i := 0; i < per; i++ {
			t = t.Add(time.Minute)
			if i > 0 && i%40 == 0 {
				enc.Encode(map[string]any{"type": "context_reset", "timestamp": t.Format(time.RFC3339), "session_id": id})
			}
			enc.Encode(map[string]any{"type": "exchange", "timestamp": t.Format(time.RFC3339), "session_id": id,
				"user": text(30, 80), "ai": text(100, 300), "files": []string{fmt.Sprintf("pkg%d/file%d.go", r.IntN(20), r.IntN(50))}})
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkResumeWorkspace: resume against a search on a workspace that
// `continuity-bench query --workspace DIR` prepared (set
// CONTINUITY_BENCH_WS=DIR; its sessions are those of
// cmd/continuity-bench/resume.go), in process, for profiles:
//
//	CONTINUITY_BENCH_WS=/tmp/ws go test -tags sqlite_fts5 ./resume -run XXX -bench ResumeWorkspace -benchtime 100x -cpuprofile cpu.prof
//
// The embedder is $CONTINUITY_EMBEDDER's, as the workspace was prepared.
// The queries are those continuity-bench asks through the daemon: the
// LongMemEval questions, when the data set is beside the repository.
func BenchmarkResumeWorkspace(b *testing.B) {
	root := os.Getenv("CONTINUITY_BENCH_WS")
	if root == "" {
		b.Skip("set CONTINUITY_BENCH_WS to a workspace prepared by continuity-bench query")
	}
	db, err := indexDir(root)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	provider := embed.ProviderUSELite
	if os.Getenv("CONTINUITY_EMBEDDER") == "hash" {
		provider = embed.ProviderBuiltin
	}
	s := hybridSearcher(b, db, provider)
	src := &IndexSource{DB: db, Ranker: SearchRanker(s), Cache: NewCache(CacheConfig{})}
	query := benchQueries(b)
	run := func(b *testing.B, f func(q string)) {
		var lats []time.Duration
		for b.Loop() {
			q := query()
			start := time.Now()
			f(q)
			lats = append(lats, time.Since(start))
		}
		slices.Sort(lats)
		b.ReportMetric(float64(lats[len(lats)/2])/1e6, "p50-ms")
	}
	b.Run("search", func(b *testing.B) {
		run(b, func(q string) {
			if _, err := s.Search(ctx, search.Query{Text: q}); err != nil {
				b.Fatal(err)
			}
		})
	})
	// The 20 short chains in turn, without a query, as continuity-bench
	// query asks them: what the cache's bounds hold across chains.
	b.Run("resume-short-cycle", func(b *testing.B) {
		k := 0
		run(b, func(string) {
			k++
			if _, err := Build(ctx, src, Options{Session: fmt.Sprintf("c%02ds4", k%20)}); err != nil {
				b.Fatal(err)
			}
		})
	})
	// With a query, as continuity-bench query asks: the short chains in
	// turn (query i of chain i mod 20), the 50-session chain always.
	for _, c := range []struct {
		name    string
		session func(i int) string
	}{
		{"short", func(i int) string { return fmt.Sprintf("c%02ds4", i%20) }},
		{"long", func(int) string { return "long49" }},
	} {
		b.Run("resume-"+c.name, func(b *testing.B) {
			i := 0
			run(b, func(q string) {
				i++
				if _, err := Build(ctx, src, Options{Session: c.session(i), Query: q}); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("rank-"+c.name, func(b *testing.B) {
			i := 0
			run(b, func(q string) {
				i++
				if _, err := src.Relevant(ctx, q, []string{c.session(i)}, DefaultPolicy.RelevantLimit); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// benchQueries returns a function giving the queries in turn: the
// LongMemEval development set's questions in their order (as
// continuity-bench query asks them), or three words of a small vocabulary
// drawn at random when the set is absent.
func benchQueries(b *testing.B) func() string {
	if data, err := os.ReadFile(filepath.Join(shareddata.LongMemEval(), "queries.jsonl")); err == nil {
		var qs []string
		for _, l := range strings.Split(string(data), "\n") {
			var x struct{ Question string }
			if json.Unmarshal([]byte(l), &x) == nil && x.Question != "" {
				qs = append(qs, x.Question)
			}
		}
		if len(qs) > 0 {
			i := 0
			return func() string { i++; return qs[(i-1)%len(qs)] }
		}
	}
	b.Logf("%s not found: three-word queries of a small vocabulary", shareddata.LongMemEval())
	vocab := strings.Fields("what did we decide about the database schema migration and how should the retry logic work for the deploy when tests fail on the build server with a timeout error in the parser")
	r := rand.New(rand.NewPCG(1, 2))
	return func() string {
		return vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
	}
}

// hybridSearcher is a searcher over db ranking as the daemon does (BM25
// from the bm25 engine), with the vectors of provider computed (or
// completed) first.
func hybridSearcher(b *testing.B, db *index.DB, provider string) *search.Searcher {
	emb, err := embed.New(embed.Config{Provider: provider})
	if err != nil {
		b.Fatal(err)
	}
	w, err := embedding.New(embedding.Config{DB: db, Embedder: emb, BatchSize: 512})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	// The bm25 engine, as in the daemon (built in the cache folder the
	// first time, opened from its files after).
	lex, err := lexicon.New(lexicon.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lex.Close() })
	if err := lex.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	s, err := search.New(search.Config{DB: db, Embedder: emb, Vectors: w.Space, Lexicon: lex})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
