package index

import (
	"context"
	"fmt"
	"strings"
)

// Adjacency is the exchange just before and just after one in its session
// (row ids, 0 when none): its neighbours as search reads them for a
// result's context (search/neighbours.go).
type Adjacency struct {
	Prev, Next int64
}

// adjacentChunk bounds the rows of one statement of Adjacent.
const adjacentChunk = 400

// Adjacent returns, for each of rows that is an exchange of a session, the
// exchanges just before and after it in the session's order (timestamp,
// then order of indexing: SessionNeighbours with one on each side), in one
// statement per adjacentChunk rows. Rows that are no exchange (forgotten
// since) or have no session are left out. The neighbours are read from the
// events as they are now: an edit, a forget or a redaction of a neighbour
// shows at once.
func (db *DB) Adjacent(ctx context.Context, rows []int64) (map[int64]Adjacency, error) {
	out := make(map[int64]Adjacency, len(rows))
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), adjacentChunk)]
		rows = rows[len(chunk):]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r
		}
		// ts bounded on its own (p.ts <= e.ts) so that the index on
		// (session_id, ts) seeks to the exchange instead of reading the
		// whole session.
		q := `SELECT e.id,
			coalesce((SELECT p.id FROM events p INDEXED BY events_session_ts
				WHERE p.session_id = e.session_id AND p.ts <= e.ts AND p.type = 'exchange' AND (p.ts < e.ts OR p.id < e.id)
				ORDER BY p.ts DESC, p.id DESC LIMIT 1), 0),
			coalesce((SELECT n.id FROM events n INDEXED BY events_session_ts
				WHERE n.session_id = e.session_id AND n.ts >= e.ts AND n.type = 'exchange' AND (n.ts > e.ts OR n.id > e.id)
				ORDER BY n.ts, n.id LIMIT 1), 0)
			FROM events e WHERE e.id IN (?` + strings.Repeat(",?", len(chunk)-1) + `)
			AND e.type = 'exchange' AND coalesce(e.session_id, '') != ''`
		rs, err := db.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("index: adjacent exchanges: %w", err)
		}
		for rs.Next() {
			var row int64
			var a Adjacency
			if err := rs.Scan(&row, &a.Prev, &a.Next); err != nil {
				rs.Close()
				return nil, fmt.Errorf("index: adjacent exchanges: %w", err)
			}
			out[row] = a
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("index: adjacent exchanges: %w", err)
		}
	}
	return out, nil
}
