package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/importer"
)

// ccRec is one Claude Code transcript record, as Claude Code writes it.
func ccRec(t *testing.T, rec map[string]any) string {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func ccPrompt(sid, uuid, ts, text string) map[string]any {
	return map[string]any{"type": "user", "sessionId": sid, "uuid": uuid, "timestamp": ts, "isSidechain": false,
		"message": map[string]any{"role": "user", "content": text}}
}

func ccAnswer(sid, uuid, ts, text string) map[string]any {
	return map[string]any{"type": "assistant", "sessionId": sid, "uuid": uuid, "timestamp": ts, "isSidechain": false,
		"message": map[string]any{"role": "assistant", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": text}}}}
}

func ccTool(sid, uuid, ts, name, path string) map[string]any {
	return map[string]any{"type": "assistant", "sessionId": sid, "uuid": uuid, "timestamp": ts,
		"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "name": name, "input": map[string]any{"file_path": path}}}}}
}

// shellAppendTo appends text to path with a real shell `>>`, as an agent
// writing its transcript does.
func shellAppendTo(t *testing.T, path, text string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `printf '%s' "$1" >> "$2"`, "sh", text, path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh >>: %v %s", err, out)
	}
}

// TestImportLive: a Claude Code session, compacted, then resumed with
// --resume into a new session (a new file repeating the earlier history),
// all followed live by `continuity daemon --import claude-code` from the
// agent's own folder; the daemon killed with -9 and restarted midway.
// `resume --session <new>` brings back the decision made before the
// compaction, and nothing is imported twice.
func TestImportLive(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	home := t.TempDir()
	proj := importer.DefaultHome(home).ClaudeProjectDir(ws.root)
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	a, b := "0a0a0a0a-1111-4222-8333-444444444444", "0b0b0b0b-1111-4222-8333-444444444444"
	aPath, bPath := filepath.Join(proj, a+".jsonl"), filepath.Join(proj, b+".jsonl")
	start := func() *daemonProc {
		return ws.startDaemon("--import", "claude-code", "--agent-home", home, "--import-poll", "100ms", "--import-quiet", "2s")
	}
	d := start()
	exchanges := func(session string) int64 {
		out, _, code := ws.cli("sessions", "--json")
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

	// Session A: the decision, then work, then a compaction.
	shellAppendTo(t, aPath, ccRec(t, ccPrompt(a, "a1", "2026-03-01T10:00:00Z", "which storage for the job queue?"))+
		ccRec(t, ccTool(a, "a2", "2026-03-01T10:00:02Z", "Read", filepath.Join(ws.root, "queue", "store.go")))+
		ccRec(t, ccAnswer(a, "a3", "2026-03-01T10:00:09Z", "Decision: the job queue lives in SQLite (table jobs, WAL mode); Redis was rejected as one more service to run.")))
	eventually(t, 15*time.Second, "A's first exchange imported and indexed", func() bool { return exchanges(a) == 1 })

	// kill -9 while A grows; the rest is imported after the restart, once.
	d.kill()
	for i := 0; i < 5; i++ {
		ts := fmt.Sprintf("2026-03-01T10:%02d:00Z", 10+i)
		shellAppendTo(t, aPath, ccRec(t, ccPrompt(a, fmt.Sprintf("p%d", i), ts, fmt.Sprintf("step %d of the worker", i)))+
			ccRec(t, ccAnswer(a, fmt.Sprintf("r%d", i), ts, fmt.Sprintf("Worker step %d done.", i))))
	}
	shellAppendTo(t, aPath, ccRec(t, map[string]any{"type": "system", "subtype": "compact_boundary", "sessionId": a, "uuid": "cb",
		"timestamp": "2026-03-01T11:00:00Z", "content": "Conversation compacted", "compactMetadata": map[string]any{"trigger": "auto", "preTokens": 160000}})+
		ccRec(t, map[string]any{"type": "user", "sessionId": a, "uuid": "sum", "timestamp": "2026-03-01T11:00:01Z", "isCompactSummary": true,
			"message": map[string]any{"role": "user", "content": "This session is being continued from a previous conversation..."}})+
		ccRec(t, ccPrompt(a, "a9", "2026-03-01T11:01:00Z", "add metrics"))+
		ccRec(t, ccAnswer(a, "a10", "2026-03-01T11:01:30Z", "Metrics added.")))
	d = start()
	eventually(t, 15*time.Second, "A complete after the restart", func() bool { return exchanges(a) == 7 })

	// Session B: `claude --resume` copied A's history into a new file.
	var copyB strings.Builder
	copyB.WriteString(ccRec(t, ccPrompt(b, "b1", "2026-03-01T10:00:00Z", "which storage for the job queue?")))
	copyB.WriteString(ccRec(t, ccAnswer(b, "b2", "2026-03-02T09:00:00Z", "Decision: the job queue lives in SQLite (table jobs, WAL mode); Redis was rejected as one more service to run.")))
	copyB.WriteString(ccRec(t, ccPrompt(b, "b3", "2026-03-02T09:00:10Z", "now make the queue retry failed jobs")))
	shellAppendTo(t, bPath, copyB.String())
	// the answer arrives a moment later; the turn ends with it
	time.Sleep(300 * time.Millisecond)
	shellAppendTo(t, bPath, ccRec(t, ccAnswer(b, "b4", "2026-03-02T09:00:40Z", "Retries added: 3 attempts with backoff.")))
	eventually(t, 15*time.Second, "B imported", func() bool { return exchanges(b) >= 1 })
	ws.importPolled() // a few more polls: nothing more may come

	out, errs, code := ws.cli("resume", "--session", b, "--query", "storage for the job queue")
	if code != 0 {
		t.Fatalf("resume: %s", errs)
	}
	if !strings.Contains(out, "the job queue lives in SQLite") {
		t.Errorf("resume --session B lacks the decision made in A before the compaction:\n%s", out)
	}
	st := ws.status()
	if st.Exchanges != 8 {
		t.Errorf("%d exchanges indexed, want 8 (7 in A, 1 in B; the copied history once)", st.Exchanges)
	}
	if st.EventsByType["context_reset"] != 1 || st.EventsByType["session_resume"] != 1 {
		t.Errorf("events by type %v, want 1 context_reset and 1 session_resume", st.EventsByType)
	}
	if st.DuplicatesSkipped != 0 {
		t.Errorf("%d duplicate lines reached the index: the importer wrote something twice", st.DuplicatesSkipped)
	}
	var bEx int64 = exchanges(b)
	if bEx != 1 {
		t.Errorf("B holds %d exchanges, want 1 (its own turn, one exchange with the answer)", bEx)
	}
	data, _ := os.ReadFile(filepath.Join(ws.logs, "claude-code-"+b+"~m1.jsonl"))
	if !strings.Contains(string(data), "Retries added") || strings.Contains(string(data), "[continued]") {
		t.Errorf("B's turn should be one exchange with its answer:\n%s", data)
	}
	d.stop(t)
}

// TestImportCLI: `continuity import` as a user runs it, on a folder in
// Claude Code's layout given on the command line, then again.
func TestImportCLI(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	dir := t.TempDir()
	sid := "0c0c0c0c-1111-4222-8333-444444444444"
	os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(ccRec(t, ccPrompt(sid, "u", "2026-03-01T10:00:00Z", "hello \"quoted\" \\ text"))+
		"{broken\n"+ccRec(t, ccAnswer(sid, "a", "2026-03-01T10:00:01Z", "hi"))), 0o600)
	out, errs, code := ws.cli("import", "--from", "claude-code", "--json", dir)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	var res struct {
		Sessions, Exchanges, Resets, Links, Skipped, Errors int
		Problems                                            []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
	if res.Sessions != 1 || res.Exchanges != 1 || res.Errors != 1 || !strings.Contains(res.Problems[0], sid+".jsonl:2: ") {
		t.Errorf("import: %s", out)
	}
	out, _, _ = ws.cli("import", "--from", "claude-code", dir)
	if !strings.Contains(out, "0 exchanges") || !strings.Contains(out, "1 already there") {
		t.Errorf("second import: %s", out)
	}
	// The names users type: the same agent, the same log file.
	out, errs, code = ws.cli("import", "--from", "Claude Code", dir)
	if code != 0 || !strings.Contains(out, "1 already there") {
		t.Errorf("--from 'Claude Code': exit %d: %s%s", code, out, errs)
	}
	if _, errs, code := ws.cli("import", "--from", "nope", dir); code != 2 || !strings.Contains(errs, "claude-code") || !strings.Contains(errs, "copilot (copilot-cli)") {
		t.Errorf("unknown agent: exit %d, %s", code, errs)
	}
	if _, errs, code := ws.cli("import", dir); code != 2 || !strings.Contains(errs, "--from") {
		t.Errorf("no --from: exit %d, %s", code, errs)
	}
	ws.cli("ingest", "--no-embed")
	if rs := ws.rejects(); len(rs) != 0 {
		t.Errorf("imported lines rejected: %+v", rs)
	}
	fi, err := os.Stat(filepath.Join(ws.logs, "claude-code-"+sid+"~m1.jsonl"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("imported log file: %v %v", fi, err)
	}
}

// TestImportLongTurnSearch: one prompt, 100 tool calls and 20 answer
// texts, imported then searched: the decision stated in the middle of the
// turn is the best hit, and its exchange names the question.
func TestImportLongTurnSearch(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	dir := t.TempDir()
	sid := "0d0d0d0d-1111-4222-8333-444444444444"
	var b strings.Builder
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	n := 0
	ts := func() string { n++; return base.Add(time.Duration(n) * time.Second).Format(time.RFC3339) }
	b.WriteString(ccRec(t, ccPrompt(sid, "p", ts(), "make the indexer survive a crash mid-batch")))
	words := []string{"tokenizer", "vectors", "rescan", "fingerprint", "rejects", "budget", "socket", "lock", "redaction", "embedder"}
	for i := 0; i < 20; i++ {
		for j := 0; j < 5; j++ {
			b.WriteString(ccRec(t, ccTool(sid, fmt.Sprintf("t%d-%d", i, j), ts(), "Read", fmt.Sprintf("index/file%d.go", j))))
		}
		text := fmt.Sprintf("Looked at the %s code path; nothing to change there yet. ", words[i%len(words)]) + strings.Repeat(fmt.Sprintf("The %s part reads its state and moves on. ", words[i%len(words)]), 60)
		if i == 9 {
			text = "Decision: the committed offset is stored in the same SQLite transaction as the batch of events, so after kill -9 a line is either indexed with its offset or not at all. " + text
		}
		b.WriteString(ccRec(t, ccAnswer(sid, fmt.Sprintf("x%d", i), ts(), text)))
	}
	os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(b.String()), 0o600)
	if _, errs, code := ws.cli("import", "--from", "claude-code", dir); code != 0 {
		t.Fatal(errs)
	}
	ws.cli("ingest", "--no-embed")
	out, errs, code := ws.cli("search", "--json", "--limit", "3", "where is the offset committed after a crash")
	if code != 0 {
		t.Fatal(errs)
	}
	var resp struct {
		Results []struct{ User, AI string }
	}
	json.Unmarshal([]byte(out), &resp)
	if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].AI, "Decision: the committed offset is stored in the same SQLite transaction") {
		t.Fatalf("the decision is not the best hit:\n%s", out)
	}
	if !strings.Contains(resp.Results[0].User, "make the indexer survive a crash mid-batch") {
		t.Errorf("the hit does not name the question: %q", resp.Results[0].User)
	}
}
