package logformat

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestPrettyPrintedReasons: every line of pretty-printed JSON, and of a
// JSON array written one object a line, is told as such, with how to
// write it; lines that only start like it keep their own reason.
func TestPrettyPrintedReasons(t *testing.T) {
	tests := []struct {
		line, kind, want string // want: "" for no hint
	}{
		{`{`, KindInvalidJSON, "pretty-printed JSON"},
		{`  "type": "exchange",`, KindNotObject, "pretty-printed JSON"},
		{`    "user": "Sessions or JWT?",`, KindNotObject, "pretty-printed JSON"},
		{`  "ai": "sessions"`, KindNotObject, "pretty-printed JSON"},
		{`  "metadata": {`, KindNotObject, "pretty-printed JSON"},
		{`  "files": [`, KindNotObject, "pretty-printed JSON"},
		{`    "auth/views.py",`, KindNotObject, "pretty-printed JSON"},
		{`    "auth/views.py"`, KindNotObject, "pretty-printed JSON"},
		{`    42,`, KindNotObject, "pretty-printed JSON"},
		{`    -1.5e3`, KindNotObject, "pretty-printed JSON"},
		{`    null`, KindNotObject, "pretty-printed JSON"},
		{`  "say \"hi\"": 1,`, KindNotObject, "pretty-printed JSON"},
		{`  },`, KindInvalidJSON, "pretty-printed JSON"},
		{`  ],`, KindInvalidJSON, "pretty-printed JSON"},
		{`}`, KindInvalidJSON, "pretty-printed JSON"},
		{"}\r", KindInvalidJSON, "pretty-printed JSON"},
		{`[`, KindInvalidJSON, "pretty-printed JSON"},
		{`]`, KindInvalidJSON, "pretty-printed JSON"},
		{`  {"type":"exchange","session_id":"s","user":"u","ai":"a"},`, KindTrailingData, "element of a JSON array"},
		{`{"type":"exchange","session_id":"s","user":"u","ai":"a"} ,  `, KindTrailingData, "element of a JSON array"},
		// Not that shape: the reasons of before.
		{`"exchange"`, KindNotObject, ""},
		{`"unterminated: `, KindInvalidJSON, ""},
		{`{} {}`, KindTrailingData, ""},
		{`{"type":"exchange",`, KindInvalidJSON, ""},
		{`not json`, KindInvalidJSON, ""},
		{`[1, 2]`, KindNotObject, ""},
		{`42`, KindNotObject, ""},
		{`  4x2,`, KindNotObject, ""},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.line), "s.jsonl", testNow)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): %v, want an *Error", tt.line, err)
			continue
		}
		if pe.Kind != tt.kind {
			t.Errorf("Parse(%q): kind %s, want %s", tt.line, pe.Kind, tt.kind)
		}
		hinted := strings.Contains(pe.Reason, "jq -c")
		if tt.want == "" && hinted || tt.want != "" && (!hinted || !strings.Contains(pe.Reason, tt.want)) {
			t.Errorf("Parse(%q): %q, want a reason with %q", tt.line, pe.Reason, tt.want)
		}
	}
}

// TestPrettyPrintedFromJQ: every line jq writes without -c is told as
// pretty-printed JSON.
func TestPrettyPrintedFromJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("no jq on this machine (apt-get install jq)")
	}
	cmd := exec.Command(jq, ".")
	cmd.Stdin = strings.NewReader(`{"type":"exchange","session_id":"s","user":"Sessions or JWT?","ai":"sessions","files":["a.go","b.go"],"metadata":{"model":"m","n":[1,2.5,true,null],"tokens":{"in":1,"out":2}}}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 10 {
		t.Fatalf("jq wrote %d lines", len(lines))
	}
	for _, l := range lines {
		if _, err := Parse([]byte(l), "s.jsonl", testNow); err == nil || !strings.Contains(err.Error(), "pretty-printed JSON") {
			t.Errorf("%q: %v", l, err)
		}
	}
}
