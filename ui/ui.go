// Package ui is continuity's local web viewer (`continuity ui`, `daemon
// --ui`): the sessions and their resume chains, a session's timeline, one
// exchange whole, search, the resume preview with why each exchange is in
// or out, health (status, doctor, rejects) and forgetting a session.
//
// It is an interface, like the command line: it asks everything of the
// engine's typed calls (Backend, which engine.Client implements) and
// renders it with html/template, templates and assets embedded in the
// binary (no build step, no CDN, no external resource).
//
// Safe by construction (security.go): it listens on loopback only; every
// request needs the random access token of the URL it prints (then a
// cookie, HttpOnly and SameSite=Strict); a Host header other than its own
// address is refused (DNS rebinding); the one state-changing request
// (forget) is a POST carrying a CSRF token; a strict Content-Security-
// Policy allows nothing but its own scripts and styles; everything shown
// is escaped.
package ui

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// Backend is what the viewer asks: the engine's calls (engine.Client
// implements it; tests may give it their own).
type Backend interface {
	Sessions(ctx context.Context) (engine.SessionsResponse, error)
	SessionPage(ctx context.Context, session string, offset, limit int) (engine.SessionPage, error)
	SessionOpeners(ctx context.Context, sessions []string, maxRunes int) (map[string]string, error)
	Event(ctx context.Context, id string) (engine.Event, error)
	Search(ctx context.Context, req engine.SearchRequest) (engine.SearchResponse, error)
	Resume(ctx context.Context, req engine.ResumeRequest) (engine.ResumePack, error)
	Status(ctx context.Context) (engine.StatusReport, error)
	Doctor(ctx context.Context) engine.DoctorReport
	Rejects(ctx context.Context, limit int) ([]engine.Reject, error)
	PlanForget(ctx context.Context, req engine.ForgetRequest) (engine.ForgetResponse, error)
	Forget(ctx context.Context, req engine.ForgetRequest) (engine.ForgetResponse, error)
}

var _ Backend = (*engine.Client)(nil)

// Config configures a Server.
type Config struct {
	Backend Backend
	// Workspace is the workspace's root, shown in every page's header.
	Workspace string
	// Logger hears each failed request; nil discards.
	Logger *slog.Logger
}

// Server is the viewer: its handlers and its secrets.
type Server struct {
	b     Backend
	ws    string
	log   *slog.Logger
	token string // the access token of the URL
	csrf  string // the forms' token
	pages pages
	// hosts are the Host headers accepted: the listener's address under
	// its names (set by Listen or AllowHost).
	hosts  map[string]bool
	cookie string // the cookie's name, per port (cookies ignore ports)
	addr   string
}

// New returns a viewer over cfg.Backend with fresh random tokens.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil {
		return nil, errors.New("ui: no backend")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	csrf, err := randomToken()
	if err != nil {
		return nil, err
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Server{b: cfg.Backend, ws: cfg.Workspace, log: log, token: token, csrf: csrf, pages: p,
		hosts: map[string]bool{}, cookie: "continuity_ui"}, nil
}

// randomToken is 32 random bytes, URL-safe.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("ui: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DefaultAddr listens on loopback, on a port the system picks.
const DefaultAddr = "127.0.0.1:0"

// Listen opens addr, which must be a loopback address (127.0.0.0/8, ::1
// or localhost; port 0: any free port), and accepts the Host headers that
// name it.
func (s *Server) Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: want HOST:PORT on loopback, such as 127.0.0.1:8421: %w", addr, err)
	}
	if !isLoopback(host) {
		return nil, fmt.Errorf("--addr %q: the viewer listens on loopback only (127.0.0.1, ::1 or localhost): it shows every conversation", addr)
	}
	if host == "localhost" {
		// Resolve to the IPv4 loopback: localhost may name other
		// addresses on a misconfigured machine.
		_, port, _ := net.SplitHostPort(addr)
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ui: listen on %s: %w", addr, err)
	}
	s.AllowHost(ln.Addr().String())
	return ln, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AllowHost accepts addr (the listener's host:port) as the Host header,
// also as localhost:port, and names the cookie after its port.
func (s *Server) AllowHost(addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	s.addr = addr
	s.hosts[addr] = true
	s.hosts[net.JoinHostPort("localhost", port)] = true
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		s.hosts["["+host+"]:"+port] = true
	}
	s.cookie = "continuity_ui_" + port
}

// URL is the viewer's address with its access token: what the user opens
// (first line of `continuity ui`'s output).
func (s *Server) URL() string {
	return "http://" + s.addr + "/?" + url.Values{"token": {s.token}}.Encode()
}

// Serve answers on ln until ctx is done, then shuts down.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler is the viewer's handler, every route behind the security
// checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.sessionsPage)
	mux.HandleFunc("GET /session", s.sessionPage)
	mux.HandleFunc("GET /exchange", s.exchangePage)
	mux.HandleFunc("GET /search", s.searchPage)
	mux.HandleFunc("GET /resume", s.resumePage)
	mux.HandleFunc("GET /health", s.healthPage)
	mux.HandleFunc("GET /doctor", s.doctorPage)
	mux.HandleFunc("GET /forget", s.forgetConfirm)
	mux.HandleFunc("POST /forget", s.forgetDo)
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return s.secure(mux)
}

// intParam reads a non-negative integer query parameter; def when absent
// or unreadable, clamped to [lo, hi].
func intParam(r *http.Request, name string, def, lo, hi int) int {
	v, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil {
		v = def
	}
	return min(max(v, lo), hi)
}
