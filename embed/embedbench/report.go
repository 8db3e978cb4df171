package embedbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/embed/uselite"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// Config is what Report measures.
type Config struct {
	// Cores is "all cores" (default runtime.NumCPU()).
	Cores int
	// Batch is how many texts an Embed call gets (default 256, the
	// background worker's batch).
	Batch int
	// Short and Long are how many texts uselite embeds per measure
	// (default 4,000 of about 20 tokens, 512 of at least 128); HFShort
	// and HFLong hf's (default 1,000 and 64 of one full 512-token window).
	Short, Long, HFShort, HFLong int
	// HFModel is the hf model to measure: a name or folder as for
	// `--embed-model`; "" writes a random-weight model of bge-small's
	// shape (hf.BGESmallShape) with the tokenizer of the tiny reference
	// model of ../shared/data/bert-golden into a temporary folder.
	HFModel string
	// Skip names what not to measure: "uselite", "hf", "js", "queries".
	Skip map[string]bool
	// JSSeconds is how long the JS runtime embeds each set (default 10).
	JSSeconds float64
	// Rounds is how many times each embedder is measured on 1 core and
	// on all, alternately, each time on a part of the texts (default 3):
	// the best of them is the least disturbed by other processes.
	Rounds int
	// Queries is how many queries each latency measure embeds (default
	// 100), QueryPause the pause before each (default 20 ms).
	Queries    int
	QueryPause time.Duration
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Cores, runtime.NumCPU())
	def(&c.Batch, 256)
	def(&c.Short, 4000)
	def(&c.Long, 512)
	def(&c.HFShort, 1000)
	def(&c.HFLong, 64)
	def(&c.Queries, 100)
	def(&c.Rounds, 3)
	if c.JSSeconds <= 0 {
		c.JSSeconds = 10
	}
	if c.QueryPause <= 0 {
		c.QueryPause = 20 * time.Millisecond
	}
}

// Targets of issue 20: scaling at least 0.85 × cores (1.7× on 2 cores),
// and a short-text rate on one core at least twice the JS runtime's and
// at least 54 a second.
const (
	TargetScaling    = 0.85
	TargetJSRatio    = 2
	TargetShortPerS  = 54
	shortWords       = 16
	longWords        = 150
	hfLongWords      = 500
	defaultGoldenDir = "tiny-bert-cls"
)

// subject is an embedder to measure: how to make it for a number of
// threads, and its sets of texts.
type subject struct {
	name        string
	make        func(threads int) (embed.Embedder, error)
	short, long []string
	kernel      [3]int // m, k, n of its largest product
}

// Report measures what cfg says and prints the report to w.
func Report(ctx context.Context, cfg Config, w io.Writer) error {
	cfg.defaults()
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	clock, err := CPUClock()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "embedding on 1 core and on %d (GOMAXPROCS); %s; load average %.2f\n", cfg.Cores, clock.Model, LoadAverage())
	fmt.Fprintf(w, "core clock %.2f GHz (%s); FMA peak %.1f GFLOP/s a core = %.2f GHz × 2 FMA units × 8 float32 lanes × 2 flops (AVX2, the kernel's instructions)\n",
		clock.GHz, clock.Source, clock.PeakGFLOPS(), clock.GHz)

	var subjects []subject
	if !cfg.Skip["uselite"] {
		subjects = append(subjects, subject{
			name: "uselite",
			make: func(threads int) (embed.Embedder, error) {
				return uselite.New(uselite.Options{MaxChunks: 1, Threads: threads})
			},
			short:  Texts(cfg.Short, shortWords, 1),
			long:   Texts(cfg.Long, longWords, 2),
			kernel: [3]int{256, 512, 1536},
		})
	}
	if !cfg.Skip["hf"] {
		s, cleanup, err := hfSubject(cfg, w)
		if cleanup != nil {
			defer cleanup()
		}
		if err != nil {
			fmt.Fprintf(w, "hf: skipped: %v\n", err)
		} else {
			subjects = append(subjects, s)
		}
	}

	var useliteShort1 float64
	for _, s := range subjects {
		fmt.Fprintf(w, "\n== %s: matrix kernel alone, one core, %d×%d by %d×%d: ", s.name, s.kernel[0], s.kernel[1], s.kernel[1], s.kernel[2])
		runtime.GOMAXPROCS(1)
		g := KernelGFLOPS(s.kernel[0], s.kernel[1], s.kernel[2], 2*time.Second)
		fmt.Fprintf(w, "%.1f GFLOP/s, %.0f %% of the peak%s\n", g, 100*g/clock.PeakGFLOPS(), overPeak(g, clock))
		threads := []int{1, cfg.Cores}
		es := make([]Embedder, len(threads))
		for i, t := range threads {
			e, err := s.make(t)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			runtime.GOMAXPROCS(t)
			warm := append(slices.Clone(s.short[:min(8, len(s.short))]), s.long[:min(2, len(s.long))]...)
			if _, err := e.Embed(ctx, warm); err != nil { // load, warm up
				return fmt.Errorf("%s: %w", s.name, err)
			}
			es[i] = embedderOf(s.name, e)
		}
		fmt.Fprintf(w, "%d rounds, 1 core and %d alternately, each a third of the texts in batches of %d; \"used\": CPU time / wall time; \"others\": the cores the rest of the machine used meanwhile (/proc/stat)\n", cfg.Rounds, cfg.Cores, cfg.Batch)
		fmt.Fprintf(w, "%-18s %5s %9s %9s %11s %5s %6s %18s %11s\n", "texts", "cores", "texts/s", "per core", "CPU ms/text", "used", "others", "GEMM GFLOP/s/core", "load")
		rates := map[string][][]float64{"short": make([][]float64, len(threads)), "long": make([][]float64, len(threads))}
		for r := range cfg.Rounds {
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				runtime.GOMAXPROCS(threads[i])
				for _, set := range []struct {
					name  string
					texts []string
				}{{"short", s.short}, {"long", s.long}} {
					n := len(set.texts)
					part := set.texts[r*n/cfg.Rounds : (r+1)*n/cfg.Rounds]
					m, err := Run(ctx, es[i], part, cfg.Batch, threads[i])
					if err != nil {
						return fmt.Errorf("%s, %s texts, %d cores: %w", s.name, set.name, threads[i], err)
					}
					gw, _ := m.GFLOPSPerCore()
					fmt.Fprintf(w, "%-18s %5d %9.1f %9.1f %11.2f %5.2f %6.2f %9.1f (%3.0f %%) %5.2f→%.2f\n", fmt.Sprintf("%s, %d", set.name, len(part)), threads[i], m.Rate(), m.Rate()/float64(threads[i]),
						float64(m.CPUPerText().Microseconds())/1000, m.Used(), m.Others(), gw, 100*gw/clock.PeakGFLOPS(), m.Load[0], m.Load[1])
					rates[set.name][i] = append(rates[set.name][i], m.Rate())
				}
			}
		}
		target := TargetScaling * float64(cfg.Cores)
		for _, set := range []string{"short", "long"} {
			one, all := rates[set][0], rates[set][1]
			med := median(all) / median(one)
			best := slices.Max(all) / slices.Max(one)
			fmt.Fprintf(w, "%s, %s texts: 1 core %.1f/s, %d cores %.1f/s (best of %d rounds; medians %.1f and %.1f): scaling %.2f× (medians %.2f×; target ≥ %.2f = %.2f × %d: %s)\n",
				s.name, set, slices.Max(one), cfg.Cores, slices.Max(all), cfg.Rounds, median(one), median(all), best, med, target, TargetScaling, cfg.Cores, met(best >= target))
		}
		if s.name == "uselite" {
			useliteShort1 = slices.Max(rates["short"][0])
		}
		last := es[1]
		if !cfg.Skip["queries"] {
			runtime.GOMAXPROCS(cfg.Cores)
			e := last
			fmt.Fprintf(w, "%s query of 12 words on %d cores, %d queries %v apart:", s.name, cfg.Cores, cfg.Queries, cfg.QueryPause)
			for _, bg := range []Background{Idle, Busy, Ungated} {
				l, err := QueryLatency(ctx, e, cfg.Queries, cfg.QueryPause, bg, s.short, cfg.Batch)
				if err != nil {
					return fmt.Errorf("%s, query latency %s: %w", s.name, bg, err)
				}
				fmt.Fprintf(w, "\n  %-26s p50 %6.2f ms, p95 %6.2f ms", bg, ms(l.P50), ms(l.P95))
				fmt.Fprintf(w, "; woke %.2f / %.2f ms late", ms(l.WakeP50), ms(l.WakeP95))
				if bg != Idle {
					fmt.Fprintf(w, "; background %d texts", l.Background)
				}
				fmt.Fprintf(w, "; load %.2f→%.2f", l.Load[0], l.Load[1])
			}
			fmt.Fprintln(w)
		}
		runtime.GC()
	}

	fmt.Fprintln(w)
	switch {
	case cfg.Skip["js"]:
	case cfg.Skip["uselite"]:
		fmt.Fprintln(w, "JS runtime: skipped (it is compared with uselite, not measured)")
	default:
		dir := JSDir()
		if why := JSMissing(dir); why != "" {
			fmt.Fprintf(w, "JS runtime: skipped: %s\n", why)
			break
		}
		runtime.GOMAXPROCS(1)
		load0 := LoadAverage()
		js, err := RunJS(ctx, dir, Texts(512, shortWords, 1), Texts(256, longWords, 2), cfg.JSSeconds)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "uselite's JS runtime (@energetic-ai/embeddings 0.2.0, TF.js %s), one core, batches of 64, same kinds of texts: short %.1f/s, long %.1f/s; others %.2f cores, load %.2f→%.2f\n",
			js.Backend, js.Short, js.Long, js.Others, load0, LoadAverage())
		ratio := useliteShort1 / js.Short
		fmt.Fprintf(w, "uselite in Go on one core, short texts: %.1f/s = %.2f× the JS runtime (target ≥ %d× and ≥ %d/s: %s)\n",
			useliteShort1, ratio, TargetJSRatio, TargetShortPerS, met(ratio >= TargetJSRatio && useliteShort1 >= TargetShortPerS))
	}
	fmt.Fprintf(w, "peak RSS of the bench process %.0f MiB\n", float64(PeakRSS())/(1<<20))
	return nil
}

// hfSubject makes the hf subject: cfg.HFModel, or a random model of
// bge-small's shape written into a temporary folder (removed by cleanup).
func hfSubject(cfg Config, w io.Writer) (subject, func(), error) {
	s := subject{name: "hf", short: Texts(cfg.HFShort, shortWords, 1), long: Texts(cfg.HFLong, hfLongWords, 2)}
	model := cfg.HFModel
	var cleanup func()
	what := model
	if model == "" {
		src := filepath.Join(shareddata.Dir("bert-golden"), defaultGoldenDir)
		if _, err := os.Stat(filepath.Join(src, "tokenizer.json")); err != nil {
			return s, nil, fmt.Errorf("no model given (--hf-model) and the tokenizer of the tiny reference model is not here to make a random one: %w", err)
		}
		dir, err := os.MkdirTemp("", "embedbench-hf-")
		if err != nil {
			return s, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if err := hf.WriteRandomModel(dir, src, hf.BGESmallShape, 1); err != nil {
			return s, cleanup, err
		}
		model = dir
		what = "random weights of bge-small-en-v1.5's shape (12 layers, 384 wide, 1536 intermediate; the tokenizer of " + src + ")"
	}
	probe, err := hf.New(model, hf.Options{MaxChunks: 1})
	if err != nil {
		return s, cleanup, err
	}
	sh := probe.Model().Shape()
	s.kernel = [3]int{256, sh.Hidden, sh.Intermediate}
	s.make = func(threads int) (embed.Embedder, error) {
		return hf.New(model, hf.Options{MaxChunks: 1, Threads: threads})
	}
	fmt.Fprintf(w, "hf model: %s\n", what)
	return s, cleanup, nil
}

// embedderOf is what Run and QueryLatency measure of e.
func embedderOf(name string, e embed.Embedder) Embedder {
	return Embedder{
		Name:  name,
		Embed: e.Embed,
		EmbedQuery: func(ctx context.Context, text string) error {
			_, err := embed.EmbedQueries(ctx, e, []string{text})
			return err
		},
	}
}

// overPeak explains a kernel faster than the peak.
func overPeak(g float64, c Clock) string {
	if g <= c.PeakGFLOPS() {
		return ""
	}
	return fmt.Sprintf(" (over 100 %%: the core runs faster than %.2f GHz, turbo; %.2f GHz at least)", c.GHz, g/FlopsPerCycle)
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func ms(d time.Duration) float64 {
	if d < 0 {
		return math.NaN()
	}
	return float64(d.Microseconds()) / 1000
}
