package index

import (
	"context"
	"fmt"

	"github.com/praxis-os/continuity/watcher"
)

var _ watcher.Store = (*DB)(nil)

const generationColumns = `id, path, dev, ino, "offset", line, head_len, head_sum, tail_len, tail_sum, gone`

// Generations returns every generation that has not ended, gone ones too,
// by ID.
func (db *DB) Generations(ctx context.Context) ([]watcher.Generation, error) {
	q := db.r
	if db.w != nil {
		// The writer's own connection: what it just committed is visible.
		q = db.w
	}
	rows, err := q.QueryContext(ctx, `SELECT `+generationColumns+` FROM generations WHERE ended = 0 AND instr(path, '/') = 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("index: list generations: %w", err)
	}
	defer rows.Close()
	var out []watcher.Generation
	for rows.Next() {
		var g watcher.Generation
		var dev, ino, headSum, tailSum int64
		if err := rows.Scan(&g.ID, &g.Path, &dev, &ino, &g.Offset, &g.Line,
			&g.Head.Len, &headSum, &g.Tail.Len, &tailSum, &g.Gone); err != nil {
			return nil, fmt.Errorf("index: list generations: %w", err)
		}
		g.Dev, g.Ino = uint64(dev), uint64(ino)
		g.Head.Sum, g.Tail.Sum = uint64(headSum), uint64(tailSum)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: list generations: %w", err)
	}
	return out, nil
}

// CreateGeneration records g (its ID is ignored) and returns the new ID.
// If replaces is not 0, that generation ends in the same transaction; it
// must exist.
func (db *DB) CreateGeneration(ctx context.Context, g watcher.Generation, replaces int64) (id int64, err error) {
	w, err := db.writer()
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: create generation for %s: %w", g.Path, err)
		}
	}()
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := db.now().UnixNano()
	res, err := tx.ExecContext(ctx, `INSERT INTO generations
		(path, dev, ino, "offset", line, head_len, head_sum, tail_len, tail_sum, gone, ended, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
		g.Path, int64(g.Dev), int64(g.Ino), g.Offset, g.Line,
		g.Head.Len, int64(g.Head.Sum), g.Tail.Len, int64(g.Tail.Sum), g.Gone, now, now)
	if err != nil {
		return 0, err
	}
	if id, err = res.LastInsertId(); err != nil {
		return 0, err
	}
	if replaces != 0 {
		res, err := tx.ExecContext(ctx, `UPDATE generations SET ended = 1, updated_at = ? WHERE id = ?`, now, replaces)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, err
		} else if n == 0 {
			return 0, fmt.Errorf("replaced generation %d does not exist", replaces)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return id, nil
}

// UpdateGeneration persists g's Path, Dev, Ino and Gone; never its offset
// or fingerprints, which only Commit moves.
func (db *DB) UpdateGeneration(ctx context.Context, g watcher.Generation) error {
	w, err := db.writer()
	if err != nil {
		return err
	}
	res, err := w.ExecContext(ctx, `UPDATE generations SET path = ?, dev = ?, ino = ?, gone = ?, updated_at = ? WHERE id = ?`,
		g.Path, int64(g.Dev), int64(g.Ino), g.Gone, db.now().UnixNano(), g.ID)
	if err != nil {
		return fmt.Errorf("index: update generation %d (%s): %w", g.ID, g.Path, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("index: update generation %d (%s): %w", g.ID, g.Path, err)
	} else if n == 0 {
		return fmt.Errorf("index: update generation %d (%s): no such generation", g.ID, g.Path)
	}
	return nil
}

// SetSkippedFile records that the file name is skipped as a whole with the
// reason, or clears the record when reason is "".
func (db *DB) SetSkippedFile(ctx context.Context, name, reason string) error {
	w, err := db.writer()
	if err != nil {
		return err
	}
	if reason == "" {
		_, err = w.ExecContext(ctx, `DELETE FROM skipped_files WHERE name = ?`, name)
	} else {
		_, err = w.ExecContext(ctx, `INSERT INTO skipped_files (name, reason, seen_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET reason = excluded.reason, seen_at = excluded.seen_at`,
			name, reason, db.now().UnixNano())
	}
	if err != nil {
		return fmt.Errorf("index: record skipped file %s: %w", name, err)
	}
	return nil
}
