package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// Issue 22 through the binary, items 7 to 10: resume of imported
// sessions, undated resets, events dated ahead, the hook's /clear.

// TestResumeImportedSession (item 7): a real Claude Code transcript,
// imported, resumes with its own exchanges by its id (its agent is gone).
// Before: "its own N exchanges are still in context", nothing shown.
func TestResumeImportedSession(t *testing.T) {
	src := shareddata.Require(t, "agent-transcripts/claude-code/episodic-memory/long-conversation.jsonl")
	w := newWorkspace(t)
	if _, errs, code := w.cli("import", "--from", "claude-code", src); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	out, _, _ := w.cli("sessions", "--json")
	var sessions struct {
		Sessions []struct {
			ID        string `json:"id"`
			Exchanges int    `json:"exchanges"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &sessions); err != nil || len(sessions.Sessions) == 0 {
		t.Fatalf("sessions: %v %s", err, out)
	}
	s := sessions.Sessions[0]
	for _, budget := range []string{"300", "2000"} {
		out, errs, code := w.cli("resume", "--session", s.ID, "--budget", budget, "--json")
		var p struct {
			Exchanges []struct{ User string } `json:"exchanges"`
			InContext int                     `json:"in_context"`
			AgentGone string                  `json:"agent_gone"`
			Text      string                  `json:"text"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
			t.Fatalf("resume: exit %d %s %s", code, errs, out)
		}
		if len(p.Exchanges) == 0 || p.InContext != 0 || !strings.Contains(p.AgentGone, "imported from claude-code") ||
			strings.Contains(p.Text, "still in context") {
			t.Errorf("budget %s: %d of %d exchanges shown, %d in context, agent gone %q:\n%s", budget, len(p.Exchanges), s.Exchanges, p.InContext, p.AgentGone, p.Text)
		}
	}
}

// TestUndatedResetBackfilled (item 8): the README's example, a
// context_reset without a timestamp between dated exchanges, backfilled
// long after: the reset stays between them, so the exchanges after it
// are the ones still in context. Before: the reset got the time of the
// backfill, every exchange counted as before it.
func TestUndatedResetBackfilled(t *testing.T) {
	w := newWorkspace(t)
	ex := func(hm, user string) string {
		return `{"type":"exchange","session_id":"s1","timestamp":"2026-03-02T` + hm + `:00Z","user":"` + user + `","ai":"ok"}` + "\n"
	}
	w.shellAppend("agent.jsonl", ex("10:00", "why does the build fail?")+
		`{"type":"context_reset","session_id":"s1","reason":"window full"}`+"\n"+
		ex("10:30", "now wire the cache")+ex("10:40", "and its tests"))
	old := time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(w.logs, "agent.jsonl"), old, old); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	out, _, _ := w.cli("resume", "--session", "s1", "--json")
	var p struct {
		Exchanges []struct{ User string } `json:"exchanges"`
		InContext int                     `json:"in_context"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err, out)
	}
	if len(p.Exchanges) != 1 || p.Exchanges[0].User != "why does the build fail?" || p.InContext != 2 {
		t.Errorf("resume: %+v; want the exchange before the reset, the 2 after it in context", p)
	}
	out, _, _ = w.cli("sessions", "--json")
	if !regexp.MustCompile(`"last": *"2026-03-02T10:40:00Z"`).MatchString(out) {
		t.Errorf("the session ends with its last exchange, not at the backfill: %s", out)
	}
}

// TestDatedAheadCLI (item 9): a line stamped 9 hours ahead (local time
// written with "Z") is flagged by status and doctor, and `resume
// --latest` takes the session written to last. Before: doctor said "no
// event is dated in the future" (it warned beyond a day only) and the
// stamped-ahead session stayed the latest.
func TestDatedAheadCLI(t *testing.T) {
	w := newWorkspace(t)
	d := w.startDaemon()
	eventually(t, 20*time.Second, "the daemon answering", func() bool { return w.status().Daemon.Running })
	ahead := time.Now().UTC().Add(9 * time.Hour).Format(time.RFC3339)
	w.shellAppend("zulu.jsonl", `{"type":"exchange","session_id":"zulu","timestamp":"`+ahead+`","user":"local time written as Z","ai":"ok"}`+"\n")
	eventually(t, 20*time.Second, "the line indexed", func() bool { return w.status().Exchanges == 1 })
	if _, errs, code := w.cli("log", "--session", "honest", "--user", "written after it", "--ai", "yes"); code != 0 {
		t.Fatalf("log: %s", errs)
	}
	eventually(t, 20*time.Second, "the log indexed", func() bool { return w.status().Exchanges == 2 })
	out, _, _ := w.cli("resume", "--latest", "--json")
	if !strings.Contains(out, `"session_id": "honest"`) && !strings.Contains(out, `"session_id":"honest"`) {
		t.Errorf("resume --latest: want the session written to last, honest:\n%s", out)
	}
	out, _, _ = w.cli("status")
	if !regexp.MustCompile(`timestamps ahead of their reading\s+1\b`).MatchString(out) {
		t.Errorf("status does not flag the event dated ahead:\n%s", out)
	}
	d.stop(t)
	out, _, _ = w.cli("doctor")
	if !regexp.MustCompile(`(?s)event times.*1 event is dated after the moment it was read, up to 9h0m0s ahead.*sessions zulu \(1\)`).MatchString(out) {
		t.Errorf("doctor does not flag the event dated ahead:\n%s", out)
	}
}

// TestHookClearAtLeastStartup (item 10): the SessionStart hook's /clear
// links the previous transcript's session to the new one; when the index
// holds nothing of that chain, it prints what a fresh start prints.
// Before: an empty pack (nothing printed) where startup printed the
// latest session.
func TestHookClearAtLeastStartup(t *testing.T) {
	binDir := filepath.Dir(binPath)
	w := newWorkspace(t)
	for _, x := range [][2]string{{"pick the queue for the billing jobs", "Decision: SQS FIFO with dedup ids"}, {"retry policy?", "3 retries, then the dead-letter queue"}} {
		if _, errs, code := w.cli("log", "--session", "mcp-1", "--user", x[0], "--ai", x[1]); code != 0 {
			t.Fatalf("log: %s", errs)
		}
	}
	projects := filepath.Join(t.TempDir(), "projects", "-w")
	os.MkdirAll(projects, 0o700)
	prev, cur := "aaaaaaaa-1111-2222-3333-444444444444", "bbbbbbbb-1111-2222-3333-444444444444"
	for _, id := range []string{prev, cur} {
		os.WriteFile(filepath.Join(projects, id+".jsonl"), []byte(`{"type":"user","sessionId":"`+id+`","uuid":"u","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"hi"}}`+"\n"), 0o600)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(projects, prev+".jsonl"), past, past)
	w.startDaemon()
	eventually(t, 20*time.Second, "the daemon indexing", func() bool { return w.status().Exchanges == 2 })
	input := func(source string) string {
		return `{"session_id":"` + cur + `","transcript_path":"` + filepath.Join(projects, cur+".jsonl") + `","cwd":"` + w.root + `","hook_event_name":"SessionStart","source":"` + source + `"}`
	}
	startup := runHookWith(t, w.root, binDir, input("startup"), "CONTINUITY_HOOK_TIMEOUT=10")
	startup.failOpen(t, "startup")
	clear := runHookWith(t, w.root, binDir, input("clear"), "CONTINUITY_HOOK_TIMEOUT=10")
	clear.failOpen(t, "clear")
	eventually(t, 20*time.Second, "the link indexed", func() bool { return w.status().Events >= 3 })
	again := runHookWith(t, w.root, binDir, input("clear"), "CONTINUITY_HOOK_TIMEOUT=10")
	again.failOpen(t, "clear, the link indexed")
	for _, r := range []hookRun{startup, clear, again} {
		if !strings.Contains(r.stdout, "Decision: SQS FIFO with dedup ids") || !strings.Contains(r.stdout, "3 retries") {
			t.Errorf("a pack without the latest session's exchanges:\n%s", r.stdout)
		}
	}
	if len(again.stdout) < len(startup.stdout) {
		t.Errorf("clear printed %d bytes, startup %d", len(again.stdout), len(startup.stdout))
	}
}
