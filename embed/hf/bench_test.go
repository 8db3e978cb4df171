package hf

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchTexts returns n different texts of about words words.
func benchTexts(n, words int) []string {
	vocab := strings.Fields("the daemon tails every log file and remembers the byte offset it committed so after a crash it resumes where the last transaction ended while embedding runs in the background on a durable queue of exchanges without a vector for the current embedder and search keeps working")
	out := make([]string, n)
	for i := range out {
		w := make([]string, words)
		for j := range w {
			w[j] = vocab[(i*7+j*3+j*j)%len(vocab)]
		}
		out[i] = strings.Join(w, " ") + fmt.Sprintf(" (%d)", i)
	}
	return out
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchEmbed(b *testing.B, e *Embedder, texts []string) {
	ctx := context.Background()
	if _, err := e.Embed(ctx, texts); err != nil { // load, warm the scratch buffers
		b.Fatal(err)
	}
	tokens := 0
	for _, t := range texts {
		for _, w := range e.Windows(t, false) {
			tokens += len(w) + e.Model().Tokenizer().SpecialTokens()
		}
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*len(texts))/sec, "texts/s")
	b.ReportMetric(float64(b.N*tokens)/sec, "tokens/s")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkEmbedTiny: the tiny reference models, short texts, one core.
func BenchmarkEmbedTiny(b *testing.B) {
	for _, name := range goldenModels {
		b.Run(name, func(b *testing.B) {
			e, err := New(goldenDir(b, name), Options{Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			benchEmbed(b, e, benchTexts(64, 16))
		})
	}
}

// BenchmarkEmbedBGEShape: a random-weight model of bge-small's shape (12
// layers, 384 wide, 12 heads, 1536 intermediate, 30522 tokens, CLS
// pooling; also all-MiniLM's, e5-small's, gte-small's and
// arctic-embed-s's but for their depth and pooling), on one core and on
// all: short exchanges (about 20 tokens, a worker batch of 64), one
// query, and long texts (one full 512-token window each). No download:
// the weights are generated (133 MB in a temporary folder).
func BenchmarkEmbedBGEShape(b *testing.B) {
	dir := bgeShapedModel(b)
	for _, threads := range []int{1, 0} {
		for _, tc := range []struct {
			name  string
			texts []string
		}{
			{"short64", benchTexts(64, 16)},
			{"query", benchTexts(1, 12)},
			{"long8", benchTexts(8, 500)},
		} {
			b.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(b *testing.B) {
				e, err := New(dir, Options{Threads: threads, MaxChunks: 1})
				if err != nil {
					b.Fatal(err)
				}
				benchEmbed(b, e, tc.texts)
			})
		}
	}
}

// bgeShapedModel writes a random-weight BERT of bge-small-en-v1.5's shape,
// with the reference tokenizer, into a temporary folder.
func bgeShapedModel(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	if err := WriteRandomModel(dir, goldenDir(b, "tiny-bert-cls"), BGESmallShape, 1); err != nil {
		b.Fatal(err)
	}
	return dir
}
