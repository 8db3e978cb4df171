package index

import (
	"context"
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
		case <-t.C:
		}
		t.Stop()
	}
}

// Drain indexes until the full-text index holds every committed event.
func (x *FullTextIndexer) Drain(ctx context.Context) error {
	for {
		n, err := x.db.IndexFullText(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}
