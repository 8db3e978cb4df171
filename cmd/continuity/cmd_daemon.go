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
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
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
	if err := os.MkdirAll(p.cache, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create cache folder: %w", err)
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

func runDaemon(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "daemon [flags]", `
Watch <workspace>/.praxis-os/.conversations/*.jsonl and index every complete
line exactly once, until SIGINT or SIGTERM. The index lives in
<workspace>/.praxis-os/.cache/continuity/ (private to the user). One daemon (or
ingest) runs per workspace; a second one exits with an error naming the first.
Queries (search, resume, sessions) are served on a unix socket in that folder.
Logs go to stderr. With --wait-lock, a daemon started while another process
holds the workspace waits and takes over when that process exits (what the
systemd unit in recipes/ does).`)
	var wf watchFlags
	wf.register(fs, true)
	var ef embedFlags
	ef.register(fs)
	waitLock := fs.Bool("wait-lock", false, "when another process holds the workspace (a daemon, an MCP server indexing in-process), wait and take over when it exits, instead of failing")
	if _, err := parse(e, fs, args); err != nil {
		return err
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
	for {
		d, err := openDaemon(p, wf, ef, log)
		if err == nil {
			if waiting {
				log.Info("took over the workspace")
			}
			return d.run(ctx)
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
	work *search.Worker
	fti  *index.FullTextIndexer
	wf   watchFlags
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
	d.work, err = search.NewWorker(search.WorkerConfig{DB: db, Embedder: emb, Logger: log})
	if err != nil {
		d.close()
		return nil, err
	}
	d.fti = index.NewFullTextIndexer(db, log)
	if d.eng, err = newEngine(db, emb, d.work.Vectors, log); err != nil {
		d.close()
		return nil, err
	}
	d.w, err = watcher.New(watcher.Config{
		Dir: p.logs, MaxLineBytes: wf.maxLine, Rescan: wf.rescan, NoNotify: wf.noNotify, Logger: log,
		OnCommit: func(watcher.Batch) { d.fti.Notify(); d.work.Notify() },
	}, db)
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
		return forget(ctx, d.db, d.work.Vectors, req)
	})
	registerEmbedStatus(d.srv, d.work)
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
	errc := make(chan error, 4)
	go func() { errc <- d.w.Run(ctx) }()
	go func() { errc <- d.srv.Serve(ctx) }()
	go func() { errc <- d.work.Run(ctx) }()
	go func() { errc <- d.fti.Run(ctx) }()
	var first error
	for range 4 {
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

// pingReply answers "ping": who is serving.
type pingReply struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
}
