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
}

// Timeline returns the exchanges and context resets of the given sessions,
// by timestamp, then by row id.
//
// It reads indexes only, never the events' rows (which hold the texts and
// would make a long chain cost a page read per few events): the sessions'
// events from events_session_ts (session, time, row id), and which of all
// events are not exchanges from events_other, both in one read snapshot.
func (db *DB) Timeline(ctx context.Context, sessions []string) (out []TimelineEntry, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: timeline: %w", err)
		}
	}()
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for start := 0; start < len(sessions); start += inChunk {
		chunk := sessions[start:min(start+inChunk, len(sessions))]
		err := eachRow(ctx, tx, `SELECT id, session_id, ts FROM events WHERE session_id IN (`+placeholders(len(chunk))+`)`,
			func(rows *sql.Rows) error {
				e := TimelineEntry{Type: "exchange"}
				var ts int64
				if err := rows.Scan(&e.Row, &e.SessionID, &ts); err != nil {
					return err
				}
				e.Timestamp = time.Unix(0, ts).UTC()
				out = append(out, e)
				return nil
			}, stringArgs(chunk)...)
		if err != nil {
			return nil, err
		}
	}
	// Events that are not exchanges are few, and the only ones indexed
	// by type (events_other).
	other := map[int64]string{}
	err = eachRow(ctx, tx, otherEventsSQL,
		func(rows *sql.Rows) error {
			var id int64
			var typ string
			if err := rows.Scan(&id, &typ); err != nil {
				return err
			}
			other[id] = typ
			return nil
		})
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, e := range out {
		if typ, ok := other[e.Row]; ok {
			if typ != "context_reset" {
				continue
			}
			e.Type = typ
		}
		kept = append(kept, e)
	}
	out = kept
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

// errStop ends an eachRow walk early.
var errStop = errors.New("stop")

// LatestSession returns the session written to last: the session of the
// most recent event, each event's time being its timestamp, or the
// moment it was read when that is earlier (an event dated ahead of its
// reading, by a clock ahead or local time written with "Z", counts as
// written when it was read); ties by row id. "" when no event has a
// session.
func (db *DB) LatestSession(ctx context.Context) (string, error) {
	return db.latestSession(ctx, "")
}

// LatestSessionWithExchanges is LatestSession among the sessions that
// hold exchanges.
func (db *DB) LatestSessionWithExchanges(ctx context.Context) (string, error) {
	return db.latestSession(ctx, "WHERE exchanges > 0")
}

func (db *DB) latestSession(ctx context.Context, where string) (string, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", fmt.Errorf("index: latest session: %w", err)
	}
	defer tx.Rollback()
	// Sessions newest first by their latest timestamp: an event's time
	// is at most its timestamp, so once a session's latest timestamp is
	// below the best time found, no later session can beat it. Within a
	// session, its events newest first (events_session_ts), likewise.
	var best struct {
		session string
		t, row  int64
		found   bool
	}
	err = eachRow(ctx, tx, `SELECT id, last_ts FROM sessions `+where+` ORDER BY last_ts DESC`, func(rows *sql.Rows) error {
		var id string
		var last int64
		if err := rows.Scan(&id, &last); err != nil {
			return err
		}
		if best.found && last < best.t {
			return errStop
		}
		err := eachRow(ctx, tx, `SELECT ts, ingested_at, id FROM events INDEXED BY events_session_ts
			WHERE session_id = ? ORDER BY ts DESC, id DESC`, func(ev *sql.Rows) error {
			var ts, read, row int64
			if err := ev.Scan(&ts, &read, &row); err != nil {
				return err
			}
			if best.found && ts < best.t {
				return errStop
			}
			t := min(ts, read)
			if !best.found || t > best.t || t == best.t && row > best.row {
				best.session, best.t, best.row, best.found = id, t, row, true
			}
			return nil
		}, id)
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	})
	if err != nil && !errors.Is(err, errStop) {
		return "", fmt.Errorf("index: latest session: %w", err)
	}
	return best.session, nil
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

// ChangeMark says how far the index's events have changed: Seq is the
// highest event row id ever given (CounterEventSeq: it grows with every
// commit that stores an event), Epoch counts the transactions that deleted
// events or vectors (forget, pruning). Events are never updated after
// they are stored (redaction of old events runs when the writer opens,
// before anything reads), and session links are only made by storing a
// session_resume event and only removed by forgetting a session; so
// between two equal marks no event, session or link changed, and between
// two marks of one epoch the only changes are the events with row ids in
// (old Seq, new Seq]. What resume keeps between packs (package resume,
// cache.go) is checked against this mark.
type ChangeMark struct {
	Seq, Epoch int64
}

// ChangeMark returns the index's current mark.
func (db *DB) ChangeMark(ctx context.Context) (ChangeMark, error) {
	var m ChangeMark
	err := db.r.QueryRowContext(ctx, `SELECT
		coalesce((SELECT value FROM counters WHERE name = ?), 0),
		coalesce((SELECT value FROM counters WHERE name = ?), 0)`, CounterEventSeq, counterPendingEpoch).Scan(&m.Seq, &m.Epoch)
	if err != nil {
		return ChangeMark{}, fmt.Errorf("index: change mark: %w", err)
	}
	return m, nil
}

// EventChanges is what the events with row ids in a range touch.
type EventChanges struct {
	// Sessions are the sessions of those events (each once).
	Sessions []string
	// Links is set when one of them is a session_resume event (which may
	// have made a session link).
	Links bool
	// Events counts them.
	Events int
}

// ChangesBetween returns what the events with row ids in (after, upto]
// touch (see ChangeMark).
func (db *DB) ChangesBetween(ctx context.Context, after, upto int64) (EventChanges, error) {
	var ch EventChanges
	rows, err := db.r.QueryContext(ctx, `SELECT type, coalesce(session_id, '') FROM events WHERE id > ? AND id <= ?`, after, upto)
	if err != nil {
		return ch, fmt.Errorf("index: changes after row %d: %w", after, err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var typ, session string
		if err := rows.Scan(&typ, &session); err != nil {
			return ch, fmt.Errorf("index: changes after row %d: %w", after, err)
		}
		ch.Events++
		if typ == "session_resume" {
			ch.Links = true
		}
		if session != "" && !seen[session] {
			seen[session] = true
			ch.Sessions = append(ch.Sessions, session)
		}
	}
	if err := rows.Err(); err != nil {
		return ch, fmt.Errorf("index: changes after row %d: %w", after, err)
	}
	return ch, nil
}
