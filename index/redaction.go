package index

import (
	"bytes"
	"context"
	"fmt"

	"github.com/praxis-os/continuity/logformat"
)

// CounterRedactions counts the secrets redacted before storage.
const CounterRedactions = "redactions"

// redactEvent removes secrets (see package redact) from everything of an
// event that is stored or embedded: its texts, its metadata and the raw
// line. Vectors are computed from the stored texts, so they never see a
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

// counterRawRedaction is the version of the raw-line redaction the stored
// raw lines have been through; rawRedactionVersion the current one.
// Version 1: RedactJSON, which also finds secrets hidden by JSON escapes
// (before it, such a secret was redacted in the fields, not in raw).
const (
	counterRawRedaction = "raw_redaction"
	rawRedactionVersion = 1
)

// redactStoredRaw brings the raw lines stored under an older raw-line
// redaction up to the current one, once (the writer runs it at Open).
// Only lines holding an escape that can hide a secret ("\/", "\u00..")
// are looked at; a line changes only when a secret is found in it, and
// CounterRedactions counts them. With redaction off it does nothing, and
// runs when redaction is on again.
func (db *DB) redactStoredRaw(ctx context.Context) (err error) {
	if db.redactor == nil {
		return nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: redact stored raw lines: %w", err)
		}
	}()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var done int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM counters WHERE name = ?), 0)`,
		counterRawRedaction).Scan(&done); err != nil {
		return err
	}
	if done >= rawRedactionVersion {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, raw FROM events
		WHERE instr(raw, CAST('\/' AS BLOB)) > 0 OR instr(raw, CAST('\u00' AS BLOB)) > 0`)
	if err != nil {
		return err
	}
	type fix struct {
		id  int64
		raw []byte
	}
	var fixes []fix
	var found int64
	for rows.Next() {
		var id int64
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return err
		}
		if out, n := db.redactor.RedactJSON(raw); n > 0 && !bytes.Equal(out, raw) {
			fixes = append(fixes, fix{id, out})
			found += int64(n)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fixes {
		if _, err := tx.ExecContext(ctx, `UPDATE events SET raw = ? WHERE id = ?`, f.raw, f.id); err != nil {
			return err
		}
	}
	if found > 0 {
		if _, err := tx.ExecContext(ctx, addCounterSQL, CounterRedactions, found); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, counterRawRedaction, rawRedactionVersion); err != nil {
		return err
	}
	return tx.Commit()
}
