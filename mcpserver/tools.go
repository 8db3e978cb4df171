package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/workspace"
)

// Tool inputs and outputs. The jsonschema tags are the descriptions the
// agent sees; fields without omitempty are required.

type logExchangeIn struct {
	SessionID string         `json:"session_id" jsonschema:"your session id: the same for every exchange of this session (1-128 chars of A-Z a-z 0-9 . _ : @ + -, starting with a letter or digit)"`
	User      string         `json:"user" jsonschema:"the user's message, verbatim"`
	AI        string         `json:"ai" jsonschema:"your answer (verbatim, or a faithful summary when very long)"`
	Files     []string       `json:"files,omitempty" jsonschema:"workspace.Layout of the files the exchange read or changed, relative to the workspace"`
	Metadata  map[string]any `json:"metadata,omitempty" jsonschema:"any extra JSON object to keep with the exchange (model, tool names, ...)"`
	ID        string         `json:"id,omitempty" jsonschema:"idempotency key: logging again with the same id is indexed once (default: a new UUID)"`
}

type LogOut struct {
	ID        string `json:"id" jsonschema:"the event's id"`
	SessionID string `json:"session_id"`
	Timestamp string `json:"timestamp"`
	File      string `json:"file" jsonschema:"the log file the line was appended to, relative to the workspace"`
	Workspace string `json:"workspace" jsonschema:"the workspace (absolute path) whose memory holds it"`
}

type logResetIn struct {
	SessionID string `json:"session_id" jsonschema:"the session whose context was reset or compacted (your session id)"`
	Reason    string `json:"reason,omitempty" jsonschema:"why, in a few words (e.g. 'compacted', 'cleared', 'window full')"`
	ID        string `json:"id,omitempty" jsonschema:"idempotency key (default: a new UUID)"`
}

type logResumeIn struct {
	PreviousSession string `json:"previous_session" jsonschema:"the earlier session this one continues"`
	NewSession      string `json:"new_session" jsonschema:"the session that continues it (your current session id)"`
	ID              string `json:"id,omitempty" jsonschema:"idempotency key (default: derived from the two ids, so recording the same link twice stores it once)"`
}

type resumeIn struct {
	SessionID      string `json:"session_id,omitempty" jsonschema:"the session to resume into (your current session id); give this or latest"`
	Latest         bool   `json:"latest,omitempty" jsonschema:"resume the session of the most recent event in the workspace (when you do not know your session id)"`
	Query          string `json:"query,omitempty" jsonschema:"what you are about to do: steers which past exchanges are chosen"`
	Budget         int    `json:"budget,omitempty" jsonschema:"most tokens of the returned text (default 2000)"`
	IncludeCurrent *bool  `json:"include_current,omitempty" jsonschema:"also include the session's exchanges after its latest context reset, assumed to be still in your window (default: false with session_id; true with latest, as a new session has none of them in its window)"`
}

type searchIn struct {
	Query   string `json:"query" jsonschema:"what to look for: words, an error message, a file or function name, a question; a time it names ('last week', 'two days ago', 'yesterday') ranks that span's exchanges higher"`
	Session string `json:"session,omitempty" jsonschema:"only this session's exchanges"`
	Chain   string `json:"chain,omitempty" jsonschema:"only this session and the sessions it resumes (its session_resume links, followed back)"`
	Since   string `json:"since,omitempty" jsonschema:"only exchanges at or after this time: RFC 3339 (2026-11-22T10:00:00Z) or a date (2026-11-22, UTC), or an age, that long ago (7d, 2w, 12h), or the start of a day or span in words ('yesterday', 'last week', '3 days ago')"`
	Until   string `json:"until,omitempty" jsonschema:"only exchanges before this time (RFC 3339, or an age: 7d, 12h ago), or up to the end of this day (a date, YYYY-MM-DD, UTC: the day included) or of a day or span in words ('yesterday', 'last week': included)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most results (default 10, at most 200)"`
	Context int    `json:"context,omitempty" jsonschema:"add to each result up to this many exchanges of its session before and after it (0 to 10; like grep -C), as context, not matches: a question's answer is often the next exchange ('go with it'), and a 'done' is explained by the one before"`
	// MinScore: a pointer, so that 0 (keep everything) differs from absent.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out results whose score (a relevance estimate from 0 to 1, comparable across queries) is under this; absent: results down to 0.1 are kept once one scores 0.2, and when none does the few closest are returned marked weak; 0 keeps every match however weak"`
}

type emptyIn struct{}

// NewServer builds the MCP server and its tools: those that log
// events (through the same writer as `continuity log`) and those that
// ask the workspace (c: its daemon, else its index).
// fallback is the workspace of the folder it started in, used when the
// client's roots give none.
func NewServer(ws *served, fallback workspace.Layout, log, sdkLog *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "continuity", Title: "continuity: memory across sessions", Version: engine.Version},
		&mcp.ServerOptions{Instructions: Instructions, Logger: sdkLog, InitializedHandler: ws.initialized(fallback)})
	get := func(ctx context.Context, req *mcp.CallToolRequest) (workspace.Layout, *engine.Client, error) {
		var ss *mcp.ServerSession
		if req != nil {
			ss = req.Session
		}
		return ws.get(ctx, ss, fallback)
	}
	addLogTools(srv, get, log)
	addQueryTools(srv, get, log)
	return srv
}

// workspaceOf is how a tool finds the workspace it serves.
type workspaceOf func(context.Context, *mcp.CallToolRequest) (workspace.Layout, *engine.Client, error)

// addLogTools adds log_exchange, log_context_reset and log_session_resume.
func addLogTools(srv *mcp.Server, ws workspaceOf, log *slog.Logger) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "log_exchange",
		Title: "Log an exchange",
		Description: "Record one exchange (the user's message and your answer) in this workspace's conversation memory, " +
			"so later sessions can search and resume it. Call it after each answer you give, with the same session_id " +
			"for the whole session. The line is validated and appended atomically to " +
			".praxis-os/.conversations/session-<session_id>~<machine>.jsonl; returns its id and file.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, guard(log, "log_exchange", func(ctx context.Context, req *mcp.CallToolRequest, in logExchangeIn) (*mcp.CallToolResult, LogOut, error) {
		p, _, err := ws(ctx, req)
		if err != nil {
			return nil, LogOut{}, err
		}
		out, err := logExchange(p, in)
		return nil, out, err
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "log_context_reset",
		Title: "Log a context reset",
		Description: "Record that your context window was reset (compacted, cleared, or full) in session_id. Call it right " +
			"after a compaction or /clear, then resume_context(session_id, include_current=true): the exchanges before the " +
			"reset are no longer in your window, and resume brings back what matters from them.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, guard(log, "log_context_reset", func(ctx context.Context, req *mcp.CallToolRequest, in logResetIn) (*mcp.CallToolResult, LogOut, error) {
		if in.SessionID == "" {
			return nil, LogOut{}, errors.New("session_id is empty: give the session whose context was reset")
		}
		p, _, err := ws(ctx, req)
		if err != nil {
			return nil, LogOut{}, err
		}
		out, err := AppendEvent(p, logformat.Request{Type: logformat.TypeContextReset, Session: in.SessionID, Reason: in.Reason, ID: in.ID})
		return nil, out, err
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "log_session_resume",
		Title: "Log a session resume",
		Description: "Record that new_session continues previous_session (a resumed, continued or handed-over session), so " +
			"that resume_context and search over new_session's chain reach back into previous_session. Call it once, at " +
			"the start of the new session, when you know the session you continue.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, guard(log, "log_session_resume", func(ctx context.Context, req *mcp.CallToolRequest, in logResumeIn) (*mcp.CallToolResult, LogOut, error) {
		switch {
		case in.PreviousSession == "" || in.NewSession == "":
			return nil, LogOut{}, errors.New("give both previous_session and new_session")
		case in.PreviousSession == in.NewSession:
			return nil, LogOut{}, errors.New("previous_session and new_session are the same session")
		}
		id := in.ID
		if id == "" {
			id = "resume:" + in.PreviousSession + ":" + in.NewSession
		}
		p, _, err := ws(ctx, req)
		if err != nil {
			return nil, LogOut{}, err
		}
		out, err := AppendEvent(p, logformat.Request{Type: logformat.TypeSessionResume, Previous: in.PreviousSession, New: in.NewSession, ID: id})
		return nil, out, err
	}))

}

// addQueryTools adds resume_context, list_sessions and search_conversations.
func addQueryTools(srv *mcp.Server, ws workspaceOf, log *slog.Logger) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "resume_context",
		Title: "Resume context",
		Description: "Get what you need from this workspace's past to continue a session: a markdown text (within a token " +
			"budget) of the relevant earlier exchanges of the session and of the sessions it resumes, what was being done " +
			"just before the latest context reset, and the files involved. Call it at the start of a new session " +
			"(latest=true: the workspace's most recent session, in full) or right after your context was reset or " +
			"compacted (session_id=your session and include_current=true: its exchanges left your window), with query set " +
			"to what you are about to do.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, guard(log, "resume_context", func(ctx context.Context, req *mcp.CallToolRequest, in resumeIn) (*mcp.CallToolResult, *ResumeOut, error) {
		switch {
		case in.Latest && in.SessionID != "":
			return nil, nil, errors.New("give session_id or latest, not both")
		case !in.Latest && in.SessionID == "":
			return nil, nil, errors.New("which session? give session_id, or latest=true (see list_sessions)")
		case in.Budget < 0:
			return nil, nil, fmt.Errorf("budget %d: must be a positive number of tokens", in.Budget)
		}
		includeCurrent := engine.IncludeCurrent(in.Latest, in.IncludeCurrent)
		_, c, err := ws(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		pack, err := c.Resume(ctx, engine.ResumeRequest{Session: in.SessionID, Latest: in.Latest, Query: in.Query,
			Budget: in.Budget, IncludeCurrent: includeCurrent})
		if err != nil {
			return nil, nil, err
		}
		text := pack.Text
		if text == "" {
			text = "(nothing to resume from: no earlier exchanges for this session)"
		}
		if p := pack.Pending; p != nil {
			text = fmt.Sprintf("(Note: %s.)\n\n%s", p.Note, text)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, Resume(&pack), nil
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "list_sessions",
		Title: "List sessions",
		Description: "List the sessions recorded in this workspace, oldest first: id, first and last event time (UTC), " +
			"exchanges, context resets, and resume links (the sessions each one resumes and is resumed by). Call it to " +
			"find a session id for resume_context or search_conversations.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, guard(log, "list_sessions", func(ctx context.Context, req *mcp.CallToolRequest, _ emptyIn) (*mcp.CallToolResult, *SessionsOut, error) {
		_, c, err := ws(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		resp, err := c.Sessions(ctx)
		if err != nil {
			return nil, nil, err
		}
		return nil, Sessions(&resp), nil
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "search_conversations",
		Title: "Search past conversations",
		Description: "Search this workspace's past conversations (every logged session, also those whose context is gone) " +
			"for exchanges about something: returns the best-matching exchanges, best first, with their session, time, " +
			"text and log file:line. Call it when the user refers to earlier work (\"as we did before\", \"why did we " +
			"choose X\"), before deciding again something that may have been settled, or for the history of an error, " +
			"a file or a feature. Results are ordered by score (higher first; at equal score the newer first); a result " +
			"superseded_by a later one asked the same question and got another answer: trust the later one. Weak results " +
			"(weak: true) are only the closest matches. A query naming only a time ('what did we do yesterday') lists that " +
			"span's exchanges, newest first. Filters: session, chain (a session and those it resumes), since/until, limit. " +
			"context: 1 or 2 adds each result's neighbouring exchanges of its session (the answer to a question found, " +
			"the question of an answer found), marked as context.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, guard(log, "search_conversations", func(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, *SearchOut, error) {
		if strings.TrimSpace(in.Query) == "" {
			return nil, nil, errors.New("query is empty: give words to search for")
		}
		_, c, err := ws(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		resp, err := c.Search(ctx, engine.SearchRequest{Query: in.Query, Session: in.Session, Chain: in.Chain,
			Since: in.Since, Until: in.Until, Limit: in.Limit, MinScore: in.MinScore, Context: in.Context})
		if err != nil {
			return nil, nil, err
		}
		if text := SearchText(in.Query, &resp); text != "" {
			// Said in words: an empty or weak list reads too easily as
			// "no history", as a failure, or as the answer; the JSON
			// follows, as the tool's structured content.
			out := Search(&resp)
			data, err := json.Marshal(out)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(data)}}}, out, nil
		}
		return nil, Search(&resp), nil
	}))
}

// mcpLogExchange appends an exchange through the same writer as
// `continuity log`.
func logExchange(p workspace.Layout, in logExchangeIn) (LogOut, error) {
	r := logformat.Request{Type: logformat.TypeExchange, Session: in.SessionID, User: in.User, AI: in.AI, ID: in.ID, Files: in.Files}
	if in.SessionID == "" {
		return LogOut{}, errors.New("session_id is empty: give your session's id")
	}
	if in.Metadata != nil {
		m, err := json.Marshal(in.Metadata)
		if err != nil {
			return LogOut{}, fmt.Errorf("metadata: %w", err)
		}
		r.Metadata = string(m)
	}
	return AppendEvent(p, r)
}

// mcpAppend validates and appends one event through the same writer as
// `continuity log`.
func AppendEvent(p workspace.Layout, r logformat.Request) (LogOut, error) {
	line, ev, err := logformat.Build(r)
	if err != nil {
		return LogOut{}, err
	}
	to, err := logformat.FileName("", ev)
	if err != nil {
		return LogOut{}, err
	}
	if err := p.PrepareLogs(); err != nil {
		return LogOut{}, err
	}
	if r.ID != "" {
		// An id the agent chose: a retry gets its first line back.
		prev, err := logformat.FindLogged(filepath.Join(p.Logs, to), line)
		if err != nil {
			return LogOut{}, err
		}
		if prev != nil && !prev.Same {
			return LogOut{}, fmt.Errorf("id %q is already used by another event at %s:%d: give each event its own id (a retry repeats the same event)", ev.ID, to, prev.Line)
		}
		if prev != nil {
			if first, err := logformat.Parse(prev.Text, to, time.Now()); err == nil {
				ev = first
			}
			line = nil
		}
	}
	if line != nil {
		if err := logformat.AppendLine(filepath.Join(p.Logs, to), line); err != nil {
			return LogOut{}, err
		}
	}
	rel, err := filepath.Rel(p.Root, filepath.Join(p.Logs, to))
	if err != nil {
		rel = filepath.Join(p.Logs, to)
	}
	return LogOut{ID: ev.ID, SessionID: ev.SessionID, Timestamp: Time(ev.Timestamp), File: rel, Workspace: p.Root}, nil
}

// guard makes a tool handler safe to expose: a panic becomes a tool error
// (the server goes on), and a call is bounded by ToolTimeout.
func guard[In, Out any](log *slog.Logger, name string, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("mcp: tool panicked", "tool", name, "panic", r, "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error in %s: %v", name, r)
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, ToolTimeout)
		defer cancel()
		start := time.Now()
		res, out, err = h(ctx, req, in)
		log.Debug("mcp: tool call", "tool", name, "took", time.Since(start), "err", err)
		return res, out, Error(err)
	}
}

func ptr[T any](v T) *T { return &v }
