package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// The variants of the native formats that the agents' own source code
// defines and the shared fixtures do not show (issue 24): each test
// writes the files as the agent's source writes them.

// TestRooMessageHistoryV2: Roo Code's newer API history, {version: 2,
// messages} with the AI SDK's parts (tool-call, a role "tool" message of
// tool-result parts, reasoning items without a role), read when the task
// has no ui_messages.json: prompts unwrapped, tool calls summarised with
// their files, tool outputs and reasoning left out, the condense summary
// a reset.
func TestRooMessageHistoryV2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tasks", "3c1e0f4a-8b2d-4e6f-9a1b-2c3d4e5f6a7b")
	env := map[string]any{"type": "text", "text": "<environment_details>\n# Current Workspace Directory (/work/app) Files\n</environment_details>"}
	writeJSON(t, filepath.Join(dir, clineAPIFile), map[string]any{"version": 2, "messages": []any{
		map[string]any{"role": "user", "ts": 1777629600000, "content": []any{map[string]any{"type": "text", "text": "<user_message>\nwhy does the upload time out?\n</user_message>"}, env}},
		map[string]any{"type": "reasoning", "encrypted_content": "SECRET-REASONING", "ts": 1777629600500},
		map[string]any{"role": "assistant", "ts": 1777629601000, "content": []any{
			map[string]any{"type": "reasoning", "text": "REASONING PART"},
			map[string]any{"type": "text", "text": "Reading the client."},
			map[string]any{"type": "tool-call", "toolCallId": "c1", "toolName": "read_file", "input": map[string]any{"path": "upload/client.go"}},
		}},
		map[string]any{"role": "tool", "ts": 1777629602000, "content": []any{map[string]any{"type": "tool-result", "toolCallId": "c1", "toolName": "read_file", "output": map[string]any{"type": "text", "value": "TOOL OUTPUT"}}}},
		map[string]any{"role": "user", "ts": 1777629602500, "content": []any{map[string]any{"type": "tool-result", "toolCallId": "c0", "output": "LEGACY OUTPUT"}, env}},
		map[string]any{"role": "assistant", "ts": 1777629603000, "isSummary": true, "condenseId": "k1", "content": []any{map[string]any{"type": "text", "text": "CONDENSED SUMMARY"}}},
		map[string]any{"role": "assistant", "ts": 1777629604000, "content": []any{map[string]any{"type": "tool-call", "toolCallId": "c2", "toolName": "attempt_completion", "input": map[string]any{"result": "The client had a 5 s deadline; raised to 60 s."}}}},
	}})
	logs := t.TempDir()
	res := importOne(t, Roo, logs, filepath.Join(dir, clineAPIFile), Options{Workspace: "/work/app"})
	if res.Errors != 0 {
		t.Fatal(res.Problems)
	}
	ex, resets, _ := byType(stored(t, logs))
	if len(ex) != 2 || ex[0].User != "why does the upload time out?" || ex[1].User != "[continued] why does the upload time out?" || len(resets) != 1 {
		t.Fatalf("exchanges %+v resets %+v", ex, resets)
	}
	if !strings.Contains(ex[0].AI, "Reading the client.") || !strings.Contains(ex[0].AI, "[tools] read_file upload/client.go") || len(ex[0].Files) != 1 || ex[0].Files[0] != "upload/client.go" {
		t.Errorf("first answer %q files %v", ex[0].AI, ex[0].Files)
	}
	if !strings.Contains(ex[1].AI, "raised to 60 s") {
		t.Errorf("completion result lost: %q", ex[1].AI)
	}
	for _, e := range ex {
		for _, leak := range []string{"TOOL OUTPUT", "LEGACY OUTPUT", "REASONING", "SECRET", "CONDENSED SUMMARY", "environment_details"} {
			if strings.Contains(e.User+e.AI, leak) {
				t.Errorf("%s kept: %+v", leak, e)
			}
		}
	}
	if got := UnitCwd(Roo, filepath.Join(dir, clineAPIFile)); got != "/work/app" {
		t.Errorf("cwd %q", got)
	}
	// an object without messages is reported, not read as a task
	bad := filepath.Join(t.TempDir(), "tasks", "t2", clineAPIFile)
	writeJSON(t, bad, map[string]any{"version": 3})
	if res := importOne(t, Roo, t.TempDir(), bad, Options{}); res.Errors != 1 || !strings.Contains(res.Problems[0], "not a JSON array of messages") {
		t.Errorf("an envelope without messages: %+v", res)
	}
}

// TestClaudeDevUIFile: a task last opened by Claude Dev (Cline before 2.0)
// keeps what the user saw in claude_messages.json: it is the transcript
// when ui_messages.json is missing.
func TestClaudeDevUIFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tasks", "1722000000000")
	writeJSON(t, filepath.Join(dir, clineAPIFile), []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "<task>\nAPI COPY\n</task>"}}}})
	writeJSON(t, filepath.Join(dir, clineOldUIFile), []any{
		ui(1722000000000, "say", "task", "make the banner red"),
		ui(1722000001000, "say", "text", "Done: the banner is #c00."),
		ui(1722000002000, "ask", "completion_result", ""),
	})
	logs := t.TempDir()
	if res := importOne(t, Cline, logs, dir, Options{}); res.Errors != 0 || res.Exchanges != 1 {
		t.Fatalf("%+v", res)
	}
	ex, _, _ := byType(stored(t, logs))
	if ex[0].User != "make the banner red" || ex[0].AI != "Done: the banner is #c00." {
		t.Errorf("exchange %+v", ex[0])
	}
}

// openCodeSchema creates the session, message and part tables of
// OpenCode's database (packages/opencode/src/session/session.sql.ts).
func openCodeSchema(t *testing.T, path string, stmts ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range append([]string{
		`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL)`,
	}, stmts...) {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
}

// TestKiloCodeCLIStore: Kilo Code 5 (its CLI, and the extension built on
// it) is an OpenCode fork keeping ${XDG_DATA_HOME:-~/.local/share}/kilo/
// kilo.db (or kilo-<channel>.db) and the older storage/ JSON files: they
// are Kilo Code's sessions, found for the workspace beside the
// extension's task folders, and written as kilo-code events.
func TestKiloCodeCLIStore(t *testing.T) {
	home := t.TempDir()
	h := DefaultHome(home)
	kilo := filepath.Join(h.XDGDataHome, "kilo")
	openCodeSchema(t, filepath.Join(kilo, "kilo.db"),
		`INSERT INTO session VALUES ('ses_k1', 'p', NULL, NULL, 's', '/work/app', NULL, 't', '1', 1777629600000, 1777629600000, NULL, NULL), ('ses_k2', 'p', NULL, NULL, 's', '/work/other', NULL, 't', '1', 1777629600000, 1777629600000, NULL, NULL)`,
		`INSERT INTO message VALUES ('msg_1', 'ses_k1', 1777629600000, 0, '{"role":"user","time":{"created":1777629600000}}'), ('msg_2', 'ses_k1', 1777629601000, 0, '{"role":"assistant","time":{"created":1777629601000,"completed":1777629602000},"finish":"stop"}'), ('msg_3', 'ses_k2', 1777629600000, 0, '{"role":"user","time":{"created":1777629600000}}')`,
		`INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_k1', 0, 0, '{"type":"text","text":"which port does the API use?"}'), ('prt_2', 'msg_2', 'ses_k1', 0, 0, '{"type":"text","text":"8443, set in config/api.yaml."}'), ('prt_3', 'msg_3', 'ses_k2', 0, 0, '{"type":"text","text":"elsewhere"}')`)
	storage := filepath.Join(kilo, "storage")
	json1 := ocWrite(t, storage, map[string]any{"id": "ses_k3", "directory": "/work/app/api", "time": map[string]any{"created": 1777629500000}},
		[]map[string]any{{"id": "msg_a", "role": "user", "time": map[string]any{"created": 1777629500000}}},
		map[string][]map[string]any{"msg_a": {{"type": "text", "text": "an older kilo question"}}})
	task := filepath.Join(h.globalStorages()[0], extensionIDs[Kilo], "tasks", "k-task-1", clineUIFile)
	writeJSON(t, filepath.Join(filepath.Dir(task), clineHistFile), map[string]any{"workspace": "/work/app"})
	writeJSON(t, task, []any{ui(1777629400000, "say", "text", "an extension task"), ui(1777629401000, "say", "completion_result", "ok")})

	paths := h.NativePaths(Kilo, "/work/app")
	want := []string{filepath.Join(kilo, "kilo.db"), json1, task}
	for _, w := range want {
		found := false
		for _, p := range paths {
			found = found || p == w
		}
		if !found {
			t.Errorf("%s not found for the workspace: %v", w, paths)
		}
	}
	logs := t.TempDir()
	im, _ := New(Kilo, logs, Options{Workspace: "/work/app", Roots: []string{"/work/app"}})
	res, err := im.Import(context.Background(), paths)
	if err != nil || res.Errors != 0 {
		t.Fatal(err, res.Problems)
	}
	ex, _, _ := byType(stored(t, logs))
	var users []string
	for _, e := range ex {
		users = append(users, e.User)
		var m struct {
			Source string `json:"source"`
		}
		_ = json.Unmarshal(e.Metadata, &m)
		if m.Source != Kilo || !strings.HasPrefix(e.ID, Kilo+":") {
			t.Errorf("not a kilo-code event: %+v", e)
		}
	}
	sort.Strings(users)
	if strings.Join(users, "|") != "an extension task|an older kilo question|which port does the API use?" {
		t.Errorf("prompts %q", users)
	}
	for _, n := range []string{"kilo-code-ses_k1~m1.jsonl", "kilo-code-ses_k3~m1.jsonl", "kilo-code-k-task-1~m1.jsonl"} {
		if _, err := os.Stat(filepath.Join(logs, n)); err != nil {
			t.Errorf("log %s: %v", n, err)
		}
	}
	im2, _ := New(Kilo, logs, Options{Workspace: "/work/app", Roots: []string{"/work/app"}})
	if res, _ := im2.Import(context.Background(), paths); res.Exchanges+res.Resets+res.Links != 0 {
		t.Errorf("second import added %+v", res)
	}
}

// TestOpenCodeSummaryOnly: releases before the compaction part marked a
// compaction by the assistant's summary message alone: it is a reset
// (one, also when a compaction part came first), its text left out.
func TestOpenCodeSummaryOnly(t *testing.T) {
	for _, withPart := range []bool{false, true} {
		msgs := []map[string]any{
			{"id": "msg_01", "role": "user", "time": map[string]any{"created": 1777629600000}},
			{"id": "msg_02", "role": "assistant", "time": map[string]any{"created": 1777629601000}, "finish": "stop"},
			{"id": "msg_03", "role": "assistant", "summary": true, "time": map[string]any{"created": 1777629602000}, "finish": "stop"},
			{"id": "msg_04", "role": "user", "time": map[string]any{"created": 1777629603000}},
		}
		parts := map[string][]map[string]any{
			"msg_01": {{"type": "text", "text": "first question"}},
			"msg_02": {{"type": "text", "text": "first answer"}},
			"msg_03": {{"type": "text", "text": "SUMMARY"}},
			"msg_04": {{"type": "text", "text": "second question"}},
		}
		if withPart {
			msgs = append(msgs[:2], append([]map[string]any{{"id": "msg_025", "role": "user", "time": map[string]any{"created": 1777629601500}}}, msgs[2:]...)...)
			parts["msg_025"] = []map[string]any{{"type": "compaction", "auto": false}}
		}
		path := ocWrite(t, filepath.Join(t.TempDir(), "storage"), map[string]any{"id": "ses_s", "directory": "/w"}, msgs, parts)
		logs := t.TempDir()
		if res := importOne(t, OpenCode, logs, path, Options{}); res.Errors != 0 {
			t.Fatal(res.Problems)
		}
		evs := stored(t, logs)
		if len(evs) != 3 || evs[1].Type != logformat.TypeContextReset || strings.Contains(evs[0].AI+evs[2].AI, "SUMMARY") {
			t.Errorf("compaction part %v: %+v", withPart, evs)
		}
	}
}

// TestCopilotVariants: the event log's schema is undocumented and
// changes: an event the importer does not read may have any shape; one it
// reads with a wrong shape is reported as file:line; a compaction that
// failed is no reset. A session.start
// without its folder takes the cwd of the workspace.yaml beside it. A
// session of the first releases (history-session-state/<name>.json, one
// JSON object of chatMessages) is read when given.
func TestCopilotVariants(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session-state", "c0ffee00-0000-4000-8000-000000000002")
	lines := []string{
		`{"type":"session.start","id":"e1","timestamp":"2026-05-01T10:00:00.000Z","data":{"sessionId":"c0ffee00-0000-4000-8000-000000000002","copilotVersion":"0.0.340"}}`,
		`{"type":"session.info","id":"e2","timestamp":"2026-05-01T10:00:00.500Z","data":{"kind":"folder_trust","content":{"nested":true},"toolRequests":"none"}}`,
		`{"type":"user.message","id":"e3","timestamp":"2026-05-01T10:00:01.000Z","data":{"content":"why is CI slow?","attachments":[{"type":"file","path":"ci.yml"}]}}`,
		`{"type":"assistant.message","id":"e4","timestamp":"2026-05-01T10:00:02.000Z","data":{"content":"The cache key changes on every run.","toolRequests":[{"toolCallId":"t1","name":"view","arguments":{"path":"/work/app/.github/workflows/ci.yml"}}]}}`,
		`{"type":"assistant.turn_end","id":"e5","timestamp":"2026-05-01T10:00:03.000Z","data":{"turnId":"0"}}`,
		`{"type":"session.compaction_start","id":"e5a","timestamp":"2026-05-01T10:00:03.100Z","data":{}}`,
		`{"type":"session.compaction_complete","id":"e5b","timestamp":"2026-05-01T10:00:03.200Z","data":{"success":false,"error":"model refused"}}`,
		`{"type":"user.message","id":"e6","timestamp":"2026-05-01T10:00:04.000Z","data":{"content":42}}`,
	}
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, "events.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte("id: c0ffee00-0000-4000-8000-000000000002\ncwd: \"/work/app\"\nbranch: main\n"), 0o600)
	if got := copilotCwd(path); got != "/work/app" {
		t.Errorf("cwd from workspace.yaml: %q", got)
	}
	logs := t.TempDir()
	res := importOne(t, Copilot, logs, path, Options{Workspace: "/work/app", Roots: []string{"/work/app"}})
	if res.Errors != 1 || !strings.Contains(res.Problems[0], "events.jsonl:8: user.message") || res.Resets != 0 {
		t.Errorf("problems %v", res.Problems)
	}
	ex, _, _ := byType(stored(t, logs))
	if len(ex) != 1 || ex[0].User != "why is CI slow?" || !strings.Contains(ex[0].AI, "[tools] view /work/app/.github/workflows/ci.yml") || ex[0].Files[0] != ".github/workflows/ci.yml" {
		t.Fatalf("exchanges %+v", ex)
	}

	legacy := filepath.Join(t.TempDir(), "history-session-state", "session_5d8c_1759957816398.json")
	writeJSON(t, legacy, map[string]any{
		"sessionId": "5d8c0000-1111-4222-8333-444455556666",
		"startTime": "2025-10-08T21:10:16.398Z",
		"chatMessages": []any{
			map[string]any{"role": "user", "content": "please add the mcp servers"},
			map[string]any{"role": "assistant", "content": "Sure."},
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"function": map[string]any{"name": "str_replace_editor", "arguments": `{"command":"view","path":"/x/mcp.json"}`}}}},
			map[string]any{"role": "tool", "name": "str_replace_editor", "content": "FILE CONTENTS"},
			map[string]any{"role": "user", "content": "thanks"},
			map[string]any{"role": "user", "content": "thanks"},
		},
		"timeline": []any{},
	})
	logs = t.TempDir()
	res = importOne(t, Copilot, logs, filepath.Dir(legacy), Options{})
	if res.Errors != 0 || res.Exchanges != 3 {
		t.Fatalf("legacy session: %+v", res)
	}
	ex, _, _ = byType(stored(t, logs))
	if ex[0].User != "please add the mcp servers" || !strings.Contains(ex[0].AI, "[tools] str_replace_editor /x/mcp.json") || strings.Contains(ex[0].AI, "FILE CONTENTS") || ex[0].Timestamp.Format(time.RFC3339) != "2025-10-08T21:10:16Z" {
		t.Errorf("legacy exchange %+v", ex[0])
	}
	if res := importOne(t, Copilot, logs, legacy, Options{}); res.Exchanges != 0 {
		t.Errorf("second import added %d", res.Exchanges)
	}
}

// TestGooseCompactionNotices: newer Goose writes a compaction as several
// system notifications ("Exceeded auto-compact threshold", "Compaction
// complete"): one reset.
func TestGooseCompactionNotices(t *testing.T) {
	msgs := []string{
		`{"working_dir":"/work/app"}`,
		`{"id":"m1","role":"user","created":1777629600,"content":[{"type":"text","text":"q1"}]}`,
		`{"id":"m2","role":"assistant","created":1777629601,"content":[{"type":"text","text":"a1"}]}`,
		`{"id":"m3","role":"assistant","created":1777629602,"content":[{"type":"systemNotification","notificationType":"inlineMessage","msg":"Exceeded auto-compact threshold of 80%. Performing auto-compaction..."}]}`,
		`{"id":"m4","role":"assistant","created":1777629603,"content":[{"type":"systemNotification","notificationType":"thinkingMessage","msg":"goose is compacting the conversation..."}]}`,
		`{"id":"m5","role":"assistant","created":1777629604,"content":[{"type":"systemNotification","notificationType":"inlineMessage","msg":"Compaction complete"}]}`,
		`{"id":"m6","role":"user","created":1777629605,"content":[{"type":"text","text":"q2"}]}`,
	}
	path := filepath.Join(t.TempDir(), "20260501_9.jsonl")
	os.WriteFile(path, []byte(strings.Join(msgs, "\n")+"\n"), 0o600)
	logs := t.TempDir()
	if res := importOne(t, Goose, logs, path, Options{}); res.Errors != 0 {
		t.Fatal(res.Problems)
	}
	ex, resets, _ := byType(stored(t, logs))
	if len(ex) != 2 || len(resets) != 1 {
		t.Errorf("exchanges %d resets %d", len(ex), len(resets))
	}
}

// TestNativeTimes: the times each format writes (ms, s, RFC 3339, SQLite's
// text) read as the same instant.
func TestNativeTimes(t *testing.T) {
	want := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		got  time.Time
	}{
		{"cline ts ms", clineTime("1777629600000")},
		{"cline ts ms with a fraction", clineTime("1777629600000.0")},
		{"goose created s", gooseTime(json.RawMessage(`1777629600`))},
		{"goose created ms", gooseTime(json.RawMessage(`1777629600000`))},
		{"goose RFC 3339", gooseTime(json.RawMessage(`"2026-05-01T10:00:00Z"`))},
		{"goose sqlite text", gooseTime(json.RawMessage(`"2026-05-01 10:00:00"`))},
		{"opencode ms", ocTime(json.RawMessage(`1777629600000`))},
		{"opencode RFC 3339", ocTime(json.RawMessage(`"2026-05-01T10:00:00.000Z"`))},
		{"copilot ISO", parseTime("2026-05-01T10:00:00.000Z")},
	} {
		if !c.got.Equal(want) {
			t.Errorf("%s: %v", c.name, c.got)
		}
	}
}

// TestCopilotXDGConfigHome: Copilot CLI before 1.0 kept its folder in
// $XDG_CONFIG_HOME/.copilot when that variable was set; its sessions are
// found there (and in ~/.copilot, where later releases keep them).
func TestCopilotXDGConfigHome(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	old := filepath.Join(xdg, ".copilot", "session-state", "c0ffee00-0000-4000-8000-000000000003", "events.jsonl")
	cur := filepath.Join(home, ".copilot", "session-state", "c0ffee00-0000-4000-8000-000000000004", "events.jsonl")
	for _, p := range []string{old, cur} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(`{"type":"session.start","data":{"sessionId":"`+filepath.Base(filepath.Dir(p))+`","context":{"cwd":"/work/app"}}}`+"\n"), 0o600)
	}
	got := DefaultHome("").NativePaths(Copilot, "/work/app")
	sort.Strings(got)
	if want := []string{cur, old}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("found %v, want %v", got, want)
	}
	t.Setenv("COPILOT_HOME", filepath.Join(home, ".copilot"))
	if got := DefaultHome("").NativePaths(Copilot, "/work/app"); len(got) != 1 || got[0] != cur {
		t.Errorf("with COPILOT_HOME set: %v", got)
	}
}

// TestImageOnlyPrompts: a prompt made of an image alone (OpenCode's file
// part, Goose's image content) is a prompt, "[image]", as for Claude Code
// and Cline, so that the answer to it keeps its question; the image data
// is left out.
func TestImageOnlyPrompts(t *testing.T) {
	for _, c := range []struct {
		name, agent string
		write       func(dir string) string
	}{
		{"opencode", OpenCode, func(dir string) string {
			p := filepath.Join(dir, "export.json")
			writeJSON(t, p, map[string]any{"info": map[string]any{"id": "ses_img", "directory": "/w"}, "messages": []any{
				map[string]any{"info": map[string]any{"id": "msg_1", "role": "user", "time": map[string]any{"created": 1777629600000}},
					"parts": []any{map[string]any{"id": "prt_1", "type": "file", "mime": "image/png", "url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}}},
				map[string]any{"info": map[string]any{"id": "msg_2", "role": "assistant", "time": map[string]any{"created": 1777629601000}, "finish": "stop"},
					"parts": []any{map[string]any{"id": "prt_2", "type": "text", "text": "The screenshot shows a 500 on /login."}}},
			}})
			return p
		}},
		{"goose", Goose, func(dir string) string {
			p := filepath.Join(dir, "20260501_5.jsonl")
			os.WriteFile(p, []byte(`{"working_dir":"/w"}
{"id":"m1","role":"user","created":1777629600,"content":[{"type":"image","data":"iVBORw0KGgoAAAANSUhEUg==","mimeType":"image/png"}]}
{"id":"m2","role":"assistant","created":1777629601,"content":[{"type":"text","text":"The screenshot shows a 500 on /login."}]}
`), 0o600)
			return p
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := t.TempDir()
			if res := importOne(t, c.agent, logs, c.write(t.TempDir()), Options{}); res.Errors != 0 {
				t.Fatal(res.Problems)
			}
			ex, _, _ := byType(stored(t, logs))
			if len(ex) != 1 || ex[0].User != imageOnly || ex[0].AI != "The screenshot shows a 500 on /login." {
				t.Errorf("exchanges %+v", ex)
			}
		})
	}
}
