package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkIngest runs `continuity ingest --no-embed` in-process on a fresh
// workspace of short exchange lines (about 300 bytes), so that the ingest
// path can be profiled:
//
//	go test -tags sqlite_fts5 ./cmd/continuity -run '^$' -bench Ingest -benchtime 3x -cpuprofile /tmp/cpu.out
//
// BENCH_INGEST_LINES sets the number of lines (default 20000);
// BENCH_INGEST_LOGS names a folder of .jsonl logs to ingest instead (say,
// those `continuity-bench ingest --keep` wrote, LongMemEval included), in
// a third sub-benchmark, "logs". The end-to-end figure, next to the naive
// loader, is `continuity-bench ingest`.
func BenchmarkIngest(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("BENCH_INGEST_LINES")); err == nil && v > 0 {
		n = v
	}
	kinds := []string{"short", "long"}
	from := os.Getenv("BENCH_INGEST_LOGS")
	if from != "" {
		kinds = append(kinds, "logs")
	}
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				root := b.TempDir()
				logs := filepath.Join(root, ".praxis-os", ".conversations")
				if kind == "logs" {
					n = copyLogs(b, from, logs)
				} else {
					benchLogs(b, logs, n, kind == "long")
				}
				b.StartTimer()
				if _, errs, code := runCLIb(b, "--root", root, "ingest", "--no-embed", "--log-level", "warn"); code != 0 {
					b.Fatalf("ingest: %s", errs)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

func runCLIb(b *testing.B, args ...string) (string, string, int) {
	b.Helper()
	var out, errb strings.Builder
	code := run(b.Context(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// benchLogs writes n exchange lines over 10 session files: short ones
// (a 20–120-byte question, a 60–360-byte answer) or long ones (0.5–4 KB).
func benchLogs(b *testing.B, logs string, n int, long bool) {
	if err := os.MkdirAll(logs, 0o700); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the build fails because cgo needs gcc install it and run again watcher tails each file
		from a durable offset sqlite commit transaction fsync session resume context window token budget search index
		vector embedding error handling retry backoff daemon socket config flag parse json line refactor function test
		benchmark latency throughput memory profile goroutine`)
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", i*2654435761%1000003)
	}
	z := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	text := func(size int) string {
		var sb strings.Builder
		for sb.Len() < size {
			if rng.IntN(4) == 0 {
				sb.WriteString(words[rng.IntN(len(words))])
			} else {
				sb.WriteString(vocab[z.Uint64()])
			}
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	ws := make([]*bufio.Writer, 10)
	for i := range ws {
		f, err := os.Create(filepath.Join(logs, fmt.Sprintf("s%d.jsonl", i)))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		ws[i] = bufio.NewWriter(f)
	}
	for i := 0; i < n; i++ {
		u, a := 20+rng.IntN(100), 60+rng.IntN(300)
		if long {
			u, a = 100+rng.IntN(400), 400+rng.IntN(3600)
		}
		line, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": fmt.Sprintf("s%d", i%10),
			"id": fmt.Sprintf("b-%d", i), "timestamp": "2026-11-01T10:00:00Z", "user": text(u), "ai": text(a)})
		ws[i%10].Write(append(line, '\n'))
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// copyLogs copies the .jsonl files of from into logs and returns how many
// lines they hold.
func copyLogs(b *testing.B, from, logs string) int {
	if err := os.MkdirAll(logs, 0o700); err != nil {
		b.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(from, "*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("BENCH_INGEST_LOGS=%s: no .jsonl files (%v)", from, err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		n += strings.Count(string(data), "\n")
		if err := os.WriteFile(filepath.Join(logs, filepath.Base(f)), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return n
}
