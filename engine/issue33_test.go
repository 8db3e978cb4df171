package engine

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/workspace"
)

// TestParseUntil (issue 33, item 4): a date as --until takes in that day,
// as the viewer reads it; an RFC 3339 time is the bound as given.
func TestParseUntil(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"2026-11-28", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), false},
		{"2026-12-31", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"2026-11-28T10:00:00Z", time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), false},
		{"2026-11-28T10:00:00", time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), false},
		{"28/11/2026", time.Time{}, true},
		{"0d", time.Time{}, true},
		{"-2d", time.Time{}, true},
	} {
		got, err := ParseUntil(c.in)
		if (err != nil) != c.err || !got.Equal(c.want) {
			t.Errorf("ParseUntil(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// TestParseTimeAge: --since and --until take an age as forget
// --older-than does ("--since 2d": want an RFC 3339 time, it said).
func TestParseTimeAge(t *testing.T) {
	for _, c := range []struct {
		in  string
		ago time.Duration
	}{{"2d", 48 * time.Hour}, {"1w", 7 * 24 * time.Hour}, {"90m", 90 * time.Minute}} {
		before := time.Now()
		got, err := ParseTime("since", c.in)
		after := time.Now()
		if err != nil || got.Before(before.Add(-c.ago)) || got.After(after.Add(-c.ago)) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v before now", c.in, got, err, c.ago)
		}
		if u, err := ParseUntil(c.in); err != nil || u.Sub(got).Abs() > time.Minute {
			t.Errorf("ParseUntil(%q) = %v, %v; want the same instant as --since", c.in, u, err)
		}
	}
	if _, err := ParseTime("since", "yesterday"); err == nil || !strings.Contains(err.Error(), "an age (7d") {
		t.Errorf("ParseTime(yesterday): %v", err)
	}
}

// TestSearchWindow (item 4): --since D --until D finds that day's
// exchanges; a window that holds no exchange says so (EmptyWindow), where
// words that match nothing in a full window do not; since not before
// until is the caller's mistake.
func TestSearchWindow(t *testing.T) {
	e := openIngested(t, newLayout(t), Options{}) // a: 2026-01-01, sqlite; b: 2026-01-02, kubernetes
	defer e.Close()
	search := func(query, since, until string) SearchResponse {
		t.Helper()
		resp, err := e.answerer.search(ctx, SearchRequest{Query: query, Since: since, Until: until, Mode: "bm25"})
		if err != nil {
			t.Fatalf("search %q %s..%s: %v", query, since, until, err)
		}
		return resp
	}
	if r := search("sqlite locked", "2026-01-01", "2026-01-01"); len(r.Results) != 6 || r.EmptyWindow != nil {
		t.Errorf("--since and --until the same day: %d results, %+v; want that day's 6", len(r.Results), r.EmptyWindow)
	}
	r := search("sqlite locked", "2026-01-03", "2026-01-03")
	if len(r.Results) != 0 || r.EmptyWindow == nil || r.EmptyWindow.String() != "from 2026-01-03 00:00 to 2026-01-04 00:00 UTC" {
		t.Errorf("an empty window: %+v; want it said to hold nothing", r)
	}
	r = search("sqlite locked", "2026-01-02", "2026-01-02")
	if len(r.Results) != 0 || r.EmptyWindow != nil {
		t.Errorf("words that match nothing in a window that holds exchanges: %+v; want no empty window", r)
	}
	// ... but it says that the same search finds the day before's six
	// outside the window: not "never discussed".
	if m := r.NoMatchInScope; m == nil || m.Outside != 6 || m.OutsideMore ||
		m.String() != "the time window from 2026-01-02 00:00 to 2026-01-03 00:00 UTC" {
		t.Errorf("no match in a window, six outside: %+v", m)
	}
	if r := search("sqlite locked", "2026-01-01", "2026-01-01"); r.NoMatchInScope != nil {
		t.Errorf("results in the window: %+v", r.NoMatchInScope)
	}
	r, err := e.answerer.search(ctx, SearchRequest{Query: "sqlite locked", Since: "2026-01-02", Limit: 2, Mode: "bm25"})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.NoMatchInScope; m == nil || m.Outside != 2 || !m.OutsideMore {
		t.Errorf("no match in a window, more outside than the limit (2): %+v", m)
	}
	// A session scope likewise: b holds no sqlite exchange, a does.
	r, err = e.answerer.search(ctx, SearchRequest{Query: "sqlite locked", Session: "b", Mode: "bm25"})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.NoMatchInScope; len(r.Results) != 0 || m == nil || m.Empty || m.Outside != 6 || m.String() != "session b" {
		t.Errorf("no match in a session, six outside: %+v", r)
	}
	// Session b within a window of a's day: the window holds exchanges,
	// b none of them (Empty); b's kubernetes exchanges are outside.
	r, err = e.answerer.search(ctx, SearchRequest{Query: "kubernetes pod", Session: "b", Since: "2026-01-01", Until: "2026-01-01", Mode: "bm25"})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.NoMatchInScope; len(r.Results) != 0 || r.EmptyWindow != nil || m == nil || !m.Empty || m.Outside == 0 ||
		m.String() != "session b and the time window from 2026-01-01 00:00 to 2026-01-02 00:00 UTC" {
		t.Errorf("a session outside the window: %+v %+v", r, r.NoMatchInScope)
	}
	r = search("zebra giraffe", "2026-01-02", "2026-01-02")
	if m := r.NoMatchInScope; len(r.Results) != 0 || m == nil || m.Outside != 0 || m.OutsideMore {
		t.Errorf("no match in the window or outside it: %+v", r)
	}
	if _, err := e.answerer.search(ctx, SearchRequest{Query: "x", Since: "2026-01-03", Until: "2026-01-02"}); !IsBadRequest(err) {
		t.Errorf("since after until: %v; want a bad request", err)
	}
}

// TestIndexer (item 12): a client tells the process that indexes the
// workspace continuously (what an ingest that finds the lock taken says),
// and that none does without a daemon.
func TestIndexer(t *testing.T) {
	ws := newLayout(t)
	c := NewClient(ws, nil, nil)
	if pid, ok := c.Indexer(ctx); ok {
		t.Errorf("without a daemon: indexer pid %d", pid)
	}
	e, err := Open(ws, Options{Embedder: hashEmbedder(t), Socket: true})
	if err != nil {
		t.Fatal(err)
	}
	defer runDaemon(t, e)()
	waitFor(t, "the daemon answering", func() bool { _, ok := c.Indexer(ctx); return ok })
	if pid, _ := c.Indexer(ctx); pid != os.Getpid() {
		t.Errorf("indexer pid %d, want this process's %d", pid, os.Getpid())
	}
	if _, err := Open(ws, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open while it runs: %v, want ErrLocked", err)
	}
}

// TestPinnedEmbedder (item 2): an embedder given for a search is not
// ignored when a daemon runs: a bad one is an error, another one than the
// daemon's answers from the index and says so; the daemon's own answers
// as before.
func TestPinnedEmbedder(t *testing.T) {
	ws := newLayout(t)
	e, err := Open(ws, Options{Embedder: hashEmbedder(t), Socket: true})
	if err != nil {
		t.Fatal(err)
	}
	defer runDaemon(t, e)()
	waitFor(t, "the daemon's index and vectors", func() bool {
		c := NewClient(ws, nil, nil)
		if p, ok := c.daemonEmbedder(ctx); !ok || p.Identity == "" || p.Pending != 0 {
			return false
		}
		n, err := c.Sessions(ctx) // through the daemon, which answered
		if err != nil || len(n.Sessions) != 2 || n.Sessions[1].Exchanges != 4 {
			return false
		}
		// The answer with another embedder is read from the index by
		// this process, which cannot add to the full-text index what
		// the daemon has not yet (TestReaderSaysFullTextLag): wait for
		// the daemon's full-text view too.
		return notInFullText(t, ws) == 0
	})
	client := func(cfg embed.Config) *Client {
		return NewClient(ws, func() (embed.Embedder, error) { return embed.New(cfg) }, nil).PinEmbedder()
	}
	req := SearchRequest{Query: "sqlite database locked", Limit: 3}
	if _, err := client(embed.Config{Provider: "foo"}).Search(ctx, req); err == nil || !strings.Contains(err.Error(), `unknown embedding provider "foo"`) {
		t.Errorf("--embedder foo with a daemon: %v; want an error naming it", err)
	}
	r, err := client(embed.Config{Provider: embed.ProviderHash, Dimension: 64}).Search(ctx, req)
	if err != nil || len(r.Results) == 0 || !strings.Contains(r.Note, "not by the daemon") {
		t.Errorf("another embedder than the daemon's: %+v, %v; want answered from the index, and said", r, err)
	}
	r, err = client(embed.Config{Provider: embed.ProviderHash}).Search(ctx, req)
	if err != nil || len(r.Results) == 0 || r.Note != "" || r.VectorsMissing != "" {
		t.Errorf("the daemon's own embedder: %+v, %v; want the daemon's answer", r, err)
	}
}

// TestParseAge (item 16): retention durations as users write them.
func TestParseAge(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"30d", 30 * 24 * time.Hour, false},
		{"2w", 14 * 24 * time.Hour, false},
		{"72h", 72 * time.Hour, false},
		{"1h30m", 90 * time.Minute, false},
		{" 3d ", 72 * time.Hour, false},
		{"", 0, true},
		{"0d", 0, true},
		{"-3d", 0, true},
		{"3x", 0, true},
		{"d", 0, true},
		{"999999999d", 0, true},
	} {
		got, err := ParseAge(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// TestParseRetention: forgetting by age takes an hour or more: "6m" (six
// months to many; six minutes to ParseAge) made daemon --retain forget
// every session older than six minutes, without asking.
func TestParseRetention(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{{"6m", 0}, {"59m", 0}, {"60m", time.Hour}, {"90m", 90 * time.Minute}, {"30d", 30 * 24 * time.Hour}, {"1y", 0}} {
		got, err := ParseRetention(c.in)
		if got != c.want || (err != nil) != (c.want == 0) {
			t.Errorf("ParseRetention(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := ParseRetention("6m"); err == nil || !strings.Contains(err.Error(), "180d") {
		t.Errorf("ParseRetention(6m): %v; want the advice on months", err)
	}
}

// TestForgetBefore (item 16): forgetting by age forgets the sessions whose
// latest event is before the time, whole, through the one forget path
// (recorded beside the logs: a rebuild keeps them out); the daemon's
// retention does the same by itself.
func TestForgetBefore(t *testing.T) {
	ws := newLayout(t) // a: 2026-01-01, b: 2026-01-02 (resumes a)
	e := openIngested(t, ws, Options{})
	cut := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	plan, err := forgetPlan(ctx, e.db, ForgetRequest{Before: cut})
	if err != nil || len(plan.Sessions) != 1 || plan.Sessions[0] != "a" || plan.Events != 6 {
		t.Errorf("plan of forgetting before %v: %+v, %v; want session a, 6 events", cut, plan, err)
	}
	resp, err := e.Forget(ctx, ForgetRequest{Before: cut})
	if err != nil || len(resp.Sessions) != 1 || resp.Sessions[0] != "a" || resp.Events != 6 || resp.Recorded == "" || resp.Left != 0 {
		t.Fatalf("forget before %v: %+v, %v", cut, resp, err)
	}
	if resp, err := e.Forget(ctx, ForgetRequest{Before: cut}); err != nil || len(resp.Sessions) != 0 {
		t.Errorf("again: %+v, %v; want nothing to forget", resp, err)
	}
	if _, err := e.Forget(ctx, ForgetRequest{Before: cut, Session: "b"}); !IsBadRequest(err) {
		t.Errorf("a session and a time: %v; want a bad request", err)
	}
	e.Close()
	// A rebuild: the forget, recorded beside the logs, keeps a out.
	if err := os.RemoveAll(ws.Cache); err != nil {
		t.Fatal(err)
	}
	e, err = Open(ws, Options{Embedder: hashEmbedder(t), Socket: true, Retain: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.db.SessionExists(ctx, "a"); err != nil || ok {
		t.Errorf("after a rebuild, the session forgotten by age is back: %v, %v", ok, err)
	}
	// The daemon's retention: b is older than a day, so it goes too.
	defer runDaemon(t, e)()
	waitFor(t, "the daemon's retention to forget b", func() bool {
		ok, err := e.db.SessionExists(ctx, "b")
		return err == nil && !ok
	})
}

// notInFullText is how many indexed exchanges ws's full-text index does
// not hold yet, as a reader sees it (-1 when it cannot tell yet).
func notInFullText(t *testing.T, ws workspace.Layout) int64 {
	t.Helper()
	db, err := openReader(ws)
	if err != nil {
		return -1
	}
	defer db.Close()
	n, err := db.ExchangesNotInFullText(ctx)
	if err != nil {
		return -1
	}
	return n
}

// TestSearchEmptyIndex: a search that finds nothing because the index
// holds no exchange (every session forgotten) says so (EmptyIndex), and
// not that no exchange has a vector yet (there is nothing to embed);
// words that match nothing in an index that holds exchanges do not.
func TestSearchEmptyIndex(t *testing.T) {
	e := openIngested(t, newLayout(t), Options{})
	defer e.Close()
	search := func(query string) SearchResponse {
		t.Helper()
		resp, err := e.answerer.search(ctx, SearchRequest{Query: query})
		if err != nil {
			t.Fatalf("search %q: %v", query, err)
		}
		return resp
	}
	if r := search("zebra xylophone"); r.EmptyIndex {
		t.Errorf("an index with exchanges: %+v; want no empty index", r)
	}
	if _, err := e.Forget(ctx, ForgetRequest{Session: "b", Chain: true}); err != nil {
		t.Fatal(err)
	}
	r := search("sqlite database locked")
	if len(r.Results) != 0 || !r.EmptyIndex || r.VectorsMissing != "" {
		t.Errorf("every session forgotten: %d results, empty index %v, vectors missing %q; want the empty index said, no vector note",
			len(r.Results), r.EmptyIndex, r.VectorsMissing)
	}
	if r := search("sqlite database locked"); r.EmptyWindow != nil {
		t.Errorf("no window asked: %+v", r.EmptyWindow)
	}
}
