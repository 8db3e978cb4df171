package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/workspace"
)

// TestViewerCalls: the agent of each session (its first event's metadata
// "source", else "agent"), a session a page at a time with the files it
// touched, one event by its id.
func TestViewerCalls(t *testing.T) {
	ws := workspace.At(t.TempDir())
	if err := os.MkdirAll(ws.Logs, 0o700); err != nil {
		t.Fatal(err)
	}
	logs := `{"type":"exchange","id":"i1","session_id":"imp","timestamp":"2026-01-01T10:00:00Z","user":"u1","ai":"a1","files":["x.go","y.go"],"metadata":{"source":"claude-code","native":"f:1"}}
{"type":"exchange","id":"i2","session_id":"imp","timestamp":"2026-01-01T10:01:00Z","user":"u2","ai":"a2","files":["x.go"],"metadata":{"source":"claude-code"}}
{"type":"context_reset","session_id":"imp","timestamp":"2026-01-01T10:02:00Z","reason":"compaction"}
{"type":"exchange","id":"i3","session_id":"imp","timestamp":"2026-01-01T10:03:00Z","user":"u3","ai":"a3"}
{"type":"exchange","id":"p1","session_id":"own","timestamp":"2026-01-02T10:00:00Z","user":"u","ai":"a","metadata":{"agent":"my-script","source":7}}
{"type":"exchange","id":"n1","session_id":"none","timestamp":"2026-01-03T10:00:00Z","user":"u","ai":"a","metadata":{"model":"x"}}
`
	if err := os.WriteFile(filepath.Join(ws.Logs, "s.jsonl"), []byte(logs), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := Open(ws, Options{Embedder: hashEmbedder(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := e.CatchUp(ctx, nil); err != nil || rep.Lines != 6 {
		t.Fatalf("CatchUp: %+v, %v", rep, err)
	}
	e.Close()
	c := NewClient(ws, func() (embed.Embedder, error) { return hashEmbedder(t), nil }, nil)
	resp, err := c.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]string{}
	for _, r := range resp.Sessions {
		agents[r.ID] = r.Agent
	}
	if want := map[string]string{"imp": "claude-code", "own": "my-script", "none": ""}; !equalMaps(agents, want) {
		t.Errorf("agents %v, want %v", agents, want)
	}
	p, err := c.SessionPage(ctx, "imp", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range p.Events {
		ids = append(ids, ev.EventID+"/"+ev.Type)
	}
	if len(ids) != 2 || ids[0] != "i2/exchange" || p.Events[1].Type != "context_reset" || p.Session.Agent != "claude-code" || p.Session.Events != 4 {
		t.Errorf("page from 1: %v, session %+v", ids, p.Session)
	}
	if want := []FileCount{{Path: "x.go", Events: 2}, {Path: "y.go", Events: 1}}; !slices.Equal(p.Files, want) || p.FilesTotal != 2 {
		t.Errorf("files %v (%d), want %v", p.Files, p.FilesTotal, want)
	}
	for _, bad := range [][2]int{{0, 0}, {-1, 10}, {0, MaxPage + 1}} {
		if _, err := c.SessionPage(ctx, "imp", bad[0], bad[1]); !IsBadRequest(err) {
			t.Errorf("page %v: %v, want a bad request", bad, err)
		}
	}
	if _, err := c.SessionPage(ctx, "nope", 0, 10); !IsBadRequest(err) {
		t.Errorf("unknown session: %v", err)
	}
	ev, err := c.Event(ctx, "i3")
	if err != nil || ev.User != "u3" || ev.SessionID != "imp" {
		t.Errorf("Event(i3): %+v, %v", ev, err)
	}
	if _, err := c.Event(ctx, "nope"); !IsBadRequest(err) {
		t.Errorf("Event(nope): %v, want a bad request", err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
