package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestForgetThenLogAgain: forget removes what exists; a session that goes
// on after it (lines timestamped after the forget) is indexed again, while
// its old lines, read again, stay out and say so in `rejects` and
// `status`. Nothing vanishes without a trace.
func TestForgetThenLogAgain(t *testing.T) {
	ws := newWorkspace(t)
	ws.appendRaw("session-drop.jsonl", []byte(exchangeLine("drop", "d1", "secret plan zanzibar", "a")))
	ws.appendRaw("session-keep.jsonl", []byte(exchangeLine("keep", "k1", "kept question", "b")))
	d := ws.startDaemon()
	defer d.stop(t)
	eventually(t, 10*time.Second, "indexed", func() bool { return ws.status().Exchanges == 2 })
	if out, errs, code := ws.cli("forget", "--session", "drop"); code != 0 {
		t.Fatalf("forget: %d %s %s", code, out, errs)
	}
	time.Sleep(10 * time.Millisecond) // the next line's timestamp is after the forget

	// The agent goes on in the same session.
	if out, errs, code := ws.cli("log", "--session", "drop", "--user", "new work on quokka", "--ai", "done"); code != 0 {
		t.Fatalf("log: %d %s %s", code, out, errs)
	}
	eventually(t, 10*time.Second, "the line logged after the forget is indexed", func() bool {
		out, _, _ := ws.cli("search", "--json", "quokka")
		return strings.Contains(out, "new work on quokka")
	})

	// An old line of the session, appended again (a replay, a restore):
	// not indexed, but listed with the reason, and counted. (log wrote
	// its line to session-drop~m1.jsonl: this machine's file.)
	ws.appendRaw("session-drop.jsonl", []byte(exchangeLine("drop", "d0", "old secret zanzibar again", "c")))
	eventually(t, 10*time.Second, "the replayed old line is listed in rejects", func() bool {
		for _, r := range ws.rejects() {
			if r.File == "session-drop.jsonl" && r.Line == 2 && strings.Contains(r.Reason, "forgotten at") {
				if strings.Contains(r.Excerpt, "zanzibar") {
					t.Errorf("the reject of a forgotten line keeps its text: %q", r.Excerpt)
				}
				return true
			}
		}
		return false
	})
	if out, _, _ := ws.cli("search", "--json", "zanzibar"); strings.Contains(out, "secret zanzibar") || strings.Contains(out, "plan zanzibar") {
		t.Errorf("an old line of the forgotten session is searchable: %s", out)
	}
	out, _, _ := ws.cli("status")
	if !strings.Contains(out, "lines of forgotten sessions not indexed") {
		t.Errorf("status does not count the lines of forgotten sessions:\n%s", out)
	}
	if st := ws.status(); st.Exchanges != 2 {
		t.Errorf("%d exchanges, want 2 (keep's and the new one of drop)", st.Exchanges)
	}
}

// TestForgetPurgeConfirm: --purge-logs deletes files, so it asks first: a
// --dry-run changes nothing and says what would go; without --yes and
// without a terminal it refuses; with --yes it proceeds.
func TestForgetPurgeConfirm(t *testing.T) {
	ws := newWorkspace(t)
	ws.appendRaw("session-a.jsonl", []byte(exchangeLine("a", "a1", "first", "x")))
	ws.appendRaw("session-b.jsonl", []byte(exchangeLine("b", "b1", "second", "y")))
	resume, _ := json.Marshal(map[string]string{"type": "session_resume", "previous_session": "a", "new_session": "b", "timestamp": "2026-11-01T11:00:00Z"})
	ws.appendRaw("session-b.jsonl", append(resume, '\n'))
	ws.appendRaw("mixed.jsonl", []byte(exchangeLine("a", "a2", "mixed a", "x")+exchangeLine("other", "o1", "other", "z")))
	if _, errs, code := ws.cli("ingest", "--no-embed"); code != 0 {
		t.Fatal(errs)
	}
	logs := func() []string {
		m, _ := filepath.Glob(filepath.Join(ws.logs, "*.jsonl"))
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		return m
	}
	before := logs()

	out, errs, code := ws.cli("forget", "--session", "b", "--chain", "--purge-logs", "--dry-run")
	if code != 0 || !strings.Contains(out, "session-a.jsonl") || !strings.Contains(out, "session-b.jsonl") ||
		!strings.Contains(out, "mixed.jsonl") || !strings.Contains(out, "dry run") {
		t.Fatalf("--dry-run: exit %d\n%s%s", code, out, errs)
	}
	if st := ws.status(); st.Exchanges != 4 || len(logs()) != len(before) {
		t.Fatalf("--dry-run changed something: %d exchanges, logs %v", st.Exchanges, logs())
	}

	// Not a terminal, no --yes: refused, nothing done.
	cmd := exec.Command(binPath, "--root", ws.root, "forget", "--session", "b", "--chain", "--purge-logs")
	cmd.Stdin = strings.NewReader("y\n")
	var eb bytes.Buffer
	cmd.Stderr = &eb
	if err := cmd.Run(); err == nil || !strings.Contains(eb.String(), "--yes") {
		t.Fatalf("--purge-logs without --yes on a pipe: %v, %s", err, eb.String())
	}
	if st := ws.status(); st.Exchanges != 4 || len(logs()) != len(before) {
		t.Fatalf("refused forget changed something: %d exchanges, logs %v", st.Exchanges, logs())
	}

	out, errs, code = ws.cli("forget", "--session", "b", "--chain", "--purge-logs", "--yes")
	if code != 0 {
		t.Fatalf("--yes: exit %d %s %s", code, out, errs)
	}
	if got := strings.Join(logs(), " "); got != "mixed.jsonl" {
		t.Errorf("logs left: %s, want mixed.jsonl only", got)
	}
	if _, err := os.Stat(filepath.Join(ws.logs, "mixed.jsonl")); err != nil {
		t.Error(err)
	}
	if st := ws.status(); st.Exchanges != 1 {
		t.Errorf("%d exchanges left, want 1 (other's)", st.Exchanges)
	}
}

// TestForgetPurgePrompt: on a terminal, --purge-logs lists the files and
// asks; anything but y/yes leaves everything as it was.
func TestForgetPurgePrompt(t *testing.T) {
	old := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { stdinIsTerminal = old })
	root := t.TempDir()
	if _, errs, code := runCLI(t, "", "--root", root, "log", "--session", "p", "--user", "to be purged"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := runCLI(t, "", "--root", root, "ingest", "--no-embed"); code != 0 {
		t.Fatal(errs)
	}
	log := filepath.Join(root, ".praxis-os", ".conversations", "session-p~m1.jsonl")

	out, errs, code := runCLI(t, "n\n", "--root", root, "forget", "--session", "p", "--purge-logs")
	if code != 1 || !strings.Contains(errs, "session-p~m1.jsonl") || !strings.Contains(errs, "[y/N]") || !strings.Contains(errs, "nothing changed") {
		t.Fatalf("answer n: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(log); err != nil {
		t.Fatalf("log deleted without confirmation: %v", err)
	}
	out, errs, code = runCLI(t, "y\n", "--root", root, "forget", "--session", "p", "--purge-logs")
	if code != 0 || !strings.Contains(out, "deleted log session-p~m1.jsonl") {
		t.Fatalf("answer y: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("log kept after confirmation")
	}
}
