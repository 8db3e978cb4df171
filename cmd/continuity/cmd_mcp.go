package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/mcpserver"
	wspace "github.com/praxis-os/continuity/workspace"
)

// The MCP server: the same calls as the CLI (through the workspace's
// daemon when one runs, else in-process), as tools for an agent, over
// stdio. stdout carries the MCP protocol only; logs go to stderr.

// mcpTakeover is how often an MCP server that defers to another indexer
// (a daemon, or another MCP server) tries to take the workspace lock, so
// that indexing goes on when that process exits.
const mcpTakeover = 2 * time.Second

// mcpToolTimeout bounds one tool call, so a stuck daemon cannot hang the
// agent forever.
const mcpToolTimeout = 30 * time.Second

const mcpInstructions = `continuity is this workspace's memory across sessions: every exchange logged here can be searched and resumed by later sessions (yours or other agents').
- At the start of a session, or right after your context was reset or compacted, call resume_context (latest=true if you do not know your session id) with query set to what you are about to do.
- After each answer you give, call log_exchange with the user's message and your answer, using one session_id for the whole session.
- When the user refers to earlier work, or before re-deciding something that may have been settled before, call search_conversations.
- When your context is compacted or cleared, call log_context_reset for your session; when you continue an earlier session under a new id, call log_session_resume (previous_session, new_session) once, so that resume_context reaches back to it.
- list_sessions shows which sessions exist.`

func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp [flags]", `
Serve the workspace's memory to an agent as an MCP server over stdio
(stdin/stdout carry the protocol; logs go to stderr). Tools: log_exchange,
log_context_reset, log_session_resume, search_conversations, resume_context,
list_sessions.

When no daemon runs for the workspace, the MCP server indexes the logs
itself for as long as it runs (it takes the workspace lock, like 'continuity
daemon'); when a daemon (or another MCP server) already holds the lock, it
answers through that process and takes over indexing if it exits. Register
it in the agent's MCP settings, e.g. for Claude Code in .mcp.json:

  {"mcpServers":{"continuity":{"command":"continuity","args":["mcp"]}}}

The indexing flags are those of 'continuity daemon'.`)
	var wf watchFlags
	wf.register(fs, true)
	var ef embedFlags
	ef.register(fs)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("unexpected arguments %q", pos)
	}
	level, err := wf.level()
	if err != nil {
		return err
	}
	p, err := e.paths()
	if err != nil {
		return err
	}
	log := e.logger(level)

	// Index in-process unless another process does; the first attempt is
	// made before serving (when the workspace is known), so the first call
	// finds the index and the socket.
	ictx, stopIndexing := context.WithCancel(ctx)
	var (
		mu       sync.Mutex // start (from the roots' goroutine) against the end
		ended    bool
		indexing sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		ended = true
		mu.Unlock()
		stopIndexing()
		indexing.Wait()
	}()
	start := func(p paths) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		ix := &mcpIndexer{p: p, wf: wf, ef: ef, log: log}
		d := ix.open()
		indexing.Add(1)
		go func() {
			defer indexing.Done()
			ix.loop(ictx, d)
		}()
	}
	client := func(p paths) *engine.Client { return engine.NewClient(p.layout(), envEmbedder().embedder, e.stderr) }
	ws := newMCPWorkspace(log, client, start)
	if p.named || !wspace.Broad(p.root) {
		how := "the folder it started in"
		if p.named {
			how = "--root"
		}
		ws.decide(p, how)
	} // else: the client's roots decide (mcp_workspace.go)

	var sdkLog *slog.Logger
	if level <= slog.LevelDebug {
		sdkLog = log.With("component", "mcp-sdk")
	}
	srv := newMCPServer(ws, p, log, sdkLog)
	out := mcpserver.NewStdout(e.stdout)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(mcpserver.NewStdin(e.stdin, out, log, mcpToolTimeout+5*time.Second)), Writer: nopWriteCloser{out}})
	switch {
	case ctx.Err() != nil, err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil // signal, or the client closed stdin: a normal end
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpIndexer runs the workspace's engine in-process while this process
// holds the workspace lock, and keeps trying to take it while another
// process holds it: never two writers, and never none for long.
type mcpIndexer struct {
	p       paths
	wf      watchFlags
	ef      embedFlags
	log     *slog.Logger
	lastErr string
}

// open tries once to become the workspace's daemon; nil when another
// process is (or the index cannot be opened: then calls are answered from
// the index as it is).
func (ix *mcpIndexer) open() *engine.Engine {
	eng, err := ix.openEngine()
	if err == nil {
		ix.lastErr = ""
		ix.log.Info("mcp: no daemon runs for this workspace; indexing in-process", "workspace", ix.p.root)
		return eng
	}
	if msg := err.Error(); msg != ix.lastErr {
		ix.lastErr = msg
		if errors.Is(err, engine.ErrLocked) {
			ix.log.Info("mcp: another process indexes this workspace; answering through it", "why", err)
		} else {
			ix.log.Warn("mcp: cannot index in-process; answering from the index as it is", "err", err)
		}
	}
	return nil
}

func (ix *mcpIndexer) openEngine() (*engine.Engine, error) {
	emb, err := ix.ef.embedder()
	if err != nil {
		return nil, err
	}
	return engine.Open(ix.p.layout(), ix.wf.options(ix.log, emb))
}

// loop runs eng (when not nil) until ctx ends, and retries open every
// mcpTakeover while it returns nil.
func (ix *mcpIndexer) loop(ctx context.Context, eng *engine.Engine) {
	for {
		if eng != nil {
			if err := eng.Run(ctx); err != nil && ctx.Err() == nil {
				ix.log.Error("mcp: in-process indexing stopped", "err", err)
				ix.lastErr = ""
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(mcpTakeover):
		}
		eng = ix.open()
	}
}

// Tool inputs and outputs. The jsonschema tags are the descriptions the
// agent sees; fields without omitempty are required.

type logExchangeIn struct {
	SessionID string         `json:"session_id" jsonschema:"your session id: the same for every exchange of this session (1-128 chars of A-Z a-z 0-9 . _ : @ + -, starting with a letter or digit)"`
	User      string         `json:"user" jsonschema:"the user's message, verbatim"`
	AI        string         `json:"ai" jsonschema:"your answer (verbatim, or a faithful summary when very long)"`
	Files     []string       `json:"files,omitempty" jsonschema:"paths of the files the exchange read or changed, relative to the workspace"`
	Metadata  map[string]any `json:"metadata,omitempty" jsonschema:"any extra JSON object to keep with the exchange (model, tool names, ...)"`
	ID        string         `json:"id,omitempty" jsonschema:"idempotency key: logging again with the same id is indexed once (default: a new UUID)"`
}

type logExchangeOut struct {
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
	Since   string `json:"since,omitempty" jsonschema:"only exchanges at or after this time: RFC 3339 (2026-11-22T10:00:00Z) or a date (2026-11-22, UTC), or an age, that long ago (7d, 2w, 12h)"`
	Until   string `json:"until,omitempty" jsonschema:"only exchanges before this time (RFC 3339, or an age: 7d, 12h ago), or up to the end of this day (a date, YYYY-MM-DD, UTC: the day included)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most results (default 10, at most 200)"`
	Context int    `json:"context,omitempty" jsonschema:"add to each result up to this many exchanges of its session before and after it (0 to 10; like grep -C), as context, not matches: a question's answer is often the next exchange ('go with it'), and a 'done' is explained by the one before"`
	// MinScore: a pointer, so that 0 (keep everything) differs from absent.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out results whose score (a relevance estimate from 0 to 1, comparable across queries) is under this; absent: results down to 0.1 are kept once one scores 0.2, and when none does the few closest are returned marked weak; 0 keeps every match however weak"`
}

type emptyIn struct{}

// newMCPServer builds the MCP server and its tools: those that log
// events (through the same writer as `continuity log`) and those that
// ask the workspace (c: its daemon, else its index).
// fallback is the workspace of the folder it started in, used when the
// client's roots give none.
func newMCPServer(ws *mcpWorkspace, fallback paths, log, sdkLog *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "continuity", Title: "continuity: memory across sessions", Version: engine.Version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: sdkLog, InitializedHandler: ws.initialized(fallback)})
	get := func(ctx context.Context, req *mcp.CallToolRequest) (paths, *engine.Client, error) {
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

// mcpWorkspaceOf is how a tool finds the workspace it serves.
type mcpWorkspaceOf func(context.Context, *mcp.CallToolRequest) (paths, *engine.Client, error)

// addLogTools adds log_exchange, log_context_reset and log_session_resume.
func addLogTools(srv *mcp.Server, ws mcpWorkspaceOf, log *slog.Logger) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "log_exchange",
		Title: "Log an exchange",
		Description: "Record one exchange (the user's message and your answer) in this workspace's conversation memory, " +
			"so later sessions can search and resume it. Call it after each answer you give, with the same session_id " +
			"for the whole session. The line is validated and appended atomically to " +
			".praxis-os/.conversations/session-<session_id>~<machine>.jsonl; returns its id and file.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, guard(log, "log_exchange", func(ctx context.Context, req *mcp.CallToolRequest, in logExchangeIn) (*mcp.CallToolResult, logExchangeOut, error) {
		p, _, err := ws(ctx, req)
		if err != nil {
			return nil, logExchangeOut{}, err
		}
		out, err := mcpLogExchange(p, in)
		return nil, out, err
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "log_context_reset",
		Title: "Log a context reset",
		Description: "Record that your context window was reset (compacted, cleared, or full) in session_id. Call it right " +
			"after a compaction or /clear, then resume_context(session_id, include_current=true): the exchanges before the " +
			"reset are no longer in your window, and resume brings back what matters from them.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, guard(log, "log_context_reset", func(ctx context.Context, req *mcp.CallToolRequest, in logResetIn) (*mcp.CallToolResult, logExchangeOut, error) {
		if in.SessionID == "" {
			return nil, logExchangeOut{}, errors.New("session_id is empty: give the session whose context was reset")
		}
		p, _, err := ws(ctx, req)
		if err != nil {
			return nil, logExchangeOut{}, err
		}
		out, err := mcpAppend(p, logRequest{Type: logformat.TypeContextReset, Session: in.SessionID, Reason: in.Reason, ID: in.ID})
		return nil, out, err
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "log_session_resume",
		Title: "Log a session resume",
		Description: "Record that new_session continues previous_session (a resumed, continued or handed-over session), so " +
			"that resume_context and search over new_session's chain reach back into previous_session. Call it once, at " +
			"the start of the new session, when you know the session you continue.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, guard(log, "log_session_resume", func(ctx context.Context, req *mcp.CallToolRequest, in logResumeIn) (*mcp.CallToolResult, logExchangeOut, error) {
		switch {
		case in.PreviousSession == "" || in.NewSession == "":
			return nil, logExchangeOut{}, errors.New("give both previous_session and new_session")
		case in.PreviousSession == in.NewSession:
			return nil, logExchangeOut{}, errors.New("previous_session and new_session are the same session")
		}
		id := in.ID
		if id == "" {
			id = "resume:" + in.PreviousSession + ":" + in.NewSession
		}
		p, _, err := ws(ctx, req)
		if err != nil {
			return nil, logExchangeOut{}, err
		}
		out, err := mcpAppend(p, logRequest{Type: logformat.TypeSessionResume, Previous: in.PreviousSession, New: in.NewSession, ID: id})
		return nil, out, err
	}))

}

// addQueryTools adds resume_context, list_sessions and search_conversations.
func addQueryTools(srv *mcp.Server, ws mcpWorkspaceOf, log *slog.Logger) {
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
	}, guard(log, "resume_context", func(ctx context.Context, req *mcp.CallToolRequest, in resumeIn) (*mcp.CallToolResult, *mcpserver.ResumeOut, error) {
		switch {
		case in.Latest && in.SessionID != "":
			return nil, nil, errors.New("give session_id or latest, not both")
		case !in.Latest && in.SessionID == "":
			return nil, nil, errors.New("which session? give session_id, or latest=true (see list_sessions)")
		case in.Budget < 0:
			return nil, nil, fmt.Errorf("budget %d: must be a positive number of tokens", in.Budget)
		}
		includeCurrent := latestIncludesCurrent(in.Latest, in.IncludeCurrent)
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
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, mcpserver.Resume(&pack), nil
	}))

	mcp.AddTool(srv, &mcp.Tool{
		Name:  "list_sessions",
		Title: "List sessions",
		Description: "List the sessions recorded in this workspace, oldest first: id, first and last event time (UTC), " +
			"exchanges, context resets, and resume links (the sessions each one resumes and is resumed by). Call it to " +
			"find a session id for resume_context or search_conversations.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, guard(log, "list_sessions", func(ctx context.Context, req *mcp.CallToolRequest, _ emptyIn) (*mcp.CallToolResult, *mcpserver.SessionsOut, error) {
		_, c, err := ws(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		resp, err := c.Sessions(ctx)
		if err != nil {
			return nil, nil, err
		}
		return nil, mcpserver.Sessions(&resp), nil
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
	}, guard(log, "search_conversations", func(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, *mcpserver.SearchOut, error) {
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
		if text := mcpserver.SearchText(in.Query, &resp); text != "" {
			// Said in words: an empty or weak list reads too easily as
			// "no history", as a failure, or as the answer; the JSON
			// follows, as the tool's structured content.
			out := mcpserver.Search(&resp)
			data, err := json.Marshal(out)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(data)}}}, out, nil
		}
		return nil, mcpserver.Search(&resp), nil
	}))
}

// mcpLogExchange appends an exchange through the same writer as
// `continuity log`.
func mcpLogExchange(p paths, in logExchangeIn) (logExchangeOut, error) {
	r := logRequest{Type: logformat.TypeExchange, Session: in.SessionID, User: in.User, AI: in.AI, ID: in.ID, Files: in.Files}
	if in.SessionID == "" {
		return logExchangeOut{}, errors.New("session_id is empty: give your session's id")
	}
	if in.Metadata != nil {
		m, err := json.Marshal(in.Metadata)
		if err != nil {
			return logExchangeOut{}, fmt.Errorf("metadata: %w", err)
		}
		r.Metadata = string(m)
	}
	return mcpAppend(p, r)
}

// mcpAppend validates and appends one event through the same writer as
// `continuity log`.
func mcpAppend(p paths, r logRequest) (logExchangeOut, error) {
	line, ev, err := eventFromFlags(r)
	if err != nil {
		return logExchangeOut{}, err
	}
	to, err := logFileName("", ev)
	if err != nil {
		return logExchangeOut{}, err
	}
	if err := p.layout().PrepareLogs(); err != nil {
		return logExchangeOut{}, err
	}
	if r.ID != "" {
		// An id the agent chose: a retry gets its first line back.
		prev, err := logformat.FindLogged(filepath.Join(p.logs, to), line)
		if err != nil {
			return logExchangeOut{}, err
		}
		if prev != nil && !prev.Same {
			return logExchangeOut{}, fmt.Errorf("id %q is already used by another event at %s:%d: give each event its own id (a retry repeats the same event)", ev.ID, to, prev.Line)
		}
		if prev != nil {
			if first, err := logformat.Parse(prev.Text, to, time.Now()); err == nil {
				ev = first
			}
			line = nil
		}
	}
	if line != nil {
		if err := logformat.AppendLine(filepath.Join(p.logs, to), line); err != nil {
			return logExchangeOut{}, err
		}
	}
	rel, err := filepath.Rel(p.root, filepath.Join(p.logs, to))
	if err != nil {
		rel = filepath.Join(p.logs, to)
	}
	return logExchangeOut{ID: ev.ID, SessionID: ev.SessionID, Timestamp: mcpserver.Time(ev.Timestamp), File: rel, Workspace: p.root}, nil
}

// guard makes a tool handler safe to expose: a panic becomes a tool error
// (the server goes on), and a call is bounded by mcpToolTimeout.
func guard[In, Out any](log *slog.Logger, name string, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("mcp: tool panicked", "tool", name, "panic", r, "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error in %s: %v", name, r)
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, mcpToolTimeout)
		defer cancel()
		start := time.Now()
		res, out, err = h(ctx, req, in)
		log.Debug("mcp: tool call", "tool", name, "took", time.Since(start), "err", err)
		return res, out, mcpserver.Error(err)
	}
}

func ptr[T any](v T) *T { return &v }
