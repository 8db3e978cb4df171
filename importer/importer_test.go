package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// ccLine builds one Claude Code record.
func ccLine(t *testing.T, rec map[string]any) string {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func ccUser(sid, uuid, ts string, content any) map[string]any {
	return map[string]any{"type": "user", "sessionId": sid, "uuid": uuid, "timestamp": ts,
		"message": map[string]any{"role": "user", "content": content}}
}

func ccAssistant(sid, uuid, ts string, blocks ...map[string]any) map[string]any {
	return map[string]any{"type": "assistant", "sessionId": sid, "uuid": uuid, "timestamp": ts,
		"message": map[string]any{"role": "assistant", "content": blocks}}
}

func importOne(t *testing.T, agent, logs, path string, o Options) Result {
	t.Helper()
	im, err := New(agent, logs, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := im.Import(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLongAgenticTurn: one prompt, 100 tool calls, 20 answer texts. The
// turn is cut into exchanges of at most PartBytes of answer; every answer
// text is kept exactly once, in order; tool calls are one summary line per
// run, their outputs never stored; the decision is findable by its words.
func TestLongAgenticTurn(t *testing.T) {
	dir := t.TempDir()
	sid := "11111111-2222-3333-4444-555555555555"
	var b strings.Builder
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ts := func(i int) string { return base.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano) }
	b.WriteString(ccLine(t, ccUser(sid, "p", ts(0), "make the index survive crashes")))
	n := 1
	var texts []string
	for i := 0; i < 20; i++ {
		for j := 0; j < 5; j++ {
			b.WriteString(ccLine(t, ccAssistant(sid, fmt.Sprintf("tool%d-%d", i, j), ts(n), map[string]any{
				"type": "tool_use", "name": "Bash", "input": map[string]any{"command": fmt.Sprintf("go test ./index -run Crash%d", j)}})))
			n++
			b.WriteString(ccLine(t, ccUser(sid, fmt.Sprintf("res%d-%d", i, j), ts(n), []any{map[string]any{
				"type": "tool_result", "content": "TOOL_OUTPUT_MUST_NOT_BE_STORED " + strings.Repeat("x", 3000)}})))
			n++
		}
		text := fmt.Sprintf("Step %d: looked at the crash path. ", i) + strings.Repeat(fmt.Sprintf("detail %d ", i), 250)
		if i == 7 {
			text = "Decision: we commit the offset in the same transaction as the events (WAL mode), so a crash never loses a line. " + text
		}
		texts = append(texts, text)
		b.WriteString(ccLine(t, ccAssistant(sid, fmt.Sprintf("text%d", i), ts(n), map[string]any{"type": "text", "text": text})))
		n++
	}
	path := filepath.Join(dir, sid+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "logs")
	res := importOne(t, ClaudeCode, logs, path, Options{})
	if res.Errors != 0 {
		t.Fatal(res.Problems)
	}
	evs := stored(t, logs)
	if len(evs) < 3 {
		t.Fatalf("%d exchanges for a 50 KB turn, want it cut into several", len(evs))
	}
	var all strings.Builder
	for i, ev := range evs {
		if len(ev.AI) > DefaultPartBytes+maxToolLine+2 {
			t.Errorf("exchange %d: %d bytes of answer, over the part size", i, len(ev.AI))
		}
		if strings.Contains(ev.AI, "TOOL_OUTPUT") {
			t.Errorf("exchange %d stores a tool output", i)
		}
		if i == 0 && ev.User != "make the index survive crashes" {
			t.Errorf("first part's user = %q", ev.User)
		}
		if i > 0 && !strings.HasPrefix(ev.User, "[continued] make the index survive crashes") {
			t.Errorf("part %d user = %q, want the prompt marked as continued", i, ev.User)
		}
		all.WriteString(ev.AI)
	}
	last := -1
	for i, text := range texts {
		idx := strings.Index(all.String(), strings.TrimSpace(text))
		if idx < 0 || strings.Count(all.String(), strings.TrimSpace(text)) != 1 {
			t.Fatalf("answer text %d kept %d times", i, strings.Count(all.String(), text))
		}
		if idx < last {
			t.Errorf("answer text %d out of order", i)
		}
		last = idx
	}
	if c := strings.Count(all.String(), "[tools] Bash: go test ./index -run Crash0 · "); c != 20 {
		t.Errorf("%d tool summary lines, want 20 (one per run of calls)", c)
	}
	found := false
	for _, ev := range evs {
		if strings.Contains(ev.AI, "Decision: we commit the offset") {
			found = true
		}
	}
	if !found {
		t.Error("the decision is in no exchange")
	}
}

// TestMalformedRecords: bad native records are reported with file:line and
// skipped; the rest is imported.
func TestMalformedRecords(t *testing.T) {
	dir := t.TempDir()
	sid := "aaaaaaaa-2222-3333-4444-555555555555"
	lines := ccLine(t, ccUser(sid, "u1", "2026-03-01T10:00:00Z", "first question")) +
		ccLine(t, ccAssistant(sid, "a1", "2026-03-01T10:00:01Z", map[string]any{"type": "text", "text": "first answer"})) +
		"{not json\n" +
		`{"type":"assistant","sessionId":"` + sid + `","uuid":"a2","message":{"content":5}}` + "\n" +
		ccLine(t, ccUser(sid, "u2", "2026-03-01T10:01:00Z", "second question")) +
		ccLine(t, ccAssistant(sid, "a3", "2026-03-01T10:01:01Z", map[string]any{"type": "text", "text": "second answer"}))
	path := filepath.Join(dir, "s.jsonl")
	os.WriteFile(path, []byte(lines), 0o600)
	res := importOne(t, ClaudeCode, filepath.Join(dir, "logs"), path, Options{})
	if res.Errors != 2 || res.Exchanges != 2 {
		t.Fatalf("errors %d (%v), exchanges %d; want 2 and 2", res.Errors, res.Problems, res.Exchanges)
	}
	for i, want := range []string{path + ":3: ", path + ":4: "} {
		if !strings.HasPrefix(res.Problems[i], want) {
			t.Errorf("problem %d = %q, want it to start with %q", i, res.Problems[i], want)
		}
	}
	// Codex and Gemini too
	cpath := filepath.Join(dir, "rollout-2026-03-01T10-00-00-0197aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl")
	os.WriteFile(cpath, []byte(`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"0197aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee","cwd":"/w"}}
garbage
{"timestamp":"2026-03-01T10:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}
{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":"not an object"}
{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi there"}]}}
`), 0o600)
	res = importOne(t, Codex, filepath.Join(dir, "logs"), cpath, Options{})
	if res.Errors != 2 || res.Exchanges != 1 || !strings.Contains(res.Problems[0], ":2: ") || !strings.Contains(res.Problems[1], ":4: ") {
		t.Fatalf("codex: %+v", res)
	}
	gpath := filepath.Join(dir, "session-x.json")
	os.WriteFile(gpath, []byte("{\n  \"sessionId\": \"g1\",\n  \"messages\": [ {\"type\": \"user\", \"content\": \"hi\"}, \n oops ]\n}"), 0o600)
	res = importOne(t, Gemini, filepath.Join(dir, "logs"), gpath, Options{})
	if res.Errors != 1 || !strings.Contains(res.Problems[0], "session-x.json:4: ") {
		t.Fatalf("gemini: %+v", res)
	}
}

// TestResumedCopy: a session resumed into a new file that repeats the
// earlier history (same prompts, same times, new uuids) stores that
// history once, under its original session, and links the two.
func TestResumedCopy(t *testing.T) {
	dir := t.TempDir()
	a, b := "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000002"
	orig := ccLine(t, ccUser(a, "u1", "2026-03-01T10:00:00Z", "pick a database")) +
		ccLine(t, ccAssistant(a, "a1", "2026-03-01T10:00:05Z", map[string]any{"type": "text", "text": "We decided on SQLite."}))
	resumed := ccLine(t, ccUser(b, "x1", "2026-03-01T10:00:00Z", "pick a database")) +
		ccLine(t, ccAssistant(b, "x2", "2026-03-02T09:00:00Z", map[string]any{"type": "text", "text": "We decided on SQLite."})) +
		ccLine(t, ccUser(b, "x3", "2026-03-02T09:01:00Z", "now add an index")) +
		ccLine(t, ccAssistant(b, "x4", "2026-03-02T09:01:05Z", map[string]any{"type": "text", "text": "Index added."}))
	os.WriteFile(filepath.Join(dir, a+".jsonl"), []byte(orig), 0o600)
	os.WriteFile(filepath.Join(dir, b+".jsonl"), []byte(resumed), 0o600)
	logs := filepath.Join(dir, "logs")
	importOne(t, ClaudeCode, logs, filepath.Join(dir, a+".jsonl"), Options{})
	res := importOne(t, ClaudeCode, logs, filepath.Join(dir, b+".jsonl"), Options{})
	if res.Exchanges != 1 || res.Links != 1 {
		t.Fatalf("resumed import: %d exchanges, %d links; want 1 and 1 (%+v)", res.Exchanges, res.Links, res)
	}
	count := map[string]int{}
	for _, ev := range stored(t, logs) {
		if ev.Type == logformat.TypeSessionResume && (ev.PreviousSession != a || ev.NewSession != b) {
			t.Errorf("link %s -> %s, want %s -> %s", ev.PreviousSession, ev.NewSession, a, b)
		}
		count[ev.User]++
	}
	if count["pick a database"] != 1 {
		t.Errorf("copied prompt stored %d times", count["pick a database"])
	}
}

// TestHoldOpenTurn: following live, the last turn waits for its end
// marker; once ended it is imported whole, in one exchange.
func TestHoldOpenTurn(t *testing.T) {
	dir := t.TempDir()
	sid := "cccccccc-0000-0000-0000-000000000003"
	path := filepath.Join(dir, sid+".jsonl")
	first := ccLine(t, ccUser(sid, "u1", "2026-03-01T10:00:00Z", "question")) +
		ccLine(t, ccAssistant(sid, "a1", "2026-03-01T10:00:01Z", map[string]any{"type": "text", "text": "working on it"}))
	os.WriteFile(path, []byte(first), 0o600)
	logs := filepath.Join(dir, "logs")
	if res := importOne(t, ClaudeCode, logs, path, Options{HoldOpenTurn: true}); res.Exchanges != 0 {
		t.Fatalf("open turn imported: %+v", res)
	}
	end := map[string]any{"type": "system", "subtype": "turn_duration", "sessionId": sid, "uuid": "e1", "timestamp": "2026-03-01T10:00:09Z"}
	more := ccLine(t, ccAssistant(sid, "a2", "2026-03-01T10:00:08Z", map[string]any{"type": "text", "text": "done: the answer is 42"})) + ccLine(t, end)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(more)
	f.Close()
	if res := importOne(t, ClaudeCode, logs, path, Options{HoldOpenTurn: true}); res.Exchanges != 1 {
		t.Fatalf("closed turn: %+v", res)
	}
	evs := stored(t, logs)
	if len(evs) != 1 || !strings.Contains(evs[0].AI, "working on it") || !strings.Contains(evs[0].AI, "the answer is 42") {
		t.Fatalf("events: %+v", evs)
	}
}

// TestSharedCursorAider imports the Cursor and Aider files of the shared set.
func TestSharedCursorAider(t *testing.T) {
	dir := sharedDir(t)
	for _, agent := range []string{Cursor, Aider} {
		logs := t.TempDir()
		im, _ := New(agent, logs, Options{})
		paths := []string{filepath.Join(dir, agent)}
		if agent == Aider {
			paths = []string{filepath.Join(dir, "aider/aider/chat-history.md"), filepath.Join(dir, "aider/zen-mcp-server/.aider.chat.history.md")}
		}
		start := time.Now()
		res, err := im.Import(context.Background(), paths)
		if err != nil {
			t.Fatal(err)
		}
		if res.Errors != 0 {
			t.Errorf("%s: %v", agent, res.Problems)
		}
		if res.Exchanges == 0 {
			t.Errorf("%s: nothing imported", agent)
		}
		stored(t, logs)
		t.Logf("%s: %d files, %d sessions, %d exchanges, %d skipped; %.1f MB in %v", agent, res.Files, res.Sessions, res.Exchanges, res.Skipped, float64(res.Bytes)/1e6, time.Since(start))
		im2, _ := New(agent, logs, Options{})
		res2, _ := im2.Import(context.Background(), paths)
		if res2.Exchanges != 0 {
			t.Errorf("%s: second import added %d", agent, res2.Exchanges)
		}
	}
}

// TestCodexLegacy: rollouts from before the {type, payload} envelope.
func TestCodexLegacy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout-2025-05-01-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl")
	os.WriteFile(path, []byte(`{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-01T10:00:00Z","instructions":""}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd /w</environment_context>"}]}
{"type":"message","role":"user","content":[{"type":"input_text","text":"rename the flag to --max-bytes"}]}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"rg\",\"max-line\"]}","call_id":"c1"}
{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"OUTPUT_MUST_NOT_BE_STORED\"}"}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Renamed in cli.go."}]}
`), 0o600)
	logs := filepath.Join(dir, "logs")
	res := importOne(t, Codex, logs, path, Options{})
	if res.Errors != 0 || res.Exchanges != 1 {
		t.Fatalf("%+v", res)
	}
	evs := stored(t, logs)
	if evs[0].SessionID != "5973b6c0-94b8-487b-a530-2aeb6098ae0e" || evs[0].User != "rename the flag to --max-bytes" ||
		!strings.Contains(evs[0].AI, "[tools] shell: rg max-line") || !strings.Contains(evs[0].AI, "Renamed in cli.go.") || strings.Contains(evs[0].AI, "OUTPUT") {
		t.Errorf("%+v", evs[0])
	}
	if res2 := importOne(t, Codex, logs, path, Options{}); res2.Exchanges != 0 {
		t.Errorf("second import: %+v", res2)
	}
}

// TestResumedFileWithOldSessionID: a resumed session's file that keeps
// the old session id on its copied records links the two sessions.
func TestResumedFileWithOldSessionID(t *testing.T) {
	dir := t.TempDir()
	a, b := "aaaaaaaa-0000-0000-0000-00000000000a", "bbbbbbbb-0000-0000-0000-00000000000b"
	data := ccLine(t, ccUser(a, "u1", "2026-03-01T10:00:00Z", "pick a database")) +
		ccLine(t, ccAssistant(a, "a1", "2026-03-01T10:00:05Z", map[string]any{"type": "text", "text": "SQLite."})) +
		ccLine(t, ccUser(b, "u2", "2026-03-02T10:00:00Z", "add an index")) +
		ccLine(t, ccAssistant(b, "a2", "2026-03-02T10:00:05Z", map[string]any{"type": "text", "text": "Index added."}))
	path := filepath.Join(dir, b+".jsonl")
	os.WriteFile(path, []byte(data), 0o600)
	logs := filepath.Join(dir, "logs")
	res := importOne(t, ClaudeCode, logs, path, Options{})
	if res.Sessions != 2 || res.Exchanges != 2 || res.Links != 1 {
		t.Fatalf("%+v", res)
	}
	for _, ev := range stored(t, logs) {
		if ev.Type == logformat.TypeSessionResume && (ev.PreviousSession != a || ev.NewSession != b) {
			t.Errorf("link %s -> %s", ev.PreviousSession, ev.NewSession)
		}
	}
}

// TestLiveImportKeepsGoing: logs that cannot be written are logged and
// retried, never fatal to the follower (and so to the daemon).
func TestLiveImportKeepsGoing(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	home := DefaultHome(filepath.Join(dir, "home"))
	proj := home.ClaudeProjectDir(ws)
	os.MkdirAll(proj, 0o700)
	sid := "dddddddd-0000-0000-0000-00000000000d"
	path := filepath.Join(proj, sid+".jsonl")
	os.WriteFile(path, []byte(ccLine(t, ccUser(sid, "u1", "2026-03-01T10:00:00Z", "question"))+
		ccLine(t, ccAssistant(sid, "a1", "2026-03-01T10:00:01Z", map[string]any{"type": "text", "text": "answer"}))), 0o600)
	logs := filepath.Join(dir, "logs")
	os.WriteFile(logs, []byte("not a folder"), 0o600) // the logs cannot be written
	var logBuf strings.Builder
	sb := &syncBuf{b: &logBuf}
	f := &LiveImport{Agents: []string{ClaudeCode}, Workspace: ws, Logs: logs, Home: home, Quiet: time.Nanosecond,
		Poll: 20 * time.Millisecond, Log: slog.New(slog.NewTextHandler(sb, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// The logs made writable once the follower has failed to write them.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(sb.String(), "cannot write the logs; retrying"); {
		if time.Now().After(deadline) {
			t.Fatalf("the write failure was not logged in 5 s:\n%s", sb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	os.Remove(logs)
	os.MkdirAll(logs, 0o700)
	deadline := time.Now().Add(5 * time.Second)
	for len(stored(t, logs)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follower stopped with %v", err)
	}
	if evs := stored(t, logs); len(evs) != 1 || evs[0].User != "question" || evs[0].AI != "answer" {
		t.Fatalf("after the logs became writable: %+v", evs)
	}
	if !strings.Contains(logBuf.String(), "cannot write the logs; retrying") {
		t.Errorf("the write failure was not logged:\n%s", logBuf.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCursorWorkspaceDBs: Cursor's workspace storage folder of this
// workspace is found by its workspace.json; others are not taken.
func TestCursorWorkspaceDBs(t *testing.T) {
	home := t.TempDir()
	h := DefaultHome(home)
	ws := filepath.Join(home, "src", "app")
	for id, folder := range map[string]string{"mine": "file://" + ws, "other": "file://" + ws + "-other"} {
		d := filepath.Join(h.CursorStorageDirs()[0], id)
		os.MkdirAll(d, 0o700)
		os.WriteFile(filepath.Join(d, "workspace.json"), []byte(`{"folder":"`+folder+`"}`), 0o600)
		os.WriteFile(filepath.Join(d, "state.vscdb"), nil, 0o600)
	}
	got := h.NativePaths(Cursor, ws)
	if len(got) != 1 || filepath.Base(filepath.Dir(got[0])) != "mine" {
		t.Fatalf("got %v", got)
	}
}

// TestAgentNames: the names users type for an agent are accepted
// (Registry's aliases, any case, spaces or underscores for dashes), give
// the canonical name (the logs' file names), and name one agent only.
// Before, --from roo and --from copilot were refused.
func TestAgentNames(t *testing.T) {
	for in, want := range map[string]string{
		"roo": Roo, "Roo Code": Roo, "roo_code": Roo, "roocode": Roo,
		"copilot": Copilot, "GitHub Copilot CLI": Copilot, "github-copilot": Copilot,
		"claude": ClaudeCode, "Claude Code": ClaudeCode, "CLAUDE-CODE": ClaudeCode,
		"gemini-cli": Gemini, "kilo": Kilo, "open-code": OpenCode, "codex-cli": Codex, "goose": Goose,
	} {
		if got, ok := Canonical(in); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "foo", "-", "claude-codex"} {
		if got, ok := Canonical(in); ok {
			t.Errorf("Canonical(%q) = %q, want unknown", in, got)
		}
	}
	seen := map[string]string{}
	for _, a := range Registry {
		if got, ok := Canonical(a.Name); !ok || got != a.Name {
			t.Errorf("Canonical(%q) = %q", a.Name, got)
		}
		for _, n := range append([]string{a.Name, a.Title}, a.Aliases...) {
			if other, dup := seen[nameKey(n)]; dup && other != a.Name {
				t.Errorf("%q names both %s and %s", n, other, a.Name)
			}
			seen[nameKey(n)] = a.Name
		}
	}
	if len(Agents) != len(Registry) || len(Agents) != 11 {
		t.Errorf("Agents %v, Registry %d", Agents, len(Registry))
	}
	im, err := New("copilot", t.TempDir(), Options{})
	if err != nil || im.Agent != Copilot {
		t.Errorf("New(copilot): %+v %v", im, err)
	}
	if _, err := New("foo", t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "roo (roo-code)") {
		t.Errorf("New(foo): %v", err)
	}
	if got, err := ParseAgents("roo, Copilot,roo-code"); err != nil || strings.Join(got, ",") != "roo-code,copilot-cli" {
		t.Errorf("ParseAgents: %v %v", got, err)
	}
}

// TestImportRepeated: a session in two files of one import (a capture of
// it mid-session and the complete one) counts its repeated turn as
// already there and as read earlier in this import, so that a first
// import does not seem to find events in the logs; an import again
// counts them already there, none repeated.
func TestImportRepeated(t *testing.T) {
	sid := "0c0c0c0c-1111-4222-8333-777777777777"
	first := ccLine(t, ccUser(sid, "u1", "2026-03-01T10:00:00Z", "first question")) +
		ccLine(t, ccAssistant(sid, "a1", "2026-03-01T10:00:01Z", map[string]any{"type": "text", "text": "first answer"}))
	all := first + ccLine(t, ccUser(sid, "u2", "2026-03-01T10:01:00Z", "second question")) +
		ccLine(t, ccAssistant(sid, "a2", "2026-03-01T10:01:01Z", map[string]any{"type": "text", "text": "second answer"}))
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "turn-1"), 0o700)
	os.MkdirAll(filepath.Join(dir, "turn-2"), 0o700)
	os.WriteFile(filepath.Join(dir, "turn-1", sid+".jsonl"), []byte(first), 0o600)
	os.WriteFile(filepath.Join(dir, "turn-2", sid+".jsonl"), []byte(all), 0o600)
	logs := t.TempDir()
	res := importOne(t, ClaudeCode, logs, dir, Options{})
	if res.Exchanges != 2 || res.Duplicates != 1 || res.Repeated != 1 || !strings.Contains(res.Summary(ClaudeCode), "1 already there (1 of them read earlier in this import") {
		t.Errorf("first import: %+v\n%s", res, res.Summary(ClaudeCode))
	}
	res = importOne(t, ClaudeCode, logs, dir, Options{})
	if res.Exchanges != 0 || res.Duplicates != 3 || res.Repeated != 0 || strings.Contains(res.Summary(ClaudeCode), "read earlier") {
		t.Errorf("again: %+v\n%s", res, res.Summary(ClaudeCode))
	}
}
