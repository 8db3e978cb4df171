// Package share is team memory on PostgreSQL: each daemon ships its
// workspace's events (redacted fields only) to a team's database and pulls
// its teammates' events of the same repository into its own index, so that
// search, resume, the viewer and MCP find them, offline too.
//
// SQLite stays each machine's source of truth. The Publisher is a view of
// the index's events table (package follow), like the full-text index and
// the vectors: it ships committed events exactly once, the origin's
// shipped row moved in the same PostgreSQL transaction as the rows and
// fenced (UPDATE ... WHERE shipped = $expected), so that two daemons of one
// index never both ship. The Subscriber pulls, per teammate's origin, the
// rows after the last it pulled into the index through Commit, the
// origin's pulled row committed with the events (index/share.go). Forgets
// and removed lines travel as rows of continuity_removals. PostgreSQL
// enforces access itself: daemons log in as per-user roles and row-level
// security (forced) shows each only its teams' rows (schema.go).
package share

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/redact"
)

// Config sets up team memory for one workspace.
type Config struct {
	// URL is the team's database (libpq URL or key=value string); a
	// password in it is better left out: PGPASSFILE (~/.pgpass) or
	// PGPASSWORD give it.
	URL string
	// Team is the team whose memory this workspace shares.
	Team string
	// Scope is the repository: its normalised git remote, or a name.
	Scope string
	// Machine is this machine's name (logformat.MachineName).
	Machine string
	// Logs is the workspace's logs folder, which holds the private marks
	// (PrivateFile).
	Logs string
	DB   *index.DB
	// Logger hears what happens; nil discards it.
	Logger *slog.Logger
	// Batch is how many events one transaction ships or pulls (0: 500).
	Batch int
	// Poll is how often the subscriber asks for new rows, and the
	// publisher's idle step (0: 500 ms).
	Poll time.Duration
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
}

// Publisher ships the workspace's events; see the package comment.
type Publisher struct {
	cfg  Config
	kick follow.Kick
	red  *redact.Redactor
	conn *pgConn

	mu      sync.Mutex
	shipped int64 // the origin's shipped row, as last read
	events  int64 // shipped by this process
	lastErr string
	lastOK  time.Time
	pushed  map[string]int64 // forgets recorded in PostgreSQL (session: at)
	queueOn bool             // the index queues removed lines (EnableShareQueue)
	// reconciled: the rows of this workspace's previous origins (before a
	// rebuild) were reconciled with the index (place.go), by Step only.
	reconciled bool
	origin     string
	sub        *Subscriber
	// adminOK are the teammates' sessions a team admin asked to forget
	// (CheckForget): their forget is recorded for the team.
	adminOK map[string]bool
}

// NewPublisher returns the publisher of cfg.
func NewPublisher(cfg Config) *Publisher {
	cfg.defaults()
	return &Publisher{cfg: cfg, kick: follow.NewKick(), red: redact.FromEnv(), conn: newPGConn(cfg.URL),
		pushed: map[string]int64{}, adminOK: map[string]bool{}}
}

// Name is the view's name.
func (p *Publisher) Name() string { return "share" }

// Notify says events were committed.
func (p *Publisher) Notify() { p.kick.Notify() }

// Run ships until ctx ends.
func (p *Publisher) Run(ctx context.Context) error {
	defer p.conn.close()
	return follow.Loop(ctx, p.kick, retryPolicy(p.cfg, "team memory: cannot ship (kept locally, shipped when the database is back)", func(e string) {
		p.mu.Lock()
		p.lastErr = e
		p.mu.Unlock()
	}), p.Step)
}

// Remove is told what the index deleted: forgotten sessions (recorded by
// the index) and removed lines (queued by the index in the transaction
// that deleted them, index.EnableShareQueue). Both are pushed from the
// index at each step, so a crash loses none.
func (p *Publisher) Remove(ctx context.Context, r follow.Removal) error {
	p.kick.Notify()
	return nil
}

// Report says how shipping stands: the backlog (events not shipped yet,
// and the age of the oldest), the last failure.
func (p *Publisher) Report(ctx context.Context) any {
	p.mu.Lock()
	r := Report{Team: p.cfg.Team, Scope: p.cfg.Scope, Server: p.conn.server(), Origin: p.origin,
		Shipped: p.shipped, ShippedNow: p.events, LastError: p.lastErr}
	if !p.lastOK.IsZero() {
		r.LastShipped = p.lastOK
	}
	shipped := p.shipped
	sub := p.sub
	p.mu.Unlock()
	if sub != nil {
		sub.Fill(&r)
	}
	n, oldest, err := p.cfg.DB.LocalBacklog(ctx, shipped)
	if err != nil {
		r.LastError = err.Error()
	}
	r.Backlog = n
	if oldest > 0 {
		r.BacklogAge = time.Since(time.Unix(0, oldest)).Round(time.Second).String()
	}
	return r
}

// Report is the publisher's status ("share_status" on the socket).
type Report struct {
	Team        string    `json:"team"`
	Scope       string    `json:"scope"`
	Server      string    `json:"server"`
	Origin      string    `json:"origin,omitempty"`
	Shipped     int64     `json:"shipped_row"`
	ShippedNow  int64     `json:"shipped_since_start"`
	Backlog     int64     `json:"backlog_events"`
	BacklogAge  string    `json:"backlog_age,omitempty"`
	LastShipped time.Time `json:"last_shipped,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	Pulled      int64     `json:"pulled_since_start"`
	// PullRounds counts the subscriber's whole rounds (every teammate's
	// origin read, the removals applied): a caught-up signal for tests
	// and for status readers who wait for the next round.
	PullRounds int64  `json:"pull_rounds"`
	PullError  string `json:"pull_error,omitempty"`
}

// Step ships the next batch of events (and records the forgets and
// removed lines not recorded yet).
func (p *Publisher) Step(ctx context.Context) (bool, error) {
	p.mu.Lock()
	queueOn := p.queueOn
	p.mu.Unlock()
	if !queueOn {
		// Before any row ships, and while the database is down too: from
		// now on an edit's removed lines are queued durably in the index.
		if err := p.cfg.DB.EnableShareQueue(ctx); err != nil {
			return false, err
		}
		p.mu.Lock()
		p.queueOn = true
		p.mu.Unlock()
	}
	c, err := p.conn.get(ctx)
	if err != nil {
		return false, err
	}
	origin, err := p.cfg.DB.Instance(ctx)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	p.origin = origin
	p.mu.Unlock()
	if _, err := c.Exec(ctx, `INSERT INTO continuity_origins (team, id, scope, machine, place) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (team, id) DO NOTHING`, p.cfg.Team, origin, p.cfg.Scope, p.cfg.Machine, p.cfg.place()); err != nil {
		return false, p.conn.fail("register this workspace's origin", err)
	}
	prev, err := p.previousOrigins(ctx, c, origin)
	if err != nil {
		return false, err
	}
	if err := p.pushRemovals(ctx, c, origin, prev); err != nil {
		return false, err
	}
	var shipped int64
	if err := c.QueryRow(ctx, `SELECT shipped FROM continuity_origins WHERE team = $1 AND id = $2`, p.cfg.Team, origin).Scan(&shipped); err != nil {
		return false, p.conn.fail("read the shipped checkpoint", err)
	}
	p.mu.Lock()
	p.shipped = shipped
	p.mu.Unlock()
	evs, err := p.cfg.DB.EventsAfter(ctx, shipped, p.cfg.Batch)
	if err != nil {
		return false, err
	}
	if len(evs) == 0 {
		if len(prev) > 0 && !p.reconciled {
			// Once per start, when caught up: a row removed here that
			// the index reads later ships again under this origin.
			if err := p.reconcile(ctx, c, prev); err != nil {
				return false, err
			}
			p.reconciled = true
		}
		p.markOK()
		return false, nil
	}
	private, err := ReadPrivate(p.cfg.Logs)
	if err != nil {
		return false, err
	}
	rows := p.shippable(evs, private)
	last := evs[len(evs)-1].Row
	if err := p.ship(ctx, c, origin, prev, shipped, last, rows); err != nil {
		return false, err
	}
	p.mu.Lock()
	p.shipped = last
	p.events += int64(len(rows.id))
	p.mu.Unlock()
	p.markOK()
	return len(evs) == p.cfg.Batch, nil
}

func (p *Publisher) markOK() {
	p.mu.Lock()
	p.lastErr = ""
	p.lastOK = time.Now()
	p.mu.Unlock()
}

// columns are the shipped rows, column by column (one INSERT of unnest).
type columns struct {
	row                               []int64
	id, session, kind                 []string
	ts                                []time.Time
	user, ai, reason, previous, agent []*string
}

// shippable keeps the events that may leave the machine: not pulled from
// a teammate, not of a private session (nor a private workspace), with a
// session; their texts redacted again.
func (p *Publisher) shippable(evs []index.Event, private Private) *columns {
	c := &columns{}
	for _, e := range evs {
		if index.IsShared(e.File) || e.SessionID == "" || private.Has(e.SessionID) {
			continue
		}
		c.row = append(c.row, e.Row)
		c.id = append(c.id, e.EventID)
		c.session = append(c.session, e.SessionID)
		c.kind = append(c.kind, e.Type)
		c.ts = append(c.ts, e.Timestamp)
		c.user = append(c.user, p.text(e.User))
		c.ai = append(c.ai, p.text(e.AI))
		c.reason = append(c.reason, p.text(e.Reason))
		c.previous = append(c.previous, opt(e.PreviousSession))
		c.agent = append(c.agent, p.text(agentOf(e.Metadata)))
	}
	return c
}

// text redacts s again (the rules of this daemon: redact.FromEnv), nil
// when empty.
func (p *Publisher) text(s string) *string {
	if s == "" {
		return nil
	}
	r, _ := p.red.Redact(s)
	return &r
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// agentOf is metadata.agent (or metadata.imported_from), if a string.
func agentOf(meta json.RawMessage) string {
	if len(meta) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	for _, k := range []string{"agent", "imported_from"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

// ErrFenced is returned when another daemon of the same index shipped
// first: the step starts again from its checkpoint.
var ErrFenced = errors.New("share: another daemon of this workspace shipped these events first")

// ship inserts the rows and moves the origin's checkpoint from expected
// to last in one transaction.
func (p *Publisher) ship(ctx context.Context, c *pgx.Conn, origin string, prev []string, expected, last int64, r *columns) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return p.conn.fail("ship", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if len(prev) > 0 && len(r.row) > 0 {
		// A rebuilt index takes over what its previous origins shipped:
		// their rows of these ids go (a removal each, for the
		// subscribers), the current version ships below.
		if err := removeRows(ctx, tx, p.cfg.Team, `scope = $2 AND origin = ANY($3::text[]) AND id = ANY($4::text[])`,
			p.cfg.Scope, prev, r.id); err != nil {
			return p.conn.fail("ship: take over the rows of this workspace's index before its rebuild", err)
		}
	}
	if len(r.row) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO continuity_events
			(team, scope, origin, machine, origin_row, id, session, kind, ts, user_text, ai_text, reason, previous_session, agent)
			SELECT $1, $2, $3, $4, * FROM unnest($5::bigint[], $6::text[], $7::text[], $8::text[], $9::timestamptz[],
				$10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
			ON CONFLICT DO NOTHING`,
			p.cfg.Team, p.cfg.Scope, origin, p.cfg.Machine, r.row, r.id, r.session, r.kind, r.ts,
			r.user, r.ai, r.reason, r.previous, r.agent); err != nil {
			return p.conn.fail("ship events", err)
		}
	}
	tag, err := tx.Exec(ctx, `UPDATE continuity_origins SET shipped = $1, updated_at = now()
		WHERE team = $2 AND id = $3 AND shipped = $4`, last, p.cfg.Team, origin, expected)
	if err != nil {
		return p.conn.fail("ship: move the checkpoint", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrFenced
	}
	if err := notify(ctx, tx, p.cfg.Team); err != nil {
		return p.conn.fail("ship: notify", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return p.conn.fail("ship: commit", err)
	}
	return nil
}

// pushRemovals records in PostgreSQL the forgets of this index not
// recorded yet (this machine's own sessions: the row deletes its events,
// and tells every subscriber) and the removed lines.
func (p *Publisher) pushRemovals(ctx context.Context, c *pgx.Conn, origin string, prev []string) error {
	forgets, err := p.cfg.DB.Forgets(ctx)
	if err != nil {
		return err
	}
	for s, f := range forgets {
		p.mu.Lock()
		done := p.pushed[s] >= f.At
		p.mu.Unlock()
		if done {
			continue
		}
		if err := p.pushForget(ctx, c, s); err != nil {
			return err
		}
		p.mu.Lock()
		p.pushed[s] = f.At
		p.mu.Unlock()
	}
	for {
		rem, err := p.cfg.DB.ShareRemoved(ctx, 1000)
		if err != nil || len(rem) == 0 {
			return err
		}
		if err := p.pushRemovedLines(ctx, c, origin, prev, rem); err != nil {
			return err
		}
		rows := make([]int64, len(rem))
		for i, r := range rem {
			rows[i] = r.Row
		}
		// Only now that PostgreSQL committed: a crash before this line
		// removes them again, which changes nothing.
		if err := p.cfg.DB.DropShareRemoved(ctx, rows); err != nil {
			return err
		}
		if len(rem) < 1000 {
			return nil
		}
	}
}

// pushRemovedLines deletes the shipped rows of removed lines of this
// index and records their removals for the subscribers, in one
// transaction.
func (p *Publisher) pushRemovedLines(ctx context.Context, c *pgx.Conn, origin string, prev []string, rem []index.SharedRemoval) error {
	rows := make([]int64, len(rem))
	ids := make([]string, len(rem))
	for i, r := range rem {
		rows[i], ids[i] = r.Row, r.EventID
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return p.conn.fail("record removed lines", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The row version this index shipped, or one its previous origins
	// (before a rebuild, place.go: no longer shipping) shipped of that id.
	if err := removeRows(ctx, tx, p.cfg.Team, `(origin = $2 AND origin_row = ANY($3::bigint[])
		OR scope = $4 AND origin = ANY($5::text[]) AND id = ANY($6::text[]))`,
		origin, rows, p.cfg.Scope, prev, ids); err != nil {
		return p.conn.fail("record removed lines", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return p.conn.fail("record removed lines", err)
	}
	return nil
}

// pushForget records the forget of session: its rows deleted and a
// removal for the subscribers, unless it is a teammate's session (then
// its owner's forget was pulled here, or nothing is to be done).
func (p *Publisher) pushForget(ctx context.Context, c *pgx.Conn, session string) error {
	var recorded, others, admin bool
	if err := c.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM continuity_removals WHERE team = $1 AND scope = $2 AND session = $3 AND event_id IS NULL),
		EXISTS (SELECT 1 FROM continuity_events WHERE team = $1 AND scope = $2 AND session = $3 AND author <> current_user),
		EXISTS (SELECT 1 FROM continuity_members WHERE team = $1 AND role_name = current_user AND admin)`,
		p.cfg.Team, p.cfg.Scope, session).Scan(&recorded, &others, &admin); err != nil {
		return p.conn.fail("record a forget", err)
	}
	p.mu.Lock()
	asAdmin := p.adminOK[session]
	p.mu.Unlock()
	if recorded || others && !(admin && asAdmin) {
		return nil // a teammate's session forgotten here only (retention)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return p.conn.fail("record a forget", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `DELETE FROM continuity_events WHERE team = $1 AND scope = $2 AND session = $3`,
		p.cfg.Team, p.cfg.Scope, session); err != nil {
		return p.conn.fail("record a forget", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO continuity_removals (team, scope, session) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, p.cfg.Team, p.cfg.Scope, session); err != nil {
		return p.conn.fail("record a forget", err)
	}
	if err := notify(ctx, tx, p.cfg.Team); err != nil {
		return p.conn.fail("record a forget", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return p.conn.fail("record a forget", err)
	}
	p.cfg.Logger.Info("team memory: forget recorded for the team", "session", session, "team", p.cfg.Team)
	return nil
}

// ErrNotYours refuses the forget of a teammate's session.
var ErrNotYours = errors.New("refused")

// CheckForget says whether this member may forget the session: a session
// pulled from a teammate may be forgotten only by its owner (on their
// machine) or by a team admin. The database decides; when it cannot be
// asked, a teammate's session is refused.
func (p *Publisher) CheckForget(ctx context.Context, session string) error {
	shared, own, err := p.cfg.DB.SessionShared(ctx, session)
	if err != nil || !shared || own {
		return err
	}
	// A connection of its own: the shipping loop's is not to be shared
	// between goroutines.
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := connect(cctx, p.cfg.URL)
	if err != nil {
		return fmt.Errorf("%w: session %s was shared by a teammate, and the team's database cannot be asked whether you are a team admin: %v", ErrNotYours, session, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var owner, machine string
	var admin bool
	err = c.QueryRow(ctx, `SELECT coalesce((SELECT author || ' (machine ' || machine || ')' FROM continuity_events
			WHERE team = $1 AND scope = $2 AND session = $3 AND author <> current_user LIMIT 1), ''), '',
		EXISTS (SELECT 1 FROM continuity_members WHERE team = $1 AND role_name = current_user AND admin)`,
		p.cfg.Team, p.cfg.Scope, session).Scan(&owner, &machine, &admin)
	if err != nil {
		return describe(c.Config(), "check the forget", err)
	}
	if admin {
		// The forget that follows is the team's: recorded in PostgreSQL.
		p.mu.Lock()
		p.adminOK[session] = true
		p.mu.Unlock()
		return nil
	}
	if owner == "" {
		owner = "a teammate"
	}
	return fmt.Errorf("%w: session %s belongs to %s of team %s: only its owner or a team admin can forget it (it stays in your index as theirs)",
		ErrNotYours, session, owner, p.cfg.Team)
}

// Attach makes the publisher's report include the subscriber's figures.
func (p *Publisher) Attach(s *Subscriber) {
	p.mu.Lock()
	p.sub = s
	p.mu.Unlock()
}

// notifyChannel is where a commit of rows is announced (the team as the
// payload), delivered when the transaction commits: subscribers pull at
// once rather than at their next poll.
const notifyChannel = "continuity_share"

func notify(ctx context.Context, tx pgx.Tx, team string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify('`+notifyChannel+`', $1)`, team)
	return err
}
