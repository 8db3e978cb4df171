package index

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// FullTextIndexer keeps the full-text index up to date in the background:
// it runs IndexFullText steps until caught up, then waits for Notify (a
// commit) or, as a safety net, a second.
type FullTextIndexer struct {
	db   *DB
	log  *slog.Logger
	kick chan struct{}
}

// NewFullTextIndexer returns an indexer for db, which must be open for
// writing. log may be nil.
func NewFullTextIndexer(db *DB, log *slog.Logger) *FullTextIndexer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &FullTextIndexer{db: db, log: log, kick: make(chan struct{}, 1)}
}

// Notify tells the indexer that events were committed. It never blocks.
func (x *FullTextIndexer) Notify() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// Run indexes until ctx ends, and returns nil then. A failing step (a full
// disk...) is logged and retried with a growing pause: lexical search
// falls behind, ingestion goes on.
func (x *FullTextIndexer) Run(ctx context.Context) error {
	return x.RunUntil(ctx, nil)
}

// RunUntil is Run until finish is closed (nil: never), after which it
// indexes what is left and returns: nil once the full-text index holds
// every event committed before finish was closed, or why it does not. A
// backfill (ingest) closes finish when its last commit is done, so that
// the step in progress is not thrown away and done again.
func (x *FullTextIndexer) RunUntil(ctx context.Context, finish <-chan struct{}) error {
	const maxPause = 30 * time.Second
	pause := time.Second
	for {
		// A deleted (or replaced) fulltext.db is rebuilt from index.db
		// at once, without a restart; searches meanwhile fall back on
		// what they can use (search.Searcher).
		rebuilt, err := x.db.CheckFullText(ctx)
		if rebuilt {
			x.log.Warn("the full-text index file was deleted or replaced; rebuilding it from the index", "file", x.db.ftPath)
		}
		if err == nil {
			err = x.Drain(ctx)
		} else if ctx.Err() == nil {
			x.log.Error("full-text index unusable", "err", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-finish:
			if err != nil {
				return err
			}
			return x.Drain(ctx) // what was committed during the last pass
		default:
		}
		wait := time.Second
		if err != nil {
			x.log.Error("full-text indexing failed; retrying", "err", err, "retry_in", pause)
			wait, pause = pause, min(2*pause, maxPause)
		} else {
			pause = time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-x.kick:
		case <-finish:
		case <-t.C:
		}
		t.Stop()
	}
}

// Drain indexes until the full-text index holds every committed event.
//
// The writer of fulltext.db is the critical path of a backfill: it
// inserts the exchanges one at a time, in order. So it only inserts:
// each step's events are read from index.db and analysed on other
// goroutines while the step before is written (a step read ahead is
// checked before use, see ftBatch).
func (x *FullTextIndexer) Drain(ctx context.Context) error {
	db := x.db
	if db.w == nil {
		return ErrReadOnly
	}
	var cur *ftBatch
	for {
		if cur == nil {
			var err error
			if cur, err = db.readFullTextBatch(ctx, db.ftMark.Load()); err != nil {
				return fmt.Errorf("index: full-text indexing: %w", err)
			}
		}
		// The next step, read past where this one ends; nil if the
		// read failed: then it is read again, and its error reported if
		// it lasts.
		var ahead chan *ftBatch
		if cur.n > 0 {
			ahead = make(chan *ftBatch, 1)
			go func(after int64) {
				b, _ := db.readFullTextBatch(ctx, after)
				ahead <- b
			}(cur.last)
		}
		n, err := db.indexFullTextStep(ctx, cur)
		cur = nil
		if ahead != nil {
			cur = <-ahead
		}
		if err != nil || n == 0 {
			cur.stop()
			return err
		}
	}
}
