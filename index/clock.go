package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// AheadTolerance is how much later than the moment it was read an event
// may be dated before it counts as dated ahead (the time between writing
// and reading a line, and clocks a little apart).
const AheadTolerance = 2 * time.Minute

// Ahead is what EventsAhead finds: the events dated after the moment they
// were read (a producer's clock ahead, or local time written with "Z":
// such events sort after everything written since).
type Ahead struct {
	Events int64
	// Latest is the latest time of those events, Most the most any of
	// them is ahead of its reading.
	Latest time.Time
	Most   time.Duration
	// Sessions are the sessions holding them, the one with the latest
	// first (at most three), and how many each holds.
	Sessions []SessionCount
}

// SessionCount is a session and a number of its events.
type SessionCount struct {
	Session string
	Events  int64
}

// EventsAhead finds the events dated more than AheadTolerance after the
// moment they were read. It reads every event's times (for doctor).
func (db *DB) EventsAhead(ctx context.Context) (Ahead, error) {
	var a Ahead
	var top, most int64
	tol := int64(AheadTolerance)
	if err := db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(max(ts), 0), coalesce(max(ts - ingested_at), 0)
		FROM events WHERE ts > ingested_at + ?`, tol).Scan(&a.Events, &top, &most); err != nil {
		return Ahead{}, fmt.Errorf("index: count events dated ahead: %w", err)
	}
	if a.Events == 0 {
		return a, nil
	}
	a.Latest, a.Most = time.Unix(0, top).UTC(), time.Duration(most)
	err := eachRow(ctx, db.r, `SELECT coalesce(session_id, ''), count(*) FROM events WHERE ts > ingested_at + ?
		GROUP BY session_id ORDER BY max(ts) DESC LIMIT 3`, func(rows *sql.Rows) error {
		var s SessionCount
		err := rows.Scan(&s.Session, &s.Events)
		a.Sessions = append(a.Sessions, s)
		return err
	}, tol)
	if err != nil {
		return Ahead{}, fmt.Errorf("index: sessions dated ahead: %w", err)
	}
	return a, nil
}
