package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestCallStuckDaemon: a daemon that accepts the connection but never
// answers (stopped, stuck) is given up on when the caller's context
// ends, with the context's error, not ErrNoDaemon: the client's ping
// tells a stuck daemon from an absent one this way.
func TestCallStuckDaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = NewClient(path).Call(ctx, "ping", struct{}{}, &struct{}{})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNoDaemon) {
		t.Fatalf("stuck daemon: %v; want the context's deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("gave up after %s", took)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	if err := NewClient(path).Call(ctx2, "ping", struct{}{}, &struct{}{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v; want context.Canceled", err)
	}
}

// TestCallChunkedAnswer: an answer without a stated length (a daemon of
// an earlier version streamed it in chunks) is read whole too.
func TestCallChunkedAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items":[`)
		for i := range 5000 {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, "%d", i)
			if i%1000 == 0 {
				w.(http.Flusher).Flush()
			}
		}
		fmt.Fprint(w, "]}\n")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	var out struct{ Items []int }
	if err := NewClient(path).Call(context.Background(), "list", struct{}{}, &out); err != nil || len(out.Items) != 5000 || out.Items[4999] != 4999 {
		t.Fatalf("chunked answer: %d items, %v", len(out.Items), err)
	}
}

// TestCallConcurrent: one Client serves calls from many goroutines (the
// MCP server and the viewer share theirs).
func TestCallConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	s := New(path, nil)
	s.Handle("double", func(_ context.Context, req json.RawMessage) (any, error) {
		var n int
		if err := json.Unmarshal(req, &n); err != nil {
			return nil, BadRequest(err)
		}
		return 2 * n, nil
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	c := NewClient(path)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			var out int
			if err := c.Call(ctx, "double", i, &out); err != nil || out != 2*i {
				errs <- fmt.Errorf("double %d = %d, %v", i, out, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
