package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/workspace"
)

// The MCP server: the same calls as the CLI (through the workspace's
// daemon when one runs, else in-process), as tools for an agent, over
// stdio. stdout carries the MCP protocol only; logs go to stderr.

// Takeover is how often an MCP server that defers to another indexer
// (a daemon, or another MCP server) tries to take the workspace lock, so
// that indexing goes on when that process exits.
const Takeover = 2 * time.Second

// ToolTimeout bounds one tool call, so a stuck daemon cannot hang the
// agent forever.
const ToolTimeout = 30 * time.Second

const Instructions = `continuity is this workspace's memory across sessions: every exchange logged here can be searched and resumed by later sessions (yours or other agents').
- At the start of a session, or right after your context was reset or compacted, call resume_context (latest=true if you do not know your session id) with query set to what you are about to do.
- After each answer you give, call log_exchange with the user's message and your answer, using one session_id for the whole session.
- When the user refers to earlier work, or before re-deciding something that may have been settled before, call search_conversations.
- When your context is compacted or cleared, call log_context_reset for your session; when you continue an earlier session under a new id, call log_session_resume (previous_session, new_session) once, so that resume_context reaches back to it.
- list_sessions shows which sessions exist.`

// Config is what Serve needs of its command.
type Config struct {
	// Workspace is the folder the server started in (or --root); Decided
	// says it is the workspace to serve (--root, or a project's folder);
	// else (a broad folder: the home folder, a filesystem root) the
	// client's roots decide (workspace.go), How says why.
	Workspace workspace.Layout
	Decided   bool
	How       string
	// Client asks a workspace's questions (its daemon, else its index).
	Client func(workspace.Layout) *engine.Client
	// OpenEngine opens a workspace's engine to index it in-process (the
	// daemon's flags and embedder); engine.ErrLocked when another
	// process indexes it.
	OpenEngine func(workspace.Layout) (*engine.Engine, error)
	// Log gets the server's logs; SDKLog, when not nil, the SDK's.
	Log, SDKLog *slog.Logger
	Stdin       io.Reader
	Stdout      io.Writer
}

// Serve serves the workspace's memory over stdin and stdout until ctx
// ends or the client closes stdin (a normal end: nil). While no other
// process indexes the workspace, it indexes it in-process.
func Serve(ctx context.Context, cfg Config) error {
	log := cfg.Log
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
	start := func(l workspace.Layout) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		ix := &indexer{ws: l, open: cfg.OpenEngine, log: log}
		d := ix.try()
		indexing.Add(1)
		go func() {
			defer indexing.Done()
			ix.loop(ictx, d)
		}()
	}
	ws := newServed(log, cfg.Client, start)
	if cfg.Decided {
		ws.decide(cfg.Workspace, cfg.How)
	} // else: the client's roots decide (workspace.go)
	srv := NewServer(ws, cfg.Workspace, log, cfg.SDKLog)
	out := NewStdout(cfg.Stdout)
	err := srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(NewStdin(cfg.Stdin, out, log, ToolTimeout+5*time.Second)), Writer: nopWriteCloser{out}})
	switch {
	case ctx.Err() != nil, err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil // signal, or the client closed stdin: a normal end
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// indexer runs the workspace's engine in-process while this process
// holds the workspace lock, and keeps trying to take it while another
// process holds it: never two writers, and never none for long.
type indexer struct {
	ws      workspace.Layout
	open    func(workspace.Layout) (*engine.Engine, error)
	log     *slog.Logger
	lastErr string
}

// try tries once to become the workspace's daemon; nil when another
// process is (or the index cannot be opened: then calls are answered from
// the index as it is).
func (ix *indexer) try() *engine.Engine {
	eng, err := ix.open(ix.ws)
	if err == nil {
		ix.lastErr = ""
		ix.log.Info("mcp: no daemon runs for this workspace; indexing in-process", "workspace", ix.ws.Root)
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

// loop runs eng (when not nil) until ctx ends, and tries again every
// Takeover while try returns nil.
func (ix *indexer) loop(ctx context.Context, eng *engine.Engine) {
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
		case <-time.After(Takeover):
		}
		eng = ix.try()
	}
}
