package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/follow/rejectlog"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/workspace"
)

var ctx = context.Background()

// newLayout is a temporary workspace whose logs hold two sessions of
// exchanges: a (about sqlite) and b (about kubernetes), b resuming a.
func newLayout(t *testing.T) workspace.Layout {
	t.Helper()
	ws := workspace.At(t.TempDir())
	if err := os.MkdirAll(ws.Logs, 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for i := range 6 {
		lines = fmt.Appendf(lines, `{"type":"exchange","id":"a%d","session_id":"a","timestamp":"2026-01-01T10:0%d:00Z","user":"why is the sqlite database locked %d","ai":"a writer holds it"}`+"\n", i, i, i)
	}
	lines = append(lines, `{"type":"session_resume","previous_session":"a","new_session":"b","timestamp":"2026-01-02T10:00:00Z"}`+"\n"...)
	for i := range 4 {
		lines = fmt.Appendf(lines, `{"type":"exchange","id":"b%d","session_id":"b","timestamp":"2026-01-02T10:0%d:00Z","user":"the kubernetes pod restarts %d","ai":"check the probe"}`+"\n", i, i+1, i)
	}
	if err := os.WriteFile(filepath.Join(ws.Logs, "s.jsonl"), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	return ws
}

func hashEmbedder(t *testing.T) embed.Embedder {
	t.Helper()
	e, err := embed.New(embed.Config{Provider: embed.ProviderHash})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// openIngested opens ws with the hash embedder and ingests it, as
// `continuity ingest` does.
func openIngested(t *testing.T, ws workspace.Layout, opts Options) *Engine {
	t.Helper()
	opts.Embedder = hashEmbedder(t)
	e, err := Open(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.CatchUp(ctx, nil)
	if err != nil || rep.Lines != 11 {
		t.Fatalf("CatchUp: %+v, %v", rep, err)
	}
	if x, err := e.Embed(ctx, nil); err != nil || x.Stored != 10 {
		t.Fatalf("Embed: %+v, %v", x, err)
	}
	return e
}

// recordingView is a view that only records what it is asked to remove.
type recordingView struct {
	*rejectlog.Log
	forgot []string
	rows   []int64
}

func (v *recordingView) Name() string { return "recording" }
func (v *recordingView) Remove(_ context.Context, r follow.Removal) error {
	v.forgot = append(v.forgot, r.Sessions...)
	v.rows = append(v.rows, r.Rows...)
	return nil
}

// TestForgetGoesThroughEveryView: forget deletes the chain from the
// index, then every view drops what it holds of it: the full-text index,
// the bm25 engine's files, the vector space in memory and its snapshots,
// and any other view.
func TestForgetGoesThroughEveryView(t *testing.T) {
	ws := newLayout(t)
	e := openIngested(t, ws, Options{})
	defer e.Close()
	if err := e.bm25.CatchUp(ctx); err != nil { // the bm25 engine's files, as the daemon builds them
		t.Fatal(err)
	}
	if err := e.bm25.Flush(); err != nil {
		t.Fatal(err)
	}
	id := vectors.SpaceIdentity(e.embedding.Embedder())
	snap := vectors.SnapshotPath(e.db, id)
	if err := os.WriteFile(snap, []byte("a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &recordingView{Log: rejectlog.New(e.db, e.log)}
	e.views = append(e.views, rec)

	resp, err := e.Forget(ctx, ForgetRequest{Session: "b", Chain: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "a"}; !slices.Equal(resp.Sessions, want) || resp.Events != 11 {
		t.Errorf("Forget: %+v, want sessions %v and 11 events", resp, want)
	}
	if !slices.Equal(rec.forgot, resp.Sessions) {
		t.Errorf("the other view was asked to forget %v", rec.forgot)
	}
	for _, f := range []string{snap, lexicon.Dir(e.db)} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s outlives the forget: %v", f, err)
		}
	}
	if v := e.embedding.Space(); v == nil || v.Len() != 0 {
		t.Errorf("vector space after the forget: %v vectors", v.Len())
	}
	if err := e.fullText.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := e.db.FullTextPending(ctx); err != nil || n != 0 {
		t.Errorf("full-text index: %d pending after the forget, %v", n, err)
	}
	res, err := e.answerer.search(ctx, SearchRequest{Query: "sqlite database locked", Mode: "bm25"})
	if err != nil || len(res.Results) != 0 {
		t.Errorf("search after the forget: %+v, %v", res.Results, err)
	}
	// Again: already forgotten, nothing to do; unknown: a bad request.
	if resp, err := e.Forget(ctx, ForgetRequest{Session: "a"}); err != nil || resp.Events != 0 {
		t.Errorf("forget again: %+v, %v", resp, err)
	}
	if _, err := e.Forget(ctx, ForgetRequest{Session: "nope"}); !IsBadRequest(err) {
		t.Errorf("forget of an unknown session: %v", err)
	}
}

// TestClientLocalThenDaemon: without a daemon the client answers from the
// index; with one, through its socket, which also serves each view's
// status by its name; both answer alike.
func TestClientLocalThenDaemon(t *testing.T) {
	ws := newLayout(t)
	openIngested(t, ws, Options{}).Close()
	t.Setenv(embed.EnvProvider, embed.ProviderHash)
	c := NewClient(ws, func() (embed.Embedder, error) { return hashEmbedder(t), nil }, nil)
	req := SearchRequest{Query: "why is the database locked", Limit: 3}
	local, err := c.Search(ctx, req)
	if err != nil || len(local.Results) != 3 || local.Results[0].SessionID != "a" {
		t.Fatalf("local search: %+v, %v", local, err)
	}
	if _, err := c.Resume(ctx, ResumeRequest{Session: "nope"}); !IsBadRequest(err) {
		t.Errorf("resume of an unknown session: %v", err)
	}

	e, err := Open(ws, Options{Embedder: hashEmbedder(t), Socket: true, ResumeCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer runDaemon(t, e)()
	sc := server.NewClient(server.SocketPath(ws.Cache))
	for _, v := range e.views {
		var raw json.RawMessage
		if err := sc.Call(ctx, v.Name()+"_status", struct{}{}, &raw); err != nil {
			t.Errorf("%s_status: %v", v.Name(), err)
		}
	}
	var prog embedding.Progress
	waitFor(t, "the daemon's vector space", func() bool {
		return sc.Call(ctx, "embed_status", struct{}{}, &prog) == nil && prog.Identity != "" && prog.Pending == 0
	})
	daemon, err := c.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := json.Marshal(local)
	d, _ := json.Marshal(daemon)
	if string(l) != string(d) {
		t.Errorf("the daemon answers\n%s\nthe index\n%s", d, l)
	}
	if _, err := c.Resume(ctx, ResumeRequest{Session: "nope"}); !IsBadRequest(err) {
		t.Errorf("resume of an unknown session through the daemon: %v", err)
	}
	st, err := c.Status(ctx)
	if err != nil || !st.Daemon.Running || st.BM25 == nil || st.Exchanges != 10 {
		t.Errorf("status with the daemon: %+v, %v", st, err)
	}
}

// runDaemon runs e as the daemon does (Run) until the returned function,
// which stops it and checks that Run ended without an error, is called
// (defer runDaemon(t, e)()).
func runDaemon(t *testing.T, e *Engine) (stop func()) {
	t.Helper()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(rctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOpenTakesTheLock: one writer per workspace.
func TestOpenTakesTheLock(t *testing.T) {
	ws := newLayout(t)
	e, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := Open(ws, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("a second Open: %v, want ErrLocked", err)
	}
}

// TestReadBuild: the build description names the release, the Go
// release and the default embedder's model.
func TestReadBuild(t *testing.T) {
	b := ReadBuild()
	if b.Version != Version || b.Go == "" || b.Platform == "" || b.Embedder != embed.DefaultProvider || b.Model == "" || b.Space != b.Model+"#user|ai" {
		t.Errorf("ReadBuild: %+v", b)
	}
}

// TestRunStoppedWhileStarting: a daemon stopped (SIGTERM) while it is
// still starting ends normally: the context errors of its parts that were
// interrupted are not failures (the daemon used to exit 1 with "watcher:
// load generations: ... context canceled").
func TestRunStoppedWhileStarting(t *testing.T) {
	ws := newLayout(t)
	openIngested(t, ws, Options{}).Close()
	for i := range 5 {
		e, err := Open(ws, Options{Embedder: hashEmbedder(t), Socket: true})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		if i > 0 {
			time.AfterFunc(time.Duration(i)*time.Millisecond, stop)
		} else {
			stop()
		}
		if err := e.Run(rctx); err != nil {
			t.Fatalf("Run stopped %d ms after its start: %v, want a normal end", i, err)
		}
		stop()
	}
}

// TestEditGoesThroughEveryView: a log edited in place deletes the events
// of its changed and removed lines; every view is told their rows (the
// vector space drops their vectors), and the kept exchanges keep theirs.
func TestEditGoesThroughEveryView(t *testing.T) {
	ws := newLayout(t)
	e := openIngested(t, ws, Options{})
	defer e.Close()
	rec := &recordingView{Log: rejectlog.New(e.db, e.log)}
	e.views = append(e.views, rec)

	path := filepath.Join(ws.Logs, "s.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The resume removed, one exchange's text changed: written whole and
	// renamed over the log, as an editor saves.
	edited := strings.Replace(string(data), "the kubernetes pod restarts 2", "the kubernetes pod restarts twice", 1)
	lines := strings.SplitAfter(edited, "\n")
	edited = strings.Join(append(lines[:6:6], lines[7:]...), "")
	if err := os.WriteFile(path+".tmp", []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(rec.rows) != 2 || len(rec.forgot) != 0 {
		t.Fatalf("the other view was told rows %v, sessions %v; want the 2 removed", rec.rows, rec.forgot)
	}
	if v := e.embedding.Space(); v == nil || v.Len() != 9 {
		t.Errorf("vector space after the edit: %d vectors, want 9", v.Len())
	}
	if links, _ := e.db.AllLinks(ctx); len(links) != 0 {
		t.Errorf("the removed resume's link stays: %+v", links)
	}
}
