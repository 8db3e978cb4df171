package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// AgentGone says why no agent can still hold a session's own exchanges in
// its context window, "" when one may (the session's agent may be the one
// asking). An agent is gone when the session
//
//   - was imported from an agent's own transcript (its first exchange's
//     metadata names the native record, as the importers write it): a
//     transcript is read after the fact;
//   - was continued in another session (a session_resume names it as the
//     previous one);
//   - ended before the latest context reset of another session of the
//     workspace (its last event is older than that reset).
func (db *DB) AgentGone(ctx context.Context, session string) (string, error) {
	var meta sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT metadata FROM events INDEXED BY events_session_ts
		WHERE session_id = ? AND type = 'exchange' ORDER BY ts, id LIMIT 1`, session).Scan(&meta)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("index: agent of %s: %w", session, err)
	}
	if src, ok := importedFrom(meta.String); ok {
		return "it was imported from " + src + "'s transcript", nil
	}
	var next string
	err = db.r.QueryRowContext(ctx, `SELECT new FROM session_links WHERE previous = ? ORDER BY ts DESC, event DESC LIMIT 1`, session).Scan(&next)
	switch {
	case err == nil:
		return "it was continued in session " + next, nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("index: links from %s: %w", session, err)
	}
	var other string
	err = db.r.QueryRowContext(ctx, newerResetSQL, session).Scan(&other)
	switch {
	case err == nil:
		return "a context reset of session " + other + " came after its last event", nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("index: resets after %s: %w", session, err)
	}
	return "", nil
}

// newerResetSQL is the session of the latest context reset of another
// session after the last event of session ?1: from the newest reset
// down (events_resets, in the index's order: no sort), stopping at the
// session's last event (TestAgentGonePlan).
const newerResetSQL = `SELECT r.session_id FROM events AS r INDEXED BY events_resets
	WHERE r.type = 'context_reset' AND r.session_id != ?1
	AND r.ts > (SELECT last_ts FROM sessions WHERE id = ?1)
	ORDER BY r.ts DESC, r.id DESC LIMIT 1`

// importedFrom reads an event's metadata: the agent an importer names
// ("source"), when the metadata also names the native record ("native").
func importedFrom(meta string) (string, bool) {
	if meta == "" {
		return "", false
	}
	var m struct {
		Source any `json:"source"`
		Native any `json:"native"`
	}
	if json.Unmarshal([]byte(meta), &m) != nil {
		return "", false
	}
	src, _ := m.Source.(string)
	native, _ := m.Native.(string)
	if native == "" {
		return "", false
	}
	if src == "" {
		src = "an agent"
	}
	return src, true
}
