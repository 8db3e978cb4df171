package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/internal/synth"
)

// BenchmarkIngest runs `continuity ingest --no-embed` in-process on a fresh
// workspace of short exchange lines (about 390 bytes) or long ones, so that
// the ingest path can be profiled:
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

// benchLogs writes n exchange lines over 10 session files, the data of
// continuity-bench's kinds (internal/synth): short ones (a 20–120-byte
// question, a 60–360-byte answer, the "short" kind) or long-tailed ones
// (200 bytes to 2 KB, one in 50 up to 32 KB: its synthetic stand-in for
// LongMemEval).
func benchLogs(b *testing.B, logs string, n int, long bool) {
	gen := synth.New(rand.New(rand.NewPCG(1, 1)))
	next := gen.ShortExchange
	if long {
		next = gen.LongExchange
	}
	if _, err := synth.WriteLogs(logs, n, func(int) (string, string) { return next() }); err != nil {
		b.Fatal(err)
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
