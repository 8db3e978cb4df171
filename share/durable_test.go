package share_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/share"
	"github.com/praxis-os/continuity/share/sharetest"
	"github.com/praxis-os/continuity/workspace"
)

// teamDB makes a schema and a member; it returns the member's URL.
func teamDB(t *testing.T, team string) string {
	t.Helper()
	srv := sharetest.Start(t)
	db := srv.Database(t)
	ctx := context.Background()
	if err := share.Init(ctx, db); err != nil {
		t.Fatal(err)
	}
	user := sharetest.Name("alice")
	if _, err := share.AddMember(ctx, db, share.MemberOptions{Team: team, User: user, Password: "pw-" + user}); err != nil {
		t.Fatal(err)
	}
	return sharetest.UserURL(db, user, "pw-"+user)
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
	eng, err := engine.Open(ws, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, cancel := context.WithCancel(context.Background())
	pub := share.NewPublisher(share.Config{URL: url, Team: team, Scope: "repo", Machine: "m1", Logs: ws.Logs,
		DB: eng.DB(), Poll: 50 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- pub.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("publisher: not there after 30 s: %+v", pub.Report(context.Background()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRemovedLinesDurable: a line removed by an edit in place while no
// publisher runs (a daemon killed -9 between the edit and its next
// shipping step) still leaves PostgreSQL when the publisher starts again,
// and a subscriber is told; the index's queue is empty afterwards.
func TestRemovedLinesDurable(t *testing.T) {
	url := teamDB(t, "t1")
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
