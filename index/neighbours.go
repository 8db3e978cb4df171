package index

import (
	"context"
	"database/sql"
	"fmt"
)

// PreviousUserTexts returns, for each of rows that is an exchange with an
// earlier exchange in its session, the user text of the exchange just
// before it (by timestamp, then row). It is what a text recipe that
// expands an exchange with its context embeds (vectors.TextUserPrev).
// Only the previous exchange: it is known when an exchange is embedded,
// the next one may not have been written yet.
func (db *DB) PreviousUserTexts(ctx context.Context, rows []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(rows))
	for start := 0; start < len(rows); start += inChunk {
		chunk := rows[start:min(start+inChunk, len(rows))]
		rs, err := db.r.QueryContext(ctx, `SELECT e.id, (SELECT coalesce(p.user, '') FROM events p INDEXED BY events_session_ts
				WHERE p.session_id = e.session_id AND p.type = 'exchange'
				AND (p.ts < e.ts OR (p.ts = e.ts AND p.id < e.id))
				ORDER BY p.ts DESC, p.id DESC LIMIT 1)
			FROM events e WHERE e.id IN (`+placeholders(len(chunk))+`) AND e.type = 'exchange' AND e.session_id IS NOT NULL`, int64Args(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("index: previous exchanges: %w", err)
		}
		for rs.Next() {
			var row int64
			var user sql.NullString
			if err := rs.Scan(&row, &user); err != nil {
				rs.Close()
				return nil, fmt.Errorf("index: previous exchanges: %w", err)
			}
			if user.Valid {
				out[row] = user.String
			}
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("index: previous exchanges: %w", err)
		}
	}
	return out, nil
}
