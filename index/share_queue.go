package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// SharedVersion names one version of an event pulled from a teammate:
// its id, its origin (as the end of its generation's path) and the row it
// had there (its end offset in that generation). Other turns it round:
// any version of that id from that origin but the one at Row.
type SharedVersion struct {
	EventID string
	Origin  string
	Row     int64
	Other   bool
}

// DeleteSharedVersions deletes the events pulled from teammates that
// match vs (a version with no Origin or no Row: any event of that id), as
// DeleteEventsByID, and returns their row ids.
func (db *DB) DeleteSharedVersions(ctx context.Context, vs []SharedVersion) ([]int64, error) {
	var ids []string
	for _, v := range vs {
		if v.Origin == "" || v.Row == 0 {
			if !v.Other {
				ids = append(ids, v.EventID)
			}
			continue
		}
		var row, end int64
		var path string
		err := db.r.QueryRowContext(ctx, `SELECT id, end_offset, `+eventFileSQL+` FROM events WHERE event_id = ?`, v.EventID).Scan(&row, &end, &path)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("index: a teammate's removed line: %w", err)
		}
		// Other: any version pulled from a teammate but this one (ids
		// are unique in the team's database: that other row is gone).
		same := strings.HasSuffix(path, "/"+v.Origin) && end == v.Row
		if !IsShared(path) || same == v.Other {
			continue
		}
		ids = append(ids, v.EventID)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return db.DeleteEventsByID(ctx, ids)
}

// HeldIDs reports which of ids this index holds as events.
func (db *DB) HeldIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	held := map[string]bool{}
	for start := 0; start < len(ids); start += inChunk {
		chunk := ids[start:min(start+inChunk, len(ids))]
		rows, err := db.r.QueryContext(ctx, `SELECT event_id FROM events WHERE event_id IN (`+placeholders(len(chunk))+`)`, stringArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("index: held ids: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("index: held ids: %w", err)
			}
			held[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("index: held ids: %w", err)
		}
	}
	return held, nil
}
