package engine

import (
	"strings"
	"testing"
	"time"
)

// TestWriteWaitsForTheLock: a forget that finds the index locked by
// another process (a daemon starting, an ingest) and no daemon answering
// waits for the lock and then forgets, instead of failing at once with
// "another continuity process holds the index lock".
func TestWriteWaitsForTheLock(t *testing.T) {
	ws := newLayout(t)
	openIngested(t, ws, Options{}).Close()
	holder, err := Open(ws, Options{Embedder: hashEmbedder(t)})
	if err != nil {
		t.Fatal(err)
	}
	warn := &lockedBuffer{}
	type result struct {
		resp ForgetResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := NewClient(ws, nil, warn).Forget(ctx, ForgetRequest{Session: "b"})
		done <- result{resp, err}
	}()
	// Release the lock only once the forget says it waits for it: it
	// must have found the index locked, and not given up.
	for !strings.Contains(warn.String(), "waiting up to") {
		select {
		case r := <-done:
			t.Fatalf("the forget did not wait for the lock: %+v, %v", r.resp, r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	holder.Close()
	r := <-done
	if r.err != nil || len(r.resp.Sessions) != 1 {
		t.Fatalf("after the lock was released: %+v, %v", r.resp, r.err)
	}
}
