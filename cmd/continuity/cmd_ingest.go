package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
)

// A backfill commits larger batches than the daemon (watcher defaults:
// 2000 lines, 8 MiB), which keeps its commits small for latency: fewer
// commits mean fewer fsyncs and index pages written once per batch
// instead of several times. 16 MiB of lines stays well inside the memory
// budget (docs/performance.md, "Figures behind design choices").
const (
	ingestBatchLines = 8000
	ingestBatchBytes = 16 << 20
)

func runIngest(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ingest [flags]", `
Index every complete line of every log once, then exit: a backfill, or a
catch-up without a daemon. Safe to run any number of times: lines already
indexed are not indexed again. When a daemon (or an MCP server) runs for
the workspace, it already indexes every line as it is written: ingest says
so and exits 0 ('continuity status' shows its progress). Shows progress
when stderr is a terminal.

When it says "ingested", every line is stored durably and full-text
searchable. It then computes the vectors of the new exchanges with the
configured embedder, timed apart, showing how many are done, the rate and
the time left (redrawn on a terminal; a plain line every --progress-every
otherwise). --no-embed (or Ctrl-C during that phase, which is safe: the
vectors stored are kept) leaves the rest pending: status counts them, and
the daemon computes them in the background, so you need not wait.`)
	var wf watchFlags
	wf.register(fs, false)
	var ef embedFlags
	ef.register(fs)
	noEmbed := fs.Bool("no-embed", false, "do not compute vectors now (they stay pending for the daemon); lexical search works at once")
	every := fs.Duration("progress-every", 10*time.Second, "while computing vectors with stderr not a terminal, print a progress line this often (0: none); a terminal gets a line redrawn twice a second")
	if err := parseFlagsOnly(e, fs, args); err != nil {
		return err
	}
	level, err := wf.level()
	if err != nil {
		return err
	}
	p, err := e.paths()
	if err != nil {
		return err
	}
	eng, err := engine.Open(p.layout(), engine.Options{Logger: e.logger(level),
		Watch: engine.Watch{MaxLineBytes: wf.maxLine, BatchLines: ingestBatchLines, BatchBytes: ingestBatchBytes}})
	if errors.Is(err, engine.ErrLocked) {
		if pid, ok := engine.NewClient(p.layout(), nil, nil).Indexer(ctx); ok {
			fmt.Fprintf(e.stderr, "nothing to do: the daemon (pid %d) already indexes this workspace, every line as it is written, "+
				"and computes the vectors in the background ('continuity status' shows how far it is)\n", pid)
			return nil
		}
	}
	if err != nil {
		return err
	}
	defer eng.Close()

	// Until the events are stored and searchable; not for the vectors
	// (the embedder's model lives on the heap).
	restoreGC := ingestGC()
	defer restoreGC()
	prog := newProgress(e, backlog(p.logs))
	rep, err := eng.CatchUp(ctx, prog.update)
	prog.done()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "ingested %d lines (%.1f MiB) in %s (%.0f lines/s; events stored in %s, full-text index done %s later)\n",
		rep.Lines, float64(rep.Bytes)/(1<<20), rep.Took.Round(time.Millisecond), float64(rep.Lines)/max(rep.Took.Seconds(), 1e-9),
		rep.Stored.Round(time.Millisecond), (rep.Took - rep.Stored).Round(time.Millisecond))
	restoreGC()
	if *noEmbed {
		return nil
	}
	emb, err := ef.embedder()
	if err != nil {
		return err
	}
	// Ingested means stored and full-text searchable, reported above; the
	// vectors are a second phase, timed apart. Stopping it loses nothing:
	// what is not embedded stays pending (status counts it) for the next
	// ingest or the daemon, which embeds in the background.
	fmt.Fprintf(e.stderr, "computing vectors with %s (Ctrl-C is safe: the vectors stored are kept and the daemon computes the rest in the background; --no-embed skips this)\n", emb.Identity())
	ep := newEmbedProgress(e, *every)
	vec, err := eng.EmbedWatch(ctx, emb, ep.period, ep.show)
	ep.done()
	if err != nil && ctx.Err() != nil {
		// Ctrl-C: nothing is lost; exit as an interrupted command does.
		return &exitError{code: 130, err: fmt.Errorf("stopped: %d exchanges embedded with %s; the others stay pending, and the daemon ('continuity daemon') or the next ingest computes them", vec.Stored, emb.Identity())}
	}
	if err != nil {
		// The events are indexed and searchable lexically; the vectors stay
		// pending for the next ingest or the daemon.
		return fmt.Errorf("embedding with %s (events are indexed; vectors stay pending): %w", emb.Identity(), err)
	}
	fmt.Fprintf(e.stderr, "embedded %d exchanges with %s in %s\n", vec.Stored, vec.Identity, vec.Took.Round(time.Millisecond))
	return nil
}

// Garbage collection during a backfill. Ingest allocates much short-lived
// memory (lines, parsed events, terms, values for SQLite) around a small
// live heap, where Go's default (GOGC=100) collects very often, a visible
// share of ingest's CPU (GODEBUG=gctrace). So ingest lets the heap grow
// to 5 times the live heap, but no further than a soft limit of 96 MiB of
// Go memory: on long texts, whose live heap is larger, the limit binds
// and it collects about as before, keeping the peak RSS within the
// memory budget. The measurements are in docs/performance.md, "Figures behind design
// choices". GOGC or GOMEMLIMIT set in the environment are left alone.
const (
	ingestGCPercent   = 400
	ingestMemoryLimit = 96 << 20
)

// ingestGC applies the settings above, unless the environment sets its
// own, and returns what puts the previous ones back (once, however many
// times it is called).
func ingestGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(ingestGCPercent)
	limit := debug.SetMemoryLimit(ingestMemoryLimit)
	return sync.OnceFunc(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

// embedProgress shows ingest's embedding progress: one line redrawn on
// a terminal, a plain line every period otherwise.
type embedProgress struct {
	e      *env
	term   bool
	period time.Duration
	drawn  bool
}

func newEmbedProgress(e *env, every time.Duration) *embedProgress {
	p := &embedProgress{e: e, term: isTerminal(e.stderr), period: every}
	if p.term {
		p.period = 500 * time.Millisecond
	}
	return p
}

func (p *embedProgress) show(pr engine.IngestEmbed) {
	if p.term {
		fmt.Fprint(p.e.stderr, "\r\033[K"+pr.Line())
		p.drawn = true
		return
	}
	fmt.Fprintln(p.e.stderr, pr.Line())
}

func (p *embedProgress) done() {
	if p.drawn {
		fmt.Fprint(p.e.stderr, "\r\033[K")
	}
}

// backlog is the total size of the logs: an upper bound of what is left.
func backlog(dir string) int64 {
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if _, ok := logformat.ParseLogName(en.Name()); !ok || !en.Type().IsRegular() {
			continue
		}
		if fi, err := en.Info(); err == nil {
			total += fi.Size()
		}
	}
	return total
}

// progress draws a one-line progress bar on a terminal stderr for backlogs
// worth waiting for; elsewhere it does nothing.
type progress struct {
	e     *env
	total int64
	on    bool
	last  time.Time
}

func newProgress(e *env, total int64) *progress {
	p := &progress{e: e, total: total}
	if total > 16<<20 {
		p.on = isTerminal(e.stderr)
	}
	return p
}

func (p *progress) update(done int64) {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	frac := min(float64(done)/float64(p.total), 1)
	const width = 30
	n := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if i < n {
			bar[i] = '='
		}
	}
	fmt.Fprintf(p.e.stderr, "\r[%s] %3.0f%%  %.0f/%.0f MiB", bar, frac*100, float64(done)/(1<<20), float64(p.total)/(1<<20))
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.e.stderr, "\r\033[K")
	}
}
