package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// writeJSON writes v as JSON at path (folders made).
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// ui is one ui_messages.json message.
func ui(ts int64, typ, kind, text string, extra ...any) map[string]any {
	m := map[string]any{"ts": ts, "type": typ, typ: kind, "text": text}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

func sayTool(ts int64, tool map[string]any) map[string]any {
	b, _ := json.Marshal(tool)
	return ui(ts, "ask", "tool", string(b))
}

// byType splits stored events by type.
func byType(evs []logformat.Event) (exchanges, resets, links []logformat.Event) {
	for _, ev := range evs {
		switch ev.Type {
		case logformat.TypeExchange:
			exchanges = append(exchanges, ev)
		case logformat.TypeContextReset:
			resets = append(resets, ev)
		case logformat.TypeSessionResume:
			links = append(links, ev)
		}
	}
	return
}

// clineTasks writes two Cline tasks of /work/app: the first decides,
// condenses its context and hands a new task its context (new_task); the
// second starts from that context. A third task ran in another folder.
func clineTasks(t *testing.T, store string) (first, second string) {
	t0 := int64(1767300000000)
	first = filepath.Join(store, "tasks", "1767300000000", clineUIFile)
	context := "Context: we chose SQLite WAL mode for the queue because of concurrent readers. Next: wire the retry worker."
	writeJSON(t, first, []any{
		ui(t0, "say", "task", "Pick a storage engine for the job queue"),
		ui(t0+1000, "say", "api_req_started", `{"request":"..."}`),
		ui(t0+2000, "say", "reasoning", "thinking about it"),
		ui(t0+3000, "say", "text", "<thinking>hidden</thinking>I will read the queue code first."),
		sayTool(t0+4000, map[string]any{"tool": "readFile", "path": "queue/store.go"}),
		ui(t0+5000, "ask", "command", "go test ./queue/..."),
		ui(t0+6000, "say", "command_output", "ok  queue 0.2s"),
		ui(t0+7000, "say", "completion_result", "Decision: SQLite in WAL mode, one writer, many readers.HAS_CHANGES"),
		ui(t0+8000, "ask", "completion_result", ""),
		ui(t0+9000, "say", "user_feedback", "why not Postgres?"),
		ui(t0+10000, "say", "text", "Postgres needs a server; the queue runs on laptops.", "conversationHistoryDeletedRange", []int{0, 0}),
		ui(t0+11000, "ask", "followup", `{"question":"Shall I wire the retry worker?","options":["yes","no"]}`),
		ui(t0+12000, "say", "user_feedback", "yes, in a new task"),
		ui(t0+13000, "say", "text", "Handing over.", "conversationHistoryDeletedRange", []int{2, 5}),
		ui(t0+14000, "ask", "new_task", context),
	})
	writeJSON(t, filepath.Join(store, "state", clineIndexFile), []any{
		map[string]any{"id": "1767300000000", "ts": t0, "task": "Pick", "cwdOnTaskInitialization": "/work/app"},
		map[string]any{"id": "1767300100000", "ts": t0 + 100000, "task": "Context", "cwdOnTaskInitialization": "/work/app/queue"},
		map[string]any{"id": "1767300200000", "ts": t0 + 200000, "task": "Other", "cwdOnTaskInitialization": "/work/other"},
	})
	t1 := t0 + 100000
	second = filepath.Join(store, "tasks", "1767300100000", clineUIFile)
	writeJSON(t, second, []any{
		ui(t1, "say", "task", context),
		ui(t1+1000, "say", "condense_context", "", "contextCondense", map[string]any{"cost": 0.1, "prevContextTokens": 150000, "newContextTokens": 9000, "summary": "..."}),
		ui(t1+2000, "say", "text", "Retry worker wired with exponential backoff."),
	})
	writeJSON(t, filepath.Join(store, "tasks", "1767300200000", clineUIFile), []any{ui(t0+200000, "say", "task", "unrelated work")})
	return first, second
}

// TestClineTasks: a Cline task's prompts (the task and each feedback), its
// answer (texts, results, questions; reasoning, outputs and <thinking>
// left out), tool calls on one line with their files, a condensation and a
// context truncation as resets, and the task continued by new_task linked
// to it, whichever is imported first; only the workspace's tasks are
// found in the store.
func TestClineTasks(t *testing.T) {
	for _, order := range []string{"parent first", "child first"} {
		t.Run(order, func(t *testing.T) {
			store := t.TempDir()
			first, second := clineTasks(t, store)
			logs := t.TempDir()
			paths := []string{first, second}
			if order == "child first" {
				paths = []string{second, first}
			}
			for _, p := range paths {
				if res := importOne(t, Cline, logs, p, Options{Workspace: "/work/app"}); res.Errors != 0 {
					t.Fatalf("%s: %v", p, res.Problems)
				}
			}
			ex, resets, links := byType(stored(t, logs))
			var users []string
			for _, e := range ex {
				if !strings.HasPrefix(e.User, "[continued]") {
					users = append(users, e.User)
				}
			}
			// a reset inside a turn ends its exchange; the rest of the turn
			// follows the reset as "[continued] <prompt>"
			want := []string{"Pick a storage engine for the job queue", "why not Postgres?", "yes, in a new task", "Context: we chose SQLite WAL mode for the queue because of concurrent readers. Next: wire the retry worker."}
			if strings.Join(users, "|") != strings.Join(want, "|") {
				t.Fatalf("prompts: %q", users)
			}
			var answers strings.Builder
			for _, e := range ex {
				answers.WriteString(e.AI + "\n")
			}
			ai := ex[0].AI
			for _, w := range []string{"I will read the queue code first.", "[tools] readFile queue/store.go · execute_command: go test ./queue/...", "Decision: SQLite in WAL mode"} {
				if !strings.Contains(ai, w) {
					t.Errorf("first answer lacks %q:\n%s", w, ai)
				}
			}
			if strings.Contains(ai, "hidden") || strings.Contains(ai, "thinking about it") || strings.Contains(ai, "ok  queue") || strings.Contains(ai, "HAS_CHANGES") {
				t.Errorf("reasoning or output kept:\n%s", ai)
			}
			if len(ex[0].Files) != 1 || ex[0].Files[0] != "queue/store.go" {
				t.Errorf("files %v", ex[0].Files)
			}
			for _, w := range []string{"Postgres needs a server", "Shall I wire the retry worker?", "Handing over.", "[tools] new_task: Context: we chose SQLite", "Retry worker wired"} {
				if !strings.Contains(answers.String(), w) {
					t.Errorf("answers lack %q:\n%s", w, answers.String())
				}
			}
			if len(resets) != 2 || !strings.Contains(resets[0].Reason+resets[1].Reason, "150000 tokens before") || !strings.Contains(resets[0].Reason+resets[1].Reason, "truncated") {
				t.Errorf("resets %+v", resets)
			}
			if len(links) != 1 || links[0].PreviousSession != "1767300000000" || links[0].NewSession != "1767300100000" {
				t.Errorf("links %+v", links)
			}
			if res := importOne(t, Cline, logs, filepath.Join(store, "tasks"), Options{}); res.Exchanges+res.Resets+res.Links != 1 {
				t.Errorf("importing the folder again added %+v (want only the unrelated task)", res)
			}
		})
	}
	store := t.TempDir()
	clineTasks(t, store)
	h := Home{ClineDataDir: store}
	got := h.NativePaths(Cline, "/work/app")
	if len(got) != 2 {
		t.Errorf("tasks of /work/app: %v", got)
	}
}

// TestRooSubtaskAndAPIHistory: a Roo subtask names its parent
// (history_item.json parentTaskId); a task read from its API history
// alone (no ui_messages.json): the prompts inside <task>, <feedback> and
// <answer>, the environment details and tool results left out, XML tool
// calls summarised, attempt_completion's result kept, a condense summary
// as a reset.
func TestRooSubtaskAndAPIHistory(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "tasks", "0b6f3c8e-1d2a-4c3b-9e8f-7a6b5c4d3e2f")
	env := "<environment_details>\n# Current Workspace Directory (/work/app) Files\nmain.go\n</environment_details>"
	writeJSON(t, filepath.Join(dir, clineAPIFile), []any{
		map[string]any{"role": "user", "ts": 1758000000000, "content": []any{map[string]any{"type": "text", "text": "<task>\nfix the flaky test\n</task>"}, map[string]any{"type": "text", "text": env}}},
		map[string]any{"role": "assistant", "ts": 1758000001000, "content": []any{map[string]any{"type": "text", "text": "Reading it.\n<read_file>\n<args><file><path>ci/test.sh</path></file></args>\n</read_file>"}}},
		map[string]any{"role": "user", "ts": 1758000002000, "content": []any{map[string]any{"type": "text", "text": "[read_file for 'ci/test.sh'] Result:"}, map[string]any{"type": "text", "text": "#!/bin/sh\nsleep 1"}, map[string]any{"type": "text", "text": env}}},
		map[string]any{"role": "assistant", "ts": 1758000003000, "isSummary": true, "content": "summary of the above"},
		map[string]any{"role": "assistant", "ts": 1758000004000, "content": []any{map[string]any{"type": "text", "text": "<attempt_completion>\n<result>\nThe sleep raced the server; now it waits on the port.\n</result>\n</attempt_completion>"}}},
		map[string]any{"role": "user", "ts": 1758000005000, "content": []any{map[string]any{"type": "text", "text": "[attempt_completion] Result:"}, map[string]any{"type": "text", "text": "The user has provided feedback on the results.\n<feedback>\nalso the lint step\n</feedback>"}}},
	})
	writeJSON(t, filepath.Join(dir, clineHistFile), map[string]any{"id": filepath.Base(dir), "workspace": "/work/app", "parentTaskId": "9a9a9a9a-0000-4000-8000-000000000001"})
	logs := t.TempDir()
	res := importOne(t, Roo, logs, filepath.Join(dir, clineAPIFile), Options{Workspace: "/work/app"})
	if res.Errors != 0 {
		t.Fatal(res.Problems)
	}
	ex, resets, links := byType(stored(t, logs))
	// the condensation ends the first exchange; the turn goes on after it
	if len(ex) != 3 || ex[0].User != "fix the flaky test" || ex[1].User != "[continued] fix the flaky test" || ex[2].User != "also the lint step" {
		t.Fatalf("exchanges %+v", ex)
	}
	if !strings.Contains(ex[0].AI, "Reading it.") || !strings.Contains(ex[0].AI, "[tools] read_file ci/test.sh") || strings.Contains(ex[0].AI, "sleep 1") {
		t.Errorf("first answer %q", ex[0].AI)
	}
	if len(resets) != 1 || len(links) != 1 || links[0].PreviousSession != "9a9a9a9a-0000-4000-8000-000000000001" {
		t.Errorf("resets %v links %v", resets, links)
	}
	all := ex[0].AI + ex[1].AI + ex[2].AI
	if !strings.Contains(all, "now it waits on the port") || strings.Contains(all, "summary of the above") {
		t.Errorf("completion result missing or summary kept: %q", all)
	}
	if got := UnitCwd(Roo, filepath.Join(dir, clineAPIFile)); got != "/work/app" {
		t.Errorf("cwd %q", got)
	}
	os.Remove(filepath.Join(dir, clineHistFile))
	if got := UnitCwd(Roo, filepath.Join(dir, clineAPIFile)); got != "/work/app" {
		t.Errorf("cwd from the environment details: %q", got)
	}
}

// TestClineSession: a session of Cline's newer layout: <user_input>
// unwrapped, tool results left out, the compaction sidecar a reset after
// the messages it replaced, a subagent's messages file skipped.
func TestClineSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "sess_1")
	writeJSON(t, filepath.Join(dir, "sess_1.json"), map[string]any{"session_id": "sess_1", "cwd": "/work/app", "created_at": "2026-05-01T10:00:00Z"})
	msgs := []any{
		map[string]any{"id": "m1", "role": "user", "ts": 1777629600000, "content": []any{map[string]any{"type": "text", "text": "<user_input>why is the build red?</user_input>"}}},
		map[string]any{"id": "m2", "role": "assistant", "ts": 1777629601000, "content": []any{map[string]any{"type": "text", "text": "Checking."}, map[string]any{"type": "tool_use", "name": "run_commands", "input": map[string]any{"command": "make"}}}},
		map[string]any{"id": "m3", "role": "user", "ts": 1777629602000, "content": []any{map[string]any{"type": "tool_result", "content": "error: cgo"}}},
		map[string]any{"id": "m4", "role": "assistant", "ts": 1777629603000, "content": []any{map[string]any{"type": "text", "text": "cgo needs gcc."}}},
		map[string]any{"id": "m5", "role": "user", "ts": 1777629604000, "content": "thanks, and the tests?"},
		map[string]any{"id": "m6", "role": "assistant", "ts": 1777629605000, "content": "They pass."},
	}
	writeJSON(t, filepath.Join(dir, "sess_1.messages.json"), map[string]any{"version": 1, "sessionId": "sess_1", "messages": msgs})
	writeJSON(t, filepath.Join(dir, "sess_1.compaction.json"), map[string]any{"version": 1, "updated_at": "2026-05-01T10:00:04Z", "source_message_count": 4, "messages": []any{}})
	writeJSON(t, filepath.Join(dir, "helper.messages.json"), map[string]any{"messages": msgs})
	logs := t.TempDir()
	im, _ := New(Cline, logs, Options{})
	res, err := im.Import(context.Background(), []string{filepath.Dir(dir)})
	if err != nil || res.Errors != 0 {
		t.Fatal(err, res.Problems)
	}
	if res.Skipped != 1 {
		t.Errorf("subagent not skipped: %+v", res)
	}
	evs := stored(t, logs)
	if len(evs) != 3 || evs[0].User != "why is the build red?" || evs[1].Type != logformat.TypeContextReset || evs[2].User != "thanks, and the tests?" {
		t.Fatalf("events %+v", evs)
	}
	if !strings.Contains(evs[0].AI, "[tools] run_commands: make") || !strings.Contains(evs[0].AI, "cgo needs gcc.") || strings.Contains(evs[0].AI, "error: cgo") {
		t.Errorf("answer %q", evs[0].AI)
	}
}

// ocWrite writes an OpenCode JSON storage session.
func ocWrite(t *testing.T, storage string, session map[string]any, msgs []map[string]any, parts map[string][]map[string]any) string {
	path := filepath.Join(storage, "session", "prj_1", session["id"].(string)+".json")
	writeJSON(t, path, session)
	for i, m := range msgs {
		writeJSON(t, filepath.Join(storage, "message", session["id"].(string), m["id"].(string)+".json"), m)
		for j, p := range parts[m["id"].(string)] {
			p["id"] = m["id"].(string) + "_p" + string(rune('a'+j))
			writeJSON(t, filepath.Join(storage, "part", m["id"].(string), p["id"].(string)+".json"), p)
		}
		_ = i
	}
	return path
}

// TestOpenCode: prompts and answers of the JSON storage, a compaction
// part a reset and the summary after it left out, tool inputs naming
// files, a child session linked to its parent; the same session read
// from an opencode.db, filtered by folder.
func TestOpenCode(t *testing.T) {
	storage := filepath.Join(t.TempDir(), "storage")
	msgs := []map[string]any{
		{"id": "msg_01", "role": "user", "time": map[string]any{"created": 1777629600000}},
		{"id": "msg_02", "role": "assistant", "time": map[string]any{"created": 1777629601000, "completed": 1777629602000}, "finish": "stop"},
		{"id": "msg_03", "role": "user", "time": map[string]any{"created": 1777629603000}},
		{"id": "msg_04", "role": "assistant", "summary": true, "time": map[string]any{"created": 1777629604000}, "finish": "stop"},
		{"id": "msg_05", "role": "user", "time": map[string]any{"created": 1777629605000}},
		{"id": "msg_06", "role": "assistant", "time": map[string]any{"created": 1777629606000}, "finish": "tool-calls"},
	}
	parts := map[string][]map[string]any{
		"msg_01": {{"type": "text", "text": "rename the config loader"}, {"type": "text", "text": "<file contents>", "synthetic": true}},
		"msg_02": {{"type": "reasoning", "text": "plan"}, {"type": "tool", "tool": "edit", "state": map[string]any{"status": "completed", "input": map[string]any{"filePath": "/work/app/config/load.go"}, "output": "ok"}}, {"type": "text", "text": "Renamed to LoadConfig."}},
		"msg_03": {{"type": "compaction", "auto": true}},
		"msg_04": {{"type": "text", "text": "SUMMARY OF EVERYTHING"}},
		"msg_05": {{"type": "text", "text": "now the docs"}},
		"msg_06": {{"type": "tool", "tool": "bash", "state": map[string]any{"input": map[string]any{"command": "grep -r Load docs"}}}},
	}
	path := ocWrite(t, storage, map[string]any{"id": "ses_child", "directory": "/work/app", "parentID": "ses_parent", "time": map[string]any{"created": 1777629600000}}, msgs, parts)
	logs := t.TempDir()
	if res := importOne(t, OpenCode, logs, path, Options{Workspace: "/work/app"}); res.Errors != 0 {
		t.Fatal(res.Problems)
	}
	evs := stored(t, logs)
	ex, resets, links := byType(evs)
	if len(ex) != 2 || ex[0].User != "rename the config loader" || ex[1].User != "now the docs" || len(resets) != 1 || len(links) != 1 {
		t.Fatalf("events %+v", evs)
	}
	if !strings.Contains(ex[0].AI, "Renamed to LoadConfig.") || !strings.Contains(ex[0].AI, "[tools] edit /work/app/config/load.go") || ex[0].Files[0] != "config/load.go" {
		t.Errorf("answer %q files %v", ex[0].AI, ex[0].Files)
	}
	for _, e := range evs {
		if strings.Contains(e.AI, "SUMMARY") || strings.Contains(e.User, "file contents") || strings.Contains(e.AI, "plan") {
			t.Errorf("summary, synthetic text or reasoning kept: %+v", e)
		}
	}
	if UnitCwd(OpenCode, path) != "/work/app" {
		t.Errorf("cwd")
	}

	// the first releases' layout: project/<slug>/storage/session/{info,message,part}
	legacy := filepath.Join(t.TempDir(), "project", "app", "storage", "session")
	writeJSON(t, filepath.Join(legacy, "info", "ses_old.json"), map[string]any{"id": "ses_old", "directory": "/work/app"})
	writeJSON(t, filepath.Join(legacy, "message", "ses_old", "msg_1.json"), map[string]any{"id": "msg_1", "role": "user", "time": map[string]any{"created": 1777629600000}})
	writeJSON(t, filepath.Join(legacy, "part", "ses_old", "msg_1", "prt_1.json"), map[string]any{"id": "prt_1", "type": "text", "text": "an early question"})
	logs = t.TempDir()
	if res := importOne(t, OpenCode, logs, filepath.Dir(filepath.Dir(legacy)), Options{}); res.Errors != 0 || res.Exchanges != 1 {
		t.Errorf("legacy layout: %+v", res)
	}

	db := filepath.Join(t.TempDir(), "opencode.db")
	conn, _ := sql.Open("sqlite3", db)
	for _, q := range []string{
		`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT, title TEXT, time_created INTEGER, time_updated INTEGER)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)`,
		`INSERT INTO session VALUES ('ses_a', 'p', NULL, '/work/app', 't', 1777629600000, 1777629600000), ('ses_b', 'p', NULL, '/work/other', 't', 1777629600000, 1777629600000)`,
		`INSERT INTO message VALUES ('msg_a1', 'ses_a', 1777629600000, 0, '{"role":"user","time":{"created":1777629600000}}'), ('msg_a2', 'ses_a', 1777629601000, 0, '{"role":"assistant","time":{"created":1777629601000},"finish":"stop"}'), ('msg_b1', 'ses_b', 1777629600000, 0, '{"role":"user","time":{"created":1777629600000}}')`,
		`INSERT INTO part VALUES ('prt_1', 'msg_a1', 'ses_a', 0, 0, '{"type":"text","text":"what is the port?"}'), ('prt_2', 'msg_a2', 'ses_a', 0, 0, '{"type":"text","text":"8080"}'), ('prt_3', 'msg_b1', 'ses_b', 0, 0, '{"type":"text","text":"elsewhere"}')`,
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	logs = t.TempDir()
	if res := importOne(t, OpenCode, logs, db, Options{Roots: []string{"/work/app"}}); res.Errors != 0 || res.Sessions != 1 {
		t.Fatalf("%+v", res)
	}
	if evs := stored(t, logs); len(evs) != 1 || evs[0].User != "what is the port?" || evs[0].AI != "8080" {
		t.Errorf("db events %+v", evs)
	}
}

// TestCopilot: prompts, answers with their tool requests (arguments as an
// object or a JSON string), a subagent's messages left out, a compaction
// and a truncation as resets, the session's folder.
func TestCopilot(t *testing.T) {
	lines := []map[string]any{
		{"type": "session.start", "id": "e1", "timestamp": "2026-05-01T10:00:00Z", "data": map[string]any{"sessionId": "c0ffee00-0000-4000-8000-000000000001", "context": map[string]any{"cwd": "/work/app"}}},
		{"type": "user.message", "id": "e2", "timestamp": "2026-05-01T10:00:01Z", "data": map[string]any{"content": "add a health endpoint"}},
		{"type": "assistant.message", "id": "e3", "timestamp": "2026-05-01T10:00:02Z", "data": map[string]any{"content": "Adding /healthz.", "toolRequests": []any{map[string]any{"name": "edit", "arguments": `{"path":"/work/app/server.go"}`}}}},
		{"type": "assistant.message", "id": "e4", "timestamp": "2026-05-01T10:00:03Z", "data": map[string]any{"parentToolCallId": "x", "content": "SUBAGENT CHATTER"}},
		{"type": "tool.execution_complete", "id": "e5", "timestamp": "2026-05-01T10:00:04Z", "data": map[string]any{"result": map[string]any{"content": "TOOL OUTPUT"}}},
		{"type": "assistant.message", "id": "e6", "timestamp": "2026-05-01T10:00:05Z", "data": map[string]any{"content": "Done: GET /healthz returns 200.", "toolRequests": []any{map[string]any{"name": "bash", "arguments": map[string]any{"command": "go test ./..."}}}}},
		{"type": "assistant.turn_end", "id": "e7", "timestamp": "2026-05-01T10:00:06Z", "data": map[string]any{}},
		{"type": "session.compaction_complete", "id": "e8", "timestamp": "2026-05-01T10:00:07Z", "data": map[string]any{}},
		{"type": "session.truncation", "id": "e9", "timestamp": "2026-05-01T10:00:08Z", "data": map[string]any{"messagesRemovedDuringTruncation": 12}},
		{"type": "user.message", "id": "e10", "timestamp": "2026-05-01T10:00:09Z", "data": map[string]any{"content": "and a readiness one"}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString("{not json\n")
	path := filepath.Join(t.TempDir(), "session-state", "c0ffee00-0000-4000-8000-000000000001", "events.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(b.String()), 0o600)
	logs := t.TempDir()
	res := importOne(t, Copilot, logs, path, Options{Workspace: "/work/app"})
	if res.Errors != 1 || !strings.Contains(res.Problems[0], "events.jsonl:11") {
		t.Errorf("the bad line is not reported as file:line: %v", res.Problems)
	}
	ex, resets, _ := byType(stored(t, logs))
	if len(ex) != 2 || len(resets) != 2 || !strings.Contains(resets[1].Reason, "12 messages removed") {
		t.Fatalf("exchanges %+v resets %+v", ex, resets)
	}
	if !strings.Contains(ex[0].AI, "[tools] edit /work/app/server.go") || !strings.Contains(ex[0].AI, "[tools] bash: go test ./...") || !strings.Contains(ex[0].AI, "returns 200") {
		t.Errorf("answer %q", ex[0].AI)
	}
	if strings.Contains(ex[0].AI, "SUBAGENT") || strings.Contains(ex[0].AI, "TOOL OUTPUT") {
		t.Errorf("subagent or tool output kept: %q", ex[0].AI)
	}
	if copilotCwd(path) != "/work/app" {
		t.Errorf("cwd")
	}
}

// TestGoose: a legacy session file and a sessions.db: prompts (not tool
// responses), answers with tool requests, a compaction marker a reset and
// the summary the user never saw left out, a sub-agent's session skipped.
func TestGoose(t *testing.T) {
	msgs := []string{
		`{"id":"m1","role":"user","created":1777629600,"content":[{"type":"text","text":"list the migrations"}]}`,
		`{"id":"m2","role":"assistant","created":1777629601,"content":[{"type":"text","text":"Looking."},{"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls migrations"}}}}]}`,
		`{"id":"m3","role":"user","created":1777629602,"content":[{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":[{"type":"text","text":"001_init.sql"}]}}]}`,
		`{"id":"m4","role":"assistant","created":1777629603,"content":[{"type":"text","text":"One migration: 001_init.sql."}]}`,
		`{"id":"m5","role":"assistant","created":1777629604,"content":[{"type":"conversationCompacted","msg":"Conversation compacted and summarized"}],"metadata":{"userVisible":true,"agentVisible":false}}`,
		`{"id":"m6","role":"assistant","created":1777629605,"content":[{"type":"text","text":"THE SUMMARY"}],"metadata":{"userVisible":false,"agentVisible":true}}`,
		`{"id":"m7","role":"user","created":1777629606,"content":[{"type":"text","text":"add one for users"}]}`,
	}
	path := filepath.Join(t.TempDir(), "20260501_1.jsonl")
	os.WriteFile(path, []byte(`{"working_dir":"/work/app","description":"migrations","message_count":7}`+"\n"+strings.Join(msgs, "\n")+"\n"), 0o600)
	check := func(logs string) {
		t.Helper()
		ex, resets, _ := byType(stored(t, logs))
		if len(ex) != 2 || ex[0].User != "list the migrations" || ex[1].User != "add one for users" || len(resets) != 1 {
			t.Fatalf("exchanges %+v resets %+v", ex, resets)
		}
		if !strings.Contains(ex[0].AI, "[tools] developer__shell: ls migrations") || !strings.Contains(ex[0].AI, "One migration") || strings.Contains(ex[0].AI+ex[1].AI, "THE SUMMARY") {
			t.Errorf("answer %q", ex[0].AI)
		}
	}
	logs := t.TempDir()
	if res := importOne(t, Goose, logs, path, Options{}); res.Errors != 0 {
		t.Fatal(res.Problems)
	}
	check(logs)
	if gooseCwd(path) != "/work/app" {
		t.Error("cwd")
	}

	db := filepath.Join(t.TempDir(), "sessions.db")
	conn, _ := sql.Open("sqlite3", db)
	stmts := []string{
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, description TEXT, working_dir TEXT, session_type TEXT, created_at TIMESTAMP, updated_at TIMESTAMP)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT, role TEXT, content_json TEXT, created_timestamp INTEGER, timestamp TIMESTAMP, metadata_json TEXT)`,
		`INSERT INTO sessions VALUES ('20260501_2', 'n', 'd', '/work/app', 'user', '2026-05-01 10:00:00', '2026-05-01 10:00:00'), ('20260501_3', 'n', 'd', '/work/app', 'sub_agent', '2026-05-01 10:00:00', '2026-05-01 10:00:00')`,
	}
	for _, m := range msgs {
		var g map[string]any
		json.Unmarshal([]byte(m), &g)
		content, _ := json.Marshal(g["content"])
		meta, _ := json.Marshal(g["metadata"])
		stmts = append(stmts, `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES ('`+g["id"].(string)+`', '20260501_2', '`+g["role"].(string)+`', '`+string(content)+`', 1777629600, '`+string(meta)+`')`)
	}
	for _, q := range stmts {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	conn.Close()
	logs = t.TempDir()
	res := importOne(t, Goose, logs, db, Options{Roots: []string{"/work/app"}})
	if res.Errors != 0 || res.Skipped != 1 {
		t.Fatalf("%+v", res)
	}
	check(logs)
}

// TestAiderFolder: a folder import finds every Aider history, whatever
// its name, and lists the markdown files it left out.
func TestAiderFolder(t *testing.T) {
	dir := t.TempDir()
	chat := "# aider chat started at 2024-08-05 15:10:33\n\n#### fix the parser\n\nDone.\n"
	os.WriteFile(filepath.Join(dir, ".aider.chat.history.md"), []byte(chat), 0o600)
	os.MkdirAll(filepath.Join(dir, "old"), 0o700)
	os.WriteFile(filepath.Join(dir, "old", "chat-history.md"), []byte(strings.Replace(chat, "15:10:33", "16:00:00", 1)), 0o600)
	os.WriteFile(filepath.Join(dir, "old", "project.chat.history.md"), []byte(strings.Replace(chat, "15:10:33", "17:00:00", 1)), 0o600)
	os.WriteFile(filepath.Join(dir, "old", "renamed.md"), []byte(strings.Replace(chat, "15:10:33", "18:00:00", 1)), 0o600)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# project\n"), 0o600)
	res := importOne(t, Aider, t.TempDir(), dir, Options{})
	if res.Files != 4 || res.Sessions != 4 || res.Skipped != 1 || !strings.Contains(strings.Join(res.Skips, "\n"), "README.md: not an aider chat history") {
		t.Errorf("%+v", res)
	}
}

// TestParseAgentsAll: "all" follows every agent, and a report lists them.
func TestParseAgentsAll(t *testing.T) {
	got, err := ParseAgents("all")
	if err != nil || len(got) != len(Agents) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseAgents("cline, claude-code,cline"); err != nil || strings.Join(got, ",") != "cline,claude-code" {
		t.Errorf("%v %v", got, err)
	}
	if _, err := ParseAgents("cline,nope"); err == nil || !strings.Contains(err.Error(), "all") {
		t.Errorf("bad agent: %v", err)
	}
	f := &LiveImport{Agents: []string{Cline, Goose}, Workspace: "/nonexistent/ws", Logs: t.TempDir(), Home: DefaultHome(t.TempDir())}
	if err := f.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := f.Report(); len(r.Agents) != 2 || r.Agents[0].Agent != Cline || r.Agents[0].Files != 0 {
		t.Errorf("report %+v", r)
	}
	_ = time.Second
}
