package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Neighbours are the exchanges next to one in its session: Before, the
// nearest first, and After, the nearest first (row ids).
type Neighbours struct {
	Before, After []int64
}

// SessionNeighbours returns, for each of rows, up to n exchanges of its
// session on each side of it, in the session's order (timestamp, then
// order of indexing, as a session is read). An exchange without a session
// has none; a row that is no exchange any more (forgotten since) is left
// out of the map.
func (db *DB) SessionNeighbours(ctx context.Context, rows []int64, n int) (map[int64]Neighbours, error) {
	out := make(map[int64]Neighbours, len(rows))
	if n <= 0 {
		return out, nil
	}
	const side = `SELECT id FROM events INDEXED BY events_session_ts
		WHERE session_id = ? AND type = 'exchange' AND `
	for _, row := range rows {
		var session string
		var ts int64
		err := db.r.QueryRowContext(ctx, `SELECT coalesce(session_id, ''), ts FROM events WHERE id = ? AND type = 'exchange'`, row).Scan(&session, &ts)
		if errors.Is(err, sql.ErrNoRows) {
			continue // gone since
		}
		if err != nil {
			return nil, fmt.Errorf("index: session neighbours: %w", err)
		}
		var nb Neighbours
		if session != "" {
			if nb.Before, err = db.neighbourIDs(ctx, side+`(ts < ? OR (ts = ? AND id < ?)) ORDER BY ts DESC, id DESC LIMIT ?`, session, ts, ts, row, n); err != nil {
				return nil, err
			}
			if nb.After, err = db.neighbourIDs(ctx, side+`(ts > ? OR (ts = ? AND id > ?)) ORDER BY ts, id LIMIT ?`, session, ts, ts, row, n); err != nil {
				return nil, err
			}
		}
		out[row] = nb
	}
	return out, nil
}

// neighbourIDs runs q, which selects row ids.
func (db *DB) neighbourIDs(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("index: session neighbours: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("index: session neighbours: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: session neighbours: %w", err)
	}
	return out, nil
}
