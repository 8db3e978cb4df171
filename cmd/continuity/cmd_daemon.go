package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/praxis-os/continuity/importer"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/watcher"
)

// watchFlags are the ingest settings shared by daemon and ingest.
type watchFlags struct {
	maxLine  int
	rescan   time.Duration
	noNotify bool
	logLevel string
}

func (w *watchFlags) register(fs *flag.FlagSet, daemon bool) {
	fs.IntVar(&w.maxLine, "max-line-bytes", watcher.DefaultMaxLineBytes, "longest log line accepted, in bytes; longer lines are skipped and listed by 'rejects'")
	fs.StringVar(&w.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	if daemon {
		fs.DurationVar(&w.rescan, "rescan", watcher.DefaultRescan, "period of the full rescan that catches anything fsnotify missed")
		fs.BoolVar(&w.noNotify, "no-notify", os.Getenv("CONTINUITY_NO_NOTIFY") == "1", "do not use fsnotify, rely on the periodic rescan alone (env CONTINUITY_NO_NOTIFY=1)")
	}
}

func (w *watchFlags) level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(w.logLevel)); err != nil {
		return 0, usageError("--log-level %q: want debug, info, warn or error", w.logLevel)
	}
	return l, nil
}

// openWriter takes the workspace's index lock and opens the index for
// writing: what daemon and ingest do before anything else.
func openWriter(p paths) (*index.Lock, *index.DB, error) {
	if fi, err := os.Lstat(p.logs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("%s is a symbolic link: continuity only reads a real folder inside the workspace", p.logs)
	}
	// Both folders, private and git-ignored (also in a workspace made
	// before continuity wrote ignore files).
	if err := p.layout().PrepareCache(); err != nil {
		return nil, nil, err
	}
	if err := p.layout().PrepareLogs(); err != nil {
		return nil, nil, err
	}
	lock, err := index.AcquireLock(p.cache)
	if err != nil {
		if errors.Is(err, index.ErrLocked) {
			return nil, nil, fmt.Errorf("%w (one daemon or ingest per workspace)", err)
		}
		return nil, nil, err
	}
	db, err := index.Open(p.cache, index.Options{})
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	return lock, db, nil
}

// daemonGCPercent is the daemon's heap goal: the heap may grow to 1.5×
// its live size before a collection, not Go's default 2×. A daemon holds
// a large live heap for long (at 1M exchanges 155–200 MB: vector rows and
// sessions, the resume cache, the bm25 engine's session table), and its
// collections cost 1% of a core, so the default's headroom bought nothing
// but resident memory: at 1M, peak RSS 1029–1066 MiB with 100 against
// 974 MiB with 50, for the same latencies (continuity-bench query, same
// session). GOGC or GOMEMLIMIT set in the environment are left alone.
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

With --import claude-code,codex (or CONTINUITY_IMPORT), the daemon also
follows those agents' own transcripts for this workspace (Claude Code's
~/.claude/projects/<encoded workspace>/, the Codex rollouts whose cwd is the
workspace, Gemini CLI's ~/.gemini/tmp/<hash>/, Aider's history file) and
imports them as they grow, exactly once, as 'continuity import' does: into
.praxis-os/.conversations/<agent>-<session>.jsonl, which it then indexes. A
turn still in progress is imported when it ends (or after --import-quiet).`)
	var wf watchFlags
	wf.register(fs, true)
	var ef embedFlags
	ef.register(fs)
	waitLock := fs.Bool("wait-lock", false, "when another process holds the workspace (a daemon, an MCP server indexing in-process), wait and take over when it exits, instead of failing")
	importList := fs.String("import", os.Getenv("CONTINUITY_IMPORT"), "follow these agents' own transcripts and import them live: a comma-separated list of "+strings.Join(importer.FollowAgents, ", ")+" (env CONTINUITY_IMPORT)")
	agentHome := fs.String("agent-home", "", "the home folder holding the agents' folders (.claude, .codex, .gemini) (default $HOME; env CONTINUITY_AGENT_HOME)")
	importPoll := fs.Duration("import-poll", importer.DefaultPoll, "how often the agents' folders are looked at (--import)")
	importQuiet := fs.Duration("import-quiet", importer.DefaultQuiet, "a turn with no end marker is imported once its transcript was unchanged this long (--import)")
	if _, err := parse(e, fs, args); err != nil {
		return err
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
	log := e.logger(level)
	waiting := false
	var restarts []time.Time // when the cache was found deleted, recently
	for {
		d, err := openDaemon(p, wf, ef, log)
		if err == nil {
			if waiting {
				log.Info("took over the workspace")
			}
			if len(agents) > 0 {
				d.follow = &importer.Follower{Agents: agents, Workspace: p.root, Logs: p.logs,
					Home: importer.DefaultHome(*agentHome), Poll: *importPoll, Quiet: *importQuiet, Log: log}
			}
			err = d.run(ctx)
			if !errors.Is(err, errCacheGone) {
				return err
			}
			// The cache folder (index, lock or socket) was deleted or
			// replaced: start again on fresh files. A deleted index is
			// rebuilt from the logs, which hold every line.
			now := time.Now()
			restarts = append(restarts, now)
			for len(restarts) > 0 && now.Sub(restarts[0]) > time.Minute {
				restarts = restarts[1:]
			}
			if len(restarts) > maxCacheRestarts {
				return fmt.Errorf("%w; it happened %d times within a minute: stopping", err, len(restarts))
			}
			log.Error("the daemon's files were deleted or replaced under it; starting again (a deleted index is rebuilt from the logs)", "why", err)
			continue
		}
		if len(restarts) > 0 && errors.Is(err, index.ErrLocked) {
			return fmt.Errorf("the cache folder was deleted under this daemon and another process took over the workspace since: this daemon stops, the other one serves (%w)", err)
		}
		if !*waitLock || !errors.Is(err, index.ErrLocked) {
			return err
		}
		if !waiting {
			waiting = true
			log.Info("waiting for the workspace: another process indexes it", "why", err)
		}
		select {
		case <-ctx.Done():
			return nil // stopped while waiting: a normal end
		case <-time.After(lockPoll):
		}
	}
}

// lockPoll is how often a daemon run with --wait-lock tries the lock.
const lockPoll = time.Second

// guardPeriod is how often the daemon checks that its index, lock and
// socket are still the files at their paths; maxCacheRestarts bounds how
// often within a minute it starts again when they are not.
const (
	guardPeriod      = time.Second
	maxCacheRestarts = 5
)

// errCacheGone is returned by daemon.run when the daemon's files were
// deleted or replaced under it (see daemon.guard).
var errCacheGone = errors.New("the cache folder was deleted or replaced under the running daemon")

// daemon is a workspace being served: the index lock held, the index open
// for writing, the watcher and the query server ready to run.
type daemon struct {
	p    paths
	log  *slog.Logger
	lock *index.Lock
	db   *index.DB
	w    *watcher.Watcher
	srv  *server.Server
	eng  *engine
	work *vectors.Worker
	fti  *index.FullTextIndexer
	lex  *search.Lexicon
	rej  *rejectLog
	wf   watchFlags
	// follow, when set, imports agents' own transcripts into the logs.
	follow *importer.Follower
}

// openDaemon takes the workspace's lock (index.ErrLocked if another
// process holds it) and prepares everything; run starts it.
func openDaemon(p paths, wf watchFlags, ef embedFlags, log *slog.Logger) (*daemon, error) {
	lock, db, err := openWriter(p)
	if err != nil {
		return nil, err
	}
	d := &daemon{p: p, log: log, lock: lock, db: db, wf: wf}
	emb, err := ef.embedder()
	if err != nil {
		d.close()
		return nil, err
	}
	// Embedding is a durable queue drained in the background: a slow or
	// down embedder never holds up ingestion.
	d.work, err = vectors.NewWorker(vectors.WorkerConfig{DB: db, Embedder: emb, Logger: log})
	if err != nil {
		d.close()
		return nil, err
	}
	d.fti = index.NewFullTextIndexer(db, log)
	// BM25 of plain words from the bm25 engine once it holds what FTS5
	// holds (search/lexicon.go); built and kept up in the background.
	if d.lex, err = search.NewLexicon(lexiconConfig(db, log)); err != nil {
		d.close()
		return nil, err
	}
	d.rej = newRejectLog(db, log)
	if d.eng, err = newEngine(db, emb, d.work.Space, d.lex, log); err != nil {
		d.close()
		return nil, err
	}
	// Resume packs are asked again and again of the same chains: the
	// daemon keeps what does not depend on the query (resume/cache.go).
	d.eng.resumeCache = resume.NewCache(resume.CacheConfig{})
	d.w, err = watcher.New(watcher.Config{
		Dir: p.logs, MaxLineBytes: wf.maxLine, Rescan: wf.rescan, NoNotify: wf.noNotify, Logger: log,
		OnCommit: func(watcher.Batch) { d.fti.Notify(); d.lex.Notify(); d.work.Notify(); d.rej.Notify() },
	}, withTestFaults(db))
	if err != nil {
		d.close()
		return nil, err
	}
	d.srv = server.New(server.SocketPath(p.cache), log)
	d.srv.Handle("ping", func(ctx context.Context, _ json.RawMessage) (any, error) {
		return pingReply{PID: os.Getpid(), Version: version}, nil
	})
	d.eng.register(d.srv)
	// forget writes: only the daemon (the index's one writer) answers it.
	d.srv.Handle("forget", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req forgetRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, server.BadRequest(err)
		}
		return forget(ctx, d.db, d.work.Space, d.lex, req)
	})
	registerEmbedStatus(d.srv, d.work)
	registerLexiconStatus(d.srv, d.lex)
	if err := d.srv.Listen(); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *daemon) close() {
	d.db.Close()
	d.lock.Close()
}

// run serves until ctx ends: the watcher and the query server share one
// context; the first to fail stops the other.
func (d *daemon) run(ctx context.Context) error {
	defer d.close()
	d.log.Info("continuity daemon started", "workspace", d.p.root, "logs", d.p.logs, "index", d.p.cache,
		"socket", server.SocketPath(d.p.cache), "pid", os.Getpid(), "fsnotify", !d.wf.noNotify, "rescan", d.wf.rescan)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 7
	errc := make(chan error, 8)
	go func() { errc <- d.w.Run(ctx) }()
	go func() { errc <- d.srv.Serve(ctx) }()
	go func() { errc <- d.work.Run(ctx) }()
	go func() { errc <- d.fti.Run(ctx) }()
	go func() { errc <- d.lex.Run(ctx) }()
	go func() { errc <- d.guard(ctx) }()
	go func() { errc <- d.rej.Run(ctx) }()
	if d.follow != nil {
		n++
		go func() { errc <- d.follow.Run(ctx) }()
	}
	var first error
	for range n {
		if err := <-errc; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	if first != nil {
		return first
	}
	d.log.Info("continuity daemon stopped")
	return nil
}

// guard checks every guardPeriod that the index, the lock and the socket
// at their paths are still the files this daemon holds. After `rm -rf
// .praxis-os/.cache` they are not: the daemon would go on writing a deleted
// index that no query sees, and a second daemon could take a new lock
// beside it. guard then returns errCacheGone, and runDaemon starts again.
func (d *daemon) guard(ctx context.Context) error {
	t := time.NewTicker(guardPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, check := range []func() error{d.db.CheckFiles, d.lock.Check, d.srv.CheckSocket} {
			if err := check(); err != nil {
				if errors.Is(err, index.ErrCacheGone) || errors.Is(err, server.ErrSocketGone) {
					return fmt.Errorf("%w: %w", errCacheGone, err)
				}
				d.log.Warn("cannot check the daemon's files", "err", err)
			}
		}
	}
}

// pingReply answers "ping": who is serving.
type pingReply struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
}
