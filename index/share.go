package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/praxis-os/continuity/watcher"
)

// Team memory (package share) keeps the events it pulls from teammates in
// generations of their own, one per teammate's index (an origin), whose
// path starts with SharedPrefix: a name with a slash, which no file of the
// watched folder can have, so the watcher never lists them (Generations)
// and status lists only the logs. Their offset is the origin's last
// pulled row, committed with the events (Commit), so that each pulled
// event is stored exactly once.

// SharedPrefix starts the path of a generation holding events pulled from
// a teammate.
const SharedPrefix = "~share/"

// IsShared reports whether a generation's path (an event's file) holds
// events pulled from a teammate.
func IsShared(path string) bool { return strings.HasPrefix(path, SharedPrefix) }

// SharedGeneration returns the generation of path (a SharedPrefix path),
// creating it when missing.
func (db *DB) SharedGeneration(ctx context.Context, path string) (watcher.Generation, error) {
	if !IsShared(path) {
		return watcher.Generation{}, fmt.Errorf("index: %q is not a shared generation's path", path)
	}
	w, err := db.writer()
	if err != nil {
		return watcher.Generation{}, err
	}
	g := watcher.Generation{Path: path}
	err = w.QueryRowContext(ctx, `SELECT id, "offset", line FROM generations WHERE path = ? AND ended = 0 ORDER BY id DESC LIMIT 1`, path).
		Scan(&g.ID, &g.Offset, &g.Line)
	if errors.Is(err, sql.ErrNoRows) {
		g.ID, err = db.CreateGeneration(ctx, g, 0)
	}
	if err != nil {
		return g, fmt.Errorf("index: shared generation %s: %w", path, err)
	}
	return g, nil
}

// Instance is the index's own random id, made when it was created: a
// rebuilt index has another.
func (db *DB) Instance(ctx context.Context) (string, error) {
	var s string
	if err := db.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'instance'`).Scan(&s); err != nil {
		return "", fmt.Errorf("index: instance: %w", err)
	}
	return s, nil
}

// Meta returns the value stored under key ("" when none).
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var s string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("index: meta %s: %w", key, err)
	}
	return s, nil
}

// SetMeta stores value under key.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	w, err := db.writer()
	if err != nil {
		return err
	}
	if _, err := w.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value); err != nil {
		return fmt.Errorf("index: set meta %s: %w", key, err)
	}
	return nil
}

// EventsAfter returns up to limit events with a row id above row, by row
// id, with the path of their generation as File.
func (db *DB) EventsAfter(ctx context.Context, row int64, limit int) ([]Event, error) {
	return db.queryEvents(ctx, "events after a row",
		`SELECT `+eventColumns+` FROM events WHERE id > ? ORDER BY id LIMIT ?`, row, limit)
}

// LocalBacklog counts the events above row not pulled from teammates, and
// returns the time the oldest of them was ingested (unix nanoseconds; 0
// when none).
func (db *DB) LocalBacklog(ctx context.Context, row int64) (n int64, oldest int64, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(min(ingested_at), 0) FROM events
		WHERE id > ? AND `+eventFileSQL+` NOT LIKE '~share/%'`, row).Scan(&n, &oldest)
	if err != nil {
		return 0, 0, fmt.Errorf("index: backlog: %w", err)
	}
	return n, oldest, nil
}

// SessionShared reports whether the session has events pulled from a
// teammate, and whether it has any of this machine's own.
func (db *DB) SessionShared(ctx context.Context, session string) (shared, own bool, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM events WHERE session_id = ?1 AND `+eventFileSQL+` LIKE '~share/%'),
		EXISTS (SELECT 1 FROM events WHERE session_id = ?1 AND `+eventFileSQL+` NOT LIKE '~share/%')`, session).Scan(&shared, &own)
	if err != nil {
		return false, false, fmt.Errorf("index: session %s: %w", session, err)
	}
	return shared, own, nil
}

// DeleteEventsByID deletes the events with these ids (as an edit of a log
// deletes its changed lines: their full-text entries, vectors and links
// too) and returns their row ids, for the views (follow.Removal.Rows).
func (db *DB) DeleteEventsByID(ctx context.Context, ids []string) ([]int64, error) {
	w, err := db.writer()
	if err != nil {
		return nil, err
	}
	db.ftDeleting.Add(1)
	defer db.ftDeleting.Add(1)
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var rows []int64
	for start := 0; start < len(ids); start += inChunk {
		chunk := ids[start:min(start+inChunk, len(ids))]
		if err := eachRow(ctx, tx, `SELECT id FROM events WHERE event_id IN (`+placeholders(len(chunk))+`)`, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			rows = append(rows, id)
			return err
		}, stringArgs(chunk)...); err != nil {
			return nil, fmt.Errorf("index: delete events by id: %w", err)
		}
	}
	if err := deleteEvents(ctx, tx, rows); err != nil {
		return nil, fmt.Errorf("index: delete events by id: %w", err)
	}
	return rows, tx.Commit()
}

// Teammate returns the "role@machine" of a SharedPrefix path
// ("~share/alice@lap-a/<origin>" gives "alice@lap-a"), or "" for a path
// of the watched folder.
func Teammate(path string) string {
	rest, ok := strings.CutPrefix(path, SharedPrefix)
	if !ok {
		return ""
	}
	who, _, _ := strings.Cut(rest, "/")
	return who
}
