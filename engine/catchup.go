package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/watcher"
)

// Ingested is what CatchUp did.
type Ingested struct {
	Lines int64 // lines committed (indexed, rejected or skipped)
	Bytes int64 // their bytes
	// Stored is how long until every line was durable; Took until the
	// full-text index held them too.
	Stored, Took time.Duration
}

// CatchUp indexes every complete line of every log once and returns: a
// backfill, or a catch-up without a daemon. When it returns nil, every
// line is stored durably and full-text searchable. progress (nil: none)
// hears the bytes of the logs done after each commit.
//
// The full-text index is built from the committed events alongside, in
// its own file (a second core), and finished before the end. The bm25
// engine is the daemon's: it builds it at its start, and the rejected
// lines are listed by `continuity rejects`; neither is followed here.
func (e *Engine) CatchUp(ctx context.Context, progress func(done int64)) (Ingested, error) {
	var rep Ingested
	start := time.Now()
	// The commits follow each other: index.db is checkpointed beside
	// them rather than in them.
	endBackfill, err := e.db.BeginBackfill(ctx)
	if err != nil {
		return rep, err
	}
	defer func() {
		if err := endBackfill(); err != nil {
			e.log.Warn("backfill checkpoints", "err", err)
		}
	}()
	// When the last batch is committed, the full-text indexer indexes
	// what is left and returns (stopping it instead would throw its step
	// away).
	ftCtx, stopFT := context.WithCancel(ctx)
	committed := make(chan struct{})
	ftDone := make(chan error, 1)
	go func() { ftDone <- e.fullText.RunUntil(ftCtx, committed) }()
	waitFT := sync.OnceValue(func() error { return <-ftDone })
	defer func() {
		stopFT()
		waitFT()
	}()
	e.onCommit = func(b watcher.Batch) {
		rep.Lines += int64(len(b.Lines))
		if n := len(b.Lines); n > 0 {
			rep.Bytes += b.Lines[n-1].End - b.Lines[0].Start
		}
		if progress != nil {
			progress(rep.Bytes)
		}
	}
	defer func() { e.onCommit = nil }()
	err = e.w.CatchUp(ctx)
	rep.Stored = time.Since(start)
	if err != nil {
		return rep, err
	}
	e.db.BackfillStored()
	close(committed)
	err = waitFT()
	if err == nil {
		err = ctx.Err() // RunUntil returns nil when ctx ends (Ctrl-C)
	}
	if err != nil {
		return rep, fmt.Errorf("full-text index (events are stored; run ingest again to finish it): %w", err)
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// Embedded is what Embed did.
type Embedded struct {
	Identity string // the vector space
	Stored   int64  // vectors stored
	Took     time.Duration
}

// Embed computes the vectors of every exchange that has none, with emb
// (nil: the embedder the engine was opened with), and returns when none
// is pending: ingest's second phase. Stopping it (ctx) loses nothing:
// what is not embedded stays pending for the next ingest or the daemon.
func (e *Engine) Embed(ctx context.Context, emb embed.Embedder) (Embedded, error) {
	return e.EmbedWatch(ctx, emb, 0, nil)
}

// IngestEmbed is how far Embed got: vectors stored so far, exchanges
// still pending (-1 until counted), the rate in exchanges a second (0
// until measured) and the time since it began.
type IngestEmbed struct {
	Stored  int64
	Pending int64
	Rate    float64
	Elapsed time.Duration
}

// Left is the time the pending exchanges should take at the current
// rate; 0 when unknown.
func (p IngestEmbed) Left() time.Duration {
	if p.Pending <= 0 || p.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(p.Pending) / p.Rate * float64(time.Second))
}

// Line is one line a person reads: how many of how many, the rate, the
// time left, and that stopping is safe.
func (p IngestEmbed) Line() string {
	var b strings.Builder
	if p.Pending < 0 {
		fmt.Fprintf(&b, "embedding: counting the exchanges to embed (%s)", p.Elapsed.Round(time.Second))
	} else {
		total := p.Stored + p.Pending
		pct := 100.0
		if total > 0 {
			pct = 100 * float64(p.Stored) / float64(total)
		}
		fmt.Fprintf(&b, "embedding: %d of %d exchanges (%.0f%%)", p.Stored, total, pct)
		if p.Rate > 0 {
			fmt.Fprintf(&b, ", %.0f/s", p.Rate)
			if left := p.Left(); left > 0 {
				fmt.Fprintf(&b, ", about %s left", roundLeft(left))
			}
		} else {
			b.WriteString(", measuring the rate")
		}
	}
	b.WriteString("; Ctrl-C is safe: the daemon computes the rest")
	return b.String()
}

// roundLeft rounds a time left to what is worth reading: seconds under
// a minute and a half, then ten seconds, then minutes.
func roundLeft(d time.Duration) time.Duration {
	switch {
	case d < 90*time.Second:
		return d.Round(time.Second)
	case d < 10*time.Minute:
		return d.Round(10 * time.Second)
	}
	return d.Round(time.Minute)
}

// EmbedWatch is Embed calling fn with its progress every period while it
// embeds; fn nil or period ≤ 0: no calls.
func (e *Engine) EmbedWatch(ctx context.Context, emb embed.Embedder, period time.Duration, fn func(IngestEmbed)) (Embedded, error) {
	if emb != nil && emb != e.embedding.Embedder() {
		// A worker for emb takes the place of the one Open made (ingest
		// opens without an embedder: it needs none until now).
		w, err := e.newWorker(emb)
		if err != nil {
			return Embedded{}, err
		}
		for i, v := range e.views {
			if v == follow.View(e.embedding) {
				e.views[i] = w
			}
		}
		e.embedding.Close()
		e.embedding = w
	}
	start := time.Now()
	if err := vectors.RemoveSnapshotTemps(e.ws.Cache); err != nil {
		return Embedded{}, err
	}
	ectx, stop := context.WithCancel(ctx)
	report := func() {
		st := e.embedding.Status()
		fn(IngestEmbed{Stored: st.Stored, Pending: st.Pending, Rate: st.Rate, Elapsed: time.Since(start)})
	}
	var watched sync.WaitGroup
	if fn != nil && period > 0 {
		watched.Add(1)
		go func() {
			defer watched.Done()
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-ectx.Done():
					return
				case <-t.C:
					report()
				}
			}
		}()
	}
	err := e.embedding.Drain(ectx)
	stop()
	watched.Wait()
	st := e.embedding.Status()
	return Embedded{Identity: st.Identity, Stored: st.Stored, Took: time.Since(start)}, err
}
