package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/resume"
)

// resumeWorkspace is a workspace with two chained sessions, indexed:
// "old" (with a reset), then "new" resuming it (with a reset, then one
// exchange still in context). It returns the root and the log lines by file.
func resumeWorkspace(t *testing.T) (string, map[string][]string) {
	t.Helper()
	root := t.TempDir()
	logs := filepath.Join(root, ".praxis-os", ".conversations")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{
		"session-old.jsonl": {
			`{"type":"exchange","timestamp":"2024-05-01T10:00:00Z","session_id":"old","id":"o1","user":"Why does the build fail?","ai":"parse.go moved to logformat/; import it.","files":["main.go"]}`,
			`{"type":"exchange","timestamp":"2024-05-01T10:05:00Z","session_id":"old","id":"o2","user":"Add a test for the watcher","ai":"Added watcher_test.go.","files":["watcher/watcher_test.go","main.go"],"x_unknown":{"kept":true}}`,
			`{"type":"context_reset","timestamp":"2024-05-01T11:00:00Z","session_id":"old","reason":"context window full"}`,
			"{\"type\":\"exchange\",\"timestamp\":\"2024-05-01T11:10:00Z\",\"session_id\":\"old\",\"id\":\"o3\",\"user\":\"Now the flaky fsnotify test\",\"ai\":\"It drops events under load; the rescan catches up.\"}\r",
		},
		"session-new.jsonl": {
			`{"type":"session_resume","timestamp":"2024-05-02T09:00:00Z","previous_session":"old","new_session":"new","id":"r1"}`,
			`{"type":"exchange","timestamp":"2024-05-02T09:01:00Z","session_id":"new","id":"n1","user":"Where were we?","ai":"The flaky fsnotify test."}`,
			`{"type":"context_reset","timestamp":"2024-05-02T09:30:00Z","session_id":"new"}`,
			`{"type":"exchange","timestamp":"2024-05-02T09:31:00Z","session_id":"new","id":"n2","user":"Still there?","ai":"Yes."}`,
		},
		"session-alone.jsonl": {
			`{"type":"exchange","timestamp":"2024-04-01T08:00:00Z","session_id":"alone","id":"a1","user":"hello","ai":"hi"}`,
		},
	}
	for name, lines := range files {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, code := runCLI(t, "", "--root", root, "ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	return root, files
}

func TestResumeCommand(t *testing.T) {
	root, _ := resumeWorkspace(t)
	// A session whose agent may still hold its exchange: no context reset
	// came after it (alone's agent is gone: new's reset came after it).
	live := `{"type":"exchange","timestamp":"2024-05-02T09:30:30Z","session_id":"live","id":"l1","user":"hello","ai":"hi"}` + "\n"
	if err := os.WriteFile(filepath.Join(root, ".praxis-os", ".conversations", "session-live.jsonl"), []byte(live), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "", "--root", root, "ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	cases := []struct {
		name    string
		args    []string
		code    int
		out     []string // substrings of stdout
		notOut  []string
		errText string
	}{
		{
			name: "markdown pack", args: []string{"resume", "--session", "new"},
			out: []string{
				"# Resume context for session new (times UTC)",
				"Chain, newest first: new ← old",
				"## Session old · 2024-05-01 10:00–11:10 · 3 of 3 exchanges",
				"User: Why does the build fail?",
				"[1 context reset]",
				"## Session new · ",
				"User: Where were we?",
				"1 exchange of this session since its latest context reset is still in context",
				"## Files referenced\n- watcher/watcher_test.go\n- main.go\n",
			},
			notOut: []string{"Still there?"},
		},
		{name: "include current", args: []string{"resume", "--session", "new", "--include-current"}, out: []string{"User: Still there?"}},
		// --latest is a new session resuming the latest one: all of it,
		// as over MCP; --include-current=false says otherwise.
		{name: "latest is new", args: []string{"resume", "--latest", "--query", "flaky test"},
			out: []string{"# Resume context for session new", "User: Still there?"}},
		{name: "latest without current", args: []string{"resume", "--latest", "--include-current=false"},
			out: []string{"# Resume context for session new"}, notOut: []string{"Still there?"}},
		{name: "nothing to resume", args: []string{"resume", "--session", "live"}, out: []string{"Nothing to resume"},
			errText: "the 1 exchange of live since its latest context reset (all of them when it has none) counts as still in the agent's context; --include-current includes them"},
		{name: "agent gone", args: []string{"resume", "--session", "alone"}, out: []string{"User: hello",
			"Session alone's own exchanges are included: a context reset of session new came after its last event"}},
		{name: "unknown session", args: []string{"resume", "--session", "nope"}, code: 2, errText: `unknown session "nope"`},
		{name: "no session", args: []string{"resume"}, code: 2, errText: "--session ID or --latest"},
		{name: "both", args: []string{"resume", "--session", "new", "--latest"}, code: 2, errText: "exclude each other"},
		{name: "bad budget", args: []string{"resume", "--latest", "--budget", "0"}, code: 2, errText: "--budget 0"},
		{name: "bad tokenizer", args: []string{"resume", "--latest", "--tokenizer", "nope"}, code: 2, errText: "--tokenizer"},
		{name: "stray argument", args: []string{"resume", "--latest", "extra"}, code: 2, errText: "unexpected arguments"},
		{name: "tiny budget", args: []string{"resume", "--session", "new", "--budget", "5"}, out: []string{"# Resume"},
			errText: "a budget of 5 tokens shows no exchange (4 left out)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"--root", root}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.errText) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			for _, s := range tc.out {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.notOut {
				if strings.Contains(out, s) {
					t.Errorf("stdout has %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestResumeCommandJSON(t *testing.T) {
	root, _ := resumeWorkspace(t)
	c, err := resume.NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []string{"50", "120", "2000"} {
		out, errs, code := runCLI(t, "", "--root", root, "resume", "--session", "new", "--query", "fsnotify", "--budget", budget, "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var p resume.Pack
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if n := c.Count(p.Text); n != p.Tokens || budget == "50" && n > 50 || budget == "120" && n > 120 {
			t.Errorf("budget %s: %d tokens (says %d)", budget, n, p.Tokens)
		}
		if p.SessionID != "new" || strings.Join(p.Chain, ",") != "new,old" || p.InContext != 1 {
			t.Errorf("pack %+v", p)
		}
		for _, e := range p.Exchanges {
			if !strings.Contains(p.Text, e.User) || !strings.Contains(p.Text, e.AI) {
				t.Errorf("exchange %s not in the text", e.ID)
			}
		}
		if budget == "2000" {
			var ids []string
			for _, e := range p.Exchanges {
				ids = append(ids, e.ID)
			}
			if strings.Join(ids, ",") != "o1,o2,o3,n1" || p.Omitted != 0 {
				t.Errorf("exchanges %v omitted %d", ids, p.Omitted)
			}
		}
	}
	// The same index gives the same output.
	a, _, _ := runCLI(t, "", "--root", root, "resume", "--session", "new", "--query", "test", "--json")
	b, _, _ := runCLI(t, "", "--root", root, "resume", "--session", "new", "--query", "test", "--json")
	if a != b {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
}

// With a daemon running, resume and sessions are answered on its socket;
// the answers are the same as in-process once it has stopped.
func TestResumeThroughDaemon(t *testing.T) {
	ws := newWorkspace(t)
	ws.appendRaw("session-a.jsonl", []byte(exchangeLine("a", "a1", "fix the parser", "done")))
	ws.appendRaw("session-b.jsonl", []byte(`{"type":"session_resume","previous_session":"a","new_session":"b","timestamp":"2026-11-01T11:00:00Z"}`+"\n"))
	d := ws.startDaemon()
	eventually(t, 15*time.Second, "the daemon answering", func() bool { return ws.status().Daemon.Running })
	var viaDaemon string
	// Whole: a resume answered while the exchange was stored but not yet
	// in the full-text index says so ("pending"), and the answer after
	// the stop, from the finished index, would differ by that note (CI:
	// an answer given in-process while the daemon started).
	eventually(t, 15*time.Second, "resume shows a's exchange, nothing pending", func() bool {
		out, _, code := ws.cli("resume", "--session", "b", "--query", "parser", "--json")
		viaDaemon = out
		return code == 0 && strings.Contains(out, "fix the parser") && !strings.Contains(out, `"pending"`)
	})
	sessionsViaDaemon, _, _ := ws.cli("sessions", "--json")
	if _, errs, code := ws.cli("resume", "--session", "nope"); code != 2 || !strings.Contains(errs, `unknown session "nope"`) {
		t.Errorf("unknown session through the daemon: exit %d: %s", code, errs)
	}
	d.stop(t)
	inProcess, errs, code := ws.cli("resume", "--session", "b", "--query", "parser", "--json")
	if code != 0 || inProcess != viaDaemon {
		t.Errorf("in-process answer (exit %d, %s) differs:\n%s\nvs daemon:\n%s", code, errs, inProcess, viaDaemon)
	}
	if s, _, _ := ws.cli("sessions", "--json"); s != sessionsViaDaemon {
		t.Errorf("sessions differ:\n%s\n%s", s, sessionsViaDaemon)
	}
}

// An unknown session fails the same way for every command that takes one:
// the same message on stderr, exit code 2.
func TestUnknownSessionEverywhere(t *testing.T) {
	root, _ := resumeWorkspace(t)
	want := `unknown session "nope" (see 'continuity sessions')`
	for _, args := range [][]string{
		{"resume", "--session", "nope"},
		{"export", "--session", "nope"},
		{"search", "--session", "nope", "build"},
		{"search", "--chain", "nope", "build"},
		{"search", "--session", "nope", "--json", "build"},
	} {
		out, errs, code := runCLI(t, "", append([]string{"--root", root}, args...)...)
		if code != 2 || !strings.Contains(errs, want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out, errs, want)
		}
	}
	// A known session still searches.
	if out, errs, code := runCLI(t, "", "--root", root, "search", "--session", "old", "build"); code != 0 || !strings.Contains(out, "build") {
		t.Errorf("search --session old: exit %d\n%s\n%s", code, out, errs)
	}
}
