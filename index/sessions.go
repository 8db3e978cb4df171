package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SessionInfo is a session as Sessions returns it (resume_queries.go):
// id, first and last timestamps, counts of exchanges, resets and events.
// The links between sessions are read with LinksInto, AllLinks or Chain.
type SessionInfo = SessionSummary

// Chain returns session, then the sessions it resumes (session_resume
// links new -> previous), then those they resume, breadth-first; among the
// links into one session the newest (by the linking event's timestamp,
// then its row id) comes first. Each session appears once, so cycles end;
// sessions more than maxDepth links away are left out (maxDepth 0: the
// session alone; negative: no limit). session comes first even when the
// index does not know it.
func (db *DB) Chain(ctx context.Context, session string, maxDepth int) ([]string, error) {
	out := []string{session}
	depth := []int{0}
	seen := map[string]bool{session: true}
	stmt, err := db.r.PrepareContext(ctx, `SELECT previous FROM session_links WHERE new = ?
		ORDER BY ts DESC, event DESC, previous`)
	if err != nil {
		return nil, fmt.Errorf("index: chain of %s: %w", session, err)
	}
	defer stmt.Close()
	for i := 0; i < len(out); i++ {
		if maxDepth >= 0 && depth[i] >= maxDepth {
			continue
		}
		prevs, err := queryStrings(ctx, stmt, out[i])
		if err != nil {
			return nil, fmt.Errorf("index: chain of %s: %w", session, err)
		}
		for _, p := range prevs {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
				depth = append(depth, depth[i]+1)
			}
		}
	}
	return out, nil
}

func queryStrings(ctx context.Context, stmt *sql.Stmt, args ...any) ([]string, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// DeleteSession deletes a session from the index, in one transaction: its
// events (with their full-text entries and vectors), its sessions row and
// every link that names it or was made by one of its events. The session
// is recorded as forgotten at the current time, so that Commit does not
// store its lines again when the log is read again (they count in
// CounterForgottenSkipped and are listed as rejects of KindForgotten);
// lines timestamped after that time are new work in the session and are
// stored. Forgetting it again moves that time to now.
// It returns how many events it deleted; deleting an unknown session
// deletes nothing and still forgets it.
func (db *DB) DeleteSession(ctx context.Context, session string) (n int64, err error) {
	w, err := db.writer()
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: delete session %s: %w", session, err)
		}
	}()
	if session == "" {
		return 0, errors.New("empty session id")
	}
	// Full-text steps read ahead before this point are not used (ftBatch).
	db.ftDeleting.Add(1)
	defer db.ftDeleting.Add(1)
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten (session, at) VALUES (?, ?) ON CONFLICT (session) DO UPDATE SET at = max(at, excluded.at)`,
		session, db.now().UnixNano()); err != nil {
		return 0, err
	}
	// Links first: session_links.event references events.
	if _, err := tx.ExecContext(ctx, `DELETE FROM session_links WHERE previous = ?1 OR new = ?1
		OR event IN (SELECT id FROM events WHERE session_id = ?1)`, session); err != nil {
		return 0, fmt.Errorf("links: %w", err)
	}
	// The events_fulltext_delete trigger queues the exchanges for removal
	// from the full-text index (fulltext.go), the foreign key cascade
	// removes their vectors.
	res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ?`, session)
	if err != nil {
		return 0, fmt.Errorf("events: %w", err)
	}
	if n, err = res.RowsAffected(); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, session); err != nil {
		return 0, err
	}
	if err := bumpPendingEpoch(ctx, tx); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return n, nil
}

// Forgotten reports whether DeleteSession forgot session.
func (db *DB) Forgotten(ctx context.Context, session string) (bool, error) {
	var f bool
	if err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM forgotten WHERE session = ?)`, session).Scan(&f); err != nil {
		return false, fmt.Errorf("index: forgotten %s: %w", session, err)
	}
	return f, nil
}
