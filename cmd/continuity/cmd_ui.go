package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/ui"
)

// uiFlags are the viewer's settings, for `ui` and `daemon --ui`.
type uiFlags struct {
	addr   string
	noOpen bool
}

func (u *uiFlags) register(fs *flag.FlagSet, prefix string) {
	fs.StringVar(&u.addr, prefix+"addr", ui.DefaultAddr, "the viewer's address: loopback only (127.0.0.1, ::1 or localhost), port 0 for any free port")
	fs.BoolVar(&u.noOpen, "no-open", false, "do not open the viewer in the browser (the URL is printed either way)")
}

func runUI(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ui [--addr HOST:PORT] [--no-open]", `
Serve a local web viewer of the workspace's memory until Ctrl-C: the
sessions, what each began with, and their resume chains (filters by agent,
time and text), a session's timeline (context resets as dividers, the
files it touched, each exchange whole, code fences rendered, secrets as
stored: redacted), search with its filters and scores, the resume preview
(the exact pack an agent would get, with a budget slider, an optional
query, its token count and why each exchange is in, cut or left out),
health (status, doctor, embedding progress, rejected lines with
file:line), and forgetting a session (or it and the sessions it resumes)
after a confirmation that shows what goes. Times are shown in UTC.

The first line of output is the viewer's URL with a random access token;
every request needs it (a cookie after the first visit). It listens on
127.0.0.1 only, on a free port unless --addr says which, refuses requests
naming another host, and opens the browser unless --no-open. Queries go to
the daemon when one runs (fast on large workspaces: 'continuity daemon
--ui' serves both), else each page reads the index itself.

On a remote machine, fix the port and forward the same one, so that the
browser names the address the viewer expects:
  continuity ui --no-open --addr 127.0.0.1:8421     (there)
  ssh -L 8421:127.0.0.1:8421 HOST                   (here; then open the URL)`)
	var uf uiFlags
	uf.register(fs, "")
	var ef embedFlags
	ef.register(fs)
	if err := parseFlagsOnly(e, fs, args); err != nil {
		return err
	}
	c, err := e.client(&ef)
	if err != nil {
		return err
	}
	p, err := e.paths()
	if err != nil {
		return err
	}
	serve, err := startUI(e, c, p.root, uf, e.logger(slog.LevelWarn))
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "continuity ui: Ctrl-C stops it")
	return serve(ctx)
}

// startUI listens for the viewer, prints its URL as the first line of
// stdout, opens the browser unless told not to, and returns what serves
// it until its context ends.
func startUI(e *env, c *engine.Client, root string, uf uiFlags, log *slog.Logger) (func(context.Context) error, error) {
	srv, err := ui.New(ui.Config{Backend: c, Workspace: root, Logger: log})
	if err != nil {
		return nil, err
	}
	ln, err := srv.Listen(uf.addr)
	if err != nil {
		return nil, usageError("%v", err)
	}
	fmt.Fprintln(e.stdout, srv.URL())
	fmt.Fprintf(e.stderr, "continuity ui: the viewer of %s is at the URL above (the token in it is its key: keep it to yourself)\n", root)
	if !uf.noOpen && !ui.OpenBrowser(srv.URL()) {
		fmt.Fprintln(e.stderr, "continuity ui: no browser opener found (xdg-open, open or start): open the URL yourself")
	}
	return func(ctx context.Context) error { return srv.Serve(ctx, ln) }, nil
}
