package index

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/watcher"
)

// ExcerptSize bounds a reject's excerpt, in bytes.
const ExcerptSize = watcher.ExcerptSize

// Reject is a line that was not indexed, with why.
type Reject struct {
	Generation int64     `json:"generation"`
	File       string    `json:"file"`   // the file's name now (rotated: x.jsonl.1), as last seen
	Line       int64     `json:"line"`   // 1-based line number in the generation
	Offset     int64     `json:"offset"` // offset of the line's first byte
	End        int64     `json:"end"`    // offset just past its newline
	Reason     string    `json:"reason"`
	Kind       string    `json:"kind"`    // a logformat Kind constant, e.g. "invalid_json", "too_large"
	Excerpt    string    `json:"excerpt"` // the line's start, at most ExcerptSize bytes of valid UTF-8
	CreatedAt  time.Time `json:"created_at"`
}

// rejectFileSQL is a reject's file as it is called now, by its
// generation: a line of x.jsonl that logrotate renamed is in x.jsonl.1
// (then x.jsonl.1.gz).
const rejectFileSQL = `coalesce((SELECT path FROM generations WHERE id = rejects.generation), rejects.file)`

// Rejects returns the latest limit rejects (all when limit <= 0) in the
// order they were found, oldest first, like tail.
func (db *DB) Rejects(ctx context.Context, limit int) ([]Reject, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := db.r.QueryContext(ctx, `SELECT generation, `+rejectFileSQL+`, line, start_offset, end_offset, reason, kind, excerpt, created_at
		FROM (SELECT * FROM rejects ORDER BY id DESC LIMIT ?) AS rejects ORDER BY id`, limit)
	if err != nil {
		return nil, fmt.Errorf("index: list rejects: %w", err)
	}
	defer rows.Close()
	var out []Reject
	for rows.Next() {
		var r Reject
		var created int64
		if err := rows.Scan(&r.Generation, &r.File, &r.Line, &r.Offset, &r.End, &r.Reason, &r.Kind, &r.Excerpt, &created); err != nil {
			return nil, fmt.Errorf("index: list rejects: %w", err)
		}
		r.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: list rejects: %w", err)
	}
	return out, nil
}

// excerpt returns the start of data as valid UTF-8 of at most ExcerptSize
// bytes: invalid bytes become U+FFFD and no rune is cut in half.
func excerpt(data []byte) string {
	out := make([]byte, 0, min(len(data), ExcerptSize))
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data) // an invalid byte is (RuneError, 1)
		if len(out)+utf8.RuneLen(r) > ExcerptSize {
			break
		}
		out = utf8.AppendRune(out, r)
		data = data[size:]
	}
	return string(out)
}

// RejectsSince returns up to limit rejects recorded after the reject with
// row id after, oldest first, and the row id of the last one returned
// (after itself when none): the daemon follows new rejects with it to log
// them. after < 0 returns none, with the current highest id.
func (db *DB) RejectsSince(ctx context.Context, after int64, limit int) ([]Reject, int64, error) {
	if after < 0 {
		var top int64
		if err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM rejects`).Scan(&top); err != nil {
			return nil, 0, fmt.Errorf("index: list new rejects: %w", err)
		}
		return nil, top, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, generation, `+rejectFileSQL+`, line, start_offset, end_offset, reason, kind, excerpt, created_at
		FROM rejects WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("index: list new rejects: %w", err)
	}
	defer rows.Close()
	var out []Reject
	last := after
	for rows.Next() {
		var r Reject
		var created int64
		if err := rows.Scan(&last, &r.Generation, &r.File, &r.Line, &r.Offset, &r.End, &r.Reason, &r.Kind, &r.Excerpt, &created); err != nil {
			return nil, after, fmt.Errorf("index: list new rejects: %w", err)
		}
		r.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("index: list new rejects: %w", err)
	}
	return out, last, nil
}
