package index

import (
	"context"
	"fmt"

	"github.com/praxis-os/continuity/watcher"
)

var _ watcher.LineMover = (*DB)(nil)

// MoveLines implements watcher.LineMover: a log that left the folder hands
// its lines to its rotated copy (x.jsonl.1 to x.jsonl.1.gz), which holds
// them at the same offsets; the copy's generation then names them (a
// reject's file:line) and follows the copy's renames (x.jsonl.2.gz).
func (db *DB) MoveLines(ctx context.Context, from, to, upto int64, file string) (moved bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: hand the lines of generation %d to %s (generation %d): %w", from, file, to, err)
		}
	}()
	w, err := db.writer()
	if err != nil {
		return false, err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	// The copy's generation must start where from's lines end: a line it
	// stored before upto is another file's, or the same line twice.
	var own int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM events WHERE generation = ?1 AND start_offset < ?2)
		+ (SELECT count(*) FROM rejects WHERE generation = ?1 AND start_offset < ?2)`, to, upto).Scan(&own); err != nil {
		return false, err
	}
	var current int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM generations WHERE id = ? AND ended = 0`, to).Scan(&current); err != nil {
		return false, err
	}
	if own > 0 || current != 1 || from == to {
		return false, nil
	}
	for _, table := range []string{"events", "rejects"} {
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET generation = ?, file = ? WHERE generation = ? AND start_offset < ?`,
			to, file, from, upto); err != nil {
			return false, fmt.Errorf("move %s: %w", table, err)
		}
	}
	now := db.now().UnixNano()
	if _, err := tx.ExecContext(ctx, `UPDATE generations SET ended = 1, gone = 1, updated_at = ? WHERE id = ?`, now, from); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	return true, nil
}
