package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/workspace"
)

// Client asks a workspace's questions: of its daemon when one answers on
// the socket (it holds the vector space in memory and keeps resume's
// cache), else in this process, from the index opened read-only. Both
// ways run the same code (answerer); in this process it is called
// directly, without the socket's JSON.
//
// Its errors that are the caller's mistake (an unknown session, a bad
// query) are *Error values (IsBadRequest), from the daemon too.
type Client struct {
	ws workspace.Layout
	// embedder is the configured embedder, for answering in-process
	// (the daemon has its own); built only when needed.
	embedder func() (embed.Embedder, error)
	// warn hears that a daemon runs but does not answer.
	warn io.Writer
	// pinned: the embedder was chosen for this call (a flag), not taken
	// from the environment the daemon was started in (PinEmbedder).
	pinned bool
}

// PinEmbedder says that the client's embedder was chosen explicitly (a
// command's --embedder): a search checks it (an unknown embedder, a model
// not installed are errors, daemon or not), and when a daemon runs with
// another embedder the search is answered from the index with the
// chosen one, its stored vectors (kept per embedder) or words only, and
// says so (SearchResponse.Note). Without it, the daemon's embedder
// answers.
func (c *Client) PinEmbedder() *Client {
	c.pinned = true
	return c
}

// NewClient returns a client of the workspace laid out as ws. embedder
// builds the configured embedder (no network call), used only when the
// client answers in-process; warn (nil: discarded) hears when a daemon is
// there but does not answer.
func NewClient(ws workspace.Layout, embedder func() (embed.Embedder, error), warn io.Writer) *Client {
	if warn == nil {
		warn = io.Discard
	}
	return &Client{ws: ws, embedder: embedder, warn: warn}
}

// daemonPing bounds the ping that tells whether the daemon answers.
const daemonPing = 500 * time.Millisecond

// Search searches the workspace's exchanges.
func (c *Client) Search(ctx context.Context, req SearchRequest) (SearchResponse, error) {
	var resp SearchResponse
	req = withLocalZone(req)
	if c.pinned {
		emb, err := c.embedder()
		if err != nil {
			return resp, err
		}
		id, known := KnownIdentity(emb)
		if !known {
			id = emb.Identity()
		}
		if p, ok := c.daemonEmbedder(ctx); ok && p.Space != id {
			// The daemon's vectors are another embedder's: answering
			// there would ignore the choice.
			resp, err := answerLocal(ctx, c, true, func(q *answerer) (SearchResponse, error) { return q.search(ctx, req) })
			if err != nil {
				return resp, err
			}
			resp.Note = fmt.Sprintf("answered from the index with the embedder asked for (%s), not by the daemon, which embeds with %s", id, p.Space)
			return resp, nil
		}
	}
	return call(ctx, c, "search", req, func(q *answerer) (SearchResponse, error) { return q.search(ctx, req) })
}

// Resume builds a resume pack.
func (c *Client) Resume(ctx context.Context, req ResumeRequest) (ResumePack, error) {
	return call(ctx, c, "resume", req, func(q *answerer) (ResumePack, error) { return q.resume(ctx, req) })
}

// Sessions lists the workspace's sessions.
func (c *Client) Sessions(ctx context.Context) (SessionsResponse, error) {
	return call(ctx, c, "sessions", struct{}{}, func(q *answerer) (SessionsResponse, error) { return q.sessions(ctx) })
}

// call answers the call name through the workspace's daemon when one
// answers (req and the answer through the socket, as JSON), else answer
// in-process on the index opened read-only, with the configured embedder.
func call[T any](ctx context.Context, c *Client, name string, req any, answer func(*answerer) (T, error)) (T, error) {
	var resp T
	err := c.route(ctx, name, req, &resp, true, func() (err error) {
		resp, err = answerLocal(ctx, c, false, answer)
		return err
	})
	return resp, err
}

// answerLocal runs answer in-process on the index opened read-only, with
// the configured embedder. daemon says whether a daemon runs (and indexes
// what this answer cannot see yet): the answer's note says so.
func answerLocal[T any](ctx context.Context, c *Client, daemon bool, answer func(*answerer) (T, error)) (T, error) {
	var zero T
	db, err := openReader(c.ws)
	if err != nil {
		return zero, err
	}
	defer db.Close()
	q, loadErr, err := c.local(ctx, db, daemon)
	if err != nil {
		return zero, err
	}
	resp, err := answer(q)
	if *loadErr != nil {
		return zero, *loadErr
	}
	return resp, err
}

// route is daemon-or-local routing: the call name goes to the workspace's
// daemon when one runs; else local answers in this process. With ping, a
// daemon that does not answer a ping quickly is passed over too: a
// stopped or stuck daemon still accepts connections (the kernel queues
// them) but never answers, and a read can be answered from the index.
// Without it (a write, which only the lock holder may do), the call waits
// for the daemon.
func (c *Client) route(ctx context.Context, name string, req, resp any, ping bool, local func() error) error {
	sc := server.NewClient(server.SocketPath(c.ws.Cache))
	var perr error
	if ping {
		pctx, cancel := context.WithTimeout(ctx, daemonPing)
		var pong PingReply
		perr = sc.Call(pctx, "ping", struct{}{}, &pong)
		cancel()
	}
	err := perr
	if perr == nil {
		err = sc.Call(ctx, name, req, resp)
	} else if ctx.Err() != nil {
		// The caller gave up (its request was cancelled, the session
		// ended): that says nothing of the daemon.
		return fmt.Errorf("%s: %w", name, ctx.Err())
	} else if !errors.Is(perr, server.ErrNoDaemon) {
		fmt.Fprintf(c.warn, "continuity: the daemon does not answer (%v); answering from the index directly\n", perr)
		err = server.ErrNoDaemon
	}
	if !errors.Is(err, server.ErrNoDaemon) {
		return fromWire(err)
	}
	err = local()
	if ping || !errors.Is(err, index.ErrLocked) {
		return err
	}
	return c.awaitWriter(ctx, sc, name, req, resp, local, err)
}

// writerWait is how long a write waits for the process that holds the
// index lock: a daemon that has just started takes the lock before its
// socket answers (it opens the index, migrates it, reads the vectors),
// and an ingest releases it when done.
const writerWait = 30 * time.Second

// awaitWriter retries a write that found the index locked and no daemon
// answering: through the daemon once its socket answers, in-process once
// the lock is free, until writerWait has passed (then locked, the first
// error, is returned). "continuity daemon &" followed at once by a forget
// failed with "another continuity process holds the index lock".
func (c *Client) awaitWriter(ctx context.Context, sc *server.Client, name string, req, resp any, local func() error, locked error) error {
	fmt.Fprintf(c.warn, "continuity: %v; waiting up to %s for it to answer or finish\n", locked, writerWait)
	deadline := time.Now().Add(writerWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		pctx, cancel := context.WithTimeout(ctx, daemonPing)
		var pong PingReply
		perr := sc.Call(pctx, "ping", struct{}{}, &pong)
		cancel()
		if perr == nil {
			return fromWire(sc.Call(ctx, name, req, resp))
		}
		if err := local(); !errors.Is(err, index.ErrLocked) {
			return err
		}
	}
	return locked
}

// local answers in-process: the vectors already stored for the
// configured embedder are loaded when a query first needs them (a bm25
// search, a resume without a query, the sessions' list read none; nothing
// is embedded; a remote embedder is only asked to embed the query, and
// BM25 answers alone if it cannot). *loadErr is the load's error, once
// the answer is made.
func (c *Client) local(ctx context.Context, db *index.DB, daemon bool) (*answerer, *error, error) {
	emb, err := c.embedder()
	if err != nil {
		return nil, nil, err
	}
	var (
		once    sync.Once
		space   *vectors.Space
		loadErr error
	)
	load := func() *vectors.Space {
		once.Do(func() {
			if id, ok := KnownIdentity(emb); ok {
				space, loadErr = vectors.Load(ctx, db, id)
			}
		})
		return space
	}
	q, err := newAnswerer(db, emb, load, nil, search.Options{}, nil)
	if err != nil {
		return nil, nil, err
	}
	q.pending = func(ctx context.Context, _ search.Mode, what string) *Pending {
		return localPending(ctx, db, c.ws.Logs, what, daemon)
	}
	return q, &loadErr, nil
}

// KnownIdentity is the vector space of emb when it is known without
// asking a server: always for the embedders in the binary, for remote
// ones when the dimension is configured.
func KnownIdentity(emb embed.Embedder) (string, bool) {
	return vectors.KnownSpaceIdentity(emb)
}

// MayBeInUse reports whether the stored vectors of space identity id may
// be those of the embedder in use, given as VectorSets.InUse or
// EmbedderStatus.SpacePattern: the same identity, or a remote embedder
// whose server has not answered yet with the same model and recipe
// (vectors.SpaceMayBe).
func MayBeInUse(inUse, id string) bool {
	return vectors.SpaceMayBe(inUse, id)
}

// openReader opens the workspace's index read-only, for queries that may
// run while a daemon writes.
func openReader(ws workspace.Layout) (*index.DB, error) {
	if _, err := os.Stat(filepath.Join(ws.Cache, index.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no index yet in %s: %s", ws.Root, ws.StartHint())
	}
	return index.Open(ws.Cache, index.Options{ReadOnly: true})
}
