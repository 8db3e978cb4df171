package index

import (
	"reflect"
	"testing"
)

// TestSessionOrigins: a session pulled from a teammate is named by the
// teammate's role@machine, a session whose first event names its agent by
// that agent; the workspace's other sessions are absent.
func TestSessionOrigins(t *testing.T) {
	db := openTest(t, testDir(t))
	own := newFeeder(t, db, "log.jsonl")
	commit(t, db, own.batch(exchange("mine", "e1", "our own decision"),
		`{"type":"exchange","id":"e3","session_id":"cc","timestamp":"2025-01-01T00:00:00Z","user":"u","metadata":{"source":"claude-code"}}`))
	mate := newFeeder(t, db, SharedPrefix+"alice@lap-a/0f3c")
	commit(t, db, mate.batch(exchange("hers", "e2", "alice's decision")))
	got, err := db.SessionOrigins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]SessionOrigin{"hers": {Teammate: "alice@lap-a"}, "cc": {Agent: "claude-code"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SessionOrigins = %+v, want %+v", got, want)
	}
	for path, want := range map[string]string{SharedPrefix + "bob@x/o": "bob@x", "log.jsonl": "", SharedPrefix + "carol@y": "carol@y"} {
		if got := Teammate(path); got != want {
			t.Errorf("Teammate(%q) = %q, want %q", path, got, want)
		}
	}
}
