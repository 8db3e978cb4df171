package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/importer"
)

// writeJSONFile writes v as JSON in place, as Cline rewrites its task
// files (fs.writeFile: truncate, then write).
func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func clineMsg(ts int64, typ, kind, text string) map[string]any {
	return map[string]any{"ts": ts, "type": typ, typ: kind, "text": text}
}

// sessionExchanges is the number of exchanges the index holds for a
// session (-1 when `sessions` fails).
func (w *workspace) sessionExchanges(session string) int64 {
	out, _, code := w.cli("sessions", "--json")
	if code != 0 {
		return -1
	}
	var resp engine.SessionsResponse
	json.Unmarshal([]byte(out), &resp)
	for _, s := range resp.Sessions {
		if s.ID == session {
			return s.Exchanges
		}
	}
	return 0
}

// TestImportClineLive: a Cline task decides, then hands its context to a
// new task (new_task); `continuity daemon --import all` follows Cline's
// VS Code storage, is killed with -9 midway and restarted; `resume` of the
// new task brings back the earlier task's decision, `status` lists Cline
// as followed, and nothing is imported twice.
func TestImportClineLive(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	home := t.TempDir()
	store := filepath.Join(home, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev")
	a, b := "1767400000000", "1767400900000"
	writeJSONFile(t, filepath.Join(store, "state", "taskHistory.json"), []any{
		map[string]any{"id": a, "ts": 1767400000000, "task": "storage", "cwdOnTaskInitialization": ws.root},
		map[string]any{"id": b, "ts": 1767400900000, "task": "context", "cwdOnTaskInitialization": ws.root},
	})
	aPath, bPath := filepath.Join(store, "tasks", a, "ui_messages.json"), filepath.Join(store, "tasks", b, "ui_messages.json")
	start := func() *daemonProc {
		return ws.startDaemon("--import", "all", "--agent-home", home, "--import-poll", "100ms", "--import-quiet", "2s")
	}
	d := start()

	taskA := []any{
		clineMsg(1767400000000, "say", "task", "which storage for the job queue?"),
		clineMsg(1767400001000, "say", "api_req_started", `{"request":"<task>which storage</task>"}`),
		clineMsg(1767400002000, "say", "text", "Reading the queue code."),
		clineMsg(1767400003000, "ask", "tool", `{"tool":"readFile","path":"queue/store.go"}`),
	}
	writeJSONFile(t, aPath, taskA) // the turn goes on: held until it ends
	taskA = append(taskA,
		clineMsg(1767400004000, "say", "completion_result", "Decision: the job queue lives in SQLite (WAL mode); Redis was rejected as one more service to run."),
		clineMsg(1767400005000, "ask", "completion_result", ""))
	writeJSONFile(t, aPath, taskA)
	eventually(t, 15*time.Second, "task A's first exchange imported and indexed", func() bool { return ws.sessionExchanges(a) == 1 })

	d.kill()
	context := "Continue the job queue work. We store jobs in SQLite (WAL mode). Next: retries with backoff."
	taskA = append(taskA,
		clineMsg(1767400800000, "say", "user_feedback", "the window is full, start a new task for the retries"),
		clineMsg(1767400801000, "say", "text", "Preparing the handover."),
		clineMsg(1767400802000, "ask", "new_task", context))
	writeJSONFile(t, aPath, taskA)
	writeJSONFile(t, bPath, []any{
		clineMsg(1767400900000, "say", "task", context),
		clineMsg(1767400901000, "say", "text", "Retries added: 3 attempts with exponential backoff."),
		clineMsg(1767400902000, "ask", "completion_result", ""),
	})
	d = start()
	eventually(t, 15*time.Second, "task B imported after the restart", func() bool { return ws.sessionExchanges(b) == 1 && ws.sessionExchanges(a) == 2 })
	eventually(t, 15*time.Second, "the link from A to B indexed", func() bool { return ws.status().EventsByType["session_resume"] == 1 })

	out, errs, code := ws.cli("resume", "--session", b, "--query", "storage for the job queue")
	if code != 0 {
		t.Fatalf("resume: %s", errs)
	}
	if !strings.Contains(out, "the job queue lives in SQLite") {
		t.Errorf("resume --session B lacks task A's decision:\n%s", out)
	}
	st := ws.status()
	if st.Exchanges != 3 || st.DuplicatesSkipped != 0 {
		t.Errorf("%d exchanges (want 3), %d duplicates (want 0)", st.Exchanges, st.DuplicatesSkipped)
	}
	if st.Import == nil || len(st.Import.Agents) != len(importer.Agents) || st.Import.Agents[5].Agent != importer.Cline || st.Import.Agents[5].Files != 2 {
		t.Errorf("status does not list Cline as followed with its 2 tasks: %+v", st.Import)
	}
	text, _, _ := ws.cli("status")
	if !strings.Contains(text, "importing live") || !strings.Contains(text, "cline") || !strings.Contains(text, "no transcripts of this workspace yet") {
		t.Errorf("status text:\n%s", text)
	}
	d.stop(t)
}

// openCodeDB creates an OpenCode database (the tables and columns the
// importer reads), in WAL mode as OpenCode keeps it.
func openCodeDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	db, err := sql.Open("sqlite3", path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT, directory TEXT NOT NULL, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ocTurn inserts a user prompt and the assistant's answer into session.
func ocTurn(t *testing.T, db *sql.DB, session, id string, ms int64, prompt, answer string) {
	t.Helper()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO message VALUES (?, ?, ?, ?, ?)`, []any{"msg_" + id + "u", session, ms, ms, `{"role":"user","time":{"created":` + itoa64(ms) + `}}`}},
		{`INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)`, []any{"prt_" + id + "u", "msg_" + id + "u", session, ms, ms, mustJSONString(map[string]any{"type": "text", "text": prompt})}},
		{`INSERT INTO message VALUES (?, ?, ?, ?, ?)`, []any{"msg_" + id + "a", session, ms + 1000, ms + 1000, `{"role":"assistant","time":{"created":` + itoa64(ms+1000) + `,"completed":` + itoa64(ms+2000) + `},"finish":"stop"}`}},
		{`INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)`, []any{"prt_" + id + "a", "msg_" + id + "a", session, ms + 1000, ms + 1000, mustJSONString(map[string]any{"type": "text", "text": answer})}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
}

func itoa64(n int64) string { b, _ := json.Marshal(n); return string(b) }

func mustJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestImportOpenCodeLive: OpenCode's database, written while the daemon
// follows it (--import all): a session decides, a session it started
// (parent_id) goes on; the daemon is killed with -9 in between; `resume`
// of the second session brings back the first one's decision; a session
// of another folder in the same database stays out.
func TestImportOpenCodeLive(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	home := t.TempDir()
	db := openCodeDB(t, filepath.Join(home, ".local", "share", "opencode", "opencode.db"))
	start := func() *daemonProc {
		return ws.startDaemon("--import", "all", "--agent-home", home, "--import-poll", "100ms", "--import-quiet", "2s")
	}
	d := start()
	if _, err := db.Exec(`INSERT INTO session (id, project_id, directory, title, time_created, time_updated) VALUES ('ses_parent', 'p', ?, 't', 1777000000000, 1777000000000), ('ses_other', 'p', '/somewhere/else', 't', 1777000000000, 1777000000000)`, ws.root); err != nil {
		t.Fatal(err)
	}
	ocTurn(t, db, "ses_parent", "1", 1777000001000, "which cache for the API?", "Decision: an in-process LRU of 10k entries; no Redis, the API runs as one process.")
	ocTurn(t, db, "ses_other", "2", 1777000001000, "unrelated question", "unrelated answer")
	eventually(t, 15*time.Second, "the parent session imported", func() bool { return ws.sessionExchanges("ses_parent") == 1 })

	d.kill()
	if _, err := db.Exec(`INSERT INTO session (id, project_id, parent_id, directory, title, time_created, time_updated) VALUES ('ses_child', 'p', 'ses_parent', ?, 't', 1777000100000, 1777000100000)`, filepath.Join(ws.root, "api")); err != nil {
		t.Fatal(err)
	}
	ocTurn(t, db, "ses_child", "3", 1777000101000, "add cache metrics", "Hit and miss counters exported on /metrics.")
	d = start()
	eventually(t, 15*time.Second, "the child session imported and linked", func() bool {
		return ws.sessionExchanges("ses_child") == 1 && ws.status().EventsByType["session_resume"] == 1
	})
	out, errs, code := ws.cli("resume", "--session", "ses_child", "--query", "cache")
	if code != 0 {
		t.Fatalf("resume: %s", errs)
	}
	if !strings.Contains(out, "in-process LRU of 10k entries") {
		t.Errorf("resume --session ses_child lacks the parent's decision:\n%s", out)
	}
	if n := ws.sessionExchanges("ses_other"); n != 0 {
		t.Errorf("a session of another folder was imported (%d exchanges)", n)
	}
	if st := ws.status(); st.Exchanges != 2 || st.DuplicatesSkipped != 0 {
		t.Errorf("%d exchanges (want 2), %d duplicates", st.Exchanges, st.DuplicatesSkipped)
	}
	d.stop(t)
}

// claudeTranscript writes a Claude Code session of the workspace, last
// changed age ago.
func claudeTranscript(t *testing.T, proj, sid string, age time.Duration, text string) string {
	t.Helper()
	path := filepath.Join(proj, sid+".jsonl")
	os.MkdirAll(proj, 0o700)
	ts := time.Now().Add(-age).UTC().Format(time.RFC3339)
	os.WriteFile(path, []byte(ccRec(t, ccPrompt(sid, sid+"-u", ts, text))+ccRec(t, ccAnswer(sid, sid+"-a", ts, "answer to "+text))), 0o600)
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	return path
}

// doctorCheck runs doctor --json and returns the named check.
func (w *workspace) doctorCheck(name string, args ...string) engine.Check {
	w.t.Helper()
	out, errs, _ := w.cli(append([]string{"doctor", "--json"}, args...)...)
	var r engine.DoctorReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		w.t.Fatalf("doctor --json: %v\n%s%s", err, out, errs)
	}
	c, ok := r.Get(name)
	if !ok {
		w.t.Fatalf("doctor has no %q check:\n%s", name, out)
	}
	return c
}

// TestDoctorRetention: Claude Code's settings say cleanupPeriodDays 10;
// of this workspace's transcripts one is older than that (deleted at
// Claude Code's next start), one goes within a week, one is recent and
// one was imported. doctor warns, counts them and says how to import or
// follow them; after `import`, it is satisfied. Without a setting, the
// default of 30 days applies. An imported session stays after Claude Code
// deleted its transcript.
func TestDoctorRetention(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	home := t.TempDir()
	h := importer.DefaultHome(home)
	proj := h.ClaudeProjectDir(ws.root)
	day := 24 * time.Hour
	old := claudeTranscript(t, proj, "0e0e0e0e-0000-4000-8000-000000000001", 12*day, "the migration plan for the billing tables")
	claudeTranscript(t, proj, "0e0e0e0e-0000-4000-8000-000000000002", 5*day, "why the cron job double-fires")
	claudeTranscript(t, proj, "0e0e0e0e-0000-4000-8000-000000000003", 1*day, "recent work")
	done := claudeTranscript(t, proj, "0e0e0e0e-0000-4000-8000-000000000004", 20*day, "imported long ago")
	if _, errs, code := ws.cli("import", "--from", "claude-code", done); code != 0 {
		t.Fatal(errs)
	}
	os.MkdirAll(h.ClaudeDir, 0o700)
	os.WriteFile(filepath.Join(h.ClaudeDir, "settings.json"), []byte(`{"model":"opus","cleanupPeriodDays":10}`), 0o600)

	c := ws.doctorCheck("retention", "--agent-home", home)
	for _, want := range []string{"3 of 4 Claude Code transcripts", "1 is past the retention period", "1 goes within 7 days", "cleanupPeriodDays 10, from " + filepath.Join(h.ClaudeDir, "settings.json")} {
		if c.Status != engine.StatusWarn || !strings.Contains(c.Message, want) {
			t.Errorf("retention check lacks %q: %+v", want, c)
		}
	}
	if !strings.Contains(c.Fix, "continuity import --from claude-code") || !strings.Contains(c.Fix, "--import all") {
		t.Errorf("the fix does not say how to import or follow them: %q", c.Fix)
	}
	// the workspace's own .claude/settings.local.json wins over the user's
	os.MkdirAll(filepath.Join(ws.root, ".claude"), 0o700)
	os.WriteFile(filepath.Join(ws.root, ".claude", "settings.local.json"), []byte(`{"cleanupPeriodDays": 365}`), 0o600)
	if c := ws.doctorCheck("retention", "--agent-home", home); c.Status != engine.StatusOK || !strings.Contains(c.Message, "3 Claude Code transcripts of this workspace not imported yet") {
		t.Errorf("with cleanupPeriodDays 365: %+v", c)
	}
	os.Remove(filepath.Join(ws.root, ".claude", "settings.local.json"))
	// the default period (30 days) when no settings say otherwise
	os.Remove(filepath.Join(h.ClaudeDir, "settings.json"))
	claudeTranscript(t, proj, "0e0e0e0e-0000-4000-8000-000000000005", 25*day, "close to the default period")
	if c := ws.doctorCheck("retention", "--agent-home", home); c.Status != engine.StatusWarn || !strings.Contains(c.Message, "Claude Code's default") || !strings.Contains(c.Message, "1 goes within 7 days") {
		t.Errorf("default period: %+v", c)
	}

	if out, errs, code := ws.cli("import", "--from", "claude-code", "--agent-home", home); code != 0 || !strings.Contains(out, "5 sessions: 4 exchanges") {
		t.Fatalf("import: %s %s", out, errs)
	}
	if c := ws.doctorCheck("retention", "--agent-home", home); c.Status != engine.StatusOK || !strings.Contains(c.Message, "all 5 Claude Code transcripts of this workspace are imported") {
		t.Errorf("after import: %+v", c)
	}

	// Claude Code's cleanup deletes the old transcript: the memory stays.
	if err := os.Remove(old); err != nil {
		t.Fatal(err)
	}
	d := ws.startDaemon("--import", "all", "--agent-home", home, "--import-poll", "100ms")
	eventually(t, 20*time.Second, "the daemon indexed the imported sessions", func() bool { return ws.status().Exchanges == 5 })
	ws.importPolled() // a few polls of the follower: nothing may go
	out, _, code := ws.cli("search", "billing tables migration plan")
	if code != 0 || !strings.Contains(out, "billing tables") {
		t.Errorf("the session whose transcript was deleted is not found:\n%s", out)
	}
	if n := ws.sessionExchanges("0e0e0e0e-0000-4000-8000-000000000001"); n != 1 {
		t.Errorf("the deleted transcript's session holds %d exchanges, want 1", n)
	}
	d.stop(t)
}

// TestImportAiderFolder: `import --from aider FOLDER` finds histories
// whatever their name and lists the markdown files it left out; a folder
// with none says so.
func TestImportAiderFolder(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	dir := t.TempDir()
	chat := "# aider chat started at 2024-08-05 15:10:33\n\n> aider --model sonnet\n\n#### why is the parser slow?\n\nIt re-reads the file per line; buffered it.\n"
	os.WriteFile(filepath.Join(dir, "chat-history.md"), []byte(chat), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# notes\n"), 0o600)
	out, errs, code := ws.cli("import", "--from", "aider", dir)
	if code != 0 || !strings.Contains(out, "1 file, 1 session: 1 exchange") || !strings.Contains(out, "notes.md: not an aider chat history") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "README.md"), []byte("# readme\n"), 0o600)
	out, errs, code = ws.cli("import", "--from", "aider", empty)
	if code != 2 || !strings.Contains(errs, "no aider transcripts found in "+empty) || !strings.Contains(out, "README.md: not an aider chat history") {
		t.Errorf("a folder without a history: exit %d\n%s%s", code, out, errs)
	}
}

// TestWorktreeSharedMemory: `continuity log` run inside a linked git
// worktree writes to the main worktree's memory, and `resume` there finds
// it; CONTINUITY_WORKTREE=own keeps the worktree's own.
func TestWorktreeSharedMemory(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	main, wt := filepath.Join(base, "app"), filepath.Join(base, "app-fix")
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	run := func(dir string, env []string, name string, args ...string) (string, string, int) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		return runCmd(t, cmd)
	}
	os.MkdirAll(filepath.Join(main, "src"), 0o755)
	os.WriteFile(filepath.Join(main, "src", "a.go"), []byte("package a\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "one"}, {"worktree", "add", "-q", wt, "-b", "fix"}} {
		if _, errs, code := run(main, gitEnv, "git", args...); code != 0 {
			t.Fatalf("git %v: %s", args, errs)
		}
	}
	if _, errs, code := run(filepath.Join(wt, "src"), os.Environ(), binPath, "log", "--session", "fix-1", "--user", "why does the fix branch exist?", "--ai", "to fix the flaky upload test"); code != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(main, ".praxis-os", ".conversations", "session-fix-1~m1.jsonl")); err != nil {
		t.Errorf("log in the worktree did not write to the main worktree's memory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt, ".praxis-os")); err == nil {
		t.Errorf("the worktree got a memory of its own")
	}
	if out, errs, code := run(filepath.Join(main, "src"), os.Environ(), binPath, "ingest", "--no-embed"); code != 0 {
		t.Fatal(out, errs)
	}
	if out, _, _ := run(main, os.Environ(), binPath, "search", "flaky upload"); !strings.Contains(out, "flaky upload test") {
		t.Errorf("the main worktree does not find what was said in the other one:\n%s", out)
	}
	own := append(os.Environ(), "CONTINUITY_WORKTREE=own")
	if _, errs, code := run(wt, own, binPath, "log", "--session", "fix-2", "--user", "separate"); code != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(wt, ".praxis-os", ".conversations", "session-fix-2~m1.jsonl")); err != nil {
		t.Errorf("CONTINUITY_WORKTREE=own did not keep the worktree's own memory: %v", err)
	}
}
