package uselite

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchTexts returns n texts of about words words each, all different.
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

func benchEmbed(b *testing.B, e *Encoder, texts []string) {
	ctx := context.Background()
	if _, err := e.Embed(ctx, texts); err != nil { // warm the workspace
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
	// The work, apart from the waits for a core of a loaded machine.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// processCPU is the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEmbedShort: background embedding of short exchanges (~20
// tokens), a worker batch at a time.
func BenchmarkEmbedShort(b *testing.B) {
	e, err := newLoaded(Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchEmbed(b, e, benchTexts(256, 16))
}

// BenchmarkEmbedLong: texts of at least 128 tokens, one chunk each.
func BenchmarkEmbedLong(b *testing.B) {
	e, err := newLoaded(Options{MaxChunks: 1})
	if err != nil {
		b.Fatal(err)
	}
	benchEmbed(b, e, benchTexts(64, 150))
}

// BenchmarkQuery: one 20-word query, as search embeds it (target ≤ 10 ms).
func BenchmarkQuery(b *testing.B) {
	e, err := newLoaded(Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchEmbed(b, e, []string{"how did we fix the payment provider resending the same notification again and again last week on staging"})
}

func BenchmarkTokenize(b *testing.B) {
	e, err := newLoaded(Options{})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Join(benchTexts(50, 100), "\n")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		e.tok.Encode(text)
	}
}
