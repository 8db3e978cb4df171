package index

import (
	"strings"
	"testing"
)

// TestAgentGoneResets: a session's agent is gone when another session
// reset its context after the session's last event; the reset named is
// the latest such one.
func TestAgentGoneResets(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	reset := func(session string, h int) string {
		return `{"type":"context_reset","session_id":"` + session + `","timestamp":"` + hour(h).Format("2006-01-02T15:04:05Z") + `"}`
	}
	commit(t, db, f.batch(
		exchangeAt("a", hour(1), "first session's work", "done"),
		reset("a", 2), // its own reset: never counts against it
		exchangeAt("a", hour(3), "after its own reset", "done"),
		exchangeAt("b", hour(4), "second session", "done"),
		reset("b", 5),
		exchangeAt("b", hour(6), "after b's reset", "done"),
		exchangeAt("c", hour(7), "third session", "done"),
		reset("c", 8),
		exchangeAt("d", hour(9), "the newest session", "done"),
		exchangeAt("late", hour(10), "written last, then quiet", "done"),
	))
	tests := []struct {
		session, want string // want: in the reason, "" for none
	}{
		{"a", "context reset of session c came after"}, // b's at 5 and c's at 8: the latest
		{"b", "context reset of session c"},
		{"c", ""}, // its own reset is its last event
		{"d", ""},
		{"late", ""},
		{"unknown", ""},
	}
	for _, tt := range tests {
		got, err := db.AgentGone(ctx, tt.session)
		if err != nil {
			t.Fatalf("AgentGone(%s): %v", tt.session, err)
		}
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("AgentGone(%s) = %q, want %q", tt.session, got, tt.want)
		}
	}
}

// The latest reset after a session is read from events_resets from the
// newest down, without sorting the resets: AgentGone runs for every
// resume pack.
func TestAgentGonePlan(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(typedEvents()...))
	plan := queryPlan(t, db, newerResetSQL, "s1")
	if !strings.Contains(plan, "USING INDEX events_resets (ts>?)") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("plan of the latest reset after a session:\n%s", plan)
	}
}
