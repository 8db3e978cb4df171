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
Logs go to stderr.`)
	var wf watchFlags
	wf.register(fs, true)
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
	lock, db, err := openWriter(p)
	if err != nil {
		return err
	}
	defer lock.Close()
	defer db.Close()

	w, err := watcher.New(watcher.Config{
		Dir: p.logs, MaxLineBytes: wf.maxLine, Rescan: wf.rescan, NoNotify: wf.noNotify, Logger: log,
	}, db)
	if err != nil {
		return err
	}
	srv := server.New(server.SocketPath(p.cache), log)
	registerCalls(srv, db)
	if err := srv.Listen(); err != nil {
		return err
	}
	log.Info("continuity daemon started", "workspace", p.root, "logs", p.logs, "index", p.cache,
		"socket", server.SocketPath(p.cache), "pid", os.Getpid(), "fsnotify", !wf.noNotify, "rescan", wf.rescan)

	// The watcher and the query server run until ctx ends; the first to
	// fail stops the other.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- w.Run(ctx) }()
	go func() { errc <- srv.Serve(ctx) }()
	var first error
	for range 2 {
		if err := <-errc; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	if first != nil {
		return first
	}
	log.Info("continuity daemon stopped")
	return nil
}

// pingReply answers "ping": who is serving.
type pingReply struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
}

// registerCalls registers the calls the daemon answers on its socket.
func registerCalls(srv *server.Server, db *index.DB) {
	srv.Handle("ping", func(ctx context.Context, _ json.RawMessage) (any, error) {
		return pingReply{PID: os.Getpid(), Version: version}, nil
	})
}
