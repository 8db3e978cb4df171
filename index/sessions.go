package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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

// Forget is a forget as recorded: the session, when (unix nanoseconds),
// and the sessions it resumed, which links through it reach.
type Forget struct {
	Session string
	At      int64
	Resumes []string
}

// DeleteSession forgets session now (ForgetSession) and returns how many
// events it deleted.
func (db *DB) DeleteSession(ctx context.Context, session string) (int64, error) {
	_, n, err := db.ForgetSession(ctx, Forget{Session: session, At: db.now().UnixNano()})
	return n, err
}

// ForgetSession deletes a session from the index, in one transaction: its
// events (with their full-text entries and vectors), its sessions row and
// every link that names it or was made by one of its events. The session
// is recorded as forgotten at f.At, so that Commit does not store its
// lines again when the log is read again (they count in
// CounterForgottenSkipped and are listed as rejects of KindForgotten);
// lines timestamped after that time are new work in the session and are
// stored. Forgetting it again moves that time to the later one.
//
// A forget keeps a chain whole: the sessions that resumed it now resume
// the sessions it resumed (its links into it and f.Resumes, a forget
// recorded elsewhere), with the links that named it, and those sessions
// are recorded (forgotten_links) so that a link to it read later reaches
// them too. It returns the forget as recorded (Resumes: every session it
// resumed) and how many events it deleted; forgetting an unknown session
// deletes nothing and still forgets it.
func (db *DB) ForgetSession(ctx context.Context, f Forget) (_ Forget, n int64, err error) {
	session := f.Session
	w, err := db.writer()
	if err != nil {
		return f, 0, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: delete session %s: %w", session, err)
		}
	}()
	if session == "" {
		return f, 0, errors.New("empty session id")
	}
	// Full-text steps read ahead before this point are not used (ftBatch).
	db.ftDeleting.Add(1)
	defer db.ftDeleting.Add(1)
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return f, 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten (session, at) VALUES (?, ?) ON CONFLICT (session) DO UPDATE SET at = max(at, excluded.at)`,
		session, f.At); err != nil {
		return f, 0, err
	}
	if f.Resumes, err = bridgeLinks(ctx, tx, session, f.Resumes); err != nil {
		return f, 0, fmt.Errorf("links: %w", err)
	}
	// Links first: session_links.event references events.
	if _, err := tx.ExecContext(ctx, `DELETE FROM session_links WHERE previous = ?1 OR new = ?1
		OR event IN (SELECT id FROM events WHERE session_id = ?1)`, session); err != nil {
		return f, 0, fmt.Errorf("links: %w", err)
	}
	// The events_fulltext_delete trigger queues the exchanges for removal
	// from the full-text index (fulltext.go), the foreign key cascade
	// removes their vectors.
	res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ?`, session)
	if err != nil {
		return f, 0, fmt.Errorf("events: %w", err)
	}
	if n, err = res.RowsAffected(); err != nil {
		return f, 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, session); err != nil {
		return f, 0, err
	}
	if err := bumpPendingEpoch(ctx, tx); err != nil {
		return f, 0, err
	}
	if err := tx.Commit(); err != nil {
		return f, 0, err
	}
	return f, n, nil
}

// bridgeLinks links the sessions that resumed session (with a link made
// by an event of their own) to the sessions it resumed: those its links
// name, resumes, and those recorded for it before; it records the latter
// in forgotten_links and returns them.
func bridgeLinks(ctx context.Context, tx *sql.Tx, session string, resumes []string) ([]string, error) {
	prevs := map[string]bool{}
	for _, p := range resumes {
		prevs[p] = true
	}
	if err := eachRow(ctx, tx, `SELECT previous FROM session_links WHERE new = ?1 AND previous != ?1
		UNION SELECT previous FROM forgotten_links WHERE session = ?1`, func(rows *sql.Rows) error {
		var p string
		err := rows.Scan(&p)
		prevs[p] = true
		return err
	}, session); err != nil {
		return nil, err
	}
	delete(prevs, session)
	type next struct {
		session   string
		event, ts int64
	}
	var nexts []next
	if err := eachRow(ctx, tx, `SELECT l.new, l.event, l.ts FROM session_links l JOIN events e ON e.id = l.event
		WHERE l.previous = ?1 AND l.new != ?1 AND coalesce(e.session_id, '') != ?1`, func(rows *sql.Rows) error {
		var n next
		err := rows.Scan(&n.session, &n.event, &n.ts)
		nexts = append(nexts, n)
		return err
	}, session); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(prevs))
	for p := range prevs {
		out = append(out, p)
		if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten_links (session, previous) VALUES (?, ?) ON CONFLICT DO NOTHING`, session, p); err != nil {
			return nil, err
		}
		for _, n := range nexts {
			if n.session == p {
				continue
			}
			if _, err := tx.ExecContext(ctx, insertLinkSQL, p, n.session, n.event, n.ts); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Forgets lists the forgets the index holds, by session.
func (db *DB) Forgets(ctx context.Context) (map[string]Forget, error) {
	out := map[string]Forget{}
	if err := eachRow(ctx, db.r, `SELECT session, at FROM forgotten`, func(rows *sql.Rows) error {
		var f Forget
		err := rows.Scan(&f.Session, &f.At)
		out[f.Session] = f
		return err
	}); err != nil {
		return nil, fmt.Errorf("index: forgotten sessions: %w", err)
	}
	if err := eachRow(ctx, db.r, `SELECT session, previous FROM forgotten_links ORDER BY session, previous`, func(rows *sql.Rows) error {
		var s, p string
		if err := rows.Scan(&s, &p); err != nil {
			return err
		}
		if f, ok := out[s]; ok {
			f.Resumes = append(f.Resumes, p)
			out[s] = f
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("index: forgotten sessions' links: %w", err)
	}
	return out, nil
}

// RecordForgotten records f without deleting anything: the index is new
// (a rebuild), or already forgot f.Session as late; f.Resumes are added
// to what it resumed.
func (db *DB) RecordForgotten(ctx context.Context, f Forget) error {
	w, err := db.writer()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten (session, at) VALUES (?, ?) ON CONFLICT (session) DO UPDATE SET at = max(at, excluded.at)`,
		f.Session, f.At); err != nil {
		return fmt.Errorf("index: record the forget of %s: %w", f.Session, err)
	}
	for _, p := range f.Resumes {
		if p == f.Session {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten_links (session, previous) VALUES (?, ?) ON CONFLICT DO NOTHING`, f.Session, p); err != nil {
			return fmt.Errorf("index: record the forget of %s: %w", f.Session, err)
		}
	}
	return tx.Commit()
}

// EventsOf counts the events of session the index holds.
func (db *DB) EventsOf(ctx context.Context, session string) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE session_id = ?`, session).Scan(&n); err != nil {
		return 0, fmt.Errorf("index: events of %s: %w", session, err)
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
