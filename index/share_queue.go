package index

import (
	"context"
	"database/sql"
	"fmt"
)

// Team memory's queue of removed lines. Once a workspace shares (the
// publisher called EnableShareQueue), every event of this machine that an
// edit in place deletes is recorded in share_removed in the transaction
// that deletes it, so that a daemon killed before its next shipping step
// loses no removal: the publisher removes the queued events from
// PostgreSQL, then drops them from the queue (DropShareRemoved) only after
// PostgreSQL committed. Removing again what is gone changes nothing, so a
// crash between the two only repeats a no-op.

const shareQueueKey = "share_queue"

// EnableShareQueue makes deletions of this machine's events be queued for
// team memory from now on.
func (db *DB) EnableShareQueue(ctx context.Context) error {
	return db.SetMeta(ctx, shareQueueKey, "1")
}

// queueShareRemovals records the events of rows (this machine's own, not
// pulled from a teammate) in share_removed, when the queue is enabled.
func queueShareRemovals(ctx context.Context, tx *sql.Tx, rows []int64) error {
	return execChunks(ctx, tx, `INSERT OR IGNORE INTO share_removed (id, event_id, session)
		SELECT id, event_id, session_id FROM events WHERE id IN (%s)
		AND `+eventFileSQL+` NOT LIKE '~share/%%'
		AND EXISTS (SELECT 1 FROM meta WHERE key = '`+shareQueueKey+`')`, rows)
}

// SharedRemoval is a queued removed line: the deleted event's row id and
// event id.
type SharedRemoval struct {
	Row     int64
	EventID string
	Session string
}

// ShareRemoved returns up to limit queued removals, oldest first.
func (db *DB) ShareRemoved(ctx context.Context, limit int) ([]SharedRemoval, error) {
	var out []SharedRemoval
	rows, err := db.r.QueryContext(ctx, `SELECT id, event_id, coalesce(session, '') FROM share_removed ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("index: team memory's removed lines: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r SharedRemoval
		if err := rows.Scan(&r.Row, &r.EventID, &r.Session); err != nil {
			return nil, fmt.Errorf("index: team memory's removed lines: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// DropShareRemoved deletes queued removals (by row id) that PostgreSQL
// has recorded.
func (db *DB) DropShareRemoved(ctx context.Context, rows []int64) error {
	w, err := db.writer()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := execChunks(ctx, tx, `DELETE FROM share_removed WHERE id IN (%s)`, rows); err != nil {
		return fmt.Errorf("index: team memory's removed lines: %w", err)
	}
	return tx.Commit()
}
