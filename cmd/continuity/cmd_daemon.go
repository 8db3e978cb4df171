package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/importer"
	wspace "github.com/praxis-os/continuity/workspace"
)

// watchFlags are the ingest settings shared by daemon and ingest.
type watchFlags struct {
	maxLine  int
	rescan   time.Duration
	noNotify bool
	logLevel string
	// retain: forget sessions older than this (0: keep everything);
	// retainErr: CONTINUITY_RETAIN could not be read.
	retain    time.Duration
	retainErr error
	// vectorMemory: MiB of int8 vector codes kept in memory
	// (engine.SetVectorMemoryMiB); vectorMemoryErr: CONTINUITY_VECTOR_MEMORY
	// could not be read.
	vectorMemory    int
	vectorMemoryErr error
	daemon          bool // registered with the daemon's flags
}

// ageFlag is a duration flag that reads days and weeks too (30d, 2w).
type ageFlag struct{ d *time.Duration }

func (a ageFlag) String() string {
	if a.d == nil || *a.d == 0 {
		return ""
	}
	return a.d.String()
}

func (a ageFlag) Set(s string) error {
	if s == "" || s == "0" {
		*a.d = 0
		return nil
	}
	d, err := engine.ParseRetention(s)
	if err != nil {
		return err
	}
	*a.d = d
	return nil
}

func (w *watchFlags) register(fs *flag.FlagSet, daemon bool) {
	fs.IntVar(&w.maxLine, "max-line-bytes", engine.DefaultMaxLineBytes, "longest log line accepted, in bytes; longer lines are skipped and listed by 'rejects'")
	fs.StringVar(&w.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	w.daemon = daemon
	if daemon {
		fs.DurationVar(&w.rescan, "rescan", engine.DefaultRescan, "period of the full rescan that catches anything fsnotify missed")
		fs.BoolVar(&w.noNotify, "no-notify", os.Getenv("CONTINUITY_NO_NOTIFY") == "1", "do not use fsnotify, rely on the periodic rescan alone (env CONTINUITY_NO_NOTIFY=1)")
		if env := os.Getenv(engine.EnvRetain); env != "" {
			if err := (ageFlag{&w.retain}).Set(env); err != nil {
				w.retainErr = fmt.Errorf("%s: %v", engine.EnvRetain, err)
			}
		}
		w.vectorMemory = engine.VectorMemoryMiB()
		if env := os.Getenv(envVectorMemory); env != "" {
			n, err := strconv.Atoi(env)
			if err != nil || n < 0 {
				w.vectorMemoryErr = fmt.Errorf("%s: %q is not a size in MiB", envVectorMemory, env)
			}
			w.vectorMemory = n
		}
		fs.IntVar(&w.vectorMemory, "vector-memory", w.vectorMemory, "`MiB` of int8 vectors kept in memory; past it, those of the other exchanges are read from the index for the candidates a search scores: "+
			"the same results, slower (at 1M exchanges: the daemon under 1 GB, a search 2-4x slower than with all of them in memory); 0 keeps none, a larger size all of a larger space (env "+envVectorMemory+")")
		fs.Var(ageFlag{&w.retain}, "retain", "retention: forget the sessions whose latest event is older than this `DURATION` (30d, 2w, 72h), at start and then periodically, "+
			"as 'forget --older-than' does (recorded beside the logs: rebuilds and imports keep them out); 0 or unset keeps everything (env "+engine.EnvRetain+")")
	}
}

// envVectorMemory is --vector-memory's variable.
const envVectorMemory = "CONTINUITY_VECTOR_MEMORY"

// options are the engine's options for the daemon (and MCP's in-process
// indexing): the watcher as the flags say, the socket, the resume cache.
func (w *watchFlags) options(log *slog.Logger, emb embed.Embedder) engine.Options {
	if w.daemon {
		engine.SetVectorMemoryMiB(w.vectorMemory)
	}
	return engine.Options{Logger: log, Embedder: emb, Socket: true, ResumeCache: true, Retain: w.retain,
		Watch: engine.Watch{MaxLineBytes: w.maxLine, Rescan: w.rescan, NoNotify: w.noNotify}}
}

func (w *watchFlags) level() (slog.Level, error) {
	var l slog.Level
	if w.vectorMemoryErr != nil || w.vectorMemory < 0 {
		return 0, usageError("--vector-memory: %v", cmp.Or(w.vectorMemoryErr, fmt.Errorf("%d MiB is negative", w.vectorMemory)))
	}
	if w.retainErr != nil {
		return 0, usageError("%v", w.retainErr)
	}
	if err := l.UnmarshalText([]byte(w.logLevel)); err != nil {
		return 0, usageError("--log-level %q: want debug, info, warn or error", w.logLevel)
	}
	return l, nil
}

// daemonGCPercent is the daemon's heap goal: the heap may grow to 1.5×
// its live size before a collection, not Go's default 2×. A daemon holds
// a large live heap for long (vector rows and sessions, the resume cache,
// the bm25 engine's session table) and collects rarely, so the default's
// headroom bought nothing but resident memory, for the same latencies
// (docs/performance.md, "Figures behind design choices"). GOGC or GOMEMLIMIT set in
// the environment are left alone.
const daemonGCPercent = 50

// daemonGC applies daemonGCPercent, unless the environment sets its own,
// and returns what puts the previous setting back.
func daemonGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(daemonGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

func runDaemon(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "daemon [flags]", `
Watch <workspace>/.praxis-os/.conversations/*.jsonl and index every complete
line exactly once, until SIGINT or SIGTERM. The index lives in
<workspace>/.praxis-os/.cache/continuity/ (private to the user). One daemon (or
ingest) runs per workspace; a second one exits with an error naming the first.
Queries (search, resume, sessions) are served on a unix socket in that folder.
Logs go to stderr. With --wait-lock, a daemon started while another process
holds the workspace waits and takes over when that process exits (what the
systemd unit in recipes/ does).

With --import all (or a list such as claude-code,cline; or CONTINUITY_IMPORT),
the daemon also follows those agents' own transcripts of this workspace (and of
the other worktrees of its repository): Claude Code's ~/.claude/projects/<encoded
workspace>/, the Codex rollouts and Copilot CLI sessions whose cwd is the
workspace, Gemini CLI's ~/.gemini/tmp/<hash>/, Aider's history file, Cursor's
workspace database (once it has been quiet), the Cline, Roo Code and Kilo Code
tasks, OpenCode and Goose sessions that ran in the workspace. It imports them as
they grow, exactly once, as 'continuity import' does: into
.praxis-os/.conversations/<agent>-<session>~<machine>.jsonl, which it then indexes. An
agent whose folder does not exist yet is looked for at every poll. A turn still
in progress is imported when it ends (or after --import-quiet). 'continuity
status' lists what is followed.

With --ui, the daemon also serves the web viewer of 'continuity ui' (its
URL with the access token is the first line of stdout; --ui-addr, --no-open).

With --retain DURATION (or CONTINUITY_RETAIN), the daemon forgets the
sessions whose latest event is older than DURATION (30d, 2w, 72h): at start,
within seconds of new events being indexed (an import of old sessions), and
at least every DURATION/24 (a minute to an hour), as 'forget --older-than'
does: each session whole, recorded beside the logs so that a rebuild or an
import keeps its old lines out; the log files stay. Unset: nothing expires.`)
	var wf watchFlags
	wf.register(fs, true)
	var ef embedFlags
	ef.register(fs)
	waitLock := fs.Bool("wait-lock", false, "when another process holds the workspace (a daemon, an MCP server indexing in-process), wait and take over when it exits, instead of failing")
	importList := fs.String("import", os.Getenv("CONTINUITY_IMPORT"), "follow these agents' own transcripts and import them live: all, or a comma-separated list of "+strings.Join(importer.FollowAgents, ", ")+" (env CONTINUITY_IMPORT)")
	agentHome := fs.String("agent-home", "", "the home folder holding the agents' folders (.claude, .codex, .gemini, .cline, .copilot, .config, .local/share, ...) in place of $HOME; the agents' own variables are then ignored (env CONTINUITY_AGENT_HOME)")
	importPoll := fs.Duration("import-poll", importer.DefaultPoll, "how often the agents' folders are looked at (--import)")
	importQuiet := fs.Duration("import-quiet", importer.DefaultQuiet, "a turn with no end marker is imported once its transcript was unchanged this long (--import)")
	withUI := fs.Bool("ui", false, "also serve the web viewer (see 'continuity ui --help')")
	var uf uiFlags
	uf.register(fs, "ui-")
	var sf shareFlags
	sf.register(fs)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		// "continuity daemon stop" must not start a daemon.
		return usageError("unexpected arguments %q: the daemon takes flags only; a running daemon stops on Ctrl-C or SIGTERM (kill PID; 'continuity status' shows its pid)", pos)
	}
	defer daemonGC()()
	agents, err := importer.ParseAgents(*importList)
	if err != nil {
		return usageError("--import: %v", err)
	}
	level, err := wf.level()
	if err != nil {
		return err
	}
	p, err := e.paths()
	if err != nil {
		return err
	}
	emb, err := ef.embedder()
	if err != nil {
		return err
	}
	log := e.logger(level)
	opts := wf.options(log, emb)
	if opts.Share, err = sf.options(); err != nil {
		return err
	}
	if len(agents) > 0 {
		opts.Import = &importer.LiveImport{Agents: agents, Workspace: p.root, Dirs: wspace.Worktrees(p.root)[1:], Logs: p.logs,
			Home: importer.DefaultHome(*agentHome), Poll: *importPoll, Quiet: *importQuiet, Log: log}
	}
	if !*withUI {
		return engine.Serve(ctx, p.layout(), opts, *waitLock)
	}
	return serveWithUI(ctx, e, p, &ef, uf, log, func(ctx context.Context) error {
		return engine.Serve(ctx, p.layout(), opts, *waitLock)
	})
}

// serveWithUI runs the daemon and the viewer side by side; either ending
// stops the other. The viewer asks the daemon over its socket, as any
// client does.
func serveWithUI(ctx context.Context, e *env, p paths, ef *embedFlags, uf uiFlags, log *slog.Logger, daemon func(context.Context) error) error {
	c := engine.NewClient(p.layout(), ef.embedder, e.stderr)
	serve, err := startUI(e, c, p.root, uf, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	uiErr := make(chan error, 1)
	go func() {
		err := serve(ctx)
		if err != nil {
			log.Error("the viewer stopped", "err", err)
		}
		uiErr <- err
		cancel()
	}()
	err = daemon(ctx)
	cancel()
	if uerr := <-uiErr; err == nil && uerr != nil {
		err = fmt.Errorf("viewer: %w", uerr)
	}
	return err
}
