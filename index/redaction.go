package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/praxis-os/continuity/logformat"
)

// CounterRedactions counts the secrets redacted before storage.
const CounterRedactions = "redactions"

// redactEvent removes secrets (see package redact) from everything of an
// event that is stored or embedded: its texts, its file paths, its
// metadata and the raw line. Vectors are computed from the stored texts, so they never see a
// secret either. It returns the raw line to store and the number of
// redactions (the larger of the raw line's and the fields' counts: the
// same secret usually appears in both).
func (db *DB) redactEvent(ev *logformat.Event, raw []byte) ([]byte, int) {
	r := db.redactor
	if r == nil {
		return raw, 0
	}
	var fields, n int
	ev.User, n = r.Redact(ev.User)
	fields += n
	ev.AI, n = r.Redact(ev.AI)
	fields += n
	ev.Reason, n = r.Redact(ev.Reason)
	fields += n
	// Paths can hold a secret too (a clone URL with its password); they
	// are shown by resume. The slice is the parser's own: no copy needed.
	for i := range ev.Files {
		ev.Files[i], n = r.Redact(ev.Files[i])
		fields += n
	}
	if len(ev.Metadata) > 0 {
		ev.Metadata, n = r.RedactJSON(ev.Metadata)
		fields += n
	}
	// RedactJSON: a secret spelled with JSON escapes ("\/", "\u0041")
	// is found in the decoded fields, and must not stay in the raw line.
	raw, n = r.RedactJSON(raw)
	return raw, max(n, fields)
}

// redactBytes redacts a rejected line's excerpt.
func (db *DB) redactBytes(b []byte) []byte {
	out, _ := db.redactor.RedactJSON(b)
	return out
}

// counterStoredRedaction is the version of redaction the stored events
// have been through; storedRedactionVersion the current one. Version 1:
// secrets hidden by JSON escapes are redacted in the raw line too
// (RedactJSON), and file paths are redacted (before, both were stored as
// written while the texts were redacted).
const (
	counterStoredRedaction = "stored_redaction"
	storedRedactionVersion = 1
)

// redactStored brings the events stored under an older redaction up to
// the current one, once (the writer runs it at Open). Only events whose
// raw line holds an escape that can hide a secret ("\/", "\u00..") or
// that list files are looked at; an event changes only when a secret is
// found in it, and CounterRedactions counts them. With redaction off it
// does nothing, and runs when redaction is on again.
func (db *DB) redactStored(ctx context.Context) (err error) {
	if db.redactor == nil {
		return nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: redact stored events: %w", err)
		}
	}()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var done int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM counters WHERE name = ?), 0)`,
		counterStoredRedaction).Scan(&done); err != nil {
		return err
	}
	if done >= storedRedactionVersion {
		return nil
	}
	// A packed line (linepack.go) is rendered first: its texts' escapes
	// are not in the column.
	rows, err := tx.QueryContext(ctx, `SELECT id, raw, files, user, ai FROM events
		WHERE instr(raw, CAST('\/' AS BLOB)) > 0 OR instr(raw, CAST('\u00' AS BLOB)) > 0 OR files IS NOT NULL
			OR substr(raw, 1, 1) = x'01'`)
	if err != nil {
		return err
	}
	type fix struct {
		id    int64
		raw   []byte
		files any
	}
	var fixes []fix
	var found int64
	for rows.Next() {
		var id int64
		var raw []byte
		var files, user, ai sql.NullString
		if err := rows.Scan(&id, &raw, &files, &user, &ai); err != nil {
			rows.Close()
			return err
		}
		if raw, err = unpackLine(raw, user, ai); err != nil {
			rows.Close()
			return fmt.Errorf("event row %d: %w", id, err)
		}
		f := fix{id: id, raw: raw}
		if files.Valid {
			f.files = files.String
		}
		changed := false
		if out, n := db.redactor.RedactJSON(raw); n > 0 && !bytes.Equal(out, raw) {
			f.raw, changed = out, true
			found += int64(n)
		}
		var paths []string
		if files.Valid && json.Unmarshal([]byte(files.String), &paths) == nil {
			var k int
			for i := range paths {
				var n int
				paths[i], n = db.redactor.Redact(paths[i])
				k += n
			}
			if k > 0 {
				b, err := json.Marshal(paths)
				if err != nil {
					rows.Close()
					return err
				}
				f.files, changed = string(b), true
				found += int64(k)
			}
		}
		if changed {
			fixes = append(fixes, f)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fixes {
		if _, err := tx.ExecContext(ctx, `UPDATE events SET raw = ?, files = ? WHERE id = ?`, f.raw, f.files, f.id); err != nil {
			return err
		}
	}
	if found > 0 {
		if _, err := tx.ExecContext(ctx, addCounterSQL, CounterRedactions, found); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, counterStoredRedaction, storedRedactionVersion); err != nil {
		return err
	}
	return tx.Commit()
}
