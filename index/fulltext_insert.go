package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ftInsertRows is how many exchanges one INSERT statement of the
// full-text writer gives FTS5: a chunk of the analysis (analyzeChunk), so
// that a statement waits for one chunk. Each statement execution crosses
// database/sql and cgo and steps the statement once: per row, that was a
// visible share of the writer's time (the critical path of a backfill,
// fulltext_drain.go). FTS5 receives the same rows in the same order, in
// the same transaction: the index it writes is the same.
const ftInsertRows = analyzeChunk

// ftInserter inserts exchanges into events_fts within one transaction:
// full chunks with one statement of ftInsertRows rows, the rest one by
// one.
type ftInserter struct {
	one, many *sql.Stmt
	args      []any
}

func newFTInserter(ctx context.Context, tx *sql.Tx) (*ftInserter, error) {
	one, err := tx.PrepareContext(ctx, `INSERT INTO events_fts (rowid, user, ai) VALUES (?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	many, err := tx.PrepareContext(ctx, `INSERT INTO events_fts (rowid, user, ai) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", ftInsertRows), ", "))
	if err != nil {
		one.Close()
		return nil, err
	}
	return &ftInserter{one: one, many: many, args: make([]any, 0, 3*ftInsertRows)}, nil
}

func (f *ftInserter) close() {
	f.one.Close()
	f.many.Close()
}

// insert adds es, in order. ctx should not be cancellable (see
// fullTextWrite).
func (f *ftInserter) insert(ctx context.Context, es []ftExchange) error {
	for len(es) >= ftInsertRows {
		f.args = f.args[:0]
		for i := range es[:ftInsertRows] {
			e := &es[i]
			f.args = append(f.args, e.row, e.user, e.ai)
		}
		if _, err := f.many.ExecContext(ctx, f.args...); err != nil {
			return fmt.Errorf("index exchanges %d to %d: %w", es[0].row, es[ftInsertRows-1].row, err)
		}
		es = es[ftInsertRows:]
	}
	for i := range es {
		e := &es[i]
		if _, err := f.one.ExecContext(ctx, e.row, e.user, e.ai); err != nil {
			return fmt.Errorf("index exchange %d: %w", e.row, err)
		}
	}
	return nil
}
