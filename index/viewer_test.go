package index

import (
	"reflect"
	"testing"
)

// TestSessionOpeners: a session's opener is the start of its first
// exchange by time (the user's text, else the assistant's), whatever the
// order of the lines; sessions without an exchange are absent.
func TestSessionOpeners(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "log.jsonl")
	commit(t, db, f.batch(
		`{"type":"exchange","session_id":"a","timestamp":"2025-01-02T10:00:00Z","user":"second by time","ai":"x"}`,
		`{"type":"exchange","session_id":"a","timestamp":"2025-01-02T09:00:00Z","user":"first by time: déjà vu 🚀 and more","ai":"x"}`,
		`{"type":"context_reset","session_id":"b","timestamp":"2025-01-01T00:00:00Z","reason":"r"}`,
		`{"type":"exchange","session_id":"b","timestamp":"2025-01-02T09:00:00Z","ai":"only the assistant spoke"}`,
		`{"type":"context_reset","session_id":"c","timestamp":"2025-01-02T09:00:00Z","reason":"r"}`,
	))
	tests := []struct {
		name     string
		sessions []string
		maxRunes int
		want     map[string]string
	}{
		{"none asked", nil, 10, map[string]string{}},
		{"first by time, cut by characters", []string{"a"}, 24, map[string]string{"a": "first by time: déjà vu 🚀"}},
		{"the assistant's text when the user's is absent", []string{"b"}, 100, map[string]string{"b": "only the assistant spoke"}},
		{"no exchange, unknown session", []string{"c", "nope"}, 100, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.SessionOpeners(ctx, tt.sessions, tt.maxRunes)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SessionOpeners(%v, %d) = %q, want %q", tt.sessions, tt.maxRunes, got, tt.want)
			}
		})
	}
}
