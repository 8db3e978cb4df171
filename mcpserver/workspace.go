package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/workspace"
)

// The MCP server's workspace. An MCP entry registered once for every
// project (a global entry) may be started from the home folder, or from
// a filesystem root, where a workspace would hold every project's
// conversations. There, without --root, the server asks the client for
// its roots (the project folders it works in) once the session is
// initialized, and uses the workspace of the first one; a client that
// gives none leaves the server with the folder it started in, where
// nothing is created (writes are refused, saying why), unless a
// .praxis-os is already there.

// rootsWait bounds the wait for the client's roots, and a tool
// call's wait for the workspace.
const rootsWait = 5 * time.Second

// served is the workspace the MCP server serves, known at once or
// once the client said its roots.
type served struct {
	log    *slog.Logger
	client func(workspace.Layout) *engine.Client
	start  func(workspace.Layout) // starts in-process indexing of a workspace

	once  sync.Once
	ready chan struct{}
	p     workspace.Layout
	c     *engine.Client
}

func newServed(log *slog.Logger, client func(workspace.Layout) *engine.Client, start func(workspace.Layout)) *served {
	return &served{log: log, client: client, start: start, ready: make(chan struct{})}
}

// decide settles the workspace (the first call only) and starts indexing
// it, unless it is a broad folder without a .praxis-os: nothing is
// created there.
func (w *served) decide(p workspace.Layout, how string) {
	w.once.Do(func() {
		// Tool calls wait for the first attempt to index, as they do
		// when the workspace is known at the start.
		defer close(w.ready)
		w.p, w.c = p, w.client(p)
		if err := p.CheckCreate(); err != nil {
			w.log.Warn("mcp: no workspace: nothing is indexed or logged", "why", err)
			return
		}
		w.log.Info("mcp: serving the workspace", "workspace", p.Root, "from", how)
		w.start(p)
	})
}

// get is the workspace, once decided. A session of a protocol version
// without roots (2026-07-28 and later: no initialize handshake) gets the
// fallback at once; one that says its roots gets them within
// rootsWait of its initialization.
func (w *served) get(ctx context.Context, ss *mcp.ServerSession, fallback workspace.Layout) (workspace.Layout, *engine.Client, error) {
	select {
	case <-w.ready:
		return w.p, w.c, nil
	default:
	}
	if v := protocolVersion(ss); v == "" || v >= noRoots {
		w.decide(fallback, fmt.Sprintf("the folder it started in (the client's protocol version %q has no roots)", v))
	}
	t := time.NewTimer(2 * rootsWait)
	defer t.Stop()
	select {
	case <-w.ready:
		return w.p, w.c, nil
	case <-ctx.Done():
		return workspace.Layout{}, nil, ctx.Err()
	case <-t.C:
		return workspace.Layout{}, nil, errors.New("no workspace yet: the client has not said its roots; add --root PROJECT to the MCP entry's args")
	}
}

// noRoots is the first protocol version without roots (nor the
// initialize handshake that announces them).
const noRoots = "2026-07-28"

// protocolVersion is the session's protocol version, "" when unknown.
func protocolVersion(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// initialized is the server's InitializedHandler: when the workspace is
// not decided (a broad folder), it asks the client's roots, in the
// background (the client answers on the same stream).
func (w *served) initialized(fallback workspace.Layout) func(context.Context, *mcp.InitializedRequest) {
	return func(_ context.Context, req *mcp.InitializedRequest) {
		select {
		case <-w.ready:
			return
		default:
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), rootsWait)
			defer cancel()
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				w.log.Info("mcp: the client gives no roots", "why", err)
				w.decide(fallback, "the folder it started in (no roots from the client)")
				return
			}
			for _, r := range res.Roots {
				if dir, ok := rootDir(r.URI); ok {
					if root := workspace.Find(dir); !workspace.Broad(root) {
						w.decide(workspace.At(root), fmt.Sprintf("the client's root %s", r.URI))
						return
					}
				}
			}
			w.log.Info("mcp: none of the client's roots is a project folder", "roots", len(res.Roots))
			w.decide(fallback, "the folder it started in (no usable root from the client)")
		}()
	}
}

// rootDir is the folder a file:// root names, when it is one.
func rootDir(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	dir := filepath.Clean(filepath.FromSlash(u.Path))
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir() && filepath.IsAbs(dir)
}
