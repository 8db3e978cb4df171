package index

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/watcher"
)

// MatchLines implements watcher.LineMatcher: it compares lines read from a
// file with what was stored from the same offsets by generation gen or by
// an earlier generation of the same file name (a log restored once already
// continues a generation that stored only what followed the restore). An
// event matches when it ends at the same offset and its stored (redacted)
// line is what the line gives once parsed and redacted as a commit does; a
// reject when it ends at the same offset with the same excerpt. A reject
// of a forgotten session keeps no text: it is neither counted nor held
// against the lines.
func (db *DB) MatchLines(ctx context.Context, gen int64, lines []watcher.Line) (same int, differ bool, err error) {
	if len(lines) == 0 {
		return 0, false, nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: match lines with generation %d: %w", gen, err)
		}
	}()
	var path string
	if err := db.r.QueryRowContext(ctx, `SELECT path FROM generations WHERE id = ?`, gen).Scan(&path); err != nil {
		return 0, false, err
	}
	type stored struct {
		end       int64
		raw       []byte
		isEvent   bool
		forgotten bool
	}
	at := map[int64][]stored{}
	lo, hi := lines[0].Start, lines[len(lines)-1].Start
	const gens = `(SELECT id FROM generations WHERE id = ? OR path = ?)`
	rows, err := db.r.QueryContext(ctx, `SELECT start_offset, end_offset, raw, user, ai FROM events
		WHERE generation IN `+gens+` AND start_offset BETWEEN ? AND ?`, gen, path, lo, hi)
	if err != nil {
		return 0, false, err
	}
	for rows.Next() {
		var start int64
		s := stored{isEvent: true}
		var user, ai sql.NullString
		if err := rows.Scan(&start, &s.end, &s.raw, &user, &ai); err != nil {
			rows.Close()
			return 0, false, err
		}
		if s.raw, err = unpackLine(s.raw, user, ai); err != nil {
			rows.Close()
			return 0, false, err
		}
		at[start] = append(at[start], s)
	}
	if err := rows.Close(); err != nil {
		return 0, false, err
	}
	rows, err = db.r.QueryContext(ctx, `SELECT start_offset, end_offset, excerpt, kind FROM rejects
		WHERE generation IN `+gens+` AND start_offset BETWEEN ? AND ?`, gen, path, lo, hi)
	if err != nil {
		return 0, false, err
	}
	for rows.Next() {
		var start int64
		var s stored
		var ex, kind string
		if err := rows.Scan(&start, &s.end, &ex, &kind); err != nil {
			rows.Close()
			return 0, false, err
		}
		s.raw, s.forgotten = []byte(ex), kind == KindForgotten
		at[start] = append(at[start], s)
	}
	if err := rows.Close(); err != nil {
		return 0, false, err
	}
	now := time.Now()
	for _, l := range lines {
		ss := at[l.Start]
		if len(ss) == 0 {
			continue
		}
		// The line as a commit would store it, computed once.
		var asEvent []byte
		var parsed, parseOK bool
		matched, unknown := false, false
		for _, s := range ss {
			switch {
			case s.end != l.End:
			case s.forgotten:
				unknown = true
			case s.isEvent:
				if l.Oversize {
					break
				}
				if !parsed {
					parsed = true
					if ev, err := logformat.ParseWithLimits(l.Data, path, now, logformat.DefaultLimits.WithLineBytes(len(l.Data))); err == nil {
						asEvent, _ = db.redactEvent(&ev, l.Data)
						parseOK = true
					}
				}
				matched = matched || (parseOK && bytes.Equal(asEvent, s.raw))
			default:
				matched = matched || excerpt(db.redactBytes(l.Data)) == string(s.raw)
			}
		}
		switch {
		case matched:
			same++
		case !unknown:
			return same, true, nil
		}
	}
	return same, false, nil
}

var _ watcher.LineMatcher = (*DB)(nil)
