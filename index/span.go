package index

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ExchangesNewestFirst returns the row ids of the exchanges that f admits
// (sessions, a time range), newest first (timestamp, then row id), at most
// limit of them: a query about a span of time and nothing else
// ("what did we do yesterday") lists them.
func (db *DB) ExchangesNewestFirst(ctx context.Context, f Filter, limit int) ([]int64, error) {
	if f.Sessions != nil && len(f.Sessions) == 0 {
		return nil, nil
	}
	q, args, err := newestFirstSQL(f, limit)
	if err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("index: exchanges newest first: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("index: exchanges newest first: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: exchanges newest first: %w", err)
	}
	return out, nil
}

// CountExchanges returns how many exchanges f admits (sessions, a time
// range): how many a query about a span of time could list.
func (db *DB) CountExchanges(ctx context.Context, f Filter) (int64, error) {
	if f.Sessions != nil && len(f.Sessions) == 0 {
		return 0, nil
	}
	q, args, err := countSQL(f)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := db.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("index: count exchanges: %w", err)
	}
	return n, nil
}

// HasExchange reports whether the index holds an exchange at all. It
// stops at the first one: in an index with exchanges that is at once.
func (db *DB) HasExchange(ctx context.Context) (bool, error) {
	var ok bool
	if err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE type = 'exchange')`).Scan(&ok); err != nil {
		return false, fmt.Errorf("index: any exchange: %w", err)
	}
	return ok, nil
}

// newestFirstSQL is ExchangesNewestFirst's query and its arguments.
func newestFirstSQL(f Filter, limit int) (string, []any, error) {
	from, where, args, err := spanQuery(f)
	if err != nil {
		return "", nil, err
	}
	q := `SELECT id FROM ` + from + ` WHERE ` + where + ` ORDER BY ts DESC, id DESC`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return q, args, nil
}

// countSQL is CountExchanges' query and its arguments.
func countSQL(f Filter) (string, []any, error) {
	from, where, args, err := spanQuery(f)
	if err != nil {
		return "", nil, err
	}
	return `SELECT count(*) FROM ` + from + ` WHERE ` + where, args, nil
}

// spanQuery is the FROM (with its index) and WHERE clauses, and their
// arguments, of the exchanges f admits.
func spanQuery(f Filter) (from, where string, args []any, err error) {
	var conds []string
	if !f.Since.IsZero() {
		conds = append(conds, `ts >= ?`)
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, `ts < ?`)
		args = append(args, f.Until.UnixNano())
	}
	// The sessions' events through events_session_ts; else the exchanges
	// by time (events_exchange_ts, partial: it holds exchanges only, which
	// the condition type = 'exchange' lets the planner know), whose order
	// is the one asked: no row read to filter, no sort.
	from = `events INDEXED BY events_exchange_ts`
	if len(f.Sessions) > 0 {
		sessions, err := json.Marshal(f.Sessions)
		if err != nil {
			return "", "", nil, err
		}
		from = `events INDEXED BY events_session_ts`
		conds = append(conds, `session_id IN (SELECT value FROM json_each(?))`)
		args = append(args, string(sessions))
	}
	conds = append(conds, `type = 'exchange'`)
	return from, strings.Join(conds, " AND "), args, nil
}

// ExchangesWithoutVector counts the exchanges with row ids in (after,
// upto] that have no vector of identity: whether what was just written is
// embedded yet (search waits a little for it; see engine).
func (db *DB) ExchangesWithoutVector(ctx context.Context, identity string, after, upto int64) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM events INDEXED BY events_meta
		WHERE id > ? AND id <= ?
		AND NOT EXISTS (SELECT 1 FROM vectors WHERE event = events.id AND embedder = `+embedderKeySQL+`)
		AND id NOT IN (`+otherIDsSQL+`)`, after, upto, identity).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: exchanges without a vector: %w", err)
	}
	return n, nil
}
