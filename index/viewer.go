package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// What the viewer (package ui, through engine) reads besides what the
// other commands read: a session's events a page at a time, the files it
// touched, one event by its id, and which agent wrote each session.

// SessionEventsPage returns at most limit events of session, by time then
// row id, skipping the first offset.
func (db *DB) SessionEventsPage(ctx context.Context, session string, offset, limit int) ([]Event, error) {
	return db.queryEvents(ctx, "events of session "+session,
		`SELECT `+eventColumns+` FROM events WHERE session_id = ? ORDER BY ts, id LIMIT ? OFFSET ?`,
		session, limit, offset)
}

// EventByID returns the event whose id (the producer's, else generated)
// is id; ok is false when the index has none.
func (db *DB) EventByID(ctx context.Context, id string) (ev Event, ok bool, err error) {
	evs, err := db.queryEvents(ctx, "event "+id, `SELECT `+eventColumns+` FROM events WHERE event_id = ?`, id)
	if err != nil || len(evs) == 0 {
		return Event{}, false, err
	}
	return evs[0], true, nil
}

// FileCount is a file an event's files named, and how many events named
// it.
type FileCount struct {
	Path   string `json:"path"`
	Events int    `json:"events"`
}

// SessionFiles returns the files the events of session name, most named
// first (then by path), at most limit (all when limit <= 0), and how many
// distinct files there are.
func (db *DB) SessionFiles(ctx context.Context, session string, limit int) ([]FileCount, int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT files FROM events WHERE session_id = ? AND files IS NOT NULL`, session)
	if err != nil {
		return nil, 0, fmt.Errorf("index: files of session %s: %w", session, err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, 0, fmt.Errorf("index: files of session %s: %w", session, err)
		}
		var files []string
		if json.Unmarshal([]byte(raw), &files) != nil {
			continue
		}
		for _, f := range files {
			counts[f]++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("index: files of session %s: %w", session, err)
	}
	out := make([]FileCount, 0, len(counts))
	for f, n := range counts {
		out = append(out, FileCount{Path: f, Events: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Events != out[j].Events {
			return out[i].Events > out[j].Events
		}
		return out[i].Path < out[j].Path
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, len(counts), nil
}

// SessionOrigin says where a session came from: the agent that wrote it
// (the "source" of its first event's metadata, what the importers write,
// else its "agent", a producer's own) and, for a session pulled from a
// teammate (its first event in a SharedPrefix generation), the teammate's
// "role@machine".
type SessionOrigin struct {
	Agent, Teammate string
}

// SessionOrigins returns, by session, its SessionOrigin, read from its
// first event by time; sessions with neither an agent nor a teammate are
// absent.
func (db *DB) SessionOrigins(ctx context.Context) (map[string]SessionOrigin, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT s.id, e.metadata, coalesce(g.path, e.file)
		FROM sessions s
		JOIN events e ON e.id = (SELECT f.id FROM events f WHERE f.session_id = s.id ORDER BY f.ts, f.id LIMIT 1)
		LEFT JOIN generations g ON g.id = e.generation`)
	if err != nil {
		return nil, fmt.Errorf("index: origins of sessions: %w", err)
	}
	defer rows.Close()
	out := map[string]SessionOrigin{}
	for rows.Next() {
		var id, path string
		var meta sql.NullString
		if err := rows.Scan(&id, &meta, &path); err != nil {
			return nil, fmt.Errorf("index: origins of sessions: %w", err)
		}
		if o := (SessionOrigin{Agent: agentOf(meta.String), Teammate: Teammate(path)}); o != (SessionOrigin{}) {
			out[id] = o
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: origins of sessions: %w", err)
	}
	return out, nil
}

// agentOf reads the agent from an event's metadata: "source", else
// "agent", when a string.
func agentOf(meta string) string {
	if meta == "" {
		return ""
	}
	var m struct {
		Source any `json:"source"`
		Agent  any `json:"agent"`
	}
	if json.Unmarshal([]byte(meta), &m) != nil {
		return ""
	}
	for _, v := range []any{m.Source, m.Agent} {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// SessionOpeners returns, by session, the start of what its first
// exchange says (at most maxRunes characters of the user's text, else the
// assistant's): what the session was about, for a list of sessions whose
// ids say nothing (Claude Code's UUIDs, aider's dates). Sessions without
// an exchange are absent. One indexed look-up per session.
func (db *DB) SessionOpeners(ctx context.Context, sessions []string, maxRunes int) (map[string]string, error) {
	out := make(map[string]string, len(sessions))
	if len(sessions) == 0 {
		return out, nil
	}
	stmt, err := db.r.PrepareContext(ctx, `SELECT substr(coalesce(nullif(user, ''), ai, ''), 1, ?) FROM events
		WHERE session_id = ? AND type = 'exchange' ORDER BY ts, id LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("index: first exchanges of sessions: %w", err)
	}
	defer stmt.Close()
	for _, s := range sessions {
		var text string
		err := stmt.QueryRowContext(ctx, maxRunes, s).Scan(&text)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return nil, fmt.Errorf("index: first exchange of session %s: %w", s, err)
		}
		if text != "" {
			out[s] = text
		}
	}
	return out, nil
}
