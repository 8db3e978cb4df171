package index

import (
	"context"
	"fmt"
)

// DrainFullText indexes until the full-text index holds every committed event.
//
// The writer of fulltext.db is the critical path of a backfill: it
// inserts the exchanges one at a time, in order. So it only inserts:
// each step's events are read from index.db and analysed on other
// goroutines while the step before is written (a step read ahead is
// checked before use, see ftBatch).
func (db *DB) DrainFullText(ctx context.Context) error {
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

// FullTextPath is the full-text index's file (fulltext.db).
func (db *DB) FullTextPath() string { return db.ftPath }
