package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Exchanges in their index form, for a full-text index kept outside
// SQLite (package bm25, fed by the bm25 engine, follow/lexicon): the same texts, analysed
// the same way, as the full-text indexer gives FTS5 (fulltext.go), so that
// both rank alike. Such an index follows the events by row id as
// fulltext.db does (row ids only grow), and ties itself to this database
// with LexiconIdentity: an index built under another identity is stale.

// ExchangeDoc is one exchange as the full-text index is given it.
type ExchangeDoc struct {
	Row     int64  // events.id
	Session string // events.session_id ("" when NULL)
	TS      int64  // events.ts: unix nanoseconds
	// User and AI are the texts in index form (analyze.Document), exactly
	// the user and ai columns FTS5 gets (AI: the answer and the files,
	// SearchableAI).
	User, AI string
}

// ExchangeDocs reads the events with row ids above after, in row order, at
// most limit of them (all when limit <= 0), and returns the exchanges
// among them in index form, analysed on every core as the full-text
// indexer does, and the highest row id read (after when none).
func (db *DB) ExchangeDocs(ctx context.Context, after int64, limit int) (docs []ExchangeDoc, last int64, err error) {
	last = after
	q := `SELECT id, type = 'exchange', coalesce(session_id, ''), ts, coalesce(user, ''), coalesce(ai, ''), coalesce(files, '')
		FROM events WHERE id > ? ORDER BY id`
	args := []any{after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, after, fmt.Errorf("index: exchanges after row %d: %w", after, err)
	}
	var todo []ftExchange
	for rows.Next() {
		var e ftExchange
		var d ExchangeDoc
		var isExchange bool
		var files string
		if err := rows.Scan(&e.row, &isExchange, &d.Session, &d.TS, &e.user, &e.ai, &files); err != nil {
			rows.Close()
			return nil, after, fmt.Errorf("index: exchanges after row %d: %w", after, err)
		}
		e.ai = SearchableAI(e.ai, files)
		last = e.row
		if isExchange {
			d.Row = e.row
			docs = append(docs, d)
			todo = append(todo, e)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("index: exchanges after row %d: %w", after, err)
	}
	if len(todo) == 0 {
		return nil, last, nil
	}
	an := analyzeExchanges(todo)
	defer an.stop()
	for i := range todo {
		if i%analyzeChunk == 0 {
			if err := ctx.Err(); err != nil {
				return nil, after, err
			}
		}
		an.wait(i)
		docs[i].User, docs[i].AI = todo[i].user, todo[i].ai
	}
	return docs, last, nil
}

// ExchangesUpTo counts the exchanges with row ids up to row: an index of
// the exchanges that follows deletions holds exactly that many up to its
// watermark.
func (db *DB) ExchangesUpTo(ctx context.Context, row int64) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE type = 'exchange' AND id <= ?`, row).Scan(&n); err != nil {
		return 0, fmt.Errorf("index: count exchanges up to row %d: %w", row, err)
	}
	return n, nil
}

// LexiconIdentity identifies what a full-text index kept outside SQLite
// must have been built from to be used as it is: this database (its
// instance id: a replaced or restored index.db has another), the analysis
// of the texts (the full-text layout version: a change to package analyze
// bumps it) and the deletions so far (the epoch of ChangeMark, which grows
// with every transaction that deletes events: an index written before a
// forget may hold forgotten exchanges). epoch is that epoch, for callers
// that follow it.
func (db *DB) LexiconIdentity(ctx context.Context) (identity string, epoch int64, err error) {
	var instance string
	err = db.r.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = ?),
		coalesce((SELECT value FROM counters WHERE name = ?), 0)`, stateInstance, counterPendingEpoch).Scan(&instance, &epoch)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", 0, errors.New("index: no instance id")
	case err != nil:
		return "", 0, fmt.Errorf("index: lexicon identity: %w", err)
	}
	return LexiconIdentityOf(instance, epoch), epoch, nil
}

// LexiconIdentityOf is the identity LexiconIdentity gives for an instance
// id and an epoch.
func LexiconIdentityOf(instance string, epoch int64) string {
	return fmt.Sprintf("continuity-index %s analysis %d epoch %d", instance, fullTextVersion, epoch)
}

// eventColumnsNoRaw are eventColumns with NULL for the raw line.
var eventColumnsNoRaw = strings.Replace(eventColumns, ", raw, ", ", NULL, ", 1)

// EventsByRowsWithoutRaw is EventsByRows without the raw lines (Event.Raw
// is nil): for readers that never show them, such as resume, which would
// otherwise read each event's line (as long as its texts, often in
// overflow pages) only to drop it.
func (db *DB) EventsByRowsWithoutRaw(ctx context.Context, rows []int64) (map[int64]Event, error) {
	out := make(map[int64]Event, len(rows))
	for start := 0; start < len(rows); start += inChunk {
		chunk := rows[start:min(start+inChunk, len(rows))]
		evs, err := db.queryEvents(ctx, "events by row",
			`SELECT `+eventColumnsNoRaw+` FROM events WHERE id IN (`+placeholders(len(chunk))+`)`, int64Args(chunk)...)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			out[e.Row] = e
		}
	}
	return out, nil
}

// SearchableAI is what the full-text index holds in an exchange's ai
// column: the answer, then the files the exchange names (filesJSON: the
// events.files column, a JSON array; "" or NULL when none), one a line,
// so that a search for "internal/backoff/policy.go" or "policy.go" finds
// the exchange logged with that file.
func SearchableAI(ai, filesJSON string) string {
	files := fileList(filesJSON)
	if len(files) == 0 {
		return ai
	}
	return ai + "\n" + strings.Join(files, "\n")
}

// fileList decodes the events.files column ("" when absent); a value that
// is not a JSON array of strings gives none.
func fileList(filesJSON string) []string {
	if filesJSON == "" {
		return nil
	}
	var files []string
	if err := json.Unmarshal([]byte(filesJSON), &files); err != nil {
		return nil
	}
	return files
}
