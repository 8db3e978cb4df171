package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/praxis-os/continuity/follow"
)

var _ follow.View = (*FullTextIndexer)(nil)

// FullTextIndexer keeps the full-text index (fulltext.db) up to date in
// the background: a follow.View of the events table. Each step indexes
// until caught up; it then waits for Notify (a commit) or, as a safety
// net, a second.
type FullTextIndexer struct {
	db   *DB
	log  *slog.Logger
	kick follow.Kick
}

// Full-text indexer timing: the idle poll, and the pause after a failed
// step, doubling up to ftMaxPause.
const (
	ftIdlePoll = time.Second
	ftMaxPause = 30 * time.Second
)

// NewFullTextIndexer returns an indexer for db, which must be open for
// writing. log may be nil.
func NewFullTextIndexer(db *DB, log *slog.Logger) *FullTextIndexer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &FullTextIndexer{db: db, log: log, kick: follow.NewKick()}
}

// Name is the view's name: "fulltext".
func (x *FullTextIndexer) Name() string { return "fulltext" }

// Notify tells the indexer that events were committed. It never blocks.
func (x *FullTextIndexer) Notify() { x.kick.Notify() }

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
	p := follow.Policy{IdlePoll: ftIdlePoll, MinBackoff: time.Second, MaxBackoff: ftMaxPause, KickDuringBackoff: true,
		OnError: func(err error, retryIn time.Duration, _ int) {
			x.log.Error("full-text indexing failed; retrying", "err", err, "retry_in", retryIn)
		}}
	return follow.LoopUntil(ctx, x.kick, p, x.step, finish)
}

// step brings the full-text index up to date: rebuilt first if its file
// was deleted or replaced, then every committed event indexed.
func (x *FullTextIndexer) step(ctx context.Context) (more bool, err error) {
	// A deleted (or replaced) fulltext.db is rebuilt from index.db at
	// once, without a restart; searches meanwhile fall back on what they
	// can use (search.Searcher).
	rebuilt, err := x.db.CheckFullText(ctx)
	if rebuilt {
		x.log.Warn("the full-text index file was deleted or replaced; rebuilding it from the index", "file", x.db.ftPath)
	}
	if err != nil {
		if ctx.Err() == nil {
			x.log.Error("full-text index unusable", "err", err)
		}
		return false, err
	}
	return false, x.Drain(ctx)
}

// Remove: the index queues the exchanges it deletes (a forgotten
// session's, an edited log's) for removal from the full-text index in
// the deleting transaction; the next step removes them, which Remove asks
// for at once.
func (x *FullTextIndexer) Remove(ctx context.Context, _ follow.Removal) error {
	x.Notify()
	return nil
}

// FullTextStatus is the full-text index's state.
type FullTextStatus struct {
	// Pending counts the exchanges not in it yet, plus deletions not
	// applied; -1 while it is not built.
	Pending int64  `json:"pending"`
	Error   string `json:"error,omitempty"`
}

// Report is the full-text index's state, a FullTextStatus.
func (x *FullTextIndexer) Report(ctx context.Context) any {
	n, err := x.db.FullTextPending(ctx)
	switch {
	case errors.Is(err, ErrNoFullText):
		return FullTextStatus{Pending: -1}
	case err != nil:
		return FullTextStatus{Pending: -1, Error: err.Error()}
	}
	return FullTextStatus{Pending: n}
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
