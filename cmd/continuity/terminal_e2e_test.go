package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// rawControl matches a control character a terminal acts on: C0 but
// newline and tab, DEL, and C1 (in UTF-8).
var rawControl = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f]|\u0080|[\u0081-\u009f]")

// TestControlCharactersEscaped: a logged text holding escapes of control
// characters (an ANSI sequence that clears the screen and turns it red,
// a NUL, a C1 CSI) is printed by search, export, resume and sessions with
// those characters escaped, so the terminal shows them instead of acting
// on them, and grep does not call the output binary; the JSON output keeps
// the text exact. Before, they reached the terminal raw.
func TestControlCharactersEscaped(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("esc.jsonl", `{"type":"exchange","session_id":"esc","user":"clear \u001b[2J\u001b[31mred screen, a nul \u0000 here","ai":"a csi \u009b31m too","files":["bad\u0007name.go"],"metadata":{"agent":"evil\u001b[5magent"}}`+"\n")
	w.shellAppend("esc.jsonl", `{"type":"context_reset","session_id":"esc","reason":"bell \u0007"}`+"\n")
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	for _, args := range [][]string{
		{"search", "red screen"},
		{"export", "--session", "esc"},
		{"resume", "--session", "esc", "--include-current"},
		{"resume", "--session", "esc", "--include-current", "--explain"},
		{"sessions"},
	} {
		out, errs, code := w.cli(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if m := rawControl.FindString(out); m != "" {
			t.Errorf("%v prints the control character %q raw:\n%s", args, m, out)
		}
		want := `\x1b[2J\x1b[31mred screen, a nul \x00 here`
		if args[0] == "sessions" {
			want = `evil\x1b[5magent`
		}
		if !strings.Contains(out, want) {
			t.Errorf("%v does not show %s:\n%s", args, want, out)
		}
	}
	out, _, _ := w.cli("export", "--session", "esc")
	for _, want := range []string{`a csi \u009b31m too`, `bad\x07name.go`, `context reset: bell \x07`} {
		if !strings.Contains(out, want) {
			t.Errorf("export does not show %s:\n%s", want, out)
		}
	}
	// JSON keeps the text as logged.
	js, _, _ := w.cli("search", "--json", "red screen")
	var r struct {
		Results []struct{ User string } `json:"results"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || len(r.Results) != 1 || r.Results[0].User != "clear \x1b[2J\x1b[31mred screen, a nul \x00 here" {
		t.Errorf("search --json: %v %+v", err, r)
	}
}
