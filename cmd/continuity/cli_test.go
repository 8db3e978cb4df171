package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command in-process.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestCLI(t *testing.T) {
	root := t.TempDir()
	logs := filepath.Join(root, ".praxis-os", ".conversations")
	cases := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		out, err string // substrings expected
	}{
		{name: "no command", args: nil, code: 2, out: "Commands:"},
		{name: "help", args: []string{"help"}, code: 0, out: "Commands:"},
		{name: "command help", args: []string{"log", "--help"}, code: 0, out: "Usage: continuity log"},
		{name: "help command", args: []string{"help", "status"}, code: 0, out: "Usage: continuity status"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, err: `unknown command "frobnicate"`},
		{name: "unknown flag", args: []string{"status", "--bogus"}, code: 2, err: "bogus"},
		{name: "daemon stop starts no daemon", args: []string{"--root", root, "daemon", "stop"}, code: 2, err: "the daemon takes flags only"},
		{name: "status with an argument", args: []string{"--root", root, "status", "extra"}, code: 2, err: `unexpected arguments ["extra"]`},
		{name: "ingest with an argument", args: []string{"--root", root, "ingest", "a.jsonl"}, code: 2, err: `unexpected arguments ["a.jsonl"]`},
		{name: "rejects with an argument", args: []string{"--root", root, "rejects", "extra"}, code: 2, err: `unexpected arguments ["extra"]`},
		{name: "doctor with an argument", args: []string{"--root", root, "doctor", "extra"}, code: 2, err: `unexpected arguments ["extra"]`},
		{name: "export with the session as an argument", args: []string{"--root", root, "export", "s1"}, code: 2, err: "give the session with --session (continuity export --session s1)"},
		{name: "forget with the session as an argument", args: []string{"--root", root, "forget", "s1"}, code: 2, err: "(continuity forget --session s1)"},
		{name: "resume with the session as an argument", args: []string{"--root", root, "resume", "s1"}, code: 2, err: "(continuity resume --session s1)"},
		{name: "export with two arguments", args: []string{"--root", root, "export", "s1", "s2"}, code: 2, err: `unexpected arguments ["s1" "s2"]`},
		{name: "status before any index", args: []string{"--root", root, "status"}, code: 1, err: "no index yet"},
		{name: "log with flags, root before", args: []string{"--root", root, "log", "--session", "s1", "--user", `say "hi"\n`, "--ai", "hello"}, code: 0, out: `"session_id":"s1"`},
		{name: "log with flags, root after", args: []string{"log", "--session", "s1", "--user", "u2", "--ai", "a2", "--root", root}, code: 0, out: `"user":"u2"`},
		{name: "log with root=", args: []string{"log", "--root=" + root, "--session", "s1", "--user", "u3"}, code: 0, out: `"user":"u3"`},
		{name: "log from stdin keeps unknown fields", stdin: `{"type":"exchange","session_id":"s2","user":"q","x_extra":1}`, args: []string{"--root", root, "log", "-"}, code: 0, out: `"x_extra":1`},
		{name: "log reset", args: []string{"--root", root, "log", "--type", "context_reset", "--session", "s1", "--reason", "window full"}, code: 0, out: `"reason":"window full"`},
		{name: "log resume", args: []string{"--root", root, "log", "--type", "session_resume", "--previous", "s1", "--new", "s2"}, code: 0, out: `"new_session":"s2"`},
		{name: "log invalid: empty exchange", args: []string{"--root", root, "log", "--session", "s1"}, code: 2, err: "user"},
		{name: "log invalid: bad session", args: []string{"--root", root, "log", "--session", "a b", "--user", "x"}, code: 2, err: "session_id"},
		{name: "log invalid stdin json", stdin: `{"type":"exchange",`, args: []string{"--root", root, "log", "-"}, code: 2, err: "JSON"},
		{name: "log bad --to", args: []string{"--root", root, "log", "--session", "s1", "--user", "x", "--to", "../escape.jsonl"}, code: 2, err: "plain file name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
		})
	}

	// What log wrote must be indexable as is: ingest, then every line is an
	// event and none is rejected.
	data, err := os.ReadFile(filepath.Join(logs, "session-s1~m1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Fatalf("session-s1~m1.jsonl has %d lines, want 4:\n%s", n, data)
	}
	if fi, err := os.Stat(filepath.Join(logs, "session-s1~m1.jsonl")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if _, errs, code := runCLI(t, "", "ingest", "--root", root); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	out, _, code := runCLI(t, "", "status", "--root", root, "--json")
	if code != 0 || !strings.Contains(out, `"exchanges": 4`) || !strings.Contains(out, `"rejects": 0`) {
		t.Fatalf("status after ingest: %s", out)
	}
	out, _, _ = runCLI(t, "", "rejects", "--root", root)
	if !strings.Contains(out, "no rejected lines") {
		t.Errorf("rejects: %s", out)
	}
	// A second ingest while nothing changed indexes nothing new.
	runCLI(t, "", "ingest", "--root", root)
	out, _, _ = runCLI(t, "", "status", "--root", root, "--json")
	if !strings.Contains(out, `"exchanges": 4`) {
		t.Errorf("second ingest changed counts: %s", out)
	}
}
