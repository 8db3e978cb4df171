package engine

// The views of the events table, assembled in one place.
//
// The index's events table is the source of truth; everything else the
// engine keeps follows it as a follow.View (package follow; the views
// live side by side under follow/: fulltext, lexicon, rejectlog,
// embedding; the team publisher is share.Publisher, beside the store it
// feeds). This file is where they are built and listed. To add a view (a
// publisher of the events to a team store,
// say):
//
//  1. write it as a follow.View in a package of its own (under follow/,
//     or beside the store it feeds), testable on internal/indextest's
//     temporary events table;
//  2. build it in assembleViews and append it to e.views.
//
// Nothing else: Run runs every view, each commit notifies every view
// (Notify), forget and edits of logs in place go through every view
// (Remove), and the daemon answers "<Name>_status" with its Report.

import (
	"context"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/follow/fulltext"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/follow/rejectlog"
	"github.com/praxis-os/continuity/watcher"
)

// assembleViews builds the views of the events table and lists them in
// e.views, in the order they start.
func (e *Engine) assembleViews() error {
	var err error
	// Embedding is a durable queue drained in the background: a slow or
	// down embedder never holds up ingestion.
	if e.embedding, err = e.newWorker(e.opts.Embedder); err != nil {
		return err
	}
	e.fullText = fulltext.New(e.db, e.log)
	// BM25 of plain words from the bm25 engine once it holds what FTS5
	// holds (follow/lexicon); built and kept up by Run.
	if e.bm25, err = lexicon.New(lexiconConfig(e.db, e.log)); err != nil {
		return err
	}
	e.rejectLog = rejectlog.New(e.db, e.log)
	e.views = []follow.View{e.fullText, e.bm25, e.embedding, e.rejectLog}
	// Team memory: the publisher follows the events table like the
	// others (engine/share.go, package share).
	return e.assembleShare()
}

// notifyViews tells every view that events were committed.
func (e *Engine) notifyViews() {
	for _, v := range e.views {
		v.Notify()
	}
}

// edited makes every view follow an edit of a log in place: the events
// of its changed and removed lines are gone from the index, their text,
// words and vectors leave the views too. (After a crash before this, the
// views learn it from the index: the full-text index from its queue of
// deletions, the bm25 engine and the vector snapshots from the deletion
// epoch, the vector space by loading again.)
func (e *Engine) edited(ed watcher.Edit) {
	if len(ed.Removed) == 0 {
		return
	}
	ctx := context.Background()
	for _, v := range e.views {
		if err := v.Remove(ctx, follow.Removal{Rows: ed.Removed}); err != nil {
			e.log.Error("a view could not follow the edit of a log", "view", v.Name(), "file", ed.File, "err", err)
		}
		v.Notify()
	}
}

// newWorker is the vectors view for emb (nil: a worker that only
// forgets, until Embed gets an embedder).
func (e *Engine) newWorker(emb embed.Embedder) (*embedding.Worker, error) {
	return embedding.New(embedding.Config{DB: e.db, Embedder: emb, BatchSize: e.opts.EmbedBatch, Logger: e.log})
}
