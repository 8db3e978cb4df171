package index

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A corpus of synthetic exchanges for the search benchmarks: words drawn
// from a 30,000-word vocabulary with a Zipf law (as in prose: a few words
// in every exchange, most words rare), 40 words of user text and 150 of
// ai text, 200 exchanges per session, with vectors of 384 dimensions for
// the identity "bench". Built once per process (it takes a few seconds)
// and removed by TestMain.
var (
	corpusMu   sync.Mutex
	corpusDirs = map[int]string{}
)

const (
	corpusVocab   = 30000
	corpusDims    = 384
	corpusPerSess = 200
)

func corpusWords() []string {
	r := rand.New(rand.NewSource(7))
	seen := map[string]bool{}
	words := make([]string, 0, corpusVocab)
	for len(words) < corpusVocab {
		n := 3 + r.Intn(7)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.Intn(26))
		}
		if w := string(b); !seen[w] && w != "and" && w != "not" && w != "near" {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// benchCorpus returns an open writer on a database of n exchanges.
func benchCorpus(b *testing.B, n int) *DB {
	b.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	dir, ok := corpusDirs[n]
	if keep := os.Getenv("CONTINUITY_BENCH_CORPUS"); !ok && keep != "" {
		// Kept between runs: CONTINUITY_BENCH_CORPUS=/some/dir.
		dir = filepath.Join(keep, fmt.Sprint(n))
		if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
			return openCorpus(b, dir)
		}
		buildCorpus(b, dir, n)
		return openCorpus(b, dir)
	}
	if !ok {
		tmp, err := os.MkdirTemp("", "continuity-corpus-")
		if err != nil {
			b.Fatal(err)
		}
		dir = tmp
		start := time.Now()
		buildCorpus(b, dir, n)
		b.Logf("corpus of %d exchanges built in %v", n, time.Since(start).Round(time.Millisecond))
		corpusDirs[n] = dir
	}
	return openCorpus(b, dir)
}

func openCorpus(b *testing.B, dir string) *DB {
	db, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func removeCorpora() {
	corpusMu.Lock()
	defer corpusMu.Unlock()
	for _, d := range corpusDirs {
		os.RemoveAll(d)
	}
}

func buildCorpus(b *testing.B, dir string, n int) {
	db, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	words := corpusWords()
	r := rand.New(rand.NewSource(1))
	z := rand.NewZipf(r, 1.07, 2, corpusVocab-1)
	text := func(k int) string {
		var sb strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[z.Uint64()])
		}
		return sb.String()
	}
	f := newFeeder(b, db, "corpus.jsonl")
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := make([]string, 0, 1000)
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		lines = append(lines, fmt.Sprintf(`{"type":"exchange","timestamp":%q,"session_id":"s%04d","user":%q,"ai":%q}`,
			ts, i/corpusPerSess, text(40), text(150)))
		if len(lines) == cap(lines) || i == n-1 {
			commit(b, db, f.batch(lines...))
			lines = lines[:0]
		}
	}
	for {
		items, err := db.PendingEmbeddings(ctx, "bench", 1000)
		if err != nil {
			b.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		rows := make([]int64, len(items))
		vecs := make([][]float32, len(items))
		for i, it := range items {
			rows[i] = it.Row
			vecs[i] = make([]float32, corpusDims)
			for j := range vecs[i] {
				vecs[i][j] = r.Float32()
			}
		}
		if err := db.StoreVectors(ctx, "bench", rows, vecs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLexical runs 5-term OR queries, limit 100, over 100,000
// exchanges, and reports the median and 99th percentile latency. "mid"
// terms are drawn among the 50th to 2000th most frequent words (what a
// query keeps after stop words), "common" among the 20 most frequent (a
// worst case: nearly every exchange matches).
func BenchmarkLexical(b *testing.B) {
	db := benchCorpus(b, 100000)
	words := corpusWords()
	session := []string{"s0042", "s0100", "s0400"}
	for _, c := range []struct {
		name     string
		lo, hi   int
		filter   Filter
		wantHits bool
	}{
		{name: "mid", lo: 50, hi: 2000},
		{name: "common", lo: 2, hi: 22},
		{name: "mid/sessions", lo: 50, hi: 2000, filter: Filter{Sessions: session}},
		{name: "mid/since", lo: 50, hi: 2000, filter: Filter{Since: time.Date(2025, 2, 15, 0, 0, 0, 0, time.UTC)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewSource(3))
			queries := make([]string, 64)
			for i := range queries {
				terms := make([]string, 5)
				for j := range terms {
					terms[j] = words[c.lo+r.Intn(c.hi-c.lo)]
				}
				queries[i] = strings.Join(terms, " OR ")
			}
			lat := make([]time.Duration, 0, b.N)
			var hits int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				hs, err := db.Lexical(ctx, queries[i%len(queries)], [2]float64{1, 0.5}, c.filter, 100)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				hits += len(hs)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

// BenchmarkEachVector streams the 100,000 vectors of 384 dimensions.
func BenchmarkEachVector(b *testing.B) {
	db := benchCorpus(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var n int
		if err := db.EachVector(ctx, "bench", func(row int64, session string, ts int64, q Quantized) error {
			n++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if n != 100000 {
			b.Fatalf("%d vectors", n)
		}
	}
}

// BenchmarkPending is the embed worker's polling once everything is
// embedded, and after one new exchange.
func BenchmarkPending(b *testing.B) {
	db := benchCorpus(b, 100000)
	b.Run("PendingEmbeddings", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			items, err := db.PendingEmbeddings(ctx, "bench", 64)
			if err != nil || len(items) != 0 {
				b.Fatal(items, err)
			}
		}
	})
	b.Run("CountPending", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n, err := db.CountPending(ctx, "bench")
			if err != nil || n != 0 {
				b.Fatal(n, err)
			}
		}
	})
}
