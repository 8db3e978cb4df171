package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// Status summarises the index for `continuity status`. File sizes and lag
// are for the caller, who can stat the files.
type Status struct {
	Events            int64            `json:"events"` // every stored event, of any type
	Exchanges         int64            `json:"exchanges"`
	Sessions          int64            `json:"sessions"`
	Rejects           int64            `json:"rejects"`
	DuplicatesSkipped int64            `json:"duplicates_skipped"`
	UnknownTypes      int64            `json:"unknown_types"`
	UnknownFields     int64            `json:"unknown_fields"`
	ForgottenSkipped  int64            `json:"forgotten_skipped"` // lines of forgotten sessions not stored again
	Forgotten         int64            `json:"forgotten"`         // sessions deleted by DeleteSession
	Redactions        int64            `json:"redactions"`        // secrets redacted before storage
	EventsByType      map[string]int64 `json:"events_by_type"`
	Vectors           map[string]int64 `json:"vectors"` // stored vectors per embedder identity
	Files             []FileStatus     `json:"files"`
	Skipped           []SkippedFile    `json:"skipped"`
	// Edits are the logs edited in place whose index followed the edit
	// (edit.go), per file, by name.
	Edits []EditStatus `json:"edits"`

	// RejectsForgotten are the rejects of KindForgotten (lines of
	// forgotten sessions), included in Rejects.
	RejectsForgotten int64 `json:"rejects_forgotten"`
	// RejectsReplayed are the rejects of KindDuplicate (identical
	// replays of a stored line) and RejectsReusedID those of
	// KindDuplicateID (an id used again by another line), included in
	// Rejects.
	RejectsReplayed int64 `json:"rejects_replayed"`
	RejectsReusedID int64 `json:"rejects_reused_id"`
	// RejectsCopied are the rejects of a sync tool's conflict copy of a
	// log that its log has too (rejectscopied.go): one bad line synced
	// into both files, included in Rejects.
	RejectsCopied int64 `json:"rejects_in_conflict_copies"`
	// TimestampsNoOffset counts events whose timestamp had no UTC offset
	// (read as local time); AIFromAlias exchanges whose answer was
	// "assistant" (protocol.md, "Producer mistakes").
	TimestampsNoOffset int64 `json:"timestamps_without_offset"`
	AIFromAlias        int64 `json:"ai_from_alias"`
	// TimestampsAhead counts events dated after the moment they were
	// read (CounterTimestampsAhead).
	TimestampsAhead int64 `json:"timestamps_ahead"`
	// BOMsSkipped counts the UTF-8 byte order marks skipped at the start
	// of a file.
	BOMsSkipped int64 `json:"byte_order_marks_skipped"`
	// UnknownFieldNames counts, per unknown field name, the events of a
	// known type carrying it (CounterUnknownFieldPrefix).
	UnknownFieldNames map[string]int64 `json:"unknown_field_names"`
}

// FileStatus is the checkpoint of one live generation.
type FileStatus struct {
	Path       string `json:"path"` // base name, as last seen
	Generation int64  `json:"generation"`
	Offset     int64  `json:"offset"` // committed offset
	Line       int64  `json:"line"`   // complete lines before Offset
	Gone       bool   `json:"gone"`   // no file holds this generation any more
	Dev        uint64 `json:"dev"`    // device and inode of the file, as last seen
	Ino        uint64 `json:"ino"`
}

// EditStatus sums up the edits in place of one log file: how many, and
// the lines they kept, changed, removed and added.
type EditStatus struct {
	File    string    `json:"file"` // its name now (of its generation), else at the edit
	Edits   int64     `json:"edits"`
	Kept    int64     `json:"kept"`
	Changed int64     `json:"changed"`
	Removed int64     `json:"removed"`
	Added   int64     `json:"added"`
	Last    time.Time `json:"last"` // the last edit
}

// SkippedFile is a file of the folder that is not read at all.
type SkippedFile struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Status reads the summary in one consistent snapshot.
func (db *DB) Status(ctx context.Context) (st Status, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: status: %w", err)
		}
	}()
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return Status{}, err
	}
	defer tx.Rollback()

	st.EventsByType = map[string]int64{}
	if err := tx.QueryRowContext(ctx, countEventsSQL).Scan(&st.Events); err != nil {
		return Status{}, err
	}
	st.Exchanges = st.Events
	if err := eachRow(ctx, tx, otherTypesSQL, func(rows *sql.Rows) error {
		var typ string
		var n int64
		if err := rows.Scan(&typ, &n); err != nil {
			return err
		}
		st.EventsByType[typ] = n
		st.Exchanges -= n
		return nil
	}); err != nil {
		return Status{}, err
	}
	if st.Exchanges > 0 {
		st.EventsByType[logformat.TypeExchange] = st.Exchanges
	}

	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM rejects),
		(SELECT count(*) FROM forgotten), (SELECT count(*) FROM rejects WHERE kind = ?),
		(SELECT count(*) FROM rejects WHERE kind = ?), (SELECT count(*) FROM rejects WHERE kind = ?)`,
		KindForgotten, KindDuplicate, KindDuplicateID).
		Scan(&st.Sessions, &st.Rejects, &st.Forgotten, &st.RejectsForgotten, &st.RejectsReplayed, &st.RejectsReusedID); err != nil {
		return Status{}, err
	}
	if st.RejectsCopied, err = rejectsCopied(ctx, tx); err != nil {
		return Status{}, err
	}
	st.Vectors = map[string]int64{}
	if err := eachRow(ctx, tx, `SELECT e.identity, v.n FROM (SELECT embedder, count(*) AS n FROM vectors GROUP BY embedder) v JOIN embedders e ON e.id = v.embedder`, func(rows *sql.Rows) error {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		st.Vectors[id] = n
		return nil
	}); err != nil {
		return Status{}, err
	}
	if err := eachRow(ctx, tx, `SELECT name, value FROM counters`, func(rows *sql.Rows) error {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return err
		}
		switch name {
		case CounterDuplicatesSkipped:
			st.DuplicatesSkipped = n
		case CounterUnknownTypes:
			st.UnknownTypes = n
		case CounterUnknownFields:
			st.UnknownFields = n
		case CounterForgottenSkipped:
			st.ForgottenSkipped = n
		case CounterRedactions:
			st.Redactions = n
		case CounterTimestampsNoOffset:
			st.TimestampsNoOffset = n
		case CounterAIFromAlias:
			st.AIFromAlias = n
		case CounterTimestampsAhead:
			st.TimestampsAhead = n
		case CounterBOMsSkipped:
			st.BOMsSkipped = n
		default:
			if f, ok := strings.CutPrefix(name, CounterUnknownFieldPrefix); ok {
				if st.UnknownFieldNames == nil {
					st.UnknownFieldNames = map[string]int64{}
				}
				st.UnknownFieldNames[f] = n
			}
		}
		return nil
	}); err != nil {
		return Status{}, err
	}
	if err := eachRow(ctx, tx, `SELECT path, id, "offset", line, gone, dev, ino FROM generations WHERE ended = 0 AND instr(path, '/') = 0 ORDER BY path, id`, func(rows *sql.Rows) error {
		var f FileStatus
		var dev, ino int64
		if err := rows.Scan(&f.Path, &f.Generation, &f.Offset, &f.Line, &f.Gone, &dev, &ino); err != nil {
			return err
		}
		f.Dev, f.Ino = uint64(dev), uint64(ino)
		st.Files = append(st.Files, f)
		return nil
	}); err != nil {
		return Status{}, err
	}
	if st.Edits, err = readEdits(ctx, tx); err != nil {
		return Status{}, err
	}
	if err := eachRow(ctx, tx, `SELECT name, reason FROM skipped_files ORDER BY name`, func(rows *sql.Rows) error {
		var s SkippedFile
		if err := rows.Scan(&s.Name, &s.Reason); err != nil {
			return err
		}
		st.Skipped = append(st.Skipped, s)
		return nil
	}); err != nil {
		return Status{}, err
	}
	return st, nil
}

// readEdits sums up the edits in place per file (the file's name now).
func readEdits(ctx context.Context, q queryer) ([]EditStatus, error) {
	var out []EditStatus
	err := eachRow(ctx, q, `SELECT coalesce(g.path, e.file) AS name, count(*), sum(kept), sum(changed), sum(removed), sum(added), max(at)
		FROM edits e LEFT JOIN generations g ON g.id = e.generation GROUP BY name ORDER BY name`, func(rows *sql.Rows) error {
		var e EditStatus
		var at int64
		if err := rows.Scan(&e.File, &e.Edits, &e.Kept, &e.Changed, &e.Removed, &e.Added, &at); err != nil {
			return err
		}
		e.Last = time.Unix(0, at).UTC()
		out = append(out, e)
		return nil
	})
	return out, err
}

// Counter returns the value of the named counter, 0 when never counted.
func (db *DB) Counter(ctx context.Context, name string) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM counters WHERE name = ?), 0)`, name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: read counter %s: %w", name, err)
	}
	return n, nil
}

// queryer is what eachRow reads from: a *sql.DB, *sql.Tx or *sql.Conn.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// eachRow runs query with args and calls f on each row, in order.
func eachRow(ctx context.Context, q queryer, query string, f func(*sql.Rows) error, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
