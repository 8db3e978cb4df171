package resume

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The index-backed Source through the real stack (index.Open, watcher
// CatchUp): links, the timeline (exchanges and resets only, by time),
// latest session, existence, ranking restricted to the chain.
func TestIndexSource(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".praxis-os", ".conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	log := strings.Join([]string{
		`{"type":"exchange","timestamp":"2024-05-01T10:00:00Z","session_id":"a","user":"the parser fails","ai":"fixed the parser"}`,
		`{"type":"tool_call","timestamp":"2024-05-01T10:01:00Z","session_id":"a","name":"go test"}`,
		`{"type":"context_reset","timestamp":"2024-05-01T10:02:00Z","session_id":"a"}`,
		`{"type":"exchange","timestamp":"2024-05-01T10:03:00Z","session_id":"a","user":"watcher next","ai":"ok"}`,
		`{"type":"session_resume","timestamp":"2024-05-02T09:00:00Z","previous_session":"a","new_session":"b"}`,
		`{"type":"session_resume","timestamp":"2024-05-02T09:00:01Z","previous_session":"z","new_session":"b"}`,
		`{"type":"exchange","timestamp":"2024-05-02T09:01:00Z","session_id":"b","user":"parser again?","ai":"no"}`,
		`{"type":"exchange","timestamp":"2024-05-03T09:01:00Z","session_id":"other","user":"parser elsewhere","ai":"yes"}`,
		`{"type":"exchange","timestamp":"2024-05-01T09:59:00Z","session_id":"b","user":"early","ai":"clock skew"}`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "log.jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := indexDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src := &IndexSource{DB: db, Ranker: LexicalRanker(db)}

	c, err := FollowChain(ctx, src, "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Sessions, []string{"b", "z", "a"}) {
		t.Errorf("chain %v", c.Sessions)
	}
	tl, err := src.Timeline(ctx, c.Sessions)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tl {
		got = append(got, e.SessionID+":"+e.Type+"@"+e.Timestamp.Format("02T15:04"))
	}
	want := []string{"b:exchange@01T09:59", "a:exchange@01T10:00", "a:context_reset@01T10:02", "a:exchange@01T10:03", "b:exchange@02T09:01"}
	if !slices.Equal(got, want) {
		t.Errorf("timeline\n got %v\nwant %v", got, want)
	}
	if s, err := src.LatestSession(ctx); err != nil || s != "other" {
		t.Errorf("latest = %q, %v", s, err)
	}
	for id, want := range map[string]bool{"a": true, "z": true, "other": true, "nope": false} {
		if ok, err := src.SessionExists(ctx, id); err != nil || ok != want {
			t.Errorf("exists(%s) = %v, %v", id, ok, err)
		}
	}
	rows, err := src.Relevant(ctx, "parser", c.Sessions, 10)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := src.Events(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, e := range evs {
		users = append(users, e.User)
	}
	slices.Sort(users)
	if !slices.Equal(users, []string{"parser again?", "the parser fails"}) {
		t.Errorf("relevant %v", users)
	}
	p := build(t, src, Options{Session: "b", Query: "parser"})
	if len(p.Exchanges) != 2 || p.InContext != 2 {
		t.Errorf("pack %+v", p)
	}
}
