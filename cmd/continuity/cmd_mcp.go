package main

import (
	"context"
	"log/slog"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/mcpserver"
	wspace "github.com/praxis-os/continuity/workspace"
)

// The MCP server (mcpserver.Serve): this command reads its flags and
// gives it the workspace, the clients and the in-process indexer.

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
	var sdkLog *slog.Logger
	if level <= slog.LevelDebug {
		sdkLog = log.With("component", "mcp-sdk")
	}
	how := "the folder it started in"
	if p.named {
		how = "--root"
	}
	return mcpserver.Serve(ctx, mcpserver.Config{
		Workspace: p.layout(), Decided: p.named || !wspace.Broad(p.root), How: how,
		Client: func(l wspace.Layout) *engine.Client { return engine.NewClient(l, envEmbedder().embedder, e.stderr) },
		OpenEngine: func(l wspace.Layout) (*engine.Engine, error) {
			emb, err := ef.embedder()
			if err != nil {
				return nil, err
			}
			return engine.Open(l, wf.options(log, emb))
		},
		Log: log, SDKLog: sdkLog, Stdin: e.stdin, Stdout: e.stdout,
	})
}
