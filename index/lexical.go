package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/praxis-os/continuity/logformat"
)

// ErrBadMatch wraps the error of a full-text query that FTS5 refuses (a
// syntax error, an unknown column filter...): the query's fault, not the
// index's.
var ErrBadMatch = errors.New("invalid full-text query")

// Filter restricts a search to some events. Zero values put no
// constraint.
type Filter struct {
	// Sessions: only events of these sessions.
	Sessions []string
	// Since (inclusive) and Until (exclusive) bound the event's timestamp.
	Since, Until time.Time
	// Types: only events of these types. The full-text index holds
	// exchanges only, so Lexical returns nothing when Types is set and
	// lacks "exchange".
	Types []string
}

// LexicalHit is one exchange matching a full-text query.
type LexicalHit struct {
	Row   int64   // events.id
	Score float64 // -bm25: higher is better, > 0 for a match
}

// Lexical runs the FTS5 MATCH expression match over the user and ai texts
// of the exchanges and returns the best limit hits (all when limit <= 0),
// best first; ties by row id, older first.
//
// weights are the bm25 weights of the user and ai columns; {0, 0} means
// {1, 1}. match is FTS5 query syntax (bare words are ANDed; OR, NOT,
// "phrases", prefix*, NEAR(), column filters user: and ai:); the caller
// quotes free text. A query FTS5 refuses fails with an error wrapping
// ErrBadMatch.
//
// The full-text index is built after the commit (see fulltext.go); in the
// writing process Lexical first indexes a small lag itself, so that it
// sees every exchange committed before the call.
//
// The ranking is done inside FTS5 (ORDER BY rank with the weights set
// through the rank column), which needs no look-up in events; filters add
// one look-up per matching exchange (a time range, or sessions holding
// more exchanges than the query matches) or restrict the candidates first
// (sessions holding fewer).
func (db *DB) Lexical(ctx context.Context, match string, weights [2]float64, f Filter, limit int) (hits []LexicalHit, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: full-text query %q: %w", match, err)
		}
	}()
	if f.Types != nil && !slices.Contains(f.Types, logformat.TypeExchange) {
		return nil, nil
	}
	if f.Sessions != nil && len(f.Sessions) == 0 {
		return nil, nil // the empty set of sessions has no events
	}
	if weights == [2]float64{} {
		weights = [2]float64{1, 1}
	}
	for _, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("bm25 weights %v: not finite", weights)
		}
	}
	if err := db.catchUpFullText(ctx); err != nil {
		return nil, err
	}
	rank := "bm25(" + strconv.FormatFloat(weights[0], 'g', -1, 64) + ", " +
		strconv.FormatFloat(weights[1], 'g', -1, 64) + ")"

	// The query is ranked by SQLite's sorter (ORDER BY rank, rowid, with
	// LIMIT: a top-k heap), not by FTS5's own ORDER BY rank, which ranks
	// every match first and is slower; rank is then computed only for
	// the matches that pass the filters.
	var q strings.Builder
	args := []any{match, rank}
	var timeConds []string
	var timeArgs []any
	if !f.Since.IsZero() {
		timeConds = append(timeConds, ` AND ts >= ?`)
		timeArgs = append(timeArgs, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		timeConds = append(timeConds, ` AND ts < ?`)
		timeArgs = append(timeArgs, f.Until.UnixNano())
	}
	switch {
	case len(f.Sessions) > 0:
		sessions, err := json.Marshal(f.Sessions)
		if err != nil {
			return nil, err
		}
		few, err := db.fewMatches(ctx, match, string(sessions))
		if err != nil {
			return nil, matchError(db.fullTextError(err))
		}
		if testLexicalPlan != 0 {
			few = testLexicalPlan == lexicalPerMatch
		}
		if few {
			// Fewer matches than the sessions have exchanges (a long
			// chain, rare words): each match's session (and time) is
			// looked up in events_meta, which costs per match, not per
			// exchange of the sessions.
			q.WriteString(`SELECT rowid, rank FROM ft.events_fts WHERE events_fts MATCH ?1 AND rank MATCH ?2
				AND EXISTS (SELECT 1 FROM events INDEXED BY events_meta WHERE id = events_fts.rowid
				AND session_id IN (SELECT value FROM json_each(?3))` + strings.Join(timeConds, "") + `)`)
			args = append(args, string(sessions))
			args = append(args, timeArgs...)
			break
		}
		// The candidates are the sessions' events (events_session_ts,
		// time range included). FTS5 gets their row range, which spares
		// it the doclists outside; "+rowid IN" keeps the exact set as a
		// filter: as a constraint FTS5 would run the query once per row.
		q.WriteString(`WITH cand(id) AS MATERIALIZED (SELECT id FROM events
			WHERE session_id IN (SELECT value FROM json_each(?3))` + strings.Join(timeConds, "") + `)
			SELECT rowid, rank FROM ft.events_fts WHERE events_fts MATCH ?1 AND rank MATCH ?2
			AND rowid >= (SELECT min(id) FROM cand) AND rowid <= (SELECT max(id) FROM cand)
			AND +rowid IN cand`)
		args = append(args, string(sessions))
		args = append(args, timeArgs...)
	case len(timeConds) > 0:
		// There is no index on ts alone: look up each match's time in
		// events_meta, which holds it next to the row id.
		q.WriteString(`SELECT rowid, rank FROM ft.events_fts WHERE events_fts MATCH ?1 AND rank MATCH ?2
			AND EXISTS (SELECT 1 FROM events INDEXED BY events_meta WHERE id = events_fts.rowid` +
			strings.Join(timeConds, "") + `)`)
		args = append(args, timeArgs...)
	default:
		q.WriteString(`SELECT rowid, rank FROM ft.events_fts WHERE events_fts MATCH ?1 AND rank MATCH ?2`)
	}
	q.WriteString(` ORDER BY rank, rowid`)
	if limit > 0 {
		q.WriteString(` LIMIT ?`)
		args = append(args, limit)
	}

	rows, err := db.r.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, matchError(db.fullTextError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var h LexicalHit
		if err := rows.Scan(&h.Row, &h.Score); err != nil {
			return nil, err
		}
		h.Score = -h.Score
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, matchError(err)
	}
	return hits, nil
}

// testLexicalPlan, set by a test, forces Lexical's plan for a session
// filter (lexicalPerMatch or lexicalCandidates); 0 lets it choose.
var testLexicalPlan int

const (
	lexicalPerMatch = 1 + iota
	lexicalCandidates
)

// fewMatches reports whether the full-text query match has fewer matches
// in all than the sessions (a JSON array) have exchanges. Lexical then
// filters the matches one by one instead of listing the sessions'
// exchanges first: for a long chain and a query of rare words that is
// an order of magnitude faster, with the same hits (docs/performance.md);
// for a common word in a short chain, the reverse.
// Counting stops at the exchanges' number, and reads doclists only.
func (db *DB) fewMatches(ctx context.Context, match, sessions string) (bool, error) {
	var cands, matches int64
	if err := db.r.QueryRowContext(ctx, `SELECT coalesce(sum(exchanges), 0) FROM sessions
		WHERE id IN (SELECT value FROM json_each(?))`, sessions).Scan(&cands); err != nil {
		return false, err
	}
	if cands == 0 {
		return true, nil
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM ft.events_fts WHERE events_fts MATCH ? LIMIT ?)`,
		match, cands).Scan(&matches); err != nil {
		return false, err
	}
	return matches < cands, nil
}

// matchError marks as ErrBadMatch the errors FTS5 reports for a query it
// cannot parse or run: SQLITE_ERROR, as the SQL around it is fixed.
func matchError(err error) error {
	if errors.Is(err, ErrNoFullText) {
		return err
	}
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrError {
		return fmt.Errorf("%w: %w", ErrBadMatch, err)
	}
	return err
}

// TermDocs returns how many exchanges hold each of terms (in the full-text
// index's form: lower case, Porter-stemmed; terms it does not hold are
// absent from the map) and how many exchanges there are in all.
func (db *DB) TermDocs(ctx context.Context, terms []string) (map[string]int64, int64, error) {
	out := make(map[string]int64, len(terms))
	var total int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM ft.events_fts_docsize`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("index: count exchanges: %w", db.fullTextError(err))
	}
	if len(terms) == 0 {
		return out, total, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT term, doc FROM ft.events_fts_vocab WHERE term IN (`+placeholders(len(terms))+`)`, stringArgs(terms)...)
	if err != nil {
		return nil, 0, fmt.Errorf("index: term frequencies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, 0, fmt.Errorf("index: term frequencies: %w", err)
		}
		out[t] = n
	}
	return out, total, rows.Err()
}
