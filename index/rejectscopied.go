package index

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/praxis-os/continuity/logformat"
)

// A sync tool's conflict copy of a log (logformat.ConflictCopy:
// Syncthing's .sync-conflict-…, Dropbox's "conflicted copy") is read as a
// log of its own: its valid lines that its log holds too are the same
// events, indexed once, and listed as replays (KindDuplicate). Its
// invalid lines have no id to say so: a bad line written once and synced
// into both files is rejected in each. Both rejects stay (each file has
// the line, and 'continuity rejects' lists both, by file and line), but
// a count of the lines agents got wrong counts it once: rejectsCopied
// counts the rejects of conflict copies whose log has the same reject at
// the same line (same reason, length and excerpt), for status to leave
// out.

// rejectsCopied counts the rejects, other than forgotten sessions' lines
// and replays, of the conflict copies of logs that their logs have too.
func rejectsCopied(ctx context.Context, tx *sql.Tx) (int64, error) {
	const notMistakes = `kind NOT IN ('` + KindForgotten + `', '` + KindDuplicate + `')`
	var copies [][2]string // conflict copy, its log
	if err := eachRow(ctx, tx, `SELECT DISTINCT file FROM rejects WHERE `+notMistakes, func(rows *sql.Rows) error {
		var f string
		if err := rows.Scan(&f); err != nil {
			return err
		}
		if of, ok := logformat.ConflictCopy(f); ok {
			copies = append(copies, [2]string{f, of})
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("rejects of conflict copies: %w", err)
	}
	var n int64
	for _, c := range copies {
		var k int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rejects c WHERE c.file = ? AND c.`+notMistakes+` AND EXISTS (
			SELECT 1 FROM rejects r WHERE r.file = ? AND r.line = c.line AND r.kind = c.kind AND r.reason = c.reason
			AND r.end_offset - r.start_offset = c.end_offset - c.start_offset AND r.excerpt = c.excerpt)`, c[0], c[1]).Scan(&k); err != nil {
			return 0, fmt.Errorf("rejects of conflict copy %s: %w", c[0], err)
		}
		n += k
	}
	return n, nil
}
