// Package fulltext is the view that keeps the FTS5 full-text index
// (fulltext.db, beside the index) up to date: see Indexer.
package fulltext

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
)

var _ follow.View = (*Indexer)(nil)

// Indexer keeps the full-text index (fulltext.db) up to date in
// the background: a follow.View of the events table. Each step indexes
// until caught up; it then waits for Notify (a commit) or, as a safety
// net, a second.
type Indexer struct {
	db   *index.DB
	log  *slog.Logger
	kick follow.Kick
}

// Full-text indexer timing: the idle poll, and the pause after a failed
// step, doubling up to ftMaxPause.
const (
	ftIdlePoll = time.Second
	ftMaxPause = 30 * time.Second
)

// NewIndexer returns an indexer for db, which must be open for
// writing. log may be nil.
func New(db *index.DB, log *slog.Logger) *Indexer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Indexer{db: db, log: log, kick: follow.NewKick()}
}

// Name is the view's name: "fulltext".
func (x *Indexer) Name() string { return "fulltext" }

// Notify tells the indexer that events were committed. It never blocks.
func (x *Indexer) Notify() { x.kick.Notify() }

// Run indexes until ctx ends, and returns nil then. A failing step (a full
// disk...) is logged and retried with a growing pause: lexical search
// falls behind, ingestion goes on.
func (x *Indexer) Run(ctx context.Context) error {
	return x.RunUntil(ctx, nil)
}

// RunUntil is Run until finish is closed (nil: never), after which it
// indexes what is left and returns: nil once the full-text index holds
// every event committed before finish was closed, or why it does not. A
// backfill (ingest) closes finish when its last commit is done, so that
// the step in progress is not thrown away and done again.
func (x *Indexer) RunUntil(ctx context.Context, finish <-chan struct{}) error {
	p := follow.Policy{IdlePoll: ftIdlePoll, MinBackoff: time.Second, MaxBackoff: ftMaxPause, KickDuringBackoff: true,
		OnError: func(err error, retryIn time.Duration, _ int) {
			x.log.Error("full-text indexing failed; retrying", "err", err, "retry_in", retryIn)
		}}
	return follow.LoopUntil(ctx, x.kick, p, x.step, finish)
}

// step brings the full-text index up to date: rebuilt first if its file
// was deleted or replaced, then every committed event indexed.
func (x *Indexer) step(ctx context.Context) (more bool, err error) {
	// A deleted (or replaced) fulltext.db is rebuilt from index.db at
	// once, without a restart; searches meanwhile fall back on what they
	// can use (search.Searcher).
	rebuilt, err := x.db.CheckFullText(ctx)
	if rebuilt {
		x.log.Warn("the full-text index file was deleted or replaced; rebuilding it from the index", "file", x.db.FullTextPath())
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
func (x *Indexer) Remove(ctx context.Context, _ follow.Removal) error {
	x.Notify()
	return nil
}

// Status is the full-text index's state.
type Status struct {
	// Pending counts the exchanges not in it yet, plus deletions not
	// applied; -1 while it is not built.
	Pending int64  `json:"pending"`
	Error   string `json:"error,omitempty"`
}

// Report is the full-text index's state, a Status.
func (x *Indexer) Report(ctx context.Context) any {
	n, err := x.db.FullTextPending(ctx)
	switch {
	case errors.Is(err, index.ErrNoFullText):
		return Status{Pending: -1}
	case err != nil:
		return Status{Pending: -1, Error: err.Error()}
	}
	return Status{Pending: n}
}

// Drain indexes until the full-text index holds every committed event
// (index.DB.DrainFullText).
func (x *Indexer) Drain(ctx context.Context) error { return x.db.DrainFullText(ctx) }
