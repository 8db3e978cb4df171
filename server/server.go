package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Handler answers one call: it gets the request body (JSON) and returns a
// value to encode as the response, or an error.
type Handler func(ctx context.Context, req json.RawMessage) (any, error)

// Error is an error with an exit code that survives the trip to the client:
// 2 for bad requests (unknown session, bad query), 1 otherwise.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"error"`
	// Detail is the error as its handler structured it (the engine's
	// *engine.Error), for the client to rebuild; absent for a plain one.
	Detail json.RawMessage `json:"detail,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// BadRequest wraps err as an Error with code 2.
func BadRequest(err error) error { return &Error{Code: 2, Message: err.Error()} }

// maxRequest bounds a request body.
const maxRequest = 1 << 20

// Server serves Handlers on a unix socket.
type Server struct {
	path     string
	log      *slog.Logger
	mu       sync.Mutex
	handlers map[string]Handler
	ln       net.Listener
	srv      *http.Server
	sock     os.FileInfo // the socket file this server created
}

// New returns a server that will listen on path.
func New(path string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{path: path, log: log, handlers: map[string]Handler{}}
}

// Handle registers h for calls named name ("search", "resume", ...).
func (s *Server) Handle(name string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[name] = h
}

// Listen creates the socket, private to the user (0600 in a 0700 folder).
// A stale socket left by a killed daemon is replaced; the caller must hold
// the workspace lock, so no live daemon owns it.
func (s *Server) Listen() error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("server: create socket folder: %w", err)
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("server: remove stale socket: %w", err)
	}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.path, err)
	}
	// The socket file is removed by Serve, and only while it is still
	// this server's: after the cache folder was deleted another daemon
	// may listen at the same path.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	fi, err := os.Stat(s.path)
	if err == nil {
		err = os.Chmod(s.path, 0o600)
	}
	if err != nil {
		ln.Close()
		os.Remove(s.path)
		return fmt.Errorf("server: %w", err)
	}
	s.ln, s.sock = ln, fi
	return nil
}

// ErrSocketGone is wrapped by CheckSocket's error when the socket file was
// deleted or replaced: clients can no longer reach this server.
var ErrSocketGone = errors.New("socket deleted or replaced")

// CheckSocket reports (ErrSocketGone) when the socket path no longer names
// the socket this server listens on.
func (s *Server) CheckSocket() error {
	if s.sock == nil {
		return nil
	}
	fi, err := os.Stat(s.path)
	if err != nil || !os.SameFile(fi, s.sock) {
		return fmt.Errorf("%s: %w", s.path, ErrSocketGone)
	}
	return nil
}

// removeSocket removes the socket file if it is still the one this server
// created: never another daemon's.
func (s *Server) removeSocket() {
	if s.CheckSocket() == nil {
		os.Remove(s.path)
	}
}

// Serve answers calls until ctx is cancelled, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/{name}", s.serveCall)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(shut)
	s.removeSocket()
	if err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	return nil
}

func (s *Server) serveCall(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	h := s.handlers[name]
	s.mu.Unlock()
	if h == nil {
		writeJSON(w, http.StatusNotFound, &Error{Code: 2, Message: fmt.Sprintf("no call named %q", name)})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest {
		writeJSON(w, http.StatusBadRequest, &Error{Code: 2, Message: "request unreadable or over 1 MiB"})
		return
	}
	start := time.Now()
	resp, err := h(r.Context(), body)
	s.log.Debug("call", "name", name, "took", time.Since(start), "err", err)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: 1, Message: err.Error()}
		}
		status := http.StatusInternalServerError
		if e.Code == 2 {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, e)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// writeJSON encodes v whole before writing it, with its length: the
// answer leaves in one write instead of a chunk every 2 KiB (a search's
// is ~26 KB), and the client reads it into one buffer of that size. A
// value that cannot be encoded is a 500, not a 200 cut short.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var body bytes.Buffer
	if err := json.NewEncoder(&body).Encode(v); err != nil {
		status = http.StatusInternalServerError
		body.Reset()
		json.NewEncoder(&body).Encode(&Error{Code: 1, Message: fmt.Sprintf("server: encode the answer: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	w.Write(body.Bytes())
}
