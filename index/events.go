package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Event is one stored event.
type Event struct {
	Row               int64           `json:"-"`        // row id (events.id), the order of ingestion
	ID                int64           `json:"-"`        // the same row id, under its first name
	EventID           string          `json:"event_id"` // producer id, else a generated UUID
	ProducerID        string          `json:"producer_id,omitempty"`
	Generation        int64           `json:"generation"`
	Start             int64           `json:"offset"`
	End               int64           `json:"end"`
	Line              int64           `json:"line"`
	File              string          `json:"file"` // its file's name now (rotated: x.jsonl.1), as last seen
	V                 int             `json:"v"`
	Type              string          `json:"type"`
	SessionID         string          `json:"session_id,omitempty"`
	SessionFromFile   bool            `json:"session_from_file,omitempty"`
	Timestamp         time.Time       `json:"timestamp"`
	TimestampInferred bool            `json:"timestamp_inferred,omitempty"`
	User              string          `json:"user,omitempty"`
	AI                string          `json:"ai,omitempty"`
	Reason            string          `json:"reason,omitempty"`
	PreviousSession   string          `json:"previous_session,omitempty"`
	NewSession        string          `json:"new_session,omitempty"`
	Files             []string        `json:"files,omitempty"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	UnknownFields     []string        `json:"unknown_fields,omitempty"`
	Raw               []byte          `json:"-"`
	IngestedAt        time.Time       `json:"ingested_at"`
}

// eventFileSQL is an event's file as it is called now, by its generation
// (a rotated log: x.jsonl.1), else as it was read.
const eventFileSQL = `coalesce((SELECT path FROM generations WHERE id = events.generation), events.file)`

const eventColumns = `id, event_id, coalesce(producer_id, ''), generation, start_offset, end_offset, line, ` + eventFileSQL + `,
	v, type, coalesce(session_id, ''), session_from_file, ts, ts_inferred, coalesce(user, ''), coalesce(ai, ''),
	coalesce(reason, ''), coalesce(previous_session, ''), coalesce(new_session, ''),
	files, metadata, unknown_fields, raw, ingested_at`

func scanEvent(rows *sql.Rows) (Event, error) {
	var e Event
	var ts, ingested int64
	var files, metadata, unknown sql.NullString
	if err := rows.Scan(&e.ID, &e.EventID, &e.ProducerID, &e.Generation, &e.Start, &e.End, &e.Line, &e.File,
		&e.V, &e.Type, &e.SessionID, &e.SessionFromFile, &ts, &e.TimestampInferred, &e.User, &e.AI,
		&e.Reason, &e.PreviousSession, &e.NewSession, &files, &metadata, &unknown, &e.Raw, &ingested); err != nil {
		return Event{}, err
	}
	if len(e.Raw) > 0 {
		line, err := unpackLine(e.Raw, sql.NullString{String: e.User, Valid: true}, sql.NullString{String: e.AI, Valid: true})
		if err != nil {
			return Event{}, fmt.Errorf("event %s: %w", e.EventID, err)
		}
		e.Raw = line
	}
	e.Row = e.ID
	e.Timestamp = time.Unix(0, ts).UTC()
	e.IngestedAt = time.Unix(0, ingested).UTC()
	if files.Valid {
		if err := json.Unmarshal([]byte(files.String), &e.Files); err != nil {
			return Event{}, fmt.Errorf("event %s: files: %w", e.EventID, err)
		}
	}
	if metadata.Valid {
		e.Metadata = json.RawMessage(metadata.String)
	}
	if unknown.Valid {
		if err := json.Unmarshal([]byte(unknown.String), &e.UnknownFields); err != nil {
			return Event{}, fmt.Errorf("event %s: unknown_fields: %w", e.EventID, err)
		}
	}
	return e, nil
}

func (db *DB) queryEvents(ctx context.Context, what, query string, args ...any) ([]Event, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("index: %s: %w", what, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	return out, nil
}

// EventsBySession returns the session's events by timestamp, then by
// ingestion order.
func (db *DB) EventsBySession(ctx context.Context, session string) ([]Event, error) {
	return db.queryEvents(ctx, "events of session "+session,
		`SELECT `+eventColumns+` FROM events WHERE session_id = ? ORDER BY ts, id`, session)
}

// EventsByRows returns the events with these row ids by row id; ids that
// do not exist (deleted, or never stored) are absent from the map.
func (db *DB) EventsByRows(ctx context.Context, rows []int64) (map[int64]Event, error) {
	out := make(map[int64]Event, len(rows))
	for start := 0; start < len(rows); start += inChunk {
		chunk := rows[start:min(start+inChunk, len(rows))]
		evs, err := db.queryEvents(ctx, "events by row",
			`SELECT `+eventColumns+` FROM events WHERE id IN (`+placeholders(len(chunk))+`)`, int64Args(chunk)...)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			out[e.Row] = e
		}
	}
	return out, nil
}

// ExchangesByRows is EventsByRows for showing search results: only the
// fields a result shows (Row, ID, EventID, File, Line, Type, SessionID,
// Timestamp, User, AI, Files) are read. The raw line, the metadata and
// the unknown fields are left empty: not reading the raw line (as
// long as the texts, often in overflow pages) halves the bytes a search
// reads per result.
func (db *DB) ExchangesByRows(ctx context.Context, rows []int64) (map[int64]Event, error) {
	out := make(map[int64]Event, len(rows))
	for start := 0; start < len(rows); start += inChunk {
		chunk := rows[start:min(start+inChunk, len(rows))]
		if err := db.exchangesByRows(ctx, chunk, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *DB) exchangesByRows(ctx context.Context, chunk []int64, out map[int64]Event) error {
	rows, err := db.r.QueryContext(ctx, `SELECT id, event_id, `+eventFileSQL+`, line, type, coalesce(session_id, ''), ts, coalesce(user, ''), coalesce(ai, ''), coalesce(files, '')
		FROM events WHERE id IN (`+placeholders(len(chunk))+`)`, int64Args(chunk)...)
	if err != nil {
		return fmt.Errorf("index: exchanges by row: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e Event
		var ts int64
		var files string
		if err := rows.Scan(&e.ID, &e.EventID, &e.File, &e.Line, &e.Type, &e.SessionID, &ts, &e.User, &e.AI, &files); err != nil {
			return fmt.Errorf("index: exchanges by row: %w", err)
		}
		e.Files = fileList(files)
		e.Row = e.ID
		e.Timestamp = time.Unix(0, ts).UTC()
		out[e.Row] = e
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: exchanges by row: %w", err)
	}
	return nil
}

// inChunk is how many values go into one IN (...) list, well below
// SQLite's limit on bound parameters (32766).
const inChunk = 500

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

func int64Args(vs []int64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

func stringArgs(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// RawEvent is where a stored event came from, with its exact bytes.
type RawEvent struct {
	Generation int64
	Start, End int64
	Line       int64
	File       string
	EventID    string
	Raw        []byte // the line without its newline
}

// RawLines returns every stored event's origin and bytes, by generation
// and offset. It is meant for tests that check each line is stored once,
// byte for byte.
func (db *DB) RawLines(ctx context.Context) ([]RawEvent, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT generation, start_offset, end_offset, line, file, event_id, raw, user, ai
		FROM events ORDER BY generation, start_offset`)
	if err != nil {
		return nil, fmt.Errorf("index: raw lines: %w", err)
	}
	defer rows.Close()
	var out []RawEvent
	for rows.Next() {
		var r RawEvent
		var user, ai sql.NullString
		if err := rows.Scan(&r.Generation, &r.Start, &r.End, &r.Line, &r.File, &r.EventID, &r.Raw, &user, &ai); err != nil {
			return nil, fmt.Errorf("index: raw lines: %w", err)
		}
		var err error
		if r.Raw, err = unpackLine(r.Raw, user, ai); err != nil {
			return nil, fmt.Errorf("index: raw lines: event %s: %w", r.EventID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: raw lines: %w", err)
	}
	return out, nil
}
