package index

import (
	"reflect"
	"testing"
)

// TestSessionTeammates: a session pulled from a teammate is named by the
// teammate's role@machine; the workspace's own sessions are not.
func TestSessionTeammates(t *testing.T) {
	db := openTest(t, testDir(t))
	own := newFeeder(t, db, "log.jsonl")
	commit(t, db, own.batch(exchange("mine", "e1", "our own decision")))
	mate := newFeeder(t, db, SharedPrefix+"alice@lap-a/0f3c")
	commit(t, db, mate.batch(exchange("hers", "e2", "alice's decision")))
	got, err := db.SessionTeammates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"hers": "alice@lap-a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SessionTeammates = %q, want %q", got, want)
	}
	for path, want := range map[string]string{SharedPrefix + "bob@x/o": "bob@x", "log.jsonl": "", SharedPrefix + "carol@y": "carol@y"} {
		if got := Teammate(path); got != want {
			t.Errorf("Teammate(%q) = %q, want %q", path, got, want)
		}
	}
}
