package engine

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/share"
)

// Share sets up team memory (daemon --share URL --team TEAM): the
// workspace's events shipped to the team's PostgreSQL, its teammates'
// events of the same scope pulled into the index (package share).
type Share struct {
	URL, Team string
	// Scope is the repository: "" takes the normalised git remote of the
	// workspace (share.ScopeOf).
	Scope string
	// Warning, when set, is logged at start (a password on the command
	// line).
	Warning string
}

// assembleShare adds the publisher to the views and makes the
// subscriber, when Options.Share is set.
func (e *Engine) assembleShare() error {
	o := e.opts.Share
	if o == nil {
		return nil
	}
	scope := o.Scope
	if scope == "" {
		var err error
		if scope, err = share.ScopeOf(e.ws.Root); err != nil {
			return err
		}
	}
	if o.Warning != "" {
		e.log.Warn("team memory: " + o.Warning)
	}
	cfg := share.Config{URL: o.URL, Team: o.Team, Scope: scope, Machine: logformat.MachineName(),
		Logs: e.ws.Logs, DB: e.db, Logger: e.log.With("team", o.Team)}
	e.pub = share.NewPublisher(cfg)
	e.sub = share.NewSubscriber(cfg, share.Hooks{
		Committed: e.notifyViews,
		Forget:    e.forgetShared,
		Removed:   func(ctx context.Context, rows []int64) { e.removeRows(ctx, rows, "a teammate's removed lines") },
	})
	e.pub.Attach(e.sub)
	e.views = append(e.views, e.pub)
	e.log.Info("team memory on", "server", e.pub.Report(context.Background()).(share.Report).Server, "team", o.Team, "scope", scope)
	return nil
}

// forgetShared forgets a session its owner (or a team admin) forgot: the
// index and every view, as a forget made here.
func (e *Engine) forgetShared(ctx context.Context, session string, at time.Time) error {
	f, n, err := e.db.ForgetSession(ctx, index.Forget{Session: session, At: at.UnixNano()})
	if err != nil {
		return err
	}
	_ = f
	for _, v := range e.views {
		if err := v.Remove(ctx, follow.Removal{Sessions: []string{session}}); err != nil {
			return err
		}
		v.Notify()
	}
	if n > 0 {
		e.log.Info("team memory: a teammate's forget carried out", "session", session, "events_deleted", n)
	}
	return nil
}

// removeRows makes every view drop deleted rows.
func (e *Engine) removeRows(ctx context.Context, rows []int64, what string) {
	for _, v := range e.views {
		if err := v.Remove(ctx, follow.Removal{Rows: rows}); err != nil {
			e.log.Error("a view could not follow "+what, "view", v.Name(), "err", err)
		}
		v.Notify()
	}
}

// checkShareForget refuses the forget of a teammate's session (only its
// owner or a team admin may). Retention (req.Before: forget --older-than,
// daemon --retain) forgets teammates' old sessions here only: it keeps
// this machine's cache, never the team's memory.
func (e *Engine) checkShareForget(ctx context.Context, req ForgetRequest, sessions []string) error {
	if req.Session == "" {
		return nil
	}
	if e.pub == nil {
		// No daemon sharing (a forget without one): the index still
		// knows a teammate's session by where its events came from.
		for _, s := range sessions {
			shared, own, err := e.db.SessionShared(ctx, s)
			if err != nil || !shared || own {
				if err != nil {
					return err
				}
				continue
			}
			whose := "a teammate"
			if evs, err := e.db.EventsBySession(ctx, s); err == nil && len(evs) > 0 {
				whose = strings.TrimPrefix(path.Dir(evs[0].File), index.SharedPrefix)
			}
			return fmt.Errorf("%w: session %s was shared by %s: only its owner or a team admin can forget it (a team admin: with the daemon running with --share)",
				share.ErrNotYours, s, whose)
		}
		return nil
	}
	for _, s := range sessions {
		if err := e.pub.CheckForget(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
