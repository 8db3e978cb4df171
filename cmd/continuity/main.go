// Command continuity gives AI coding agents memory across sessions: it
// indexes the conversation logs agents append to
// <workspace>/.praxis-os/.conversations/*.jsonl and answers search and
// resume queries over them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/importer"
)

// command is one subcommand: its name, a one-line summary for the overview,
// and the function that runs it with its own arguments.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"daemon", "watch the logs and keep the index up to date until stopped", runDaemon},
		{"ingest", "index every complete log line once, then exit (backfill)", runIngest},
		{"log", "append one event to the logs, validated and atomically", runLog},
		{"import", "import an agent's own transcripts (" + importer.Titles() + ") into the logs", runImport},
		{"status", "show what is indexed: files, offsets, lag, counts", runStatus},
		{"search", "search past exchanges (hybrid BM25 + vectors), with session, chain and time filters", runSearch},
		{"rejects", "list the log lines that were rejected, with file:line and reason", runRejects},
		{"resume", "print the resume context of a session: its past, chain-aware, within a token budget", runResume},
		{"sessions", "list the sessions: times, exchanges, resets, resume links", runSessions},
		{"export", "print a session's events (optionally its chain) as markdown or the stored JSON lines", runExport},
		{"forget", "remove a session (or its chain) from the index for good; optionally its log files", runForget},
		{"vectors", "list the stored vectors by embedder (kept when you switch embedders); drop another embedder's", runVectors},
		{"doctor", "check the workspace, the daemon, the index and the embedder; say what to fix", runDoctor},
		{"embed", "print the vectors (and token ids) an embedder gives texts, without a daemon or index", runEmbed},
		{"model", "download (pull), install, list and remove the models of the hf embedder", runModel},
		{"share", "team memory on PostgreSQL: init the schema, add and remove members, status, private sessions", runShare},
		{"ui", "serve a local web viewer: sessions, chains, search, resume preview, health, forget", runUI},
		{"mcp", "serve the memory to an agent as an MCP server on stdio (tools: log, search, resume, sessions)", runMCP},
		{"version", "print the version, the build's revision and Go release, and the default embedder", runVersion},
	}
}

// exitError carries a specific exit code (2 = usage or unknown input).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// cliPhrasing names what the engine's errors refer to as the command line
// does: the time bounds by their flags (the other fields' values are
// checked by the commands' own flag parsing first, and keep their words:
// "limit 0: want 1 to 200"), the sessions' list by its command.
var cliPhrasing = engine.Phrasing{
	Field: func(f string) string {
		switch f {
		case "since", "until", "latest":
			return "--" + f
		case "as_of":
			return "--as-of"
		}
		return engine.Neutral.Name(f)
	},
	Sessions: "'continuity sessions'",
}

func usageError(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: testable.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root, rest, err := extractRoot(args)
	if err != nil {
		fmt.Fprintln(stderr, "continuity:", err)
		return 2
	}
	if len(rest) > 0 && (rest[0] == "--version" || rest[0] == "-version") {
		rest[0] = "version"
	}
	if len(rest) == 0 || rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help" || rest[0] == "-help" {
		if len(rest) > 1 {
			rest = []string{rest[1], "--help"}
		} else {
			overview(stdout)
			if len(rest) == 0 {
				return 2
			}
			return 0
		}
	}
	var cmd *command
	for i := range commands {
		if commands[i].name == rest[0] {
			cmd = &commands[i]
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "continuity: unknown command %q (see 'continuity help')\n", rest[0])
		return 2
	}
	e := &env{rootFlag: root, stdin: stdin, stdout: stdout, stderr: stderr}
	if err := cmd.run(ctx, e, rest[1:]); err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "continuity %s: %s\n", cmd.name, engine.Phrase(err, cliPhrasing))
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		if engine.IsBadRequest(err) {
			return 2
		}
		return 1
	}
	return 0
}

func overview(w io.Writer) {
	fmt.Fprint(w, `continuity: memory across sessions for AI coding agents.

Agents append one JSON line per event to <workspace>/.praxis-os/.conversations/*.jsonl
(see protocol.md); continuity indexes them exactly once and answers queries.

Usage: continuity [--root DIR] COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Global flags (before or after the command):
  --root DIR   the workspace, an existing folder (default: the nearest
               ancestor of the current directory holding .praxis-os, else
               the root of the git repository it is in, else the current
               directory)
  --version    the same as 'continuity version'

Run 'continuity COMMAND --help' for a command's flags.
`)
}
