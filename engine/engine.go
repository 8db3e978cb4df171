// Package engine is continuity's library layer: the one place where the
// pipeline is assembled and where every query is answered, under every
// interface (the command line, the daemon's socket, MCP, the evaluation
// and benchmark tools).
//
// An Engine is a workspace opened for writing: the workspace lock held,
// the index open, the watcher that tails the logs into it, and the views
// derived from its events table (package follow): the full-text index,
// the bm25 engine, the vectors and the log of rejected lines. Open
// assembles it; Run is the daemon (and MCP's in-process indexing): the
// watcher, every view and the socket server until the context ends;
// CatchUp and Embed are ingest, a one-shot backfill.
//
// A Client asks a workspace's questions (search, resume, sessions,
// forget, status, rejects, export, doctor): of its daemon when one
// answers on the socket, else of the index directly. Both ways run the
// same handlers (calls.go), so every interface gives the same answers.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/follow/fulltext"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/follow/rejectlog"
	"github.com/praxis-os/continuity/importer"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/share"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/watcher"
	"github.com/praxis-os/continuity/workspace"
)

// Options set up an Engine. The zero value is a one-shot writer with the
// watcher's defaults and no embedder.
type Options struct {
	// Logger hears the pipeline's events; nil discards them.
	Logger *slog.Logger
	// Embedder embeds the exchanges (the vectors view) and the queries.
	// nil: none yet; Embed takes one later, and Run needs one.
	Embedder embed.Embedder
	// EmbedBatch is how many exchanges are embedded at a time (0: the
	// worker's default).
	EmbedBatch int
	// Watch sets up the watcher.
	Watch Watch
	// Socket makes Open listen on the workspace's socket, which Run
	// serves: the daemon.
	Socket bool
	// ResumeCache keeps what resume packs need between calls (the
	// daemon; a one-off command has nothing to keep).
	ResumeCache bool
	// Import, when set, imports agents' own transcripts into the logs
	// while Run runs (daemon --import).
	Import *importer.LiveImport
	// Search tunes the ranking (evaluation; the zero value is the
	// product's).
	Search search.Options
	// Share, when set, shares the workspace's memory with a team
	// (share.go).
	Share *Share
	// Retain, when positive, makes Run forget the sessions whose latest
	// event is older than it, at start and then periodically
	// (retention.go).
	Retain time.Duration
}

// Watch sets up the watcher that tails the logs; zero fields take the
// watcher's defaults.
type Watch struct {
	MaxLineBytes int           // longer lines are skipped (and listed by rejects)
	Rescan       time.Duration // period of the full rescan under fsnotify
	NoNotify     bool          // rely on the rescan alone
	// BatchLines and BatchBytes bound one commit: small for the
	// daemon's latency, larger for a backfill's throughput.
	BatchLines, BatchBytes int
}

// Watcher defaults, for the interfaces' flags.
const (
	DefaultMaxLineBytes = watcher.DefaultMaxLineBytes
	DefaultRescan       = watcher.DefaultRescan
)

// Engine is a workspace open for writing; see the package comment.
type Engine struct {
	ws   workspace.Layout
	log  *slog.Logger
	opts Options
	lock *index.Lock
	db   *index.DB
	w    *watcher.Watcher
	srv  *server.Server // nil unless Options.Socket

	// The views of the events table (views.go), each followed by its own
	// loop in Run; commits notify them, forget and edits of logs go
	// through all of them.
	fullText  *fulltext.Indexer // FTS5 (fulltext.db)
	bm25      *lexicon.Engine   // the bm25 engine, in memory
	embedding *embedding.Worker // the embedding worker and its vector space
	rejectLog *rejectlog.Log    // rejected lines, to the daemon's log
	views     []follow.View     // all of them, in the order they run
	// Team memory (Options.Share): the publisher is one of the views
	// (assembleShare), the subscriber pulls into the index.
	pub *share.Publisher
	sub *share.Subscriber

	// answerer answers the calls on the index (search, resume, sessions),
	// under every interface.
	answerer *answerer

	// onCommit, when set (CatchUp), hears each committed batch.
	onCommit func(watcher.Batch)

	// retention: what the daemon's retention did (Options.Retain).
	retention retentionState

	closeOnce sync.Once
}

// Open takes the workspace's lock (ErrLocked when another process
// holds it), opens the index for writing and assembles the pipeline;
// with Options.Socket it also listens on the workspace's socket. Close
// releases it all; Run starts it.
func Open(ws workspace.Layout, opts Options) (_ *Engine, err error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	lock, db, err := openWriter(ws)
	if err != nil {
		return nil, err
	}
	e := &Engine{ws: ws, log: opts.Logger, opts: opts, lock: lock, db: db}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	// Forgets outlive the index: before any view loads or any line is
	// read, the index holds every forget recorded beside the logs.
	if err := applyTombstones(context.Background(), db, ws, e.log); err != nil {
		return nil, err
	}
	if err := e.assemble(); err != nil {
		return nil, err
	}
	if opts.Socket {
		e.srv = server.New(server.SocketPath(ws.Cache), e.log)
		e.register(e.srv)
		if err := e.srv.Listen(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// assemble builds the views (views.go), the query service and the
// watcher.
func (e *Engine) assemble() error {
	err := e.assembleViews()
	if err != nil {
		return err
	}
	space := func() *vectors.Space { return e.embedding.Space() }
	if e.answerer, err = newAnswerer(e.db, e.opts.Embedder, space, e.bm25, e.opts.Search, e.log); err != nil {
		return err
	}
	e.answerer.pending = e.awaitSearchable
	if e.opts.ResumeCache {
		// Resume packs are asked again and again of the same chains: the
		// daemon keeps what does not depend on the query (resume/cache.go).
		e.answerer.resumeCache = resume.NewCache(resume.CacheConfig{})
	}
	o := e.opts.Watch
	wc := watcher.Config{Dir: e.ws.Logs, Logger: e.log, MaxLineBytes: o.MaxLineBytes, Rescan: o.Rescan, NoNotify: o.NoNotify,
		BatchLines: o.BatchLines, BatchBytes: o.BatchBytes}
	wc.OnCommit = func(b watcher.Batch) {
		if e.onCommit != nil {
			e.onCommit(b)
		}
		e.notifyViews()
	}
	wc.OnEdit = e.edited
	e.w, err = watcher.New(wc, withTestFaults(e.db))
	return err
}

// openWriter takes the workspace's index lock and opens the index for
// writing, after making both folders private and git-ignored.
func openWriter(ws workspace.Layout) (*index.Lock, *index.DB, error) {
	if fi, err := os.Lstat(ws.Logs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("%s is a symbolic link: continuity only reads a real folder inside the workspace", ws.Logs)
	}
	// Both folders, private and git-ignored (also in a workspace made
	// before continuity wrote ignore files).
	if err := ws.PrepareCache(); err != nil {
		return nil, nil, err
	}
	if err := ws.PrepareLogs(); err != nil {
		return nil, nil, err
	}
	lock, err := index.AcquireLock(ws.Cache)
	if err != nil {
		if errors.Is(err, index.ErrLocked) {
			return nil, nil, fmt.Errorf("%w (one daemon or ingest per workspace)", err)
		}
		return nil, nil, err
	}
	db, err := index.Open(ws.Cache, index.Options{})
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	return lock, db, nil
}

// ErrLocked is returned by Open when another process holds the
// workspace (a daemon, an ingest, an MCP server indexing in-process).
var ErrLocked = index.ErrLocked

// Close closes the index and releases the workspace's lock, once. Run
// closes the engine itself when it returns.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.embedding != nil {
			e.embedding.Close() // its background reads of the index first
		}
		e.db.Close()
		e.lock.Close()
	})
}

// DB is the index, for the evaluation and benchmark tools.
func (e *Engine) DB() *index.DB { return e.db }

// Worker is the vectors view (the embedding worker), for the evaluation
// and benchmark tools.
func (e *Engine) Worker() *embedding.Worker { return e.embedding }

// Searcher returns a searcher over the engine's index and vectors with
// the given options, and more vector spaces (evaluation).
func (e *Engine) Searcher(opts search.Options, more ...func() *vectors.Space) (*search.Searcher, error) {
	return search.New(search.Config{DB: e.db, Embedder: e.embedding.Embedder(), Vectors: e.embedding.Space, More: more, Options: opts})
}

// Guard timing: how often Run checks that its files are still at their
// paths, and how often within a minute Serve starts again when they are
// not.
const (
	guardPeriod      = time.Second
	maxCacheRestarts = 5
)

// ErrCacheGone is returned by Run when the engine's files (index, lock,
// socket) were deleted or replaced under it (see guard).
var ErrCacheGone = errors.New("the cache folder was deleted or replaced under the running daemon")

// Run serves until ctx ends: the watcher, every view, the socket server
// (Options.Socket) and the import follower (Options.Import) share one
// context; the first to fail stops the others. It closes the engine when
// it returns.
func (e *Engine) Run(ctx context.Context) error {
	defer e.Close()
	if e.embedding.Embedder() == nil {
		return errors.New("engine: Run needs an embedder")
	}
	e.log.Info("continuity daemon started", "workspace", e.ws.Root, "logs", e.ws.Logs, "index", e.ws.Cache,
		"socket", server.SocketPath(e.ws.Cache), "pid", os.Getpid(), "fsnotify", !e.opts.Watch.NoNotify, "rescan", e.opts.Watch.Rescan)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := []func(context.Context) error{e.w.Run, e.guard, e.followTombstones}
	for _, v := range e.views {
		runs = append(runs, v.Run)
	}
	if e.srv != nil {
		runs = append(runs, e.srv.Serve)
	}
	if e.sub != nil {
		runs = append(runs, e.sub.Run)
	}
	if e.opts.Import != nil {
		runs = append(runs, e.opts.Import.Run)
	}
	if e.opts.Retain > 0 {
		runs = append(runs, e.retain)
	}
	errc := make(chan error, len(runs))
	for _, r := range runs {
		go func() { errc <- r(ctx) }()
	}
	var first error
	for range runs {
		err := <-errc
		if err == nil || first != nil {
			continue
		}
		if errors.Is(err, context.Canceled) && parent.Err() != nil {
			// Stopped while this part was still at work (a
			// signal during the start): a normal end, not a failure.
			continue
		}
		first = err
		cancel()
	}
	if first != nil {
		return first
	}
	e.log.Info("continuity daemon stopped")
	return nil
}

// guard checks every guardPeriod that the index, the lock and the socket
// at their paths are still the files this engine holds. After `rm -rf
// .praxis-os/.cache` they are not: the daemon would go on writing a
// deleted index that no query sees, and a second daemon could take a new
// lock beside it. guard then returns ErrCacheGone, and Serve starts again.
func (e *Engine) guard(ctx context.Context) error {
	t := time.NewTicker(guardPeriod)
	defer t.Stop()
	checks := []func() error{e.db.CheckFiles, e.lock.Check}
	if e.srv != nil {
		checks = append(checks, e.srv.CheckSocket)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, check := range checks {
			if err := check(); err != nil {
				if errors.Is(err, index.ErrCacheGone) || errors.Is(err, server.ErrSocketGone) {
					return fmt.Errorf("%w: %w", ErrCacheGone, err)
				}
				e.log.Warn("cannot check the daemon's files", "err", err)
			}
		}
	}
}

// register makes srv answer every call on this engine: the queries, the
// writes only the index's one writer may do (forget), ping, and each
// view's status.
func (e *Engine) register(srv *server.Server) {
	e.answerer.register(srv)
	srv.Handle("ping", func(context.Context, json.RawMessage) (any, error) {
		return PingReply{PID: os.Getpid(), Version: Version}, nil
	})
	srv.Handle("forget", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req ForgetRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, server.BadRequest(err)
		}
		out, err := e.Forget(ctx, req)
		return out, toWire(err)
	})
	srv.Handle("drop_vectors", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req DropVectorsRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, server.BadRequest(err)
		}
		return e.DropVectors(ctx, req)
	})
	for _, v := range e.views {
		srv.Handle(v.Name()+"_status", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return v.Report(ctx), nil
		})
	}
	srv.Handle("retention_status", func(context.Context, json.RawMessage) (any, error) {
		return e.retention.report(e.opts.Retain), nil
	})
	if imp := e.opts.Import; imp != nil {
		// what `status` lists as followed (daemon --import)
		srv.Handle("import_status", func(context.Context, json.RawMessage) (any, error) {
			return imp.Report(), nil
		})
	}
}

// PingReply answers "ping": who is serving.
type PingReply struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
}
