package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/workspace"
)

// Client asks a workspace's questions: of its daemon when one answers on
// the socket (it holds the vector space in memory and keeps resume's
// cache), else in this process, from the index opened read-only. Both
// ways run the same handlers through the same JSON round trip.
//
// Its errors that are the caller's mistake (an unknown session, a bad
// query) satisfy IsBadRequest.
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

// IsBadRequest reports whether err is the caller's mistake (an unknown
// session, a bad query or flag value): exit code 2 on the command line.
func IsBadRequest(err error) bool {
	var se *server.Error
	return errors.As(err, &se) && se.Code == 2
}

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
			if err := c.callLocal(ctx, "search", req, &resp); err != nil {
				return resp, err
			}
			resp.Note = fmt.Sprintf("answered from the index with the embedder asked for (%s), not by the daemon, which embeds with %s", id, p.Space)
			return resp, nil
		}
	}
	return resp, c.call(ctx, "search", req, &resp)
}

// Resume builds a resume pack.
func (c *Client) Resume(ctx context.Context, req ResumeRequest) (resume.Pack, error) {
	var pack resume.Pack
	return pack, c.call(ctx, "resume", req, &pack)
}

// Sessions lists the workspace's sessions.
func (c *Client) Sessions(ctx context.Context) (SessionsResponse, error) {
	var resp SessionsResponse
	return resp, c.call(ctx, "sessions", struct{}{}, &resp)
}

// call answers the call name through the workspace's daemon when one
// answers, else in-process on the index opened read-only, with the
// configured embedder.
func (c *Client) call(ctx context.Context, name string, req, resp any) error {
	return c.route(ctx, name, req, resp, true, func() error { return c.callLocal(ctx, name, req, resp) })
}

// callLocal answers the call name in-process on the index opened
// read-only, with the configured embedder.
func (c *Client) callLocal(ctx context.Context, name string, req, resp any) error {
	db, err := openReader(c.ws)
	if err != nil {
		return err
	}
	defer db.Close()
	q, err := c.local(ctx, db)
	if err != nil {
		return err
	}
	return q.dispatch(ctx, name, req, resp)
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
		return err
	}
	return local()
}

// local answers in-process: the vectors already stored for the
// configured embedder are loaded (nothing is embedded; a remote embedder
// is only asked to embed the query, and BM25 answers alone if it cannot).
func (c *Client) local(ctx context.Context, db *index.DB) (*queries, error) {
	emb, err := c.embedder()
	if err != nil {
		return nil, err
	}
	var space *vectors.Space
	if id, ok := KnownIdentity(emb); ok {
		if space, err = vectors.Load(ctx, db, id); err != nil {
			return nil, err
		}
	}
	q, err := newQueries(db, emb, func() *vectors.Space { return space }, nil, search.Options{}, nil)
	if err != nil {
		return nil, err
	}
	q.pending = func(ctx context.Context, _ search.Mode, what string) *Pending {
		return localPending(ctx, db, c.ws.Logs, what)
	}
	return q, nil
}

// KnownIdentity is the vector space of emb when it is known without
// asking a server: always for the embedders in the binary, for remote
// ones when the dimension is configured.
func KnownIdentity(emb embed.Embedder) (string, bool) {
	return vectors.KnownSpaceIdentity(emb)
}

// openReader opens the workspace's index read-only, for queries that may
// run while a daemon writes.
func openReader(ws workspace.Layout) (*index.DB, error) {
	if _, err := os.Stat(filepath.Join(ws.Cache, index.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no index yet in %s: %s", ws.Root, ws.StartHint())
	}
	return index.Open(ws.Cache, index.Options{ReadOnly: true})
}
