package logformat

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindLogged: a line about to be appended whose id the log already
// holds is found: the same event stamped at another time is a retry
// (Same), other content under the id is not; no id, no file, no match:
// nil.
func TestFindLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session-r~m.jsonl")
	first := `{"type":"exchange","timestamp":"2026-11-29T05:25:31Z","session_id":"r","id":"retry-1","user":"same","ai":"same"}`
	data := `{"type":"exchange","session_id":"r","user":"no id"}` + "\n" + first + "\r\n" + `{"type":"exchange","id":"cut` // an unfinished last line
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, line string
		want       *Logged
	}{
		{"retry", `{"type":"exchange","timestamp":"2026-11-29T05:25:32Z","session_id":"r","id":"retry-1","user":"same","ai":"same"}`, &Logged{Line: 2, Text: []byte(first), Same: true}},
		{"other content", `{"type":"exchange","timestamp":"2026-11-29T05:25:31Z","session_id":"r","id":"retry-1","user":"other","ai":"same"}`, &Logged{Line: 2, Text: []byte(first)}},
		{"new id", `{"type":"exchange","session_id":"r","id":"retry-2","user":"same"}`, nil},
		{"no id", `{"type":"exchange","session_id":"r","user":"no id"}`, nil},
		{"unfinished line not read", `{"type":"exchange","id":"cut","session_id":"r","user":"u"}`, nil},
	} {
		got, err := FindLogged(path, []byte(tc.line))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (got == nil) != (tc.want == nil) || got != nil && (got.Line != tc.want.Line || string(got.Text) != string(tc.want.Text) || got.Same != tc.want.Same) {
			t.Errorf("%s: FindLogged = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got, err := FindLogged(filepath.Join(t.TempDir(), "none.jsonl"), []byte(`{"id":"x"}`)); got != nil || err != nil {
		t.Errorf("no file: %+v, %v", got, err)
	}
}
