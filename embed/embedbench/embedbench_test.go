package embedbench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/embed/uselite"
	"github.com/praxis-os/continuity/internal/shareddata"
)

func TestParseCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		ghz        float64
		source     string // a word of it
	}{
		{"nominal clock in the model name", "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\ncpu MHz\t\t: 3100.000\n", 2.4, "model name"},
		{"cpu MHz, highest core", "model name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2100.000\nprocessor\t: 1\ncpu MHz\t\t: 2400.500\n", 2.4005, "cpu MHz"},
		{"an @ without GHz", "model name\t: Weird @ fast\ncpu MHz\t\t: 1800\n", 1.8, "cpu MHz"},
		{"no clock", "processor\t: 0\nmodel name\t: Some ARM core\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseCPUInfo(strings.NewReader(tc.info))
			if tc.ghz == 0 {
				if err == nil {
					t.Fatalf("no clock: got %+v", c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(c.GHz-tc.ghz) > 1e-9 || !strings.Contains(c.Source, tc.source) {
				t.Fatalf("got %.4f GHz from %q, want %.4f from %s", c.GHz, c.Source, tc.ghz, tc.source)
			}
			if p := c.PeakGFLOPS(); math.Abs(p-tc.ghz*32) > 1e-9 {
				t.Fatalf("peak %.2f, want %.2f", p, tc.ghz*32)
			}
		})
	}
}

// BenchmarkQueryWhileEmbedding: the latency of a 12-word query, embedded
// as search embeds it (embed.EmbedQueries), 10 ms apart, on all cores
// (GOMAXPROCS):
// with nothing else running ("idle"), while the background embeds batches
// of 256 short texts on every core, waiting while a query runs ("busy",
// what the daemon's worker does), and while it embeds them without
// waiting ("ungated", what it did before the gate). The query must not
// be slower busy than idle, within noise; its p50 and p95 are reported,
// and the background's texts a second meanwhile. hf is a random-weight
// model of bge-small's shape (skipped without ../shared/data/bert-golden).
//
//	go test ./embed/embedbench -run '^$' -bench QueryWhileEmbedding -benchtime 100x
func BenchmarkQueryWhileEmbedding(b *testing.B) {
	u, err := uselite.New(uselite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	subjects := []struct {
		name string
		e    func(b *testing.B) embed.Embedder
	}{
		{"uselite", func(*testing.B) embed.Embedder { return u }},
		{"hf-bge-small-shape", func(b *testing.B) embed.Embedder {
			src := shareddata.Require(b, "bert-golden/tiny-bert-cls")
			dir := b.TempDir()
			if err := hf.WriteRandomModel(dir, src, hf.BGESmallShape, 1); err != nil {
				b.Fatal(err)
			}
			e, err := hf.New(dir, hf.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return e
		}},
	}
	short := Texts(1024, 16, 1)
	for _, s := range subjects {
		b.Run(s.name, func(b *testing.B) {
			e := embedderOf(s.name, s.e(b))
			for _, bg := range []Background{Idle, Busy, Ungated} {
				b.Run(strings.ReplaceAll(bg.String(), " ", "-"), func(b *testing.B) {
					l, err := QueryLatency(context.Background(), e, b.N, 10*time.Millisecond, bg, short, 256)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(ms(l.P50), "p50-ms")
					b.ReportMetric(ms(l.P95), "p95-ms")
					b.ReportMetric(ms(l.WakeP50), "woke-late-p50-ms")
					if bg != Idle {
						b.ReportMetric(float64(l.Background)/b.Elapsed().Seconds(), "background-texts/s")
					}
				})
			}
		})
	}
}
