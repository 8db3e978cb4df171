package index

import (
	"context"
	"fmt"
	"time"
)

// FutureEvents counts the events dated after t (a producer's clock set
// ahead: they sort after everything, so `resume --latest` and time-relative
// search would favour them) and returns the latest such time.
func (db *DB) FutureEvents(ctx context.Context, t time.Time) (n int64, latest time.Time, err error) {
	var top int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(max(ts), 0) FROM events WHERE ts > ?`, t.UnixNano()).
		Scan(&n, &top); err != nil {
		return 0, time.Time{}, fmt.Errorf("index: count future events: %w", err)
	}
	if n > 0 {
		latest = time.Unix(0, top).UTC()
	}
	return n, latest, nil
}
