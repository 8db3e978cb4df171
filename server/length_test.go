package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAnswerStatesItsLength: an answer leaves whole, with its length (the
// client reads it into one buffer of that size), large or small; a value
// that cannot be encoded is an error (500), not a 200 cut short.
func TestAnswerStatesItsLength(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	s := New(path, nil)
	big := strings.Repeat("exchange text é ", 20000) // 340 KB
	s.Handle("big", func(context.Context, json.RawMessage) (any, error) { return map[string]string{"text": big}, nil })
	s.Handle("nan", func(context.Context, json.RawMessage) (any, error) {
		return map[string]float64{"score": math.NaN()}, nil
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() { cancel(); <-done }()

	var out map[string]string
	if err := NewClient(path).Call(ctx, "big", struct{}{}, &out); err != nil || out["text"] != big {
		t.Fatalf("big answer: %v (%d bytes back)", err, len(out["text"]))
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	resp, err := hc.Post("http://continuity/v1/big", "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Fatalf("Content-Length %q for %d bytes, transfer encoding %v, %v", resp.Header.Get("Content-Length"), len(body), resp.TransferEncoding, err)
	}
	var e *Error
	if err := NewClient(path).Call(ctx, "nan", struct{}{}, &out); !errors.As(err, &e) || e.Code != 1 || !strings.Contains(e.Message, "encode the answer") {
		t.Fatalf("unencodable answer: %v", err)
	}
}
