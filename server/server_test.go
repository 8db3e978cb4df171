package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCallRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SocketName)
	// A stale socket file from a killed daemon must not stop a new one.
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(path, nil)
	s.Handle("echo", func(ctx context.Context, req json.RawMessage) (any, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, BadRequest(err)
		}
		switch in.Text {
		case "bad":
			return nil, BadRequest(errors.New("unknown session \"x\""))
		case "fail":
			return nil, errors.New("disk on fire")
		}
		return map[string]string{"echo": in.Text}, nil
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()

	c := NewClient(path)
	cases := []struct {
		name, call, text string
		want             string
		code             int
	}{
		{"ok", "echo", "hi", "hi", 0},
		{"bad request keeps code 2", "echo", "bad", "unknown session", 2},
		{"internal error code 1", "echo", "fail", "disk on fire", 1},
		{"unknown call", "nope", "", "no call named", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out map[string]string
			err := c.Call(ctx, tc.call, map[string]string{"Text": tc.text}, &out)
			if tc.code == 0 {
				if err != nil || out["echo"] != tc.want {
					t.Fatalf("got %v, %v", out, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %v; want code %d containing %q", err, tc.code, tc.want)
			}
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after shutdown: %v", err)
	}
	if err := c.Call(context.Background(), "echo", nil, nil); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("after shutdown: %v, want ErrNoDaemon", err)
	}
}

func TestSocketPath(t *testing.T) {
	short := "/home/u/ws/.praxis-os/.cache/continuity"
	if got := SocketPath(short); got != filepath.Join(short, SocketName) {
		t.Errorf("short: %s", got)
	}
	long := "/" + strings.Repeat("d", 120) + "/.praxis-os/.cache/continuity"
	got := SocketPath(long)
	if len(got) > maxSocketPath || !strings.HasSuffix(got, ".sock") || got == SocketPath(long+"x") {
		t.Errorf("long: %s", got)
	}
}
