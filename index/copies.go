package index

import (
	"context"
	"fmt"
)

// FileLines says what the index did with the lines read from the file
// of that base name: indexed (events), and same (lines already indexed
// from another file: a copy's, rejects of KindDuplicate).
func (db *DB) FileLines(ctx context.Context, file string) (indexed, same int64, err error) {
	if err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM events WHERE file = ?1),
		(SELECT count(*) FROM rejects WHERE file = ?1 AND kind = ?2)`, file, KindDuplicate).Scan(&indexed, &same); err != nil {
		return 0, 0, fmt.Errorf("index: lines of %s: %w", file, err)
	}
	return indexed, same, nil
}
