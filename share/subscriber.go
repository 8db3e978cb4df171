package share

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/watcher"
)

// Hooks are what the subscriber asks of the engine.
type Hooks struct {
	// Committed is called after pulled events were committed: the views
	// take them in.
	Committed func()
	// Forget forgets a session a teammate (or a team admin) forgot: from
	// the index and from every view.
	Forget func(ctx context.Context, session string, at time.Time) error
	// Removed makes the views drop the rows of removed lines.
	Removed func(ctx context.Context, rows []int64)
}

// Subscriber pulls teammates' events of the same team and scope into the
// index; see the package comment.
type Subscriber struct {
	cfg   Config
	hooks Hooks
	conn  *pgConn

	mu      sync.Mutex
	pulled  int64
	rounds  int64 // full steps done: origins listed, pulled, removals applied
	lastErr string
	origins int
}

// NewSubscriber returns the subscriber of cfg.
func NewSubscriber(cfg Config, hooks Hooks) *Subscriber {
	cfg.defaults()
	return &Subscriber{cfg: cfg, hooks: hooks, conn: newPGConn(cfg.URL)}
}

// Run pulls until ctx ends.
func (s *Subscriber) Run(ctx context.Context) error {
	defer s.conn.close()
	kick := follow.NewKick()
	done := make(chan struct{})
	defer func() { <-done }()
	go func() { defer close(done); s.listen(ctx, kick) }()
	return follow.Loop(ctx, kick, retryPolicy(s.cfg, "team memory: cannot pull teammates' events (local memory unaffected)", func(e string) {
		s.mu.Lock()
		s.lastErr = e
		s.mu.Unlock()
	}), s.Step)
}

// Fill adds the subscriber's figures to a publisher's report.
func (s *Subscriber) Fill(r *Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Pulled = s.pulled
	r.PullRounds = s.rounds
	r.PullError = s.lastErr
}

// Step pulls one batch from each teammate's origin that has more, then
// applies the removals.
func (s *Subscriber) Step(ctx context.Context) (bool, error) {
	c, err := s.conn.get(ctx)
	if err != nil {
		return false, err
	}
	self, err := s.cfg.DB.Instance(ctx)
	if err != nil {
		return false, err
	}
	type origin struct {
		id, owner, machine string
		shipped            int64
	}
	var origins []origin
	// Never this index's own origin, nor the origins of this workspace
	// before its index was rebuilt (its own events, place.go).
	rows, err := c.Query(ctx, `SELECT id, owner, machine, shipped FROM continuity_origins
		WHERE team = $1 AND scope = $2 AND id <> $3 AND NOT (owner = current_user AND place IS NOT DISTINCT FROM $4)
		ORDER BY id`, s.cfg.Team, s.cfg.Scope, self, s.cfg.place())
	if err != nil {
		return false, s.conn.fail("list the teammates' origins", err)
	}
	for rows.Next() {
		var o origin
		if err := rows.Scan(&o.id, &o.owner, &o.machine, &o.shipped); err != nil {
			rows.Close()
			return false, s.conn.fail("list the teammates' origins", err)
		}
		origins = append(origins, o)
	}
	if err := rows.Err(); err != nil {
		return false, s.conn.fail("list the teammates' origins", err)
	}
	more := false
	for _, o := range origins {
		g, err := s.cfg.DB.SharedGeneration(ctx, OriginPath(o.owner, o.machine, o.id))
		if err != nil {
			return false, err
		}
		if g.Offset >= o.shipped {
			continue
		}
		m, err := s.pull(ctx, c, g, o.id, o.owner, o.machine, o.shipped)
		if err != nil {
			return false, err
		}
		more = more || m
	}
	s.mu.Lock()
	s.origins = len(origins)
	s.lastErr = ""
	s.mu.Unlock()
	if err := s.applyRemovals(ctx, c); err != nil {
		return false, err
	}
	s.mu.Lock()
	s.rounds++
	s.mu.Unlock()
	return more, nil
}

// OriginPath is the path of the generation holding an origin's events:
// whose they are and from which machine (results show it as their file).
func OriginPath(owner, machine, origin string) string {
	return index.SharedPrefix + owner + "@" + machine + "/" + shortOrigin(origin)
}

// shortOrigin is the origin as its generation's path ends.
func shortOrigin(origin string) string {
	if len(origin) > 8 {
		return origin[:8]
	}
	return origin
}

// pull commits the origin's next rows, up to shipped (every row up to it
// is committed in PostgreSQL: the fence orders an origin's transactions).
func (s *Subscriber) pull(ctx context.Context, c *pgx.Conn, g watcher.Generation, origin, owner, machine string, shipped int64) (bool, error) {
	rows, err := c.Query(ctx, `SELECT origin_row, id, session, kind, ts, coalesce(user_text, ''), coalesce(ai_text, ''),
		coalesce(reason, ''), coalesce(previous_session, ''), coalesce(agent, '')
		FROM continuity_events WHERE team = $1 AND origin = $2 AND origin_row > $3 AND origin_row <= $4
		ORDER BY origin_row LIMIT $5`, s.cfg.Team, origin, g.Offset, shipped, s.cfg.Batch)
	if err != nil {
		return false, s.conn.fail("pull", err)
	}
	var lines []watcher.Line
	last := g.Offset
	for rows.Next() {
		var row int64
		var ev logformat.Event
		var agent string
		if err := rows.Scan(&row, &ev.ID, &ev.SessionID, &ev.Type, &ev.Timestamp, &ev.User, &ev.AI,
			&ev.Reason, &ev.PreviousSession, &agent); err != nil {
			rows.Close()
			return false, s.conn.fail("pull", err)
		}
		if ev.Type == "session_resume" {
			ev.NewSession = ev.SessionID
		}
		meta := map[string]string{"shared_by": owner, "machine": machine}
		if agent != "" {
			meta["agent"] = agent
		}
		ev.Metadata, _ = json.Marshal(meta)
		ev.V = 1
		data, err := ev.MarshalLine()
		if err != nil {
			// A line this version cannot write back (a newer kind):
			// stored as a reject by Commit, with the reason.
			data, _ = json.Marshal(map[string]any{"type": ev.Type, "id": ev.ID, "session_id": ev.SessionID})
			data = append(data, '\n')
		}
		g.Line++
		lines = append(lines, watcher.Line{Number: g.Line, Start: row - 1, End: row, Data: data[:len(data)-1]})
		last = row
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, s.conn.fail("pull", err)
	}
	// A row whose id this index holds from the same origin at another
	// row is a changed line that kept its id: its old row is gone from
	// PostgreSQL (ids are unique there), so its old version goes here too,
	// before the new one is committed (else taken for a duplicate).
	stale, err := s.cfg.DB.DeleteSharedVersions(ctx, versions(g.Path, lines))
	if err != nil {
		return false, err
	}
	if len(stale) > 0 && s.hooks.Removed != nil {
		s.hooks.Removed(ctx, stale)
	}
	full := len(lines) == s.cfg.Batch
	if !full {
		last = shipped // rows removed since: nothing more up to shipped
	}
	g.Offset = last
	if err := s.cfg.DB.Commit(ctx, watcher.Batch{Gen: g, Lines: lines, More: full}); err != nil {
		return false, err
	}
	s.mu.Lock()
	s.pulled += int64(len(lines))
	s.mu.Unlock()
	if len(lines) > 0 && s.hooks.Committed != nil {
		s.hooks.Committed()
	}
	return full, nil
}

// applyRemovals carries out the removals recorded since the last
// settled one: forgotten sessions and removed lines. Applying one again
// changes nothing, so the checkpoint only passes rows whose transactions
// are settled (below the oldest running one: no row can appear below it
// any more).
func (s *Subscriber) applyRemovals(ctx context.Context, c *pgx.Conn) error {
	key := "share_removals:" + s.cfg.Team + "/" + s.cfg.Scope
	v, err := s.cfg.DB.Meta(ctx, key)
	if err != nil {
		return err
	}
	from, _ := strconv.ParseInt(v, 10, 64)
	rows, err := c.Query(ctx, `SELECT seq, session, coalesce(event_id, ''), at,
		xid < pg_snapshot_xmin(pg_current_snapshot()), coalesce(origin, ''), coalesce(origin_row, 0) FROM continuity_removals
		WHERE team = $1 AND scope = $2 AND seq > $3 ORDER BY seq LIMIT 1000`, s.cfg.Team, s.cfg.Scope, from)
	if err != nil {
		return s.conn.fail("pull the removals", err)
	}
	type rem struct {
		seq            int64
		session, event string
		at             time.Time
		settled        bool
		origin         string
		row            int64
	}
	var rems []rem
	for rows.Next() {
		var r rem
		if err := rows.Scan(&r.seq, &r.session, &r.event, &r.at, &r.settled, &r.origin, &r.row); err != nil {
			rows.Close()
			return s.conn.fail("pull the removals", err)
		}
		rems = append(rems, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.conn.fail("pull the removals", err)
	}
	cp := from
	settled := true
	var ids []index.SharedVersion
	for _, r := range rems {
		if r.event != "" {
			ids = append(ids, index.SharedVersion{EventID: r.event, Origin: shortOrigin(r.origin), Row: r.row})
		} else if s.hooks.Forget != nil {
			if err := s.hooks.Forget(ctx, r.session, r.at); err != nil {
				return fmt.Errorf("share: forget %s (forgotten by its owner): %w", r.session, err)
			}
		}
		if settled = settled && r.settled; settled {
			cp = r.seq
		}
	}
	if len(ids) > 0 {
		gone, err := s.cfg.DB.DeleteSharedVersions(ctx, ids)
		if err != nil {
			return err
		}
		if len(gone) > 0 && s.hooks.Removed != nil {
			s.hooks.Removed(ctx, gone)
		}
	}
	if cp != from {
		return s.cfg.DB.SetMeta(ctx, key, strconv.FormatInt(cp, 10))
	}
	return nil
}

// listen wakes the pull loop when a teammate's daemon commits rows
// (LISTEN on its own connection); the loop's poll is the safety net while
// it is not connected.
func (s *Subscriber) listen(ctx context.Context, kick follow.Kick) {
	for ctx.Err() == nil {
		l := newPGConn(s.cfg.URL)
		c, err := l.get(ctx)
		if err == nil {
			_, err = c.Exec(ctx, "LISTEN "+notifyChannel)
		}
		for err == nil {
			var n *pgconn.Notification
			if n, err = c.WaitForNotification(ctx); err == nil && n.Payload == s.cfg.Team {
				kick.Notify()
			}
		}
		l.close()
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

// versions lists, for each pulled line, the older versions of its id
// that generation path may hold (any row but the line's).
func versions(path string, lines []watcher.Line) []index.SharedVersion {
	out := make([]index.SharedVersion, 0, len(lines))
	for _, l := range lines {
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(l.Data, &ev) == nil && ev.ID != "" {
			out = append(out, index.SharedVersion{EventID: ev.ID, Origin: path[strings.LastIndexByte(path, '/')+1:], Row: l.End, Other: true})
		}
	}
	return out
}
