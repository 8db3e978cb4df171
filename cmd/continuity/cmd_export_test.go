package main

import (
	"strings"
	"testing"
)

func TestExportCommand(t *testing.T) {
	root, files := resumeWorkspace(t)
	lines := func(file string, idx ...int) string {
		var b strings.Builder
		for _, i := range idx {
			// The index stores a line without its line end: CR LF
			// included (protocol.md, Framing).
			b.WriteString(strings.TrimSuffix(files[file][i], "\r") + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name    string
		args    []string
		code    int
		exact   string   // stdout, when set
		out     []string // substrings of stdout
		errText string
	}{
		// Byte for byte as stored, unknown fields included, by time.
		{name: "jsonl", args: []string{"--session", "old", "--format", "jsonl"}, exact: lines("session-old.jsonl", 0, 1, 2, 3)},
		{name: "jsonl chain", args: []string{"--session", "new", "--chain", "--format", "jsonl"},
			exact: lines("session-old.jsonl", 0, 1, 2, 3) + lines("session-new.jsonl", 0, 1, 2, 3)},
		{name: "markdown", args: []string{"--session", "old"}, out: []string{
			"# Export of session old (times UTC)",
			"## Session old · 2024-05-01 10:00:00 → 2024-05-01 11:10:00 · 4 events",
			"User: Why does the build fail?\nAI: parse.go moved to logformat/; import it.\nFiles: main.go\n",
			"context reset: context window full",
		}},
		{name: "markdown chain", args: []string{"--session", "new", "--chain"}, out: []string{
			"Chain, newest first: new ← old", "## Session old", "## Session new", "new resumes session old", "User: Still there?",
		}},
		{name: "unknown session", args: []string{"--session", "nope"}, code: 2, errText: `unknown session "nope"`},
		{name: "no session", args: []string{}, code: 2, errText: "--session"},
		{name: "bad format", args: []string{"--session", "old", "--format", "csv"}, code: 2, errText: "--format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"--root", root, "export"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.errText) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			if tc.exact != "" && out != tc.exact {
				t.Errorf("stdout:\n%q\nwant:\n%q", out, tc.exact)
			}
			for _, s := range tc.out {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
		})
	}
}
