package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/server"
)

// The queries continuity answers are "calls": a name, a JSON request and a
// JSON response. The daemon serves them on its socket (it holds the vector
// collection in memory); without a daemon the same handlers run in-process
// on a read-only index. Both ways go through handlers below, so the CLI, the
// MCP server and the daemon give the same answers.

// resumeRequest asks for a resume pack (see resume.Options).
type resumeRequest struct {
	Session        string `json:"session,omitempty"`
	Latest         bool   `json:"latest,omitempty"`
	Query          string `json:"query,omitempty"`
	Budget         int    `json:"budget,omitempty"`
	IncludeCurrent bool   `json:"include_current,omitempty"`
	MaxDepth       int    `json:"max_depth,omitempty"`
	Tokenizer      string `json:"tokenizer,omitempty"`
}

// sessionsResponse lists the sessions.
type sessionsResponse struct {
	Sessions []sessionRow `json:"sessions"`
}

// handler answers one call on an engine.
type handler func(ctx context.Context, eng *engine, req json.RawMessage) (any, error)

// handlers are every call, by name.
var handlers = map[string]handler{
	"resume":   handleResume,
	"sessions": handleSessions,
}

func handleResume(ctx context.Context, eng *engine, raw json.RawMessage) (any, error) {
	var req resumeRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, server.BadRequest(fmt.Errorf("resume request: %w", err))
	}
	pack, err := resume.Build(ctx, eng.resumeSource(), resume.Options{
		Session: req.Session, Latest: req.Latest, Query: req.Query, Budget: req.Budget,
		IncludeCurrent: req.IncludeCurrent, MaxDepth: req.MaxDepth, Encoding: req.Tokenizer,
	})
	switch {
	case errors.Is(err, resume.ErrUnknownSession):
		return nil, server.BadRequest(fmt.Errorf("unknown session %q (see 'continuity sessions')", req.Session))
	case errors.Is(err, resume.ErrNoSessions):
		return nil, server.BadRequest(err)
	case err != nil:
		return nil, err
	}
	return pack, nil
}

func handleSessions(ctx context.Context, eng *engine, _ json.RawMessage) (any, error) {
	rows, err := listSessions(ctx, eng.db)
	if err != nil {
		return nil, err
	}
	return sessionsResponse{Sessions: rows}, nil
}

// engine is what answers calls: the index and, in the daemon, the search
// state that lives in memory.
type engine struct {
	db *index.DB
}

func (eng *engine) resumeSource() *resume.IndexSource {
	return &resume.IndexSource{DB: eng.db, Ranker: resume.LexicalRanker(eng.db)}
}

// dispatch runs a call in-process: the same JSON round trip as through the
// socket, so both ways answer alike.
func (eng *engine) dispatch(ctx context.Context, name string, req, resp any) error {
	h := handlers[name]
	if h == nil {
		return fmt.Errorf("no call named %q", name)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := h(ctx, eng, raw)
	if err != nil {
		var se *server.Error
		if errors.As(err, &se) && se.Code == 2 {
			return &exitError{code: 2, err: err}
		}
		return err
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, resp)
}

// register makes the daemon's server answer every call on eng.
func (eng *engine) register(srv *server.Server) {
	for name, h := range handlers {
		srv.Handle(name, func(ctx context.Context, req json.RawMessage) (any, error) { return h(ctx, eng, req) })
	}
}

// query answers a call through the workspace's daemon when one runs, else
// in-process on the index opened read-only.
func query(ctx context.Context, p paths, name string, req, resp any) error {
	err := server.NewClient(server.SocketPath(p.cache)).Call(ctx, name, req, resp)
	var se *server.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &exitError{code: max(se.Code, 1), err: se}
	case !errors.Is(err, server.ErrNoDaemon):
		return err
	}
	db, err := openReader(p)
	if err != nil {
		return err
	}
	defer db.Close()
	eng := &engine{db: db}
	return eng.dispatch(ctx, name, req, resp)
}

// listSessions lists the sessions with their resume links, newest link
// first.
func listSessions(ctx context.Context, db *index.DB) ([]sessionRow, error) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	links, err := db.AllLinks(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]sessionRow, 0, len(ss))
	byID := map[string]int{}
	for _, s := range ss {
		byID[s.ID] = len(rows)
		rows = append(rows, sessionRow{ID: s.ID, First: s.First, Last: s.Last, Exchanges: s.Exchanges,
			Resets: s.Resets, Events: s.Events, Resumes: []string{}, ResumedBy: []string{}})
	}
	// AllLinks is oldest first; list the newest link first.
	for i := len(links) - 1; i >= 0; i-- {
		l := links[i]
		if k, ok := byID[l.New]; ok {
			rows[k].Resumes = append(rows[k].Resumes, l.Previous)
		}
		if k, ok := byID[l.Previous]; ok {
			rows[k].ResumedBy = append(rows[k].ResumedBy, l.New)
		}
	}
	return rows, nil
}
