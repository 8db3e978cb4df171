// Package embedbench measures the in-process embedders, uselite and hf:
// how many short and long texts a second they embed on one core and on
// all of them (the background worker's batches), how long a query takes
// while they do, and two physical anchors: the matrix kernel's rate
// against the core's FMA peak, and uselite's own JS runtime (TF.js, WASM)
// on the same texts. `continuity-bench embed` prints its report;
// embed/uselite/internal/benchjs its comparison with the JS runtime.
//
// Machines are noisy: each figure is printed with the load average
// before and after it, and with the CPU time it took (which other
// processes do not inflate as much as the wall time).
package embedbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/embed/internal/cores"
	"github.com/praxis-os/continuity/embed/internal/gemm"
)

// words are the vocabulary of the texts: exchanges about the daemon and
// one about life, as in the JS comparison's first version.
var words = strings.Fields(`the daemon tails every log file in the conversations folder and remembers
the byte offset it committed for each generation so that after a crash it resumes exactly where the
last transaction ended while embedding runs in the background on a durable queue of exchanges
without a vector and a slow embedding server never blocks indexing or lexical search we fixed the
webhook handler by verifying the signature with the raw body returning four hundred for bad
signatures and making it idempotent with a unique index on the event id my sister is getting
married in june and I have been running three times a week before work`)

// Texts returns n texts of nwords words each (16 words are about 20
// tokens for uselite, 150 at least 128), mostly different, the same for
// the same arguments.
func Texts(n, nwords, seed int) []string {
	out := make([]string, n)
	for i := range out {
		w := make([]string, nwords)
		for j := range w {
			w[j] = words[(seed+i*31+j*7+j*j*3)%len(words)]
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}

// Query is a 12-word search query.
const Query = "how did we stop the payment provider from sending the same notification"

// Embedder is what is measured: an embedder's Embed (the background
// worker's call) and its query embedding.
type Embedder struct {
	Name  string
	Embed func(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds one search query as search does (with the query
	// mark of embed.EmbedQueries).
	EmbedQuery func(ctx context.Context, text string) error
}

// Measure is one measured run of an embedder over a set of texts.
type Measure struct {
	Texts, Cores int
	Wall, CPU    time.Duration
	// Machine is the CPU time the whole machine used meanwhile (this
	// process included; /proc/stat, in ticks of 10 ms), -1 where unknown.
	Machine time.Duration
	Flops   int64 // of the matrix products
	Load    [2]float64
}

// Used is how many cores the process used on average.
func (m Measure) Used() float64 { return m.CPU.Seconds() / m.Wall.Seconds() }

// Others is how many cores the rest of the machine used on average (NaN
// where unknown): what the measure did not get of the machine.
func (m Measure) Others() float64 {
	if m.Machine < 0 {
		return math.NaN()
	}
	return max(0, (m.Machine-m.CPU).Seconds()/m.Wall.Seconds())
}

// Rate is texts a second.
func (m Measure) Rate() float64 { return float64(m.Texts) / m.Wall.Seconds() }

// CPUPerText is the CPU time a text took.
func (m Measure) CPUPerText() time.Duration { return m.CPU / time.Duration(max(m.Texts, 1)) }

// GFLOPSPerCore is the matrix products' rate per core, by the wall time
// (all cores counted busy) and by the CPU time the process used.
func (m Measure) GFLOPSPerCore() (wall, cpu float64) {
	return float64(m.Flops) / m.Wall.Seconds() / float64(m.Cores) / 1e9, float64(m.Flops) / m.CPU.Seconds() / 1e9
}

// Run embeds texts in batches of batch, as the background worker does,
// and measures it (warm the embedder up first: the first call reads the
// weights).
func Run(ctx context.Context, e Embedder, texts []string, batch, cores int) (Measure, error) {
	runtime.GC()
	m := Measure{Texts: len(texts), Cores: cores}
	m.Load[0] = LoadAverage()
	f0, c0, mc0, t0 := gemm.Flops(), CPUTime(), MachineCPU(), time.Now()
	for lo := 0; lo < len(texts); lo += batch {
		if _, err := e.Embed(ctx, texts[lo:min(lo+batch, len(texts))]); err != nil {
			return Measure{}, err
		}
	}
	m.Wall, m.CPU, m.Flops = time.Since(t0), CPUTime()-c0, gemm.Flops()-f0
	m.Machine = -1
	if mc1 := MachineCPU(); mc0 >= 0 && mc1 >= 0 {
		m.Machine = mc1 - mc0
	}
	m.Load[1] = LoadAverage()
	return m, nil
}

// Latency is the latency of queries.
type Latency struct {
	P50, P95 time.Duration
	// WakeP50 and WakeP95 are how late the query's goroutine woke up
	// from its pause: the Go scheduler's delay before the query starts
	// (a goroutine readied while every P runs work waits for one to
	// yield), not counted in P50 and P95.
	WakeP50, WakeP95 time.Duration
	Queries          int
	Background       int // texts the background embedded meanwhile
	Load             [2]float64
}

// Background is how the background embeds while queries are measured.
type Background int

const (
	// Idle: no background work.
	Idle Background = iota
	// Busy: the background embeds batches of texts, waiting while a
	// query runs (as the daemon's worker does).
	Busy
	// Ungated: the background embeds batches of texts without waiting
	// for queries, what it did before the gate.
	Ungated
)

func (b Background) String() string {
	return [...]string{"idle", "while embedding", "while embedding, ungated"}[b]
}

// QueryLatency embeds n queries, pause apart, with bg in the background
// (batches of texts, batch at a time, over and over).
func QueryLatency(ctx context.Context, e Embedder, n int, pause time.Duration, bg Background, texts []string, batch int) (Latency, error) {
	lat := Latency{Queries: n}
	bgCtx, stop := context.WithCancel(ctx)
	done := make(chan int)
	if bg != Idle {
		if bg == Ungated {
			bgCtx = cores.Ungated(bgCtx)
		}
		go func() {
			embedded := 0
			for i := 0; bgCtx.Err() == nil; i = (i + batch) % len(texts) {
				b := texts[i:min(i+batch, len(texts))]
				if _, err := e.Embed(bgCtx, b); err == nil {
					embedded += len(b)
				}
			}
			done <- embedded
		}()
	}
	if err := e.EmbedQuery(ctx, Query); err != nil { // warm
		stop()
		return lat, err
	}
	lat.Load[0] = LoadAverage()
	d, late := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	var err error
	for range n {
		wake := time.Now().Add(pause)
		time.Sleep(pause)
		start := time.Now()
		late = append(late, start.Sub(wake))
		if err = e.EmbedQuery(ctx, Query); err != nil {
			break
		}
		d = append(d, time.Since(start))
	}
	lat.Load[1] = LoadAverage()
	stop()
	if bg != Idle {
		lat.Background = <-done
	}
	if err != nil {
		return lat, err
	}
	lat.P50, lat.P95 = percentiles(d)
	lat.WakeP50, lat.WakeP95 = percentiles(late)
	return lat, nil
}

// percentiles are the median and the 95th percentile of d (sorted).
func percentiles(d []time.Duration) (p50, p95 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[min(len(d)-1, len(d)*95/100)]
}

// KernelGFLOPS is the matrix kernel's rate on one goroutine, in GFLOP/s:
// a product of m rows by a packed k×n matrix (random values), repeated
// for about d.
func KernelGFLOPS(m, k, n int, d time.Duration) float64 {
	r := rand.New(rand.NewPCG(1, 1))
	a, w, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = r.Float32()
	}
	for i := range w {
		w[i] = r.Float32()
	}
	p := gemm.Pack(k, n, w)
	p.Mul(c, a, m, 1)
	runs, start := 0, time.Now()
	for time.Since(start) < d {
		p.Mul(c, a, m, 1)
		runs++
	}
	return 2 * float64(m*k*n) * float64(runs) / time.Since(start).Seconds() / 1e9
}

// Clock is a core's clock, read from /proc/cpuinfo.
type Clock struct {
	GHz    float64
	Source string // how it was read
	Model  string // the CPU's model name
}

// FlopsPerCycle is what one core can do a cycle on the kernel's
// instructions: 2 FMA units × 8 float32 lanes (AVX2) × 2 flops.
const FlopsPerCycle = 2 * 8 * 2

// PeakGFLOPS is a core's peak on the kernel's instructions.
func (c Clock) PeakGFLOPS() float64 { return c.GHz * FlopsPerCycle }

// CPUClock reads the clock from /proc/cpuinfo (see parseCPUInfo).
func CPUClock() (Clock, error) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return Clock{}, fmt.Errorf("embedbench: the clock: %w", err)
	}
	defer f.Close()
	return parseCPUInfo(f)
}

// parseCPUInfo reads the clock from /proc/cpuinfo: the nominal frequency
// in the model name ("... @ 2.10GHz") when it gives one, else the highest
// "cpu MHz" of the cores (the current clock the kernel reports; a virtual
// machine reports its host's nominal one). Turbo can run faster.
func parseCPUInfo(r io.Reader) (Clock, error) {
	var c Clock
	var mhz float64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "model name":
			c.Model = val
		case "cpu MHz":
			if v, err := strconv.ParseFloat(val, 64); err == nil {
				mhz = max(mhz, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Clock{}, fmt.Errorf("embedbench: /proc/cpuinfo: %w", err)
	}
	if i := strings.LastIndex(c.Model, "@"); i >= 0 {
		s := strings.TrimSpace(c.Model[i+1:])
		if v, err := strconv.ParseFloat(strings.TrimSuffix(s, "GHz"), 64); err == nil && strings.HasSuffix(s, "GHz") && v > 0 {
			c.GHz, c.Source = v, `the nominal clock in /proc/cpuinfo's "model name"`
			return c, nil
		}
	}
	if mhz > 0 {
		c.GHz, c.Source = mhz/1000, `the highest "cpu MHz" of /proc/cpuinfo`
		return c, nil
	}
	return Clock{}, errors.New(`embedbench: /proc/cpuinfo gives no clock (no "@ x.xxGHz" in the model name, no "cpu MHz")`)
}

// LoadAverage is the one-minute load average (/proc/loadavg), NaN where
// there is none.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// MachineCPU is the CPU time all the machine's cores have spent busy
// (or stolen by the hypervisor) since boot, from /proc/stat's first
// line; -1 where there is none.
func MachineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	var busy int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return -1
		}
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// CPUTime is the CPU time the process has used (user and system).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS is the process's peak resident memory, in bytes.
func PeakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10 // KiB on Linux
}
