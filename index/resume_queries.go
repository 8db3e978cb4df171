package index

// Read queries for resume context and the session commands (continuity
// resume, sessions, export). The policy built on them lives in package
// resume; these only read.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SessionLink is one session_resume link: New continues Previous.
type SessionLink struct {
	Previous  string
	New       string
	Event     int64     // row id of the session_resume event that made the link
	Timestamp time.Time // that event's time
}

// LinksInto returns the links whose new session is session (the sessions
// it resumes), newest first: by timestamp, then by row id, descending.
func (db *DB) LinksInto(ctx context.Context, session string) ([]SessionLink, error) {
	return db.queryLinks(ctx, "links into "+session,
		`SELECT previous, new, event, ts FROM session_links WHERE new = ? ORDER BY ts DESC, event DESC`, session)
}

// AllLinks returns every session link, oldest first.
func (db *DB) AllLinks(ctx context.Context) ([]SessionLink, error) {
	return db.queryLinks(ctx, "session links",
		`SELECT previous, new, event, ts FROM session_links ORDER BY ts, event`)
}

func (db *DB) queryLinks(ctx context.Context, what, query string, args ...any) ([]SessionLink, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	defer rows.Close()
	var out []SessionLink
	for rows.Next() {
		var l SessionLink
		var ts int64
		if err := rows.Scan(&l.Previous, &l.New, &l.Event, &ts); err != nil {
			return nil, fmt.Errorf("index: %s: %w", what, err)
		}
		l.Timestamp = time.Unix(0, ts).UTC()
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	return out, nil
}

// TimelineEntry is an exchange or a context_reset without its texts: what
// resume needs to lay out a chain before reading any text.
type TimelineEntry struct {
	Row       int64 // events.id
	SessionID string
	Type      string // "exchange" or "context_reset"
	Timestamp time.Time
	Bytes     int64 // length of user plus ai, in bytes (0 for a reset)
}

// resumeInChunk is how many session ids go into one IN (...) list, well below
// SQLite's limit on bound parameters.
const resumeInChunk = 500

// Timeline returns the exchanges and context resets of the given sessions,
// by timestamp, then by row id.
func (db *DB) Timeline(ctx context.Context, sessions []string) ([]TimelineEntry, error) {
	var out []TimelineEntry
	for start := 0; start < len(sessions); start += resumeInChunk {
		chunk := sessions[start:min(start+resumeInChunk, len(sessions))]
		q := `SELECT id, session_id, type, ts, coalesce(length(CAST(user AS BLOB)), 0) + coalesce(length(CAST(ai AS BLOB)), 0)
			FROM events WHERE session_id IN (` + resumePlaceholders(len(chunk)) + `) AND type IN ('exchange', 'context_reset')`
		rows, err := db.r.QueryContext(ctx, q, resumeArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("index: timeline: %w", err)
		}
		for rows.Next() {
			var e TimelineEntry
			var ts int64
			if err := rows.Scan(&e.Row, &e.SessionID, &e.Type, &ts, &e.Bytes); err != nil {
				rows.Close()
				return nil, fmt.Errorf("index: timeline: %w", err)
			}
			e.Timestamp = time.Unix(0, ts).UTC()
			out = append(out, e)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("index: timeline: %w", err)
		}
	}
	sortTimeline(out)
	return out, nil
}

func sortTimeline(es []TimelineEntry) {
	// Sessions may have been read in several chunks: one global order.
	slices.SortFunc(es, func(a, b TimelineEntry) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	})
}

// EventsByRowIDs returns the events with these row ids, in the order of
// rows; ids that do not exist are left out.
func (db *DB) EventsByRowIDs(ctx context.Context, rows []int64) ([]Event, error) {
	byRow := make(map[int64]Event, len(rows))
	for start := 0; start < len(rows); start += resumeInChunk {
		chunk := rows[start:min(start+resumeInChunk, len(rows))]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r
		}
		evs, err := db.queryEvents(ctx, "events by row", `SELECT `+eventColumns+` FROM events WHERE id IN (`+resumePlaceholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			byRow[e.ID] = e
		}
	}
	out := make([]Event, 0, len(byRow))
	for _, r := range rows {
		if e, ok := byRow[r]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// LatestSession returns the session of the most recent event (by
// timestamp, then row id) that has a session, "" when there is none.
func (db *DB) LatestSession(ctx context.Context) (string, error) {
	var s string
	err := db.r.QueryRowContext(ctx, `SELECT session_id FROM events WHERE session_id IS NOT NULL
		ORDER BY ts DESC, id DESC LIMIT 1`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("index: latest session: %w", err)
	}
	return s, nil
}

// SessionExists reports whether id is a known session: it has events, or a
// session_resume link names it.
func (db *DB) SessionExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?)
		OR EXISTS (SELECT 1 FROM session_links WHERE previous = ?)
		OR EXISTS (SELECT 1 FROM session_links WHERE new = ?)`, id, id, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("index: session %s: %w", id, err)
	}
	return n != 0, nil
}

// SessionSummary is one row of the sessions table.
type SessionSummary struct {
	ID        string
	First     time.Time
	Last      time.Time
	Exchanges int64
	Resets    int64
	Events    int64
}

// Sessions returns every session that has events, by first timestamp,
// then id.
func (db *DB) Sessions(ctx context.Context) ([]SessionSummary, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, first_ts, last_ts, exchanges, resets, events
		FROM sessions ORDER BY first_ts, id`)
	if err != nil {
		return nil, fmt.Errorf("index: sessions: %w", err)
	}
	defer rows.Close()
	var out []SessionSummary
	for rows.Next() {
		var s SessionSummary
		var first, last int64
		if err := rows.Scan(&s.ID, &first, &last, &s.Exchanges, &s.Resets, &s.Events); err != nil {
			return nil, fmt.Errorf("index: sessions: %w", err)
		}
		s.First, s.Last = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: sessions: %w", err)
	}
	return out, nil
}

func resumePlaceholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func resumeArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
