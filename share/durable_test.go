package share_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/share"
	"github.com/praxis-os/continuity/share/sharetest"
	"github.com/praxis-os/continuity/workspace"
)

// teamDB makes a schema and members of team; it returns their URLs.
func teamDB(t *testing.T, team string, members ...string) []string {
	t.Helper()
	srv := sharetest.Start(t)
	db := srv.Database(t)
	ctx := context.Background()
	if err := share.Init(ctx, db); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, m := range members {
		user := sharetest.Name(m)
		if _, err := share.AddMember(ctx, db, share.MemberOptions{Team: team, User: user, Password: "pw-" + user}); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, sharetest.UserURL(db, user, "pw-"+user))
	}
	return urls
}

func exchangeLine(id, session, user string) string {
	return fmt.Sprintf(`{"type":"exchange","id":%q,"session_id":%q,"timestamp":"2026-11-20T10:00:00Z","user":%q,"ai":"ok"}`, id, session, user)
}

// writeInPlace rewrites the log in place (same inode), as an editor that
// truncates does.
func writeInPlace(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// ingest runs the engine's catch-up on the workspace (no daemon, so no
// publisher is told of what the index deletes).
func ingest(t *testing.T, ws workspace.Layout) {
	t.Helper()
	eng, err := engine.Open(ws, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// publish runs a publisher on the workspace's index until check is true.
func publish(t *testing.T, ws workspace.Layout, url, team string, check func() bool) {
	t.Helper()
	runView(t, ws, check, func(db *index.DB) interface {
		Run(context.Context) error
		Report(context.Context) any
	} {
		return share.NewPublisher(share.Config{URL: url, Team: team, Scope: "repo", Machine: "m1", Logs: ws.Logs,
			DB: db, Poll: 50 * time.Millisecond})
	})
}

// subscribe runs a subscriber on the workspace's index until check (of
// the index) is true.
func subscribe(t *testing.T, ws workspace.Layout, url, team string, check func(*index.DB) bool) {
	t.Helper()
	var db *index.DB
	runView(t, ws, func() bool { return check(db) }, func(d *index.DB) interface {
		Run(context.Context) error
		Report(context.Context) any
	} {
		db = d
		cfg := share.Config{URL: url, Team: team, Scope: "repo", Machine: "m2", Logs: ws.Logs, DB: d, Poll: 50 * time.Millisecond}
		return subView{share.NewSubscriber(cfg, share.Hooks{})}
	})
}

type subView struct{ *share.Subscriber }

func (s subView) Report(context.Context) any {
	var r share.Report
	s.Fill(&r)
	return r
}

func runView(t *testing.T, ws workspace.Layout, check func() bool, newView func(*index.DB) interface {
	Run(context.Context) error
	Report(context.Context) any
}) {
	t.Helper()
	eng, err := engine.Open(ws, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, cancel := context.WithCancel(context.Background())
	v := newView(eng.DB())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("not there after 30 s: %+v", v.Report(context.Background())) // the check's caller says more
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRemovedLinesDurable: a line removed by an edit in place while no
// publisher runs (a daemon killed -9 between the edit and its next
// shipping step) still leaves PostgreSQL when the publisher starts again,
// and a subscriber is told; the index's queue is empty afterwards.
func TestRemovedLinesDurable(t *testing.T) {
	url := teamDB(t, "t1", "alice")[0]
	ws := workspace.At(t.TempDir())
	if err := ws.PrepareLogs(); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(ws.Logs, "a.jsonl")
	lines := []string{exchangeLine("e1", "s1", "first"), exchangeLine("e2", "s1", "second"), exchangeLine("e3", "s1", "third")}
	writeInPlace(t, log, lines...)
	ingest(t, ws)
	count := func(sql string) func() int64 {
		return func() int64 { return sharetest.QueryInt(t, url, sql) }
	}
	events := count(`SELECT count(*) FROM continuity_events`)
	publish(t, ws, url, "t1", func() bool { return events() == 3 })

	// The edit, applied with no publisher running.
	writeInPlace(t, log, lines[0], lines[2])
	ingest(t, ws)

	e2 := count(`SELECT count(*) FROM continuity_events WHERE id = 'e2'`)
	removal := count(`SELECT count(*) FROM continuity_removals WHERE event_id = 'e2'`)
	publish(t, ws, url, "t1", func() bool { return e2() == 0 && removal() == 1 })
	if n := events(); n != 2 {
		t.Errorf("%d events in PostgreSQL, want 2", n)
	}
	eng, err := engine.Open(ws, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if q, err := eng.DB().ShareRemoved(context.Background(), 10); err != nil || len(q) != 0 {
		t.Errorf("queue after the removal was recorded: %+v %v", q, err)
	}
}

// TestChangedLineKeepsID: a line changed in place that keeps its producer
// id ships again under a new row after its old row's removal; a teammate
// who pulls the new row before applying the removal keeps the new version
// (the removal names the old row; the pull replaces the old version).
func TestChangedLineKeepsID(t *testing.T) {
	urls := teamDB(t, "t1", "alice", "bob")
	alice, bob := workspace.At(t.TempDir()), workspace.At(t.TempDir())
	for _, ws := range []workspace.Layout{alice, bob} {
		if err := ws.PrepareLogs(); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(alice.Logs, "a.jsonl")
	writeInPlace(t, log, exchangeLine("p1", "s1", "we pick MySQL"), exchangeLine("p2", "s1", "other"))
	ingest(t, alice)
	ingest(t, bob)
	publish(t, alice, urls[0], "t1", func() bool { return sharetest.QueryInt(t, urls[0], `SELECT count(*) FROM continuity_events`) == 2 })
	texts := func(db *index.DB) string {
		evs, err := db.EventsBySession(context.Background(), "s1")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.EventID+"="+e.User)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	subscribe(t, bob, urls[1], "t1", func(db *index.DB) bool { return texts(db) == "p1=we pick MySQL,p2=other" })

	// Alice changes the line, keeping its id; both its removal and its
	// new row are in PostgreSQL before bob's next step.
	writeInPlace(t, log, exchangeLine("p1", "s1", "we pick PostgreSQL"), exchangeLine("p2", "s1", "other"))
	ingest(t, alice)
	publish(t, alice, urls[0], "t1", func() bool {
		return sharetest.QueryInt(t, urls[0], `SELECT count(*) FROM continuity_events WHERE id = 'p1' AND user_text LIKE '%PostgreSQL%'`) == 1
	})
	subscribe(t, bob, urls[1], "t1", func(db *index.DB) bool { return texts(db) == "p1=we pick PostgreSQL,p2=other" })
	// The removal, applied after the pull, left the new version alone.
	eng, err := engine.Open(bob, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if got := texts(eng.DB()); got != "p1=we pick PostgreSQL,p2=other" {
		t.Errorf("bob's index: %s", got)
	}
}

// TestRebuildTakesOver: a workspace whose index was rebuilt (the cache
// deleted) takes over what it shipped before: a line changed after the
// rebuild ships in its new form, a line removed after it leaves
// PostgreSQL (and the teammate's index), the pre-rebuild rows are not
// left behind, and the workspace never pulls its own rows back.
func TestRebuildTakesOver(t *testing.T) {
	urls := teamDB(t, "t1", "alice", "bob")
	alice, bob := workspace.At(t.TempDir()), workspace.At(t.TempDir())
	for _, ws := range []workspace.Layout{alice, bob} {
		if err := ws.PrepareLogs(); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(alice.Logs, "a.jsonl")
	writeInPlace(t, log, exchangeLine("p1", "s1", "one"), exchangeLine("p2", "s1", "we pick MySQL"), exchangeLine("p3", "s1", "three"),
		exchangeLine("q1", "s2", "made private after it shipped"))
	ingest(t, alice)
	ingest(t, bob)
	publish(t, alice, urls[0], "t1", func() bool { return sharetest.QueryInt(t, urls[0], `SELECT count(*) FROM continuity_events`) == 4 })
	if _, err := share.MarkPrivate(alice.Logs, "s2"); err != nil {
		t.Fatal(err)
	}
	bobHolds := func(want string) func(*index.DB) bool {
		return func(db *index.DB) bool {
			evs, err := db.EventsBySession(context.Background(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range evs {
				out = append(out, e.EventID+"="+e.User)
			}
			sort.Strings(out)
			return strings.Join(out, ",") == want
		}
	}
	subscribe(t, bob, urls[1], "t1", bobHolds("p1=one,p2=we pick MySQL,p3=three"))

	// The cache deleted, the index rebuilt from the logs; then an edit.
	if err := os.RemoveAll(alice.Cache); err != nil {
		t.Fatal(err)
	}
	ingest(t, alice)
	writeInPlace(t, log, exchangeLine("p1", "s1", "one"), exchangeLine("p2", "s1", "we pick PostgreSQL"),
		exchangeLine("q1", "s2", "made private after it shipped"))
	ingest(t, alice)
	rows := func() string {
		return strings.Join(sharetest.Strings(t, urls[0], `SELECT id || '=' || user_text FROM continuity_events WHERE session = 's1' ORDER BY id`), ",")
	}
	publish(t, alice, urls[0], "t1", func() bool { return rows() == "p1=one,p2=we pick PostgreSQL" })
	if n := sharetest.QueryInt(t, urls[0], `SELECT count(DISTINCT origin) FROM continuity_events WHERE session = 's1'`); n != 1 {
		t.Errorf("rows under %d origins, want the rebuilt index's only", n)
	}
	// The private session's row stays shipped (under the old origin) until
	// forgotten, as documented.
	if n := sharetest.QueryInt(t, urls[0], `SELECT count(*) FROM continuity_events WHERE session = 's2'`); n != 1 {
		t.Errorf("the session made private: %d rows", n)
	}
	subscribe(t, bob, urls[1], "t1", bobHolds("p1=one,p2=we pick PostgreSQL"))

	// Alice's own subscriber pulls nothing of hers back.
	eng, err := engine.Open(alice, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sub := share.NewSubscriber(share.Config{URL: urls[0], Team: "t1", Scope: "repo", Machine: "m1", Logs: alice.Logs, DB: eng.DB()}, share.Hooks{})
	for more := true; more; {
		if more, err = sub.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var r share.Report
	sub.Fill(&r)
	if r.Pulled != 0 {
		t.Errorf("alice pulled %d of her own events back", r.Pulled)
	}
}
