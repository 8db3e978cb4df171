package share

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/jackc/pgx/v5"
)

// A workspace's index shares under its own origin (its instance id): a
// rebuilt index (the cache deleted) is a new origin. Its place (a hash of
// the machine's name and the workspace's logs folder) ties it to the
// origins its workspace shipped under before, owned by the same role: the
// publisher takes over their rows (a row of an id it ships is replaced by
// its current version, ship), removes those whose ids the index no longer
// holds once it is caught up (reconcile), and the subscriber never pulls
// them back. The origin stays the instance rather than the place itself:
// row numbers restart with a rebuilt index, and subscribers follow an
// origin by its row numbers.

// place is where this workspace's index lives.
func (c *Config) place() string {
	logs, err := filepath.Abs(c.Logs)
	if err != nil {
		logs = c.Logs
	}
	h := sha256.Sum256([]byte(c.Machine + "\x00" + logs))
	return hex.EncodeToString(h[:12])
}

// previousOrigins are the other origins of this place and role: the
// workspace's indexes before a rebuild.
func (p *Publisher) previousOrigins(ctx context.Context, c *pgx.Conn, origin string) ([]string, error) {
	rows, err := c.Query(ctx, `SELECT id FROM continuity_origins
		WHERE team = $1 AND scope = $2 AND owner = current_user AND place = $3 AND id <> $4`,
		p.cfg.Team, p.cfg.Scope, p.cfg.place(), origin)
	if err != nil {
		return nil, p.conn.fail("list this workspace's previous origins", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, p.conn.fail("list this workspace's previous origins", err)
	}
	return ids, nil
}

// removeRows deletes the events of team matching where ($2... its
// arguments) and records a removal of each row version, in tx.
func removeRows(ctx context.Context, tx pgx.Tx, team, where string, args ...any) error {
	_, err := tx.Exec(ctx, `WITH gone AS (
			DELETE FROM continuity_events WHERE team = $1 AND `+where+`
			RETURNING scope, session, id, origin, origin_row)
		INSERT INTO continuity_removals (team, scope, session, event_id, origin, origin_row)
		SELECT $1, scope, session, id, origin, origin_row FROM gone`, append([]any{team}, args...)...)
	if err != nil {
		return err
	}
	return notify(ctx, tx, team)
}

// reconcile removes, once the index is caught up, the rows its previous
// origins shipped whose ids it no longer holds (lines removed or changed
// while the cache was gone). One that the index will still read comes
// back under the current origin when it does.
func (p *Publisher) reconcile(ctx context.Context, c *pgx.Conn, prev []string) error {
	for after := ""; ; {
		rows, err := c.Query(ctx, `SELECT id FROM continuity_events WHERE team = $1 AND scope = $2 AND origin = ANY($3::text[])
			AND id > $4 ORDER BY id LIMIT 5000`, p.cfg.Team, p.cfg.Scope, prev, after)
		if err != nil {
			return p.conn.fail("reconcile with this workspace's index before its rebuild", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return p.conn.fail("reconcile with this workspace's index before its rebuild", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := p.reconcileIDs(ctx, c, prev, ids); err != nil {
			return err
		}
		after = ids[len(ids)-1]
	}
}

// reconcileIDs removes the rows of ids (of the previous origins) whose
// ids the index does not hold.
func (p *Publisher) reconcileIDs(ctx context.Context, c *pgx.Conn, prev, ids []string) error {
	held, err := p.cfg.DB.HeldIDs(ctx, ids)
	if err != nil {
		return err
	}
	var gone []string
	for _, id := range ids {
		if !held[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return p.conn.fail("reconcile", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := removeRows(ctx, tx, p.cfg.Team, `scope = $2 AND origin = ANY($3::text[]) AND id = ANY($4::text[])`,
		p.cfg.Scope, prev, gone); err != nil {
		return p.conn.fail("reconcile", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return p.conn.fail("reconcile", err)
	}
	p.cfg.Logger.Info("team memory: rows shipped before this index was rebuilt and no longer in the logs removed", "rows", len(gone))
	return nil
}
