package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogProducerMistakes: `continuity log` refuses what would be lost
// (a mistyped --type, a --session contradicting the event on stdin),
// applies --session to an event on stdin that has none, and writes an
// unambiguous line for what it can read as meant (the "assistant" alias,
// a timestamp without offset), saying so on stderr.
func TestLogProducerMistakes(t *testing.T) {
	oldLocal := time.Local
	time.Local = time.FixedZone("UTC+2", 2*3600) // a timestamp without offset is read in it
	t.Cleanup(func() { time.Local = oldLocal })
	root := t.TempDir()
	logs := filepath.Join(root, ".praxis-os", ".conversations")
	cases := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		out, err string // substrings expected
	}{
		{name: "typo in --type", args: []string{"log", "--session", "s", "--type", "contextreset"}, code: 2, err: `did you mean "context_reset"`},
		{name: "unknown --type", args: []string{"log", "--session", "s", "--type", "tool_call"}, code: 2, err: "exchange, context_reset or session_resume"},
		{name: "--session fills stdin's session", stdin: `{"type":"exchange","user":"from stdin"}`, args: []string{"log", "--session", "A", "-"}, code: 0, out: `"session_id":"A"`},
		{name: "--session contradicts stdin", stdin: `{"type":"exchange","session_id":"B","user":"u"}`, args: []string{"log", "--session", "A", "-"}, code: 2, err: `--session "A" but the event on stdin has session_id "B"`},
		{name: "content flag with stdin", stdin: `{"type":"exchange","session_id":"B","user":"u"}`, args: []string{"log", "--user", "x", "-"}, code: 2, err: "--user"},
		{name: "assistant alias on stdin", stdin: `{"type":"exchange","session_id":"C","user":"q","assistant":"the answer"}`, args: []string{"log", "-"}, code: 0, out: `"ai":"the answer"`, err: `"assistant"`},
		{name: "no offset on stdin", stdin: `{"type":"exchange","session_id":"D","user":"q","timestamp":"2024-05-01T12:00:00.123456"}`, args: []string{"log", "-"}, code: 0, out: `"timestamp":"2024-05-01T12:00:00.123456+02:00"`, err: "no UTC offset"},
		{name: "unknown field on stdin", stdin: `{"type":"exchange","session_id":"E","user":"q","response":"lost?"}`, args: []string{"log", "-"}, code: 0, out: `"response":"lost?"`, err: `"response"`},
		{name: "--session fills a null session_id", stdin: `{"type":"exchange","session_id":null,"id":null,"user":"null fields"}`, args: []string{"log", "--session", "A", "-"}, code: 0, out: `"session_id":"A"`},
		{name: "no session on stdin", stdin: `{"type":"exchange","user":"q"}`, args: []string{"log", "-"}, code: 2, err: `no "session_id": add one to the event, or give --session ID`},
		{name: "typo type on stdin", stdin: `{"type":"exchnage","session_id":"F","user":"q"}`, args: []string{"log", "-"}, code: 2, err: `"exchange"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, append([]string{"--root", root}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
		})
	}
	// What was written reads back as meant.
	b, err := os.ReadFile(filepath.Join(logs, "session-A~m1.jsonl"))
	if err != nil || !strings.Contains(string(b), "from stdin") {
		t.Errorf("--session A with stdin: %q %v", b, err)
	}
	b, _ = os.ReadFile(filepath.Join(logs, "session-D~m1.jsonl"))
	var ev struct{ Timestamp string }
	json.Unmarshal(b, &ev)
	if ts, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil || ts.Format("15:04:05.000000") != "12:00:00.123456" {
		t.Errorf("timestamp written as %q (%v), want the local 12:00:00.123456 with its offset", ev.Timestamp, err)
	}
	if entries, _ := os.ReadDir(logs); len(entries) != 5 { // A, C, D, E and the .gitignore
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("logs folder holds %v", names)
	}
}

// TestLogEchoesRedacted: the line `log` prints goes into the agent's
// context: it is the stored (redacted) form, while the log file keeps what
// the agent wrote.
func TestLogEchoesRedacted(t *testing.T) {
	t.Setenv("CONTINUITY_REDACT", "")
	root := t.TempDir()
	out, errs, code := runCLI(t, "", "--root", root, "log", "--session", "s", "--user", "connect with pass"+"word=hunter2 please", "--ai", "ok")
	if code != 0 {
		t.Fatal(errs)
	}
	if strings.Contains(out, "hunter2") || !strings.Contains(out, "[REDACTED:") {
		t.Errorf("log printed %q", out)
	}
	b, _ := os.ReadFile(filepath.Join(root, ".praxis-os", ".conversations", "session-s~m1.jsonl"))
	if !strings.Contains(string(b), "hunter2") {
		t.Errorf("the log file must keep what the agent wrote: %q", b)
	}
}
