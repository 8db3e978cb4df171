package index

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCommit commits batches of exchange lines of about 1.4 KB (half
// with a producer id) with synchronous=FULL, as the daemon does while
// catching up on a large log. The timer runs throughout, batch building
// included (it is cheap). Run it on the disk the daemon uses (TMPDIR): a
// tmpfs hides the fsync cost. Use -benchtime=100x or more so that WAL
// checkpoints (every 16 MiB) are part of the figure.
func BenchmarkCommit(b *testing.B) {
	for _, size := range []int{1000, 100, 1} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			db := openTest(b, testDir(b))
			f := newFeeder(b, db, "session-bench.jsonl")
			text := strings.Repeat("Could you refactor the tail loop so it handles truncation? ", 8) +
				`","ai":"` + strings.Repeat("Sure: the watcher compares fingerprints before trusting the offset. ", 12)
			texts := make([]string, size)
			buf := make([]byte, 0, 2048)
			var lines, bytes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range texts {
					n := i*size + j
					buf = append(buf[:0], `{"type":"exchange","timestamp":"2025-01-02T03:04:05Z","session_id":"s`...)
					buf = strconv.AppendInt(buf, int64(n/5000), 10)
					if n%2 == 0 {
						buf = append(buf, `","id":"evt-`...)
						buf = strconv.AppendInt(buf, int64(n), 10)
					}
					buf = append(buf, `","user":"`...)
					buf = strconv.AppendInt(buf, int64(n), 10)
					buf = append(buf, ' ')
					buf = append(buf, text...)
					buf = append(buf, `"}`...)
					texts[j] = string(buf)
					bytes += int64(len(buf) + 1)
				}
				if err := db.Commit(ctx, f.batch(texts...)); err != nil {
					b.Fatal(err)
				}
				lines += int64(size)
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(lines)/secs, "lines/s")
			b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
			b.ReportMetric(float64(bytes)/float64(lines), "B/line")
		})
	}
}

// BenchmarkCommitProse is BenchmarkCommit/batch=1000 with varied text:
// 40 + 150 words drawn from a 30,000-word vocabulary with a Zipf law (see
// bench_search_test.go), so that the full-text index grows as it does
// with real conversations, merges included. The texts (a pool of 5,000)
// are drawn before the timer starts.
func BenchmarkCommitProse(b *testing.B) {
	const size = 1000
	db := openTest(b, testDir(b))
	f := newFeeder(b, db, "session-bench.jsonl")
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
	pool := make([][2]string, 5000)
	for i := range pool {
		pool[i] = [2]string{text(40), text(150)}
	}
	texts := make([]string, size)
	buf := make([]byte, 0, 4096)
	var lines, bytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range texts {
			n := i*size + j
			p := pool[n%len(pool)]
			buf = append(buf[:0], `{"type":"exchange","timestamp":"2025-01-02T03:04:05Z","session_id":"s`...)
			buf = strconv.AppendInt(buf, int64(n/5000), 10)
			buf = append(buf, `","user":"`...)
			buf = append(buf, p[0]...)
			buf = append(buf, `","ai":"`...)
			buf = append(buf, p[1]...)
			buf = append(buf, `"}`...)
			texts[j] = string(buf)
			bytes += int64(len(buf) + 1)
		}
		if err := db.Commit(ctx, f.batch(texts...)); err != nil {
			b.Fatal(err)
		}
		lines += size
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(lines)/secs, "lines/s")
	b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
	b.ReportMetric(float64(bytes)/float64(lines), "B/line")
}
