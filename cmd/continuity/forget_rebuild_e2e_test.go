package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// chainLogs logs a <- b <- c with `continuity log`: b resumes a, c
// resumes b, each with one exchange of its own (b's holds a pasted
// secret-like word).
func chainLogs(t *testing.T, w *workspace) {
	t.Helper()
	for _, args := range [][]string{
		{"log", "--session", "a", "--user", "alpha decision: use postgres for the queue", "--ai", "agreed, postgres"},
		{"log", "--session", "b", "--user", "beta pasted hunter2pasted by mistake", "--ai", "noted"},
		{"log", "--type", "session_resume", "--previous", "a", "--new", "b"},
		{"log", "--session", "c", "--user", "gamma goes on with the queue", "--ai", "fine"},
		{"log", "--type", "session_resume", "--previous", "b", "--new", "c"},
	} {
		if _, errs, code := w.cli(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
}

// resumeChain is the chain `resume --session s --json` reaches, and
// whether its text holds want.
func (w *workspace) resumeChain(s string) ([]string, string) {
	w.t.Helper()
	out, errs, code := w.cli("resume", "--session", s, "--include-current", "--json")
	if code != 0 {
		w.t.Fatalf("resume: exit %d: %s", code, errs)
	}
	var p struct {
		Chain []string `json:"chain"`
		Text  string   `json:"text"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		w.t.Fatalf("resume --json: %v\n%s", err, out)
	}
	return p.Chain, p.Text
}

// TestForgetMiddleOfChain: forgetting b of a <- b <- c leaves c resuming
// a (through the daemon, and after a rebuild of the index); b's text is
// gone. Before, c resumed no other session.
func TestForgetMiddleOfChain(t *testing.T) {
	w := newWorkspace(t)
	chainLogs(t, w)
	w.startDaemon()
	w.waitExchanges(3, 30*time.Second)
	if chain, _ := w.resumeChain("c"); strings.Join(chain, ",") != "c,b,a" {
		t.Fatalf("chain of c before the forget: %v", chain)
	}
	out, errs, code := w.cli("forget", "--session", "b")
	if code != 0 {
		t.Fatalf("forget: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "forgot 2 events of b") {
		t.Errorf("forget: %s", out)
	}
	check := func(when string) {
		t.Helper()
		chain, text := w.resumeChain("c")
		if strings.Join(chain, ",") != "c,a" || !strings.Contains(text, "alpha decision") || strings.Contains(text, "hunter2pasted") {
			t.Errorf("%s: resume c reaches %v:\n%s", when, chain, text)
		}
		sessions, _, _ := w.cli("sessions", "--json")
		if strings.Contains(sessions, `"b"`) {
			t.Errorf("%s: sessions still name b: %s", when, sessions)
		}
		if texts := w.searchTexts("bm25", "hunter2pasted"); len(texts) != 0 {
			t.Errorf("%s: b's text is found: %q", when, texts)
		}
	}
	check("after the forget")
	// forget --chain of c now reaches a through b.
	out, _, _ = w.cli("forget", "--session", "c", "--chain", "--dry-run")
	if !strings.Contains(out, "of c, a") {
		t.Errorf("forget --chain --dry-run: %s", out)
	}
	// The cache deleted under the daemon: it starts again on a new index.
	if err := os.RemoveAll(filepath.Join(w.root, ".praxis-os", ".cache")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the daemon rebuilt the index", func() bool {
		_, _, code := w.cli("status")
		return code == 0 && w.exchanges() == 2
	})
	check("after a rebuild")
}

// TestForgetSurvivesRebuild: a forgotten session stays gone when the
// cache is deleted and the index rebuilt from the logs (ingest), and when
// its agent's transcript is imported again, even after its log was
// purged; lines of it logged after the forget are indexed. forget says
// where it recorded the forget and what it read back. Before, deleting
// the cache brought back every forgotten line the logs still held.
func TestForgetSurvivesRebuild(t *testing.T) {
	w := newWorkspace(t)
	chainLogs(t, w)
	dir := t.TempDir()
	sid := "0c0c0c0c-1111-4222-8333-555555555555"
	transcript := ccRec(t, ccPrompt(sid, "u1", "2026-03-01T10:00:00Z", "my token is swordfishpasted, deploy please")) +
		ccRec(t, ccAnswer(sid, "a1", "2026-03-01T10:00:01Z", "deployed"))
	if err := os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.cli("import", "--from", "claude-code", dir); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	if w.exchanges() != 4 {
		t.Fatalf("%d exchanges before the forget, want 4", w.exchanges())
	}
	// This machine's tombstone file (the binary's machine is the test's).
	tombs := logformat.TombstoneFileOf(logformat.MachineName())
	out, errs, code := w.cli("forget", "--session", "b", "--json")
	if code != 0 {
		t.Fatalf("forget b: %s", errs)
	}
	var resp struct {
		Events   int64  `json:"events"`
		Recorded string `json:"recorded"`
		Left     int64  `json:"left"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || resp.Events != 2 || resp.Left != 0 || resp.Recorded != ".praxis-os/.conversations/"+tombs {
		t.Errorf("forget --json: %v %s", err, out)
	}
	out, _, _ = w.cli("forget", "--session", sid, "--purge-logs", "--yes")
	if !strings.Contains(out, "checked: .praxis-os/.conversations/"+tombs+" records the forget (read back), and the index holds 0 events") || !strings.Contains(out, "deleted log") {
		t.Errorf("forget the imported session: %s", out)
	}
	fi, err := os.Stat(filepath.Join(w.logs, tombs))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the tombstones: %v %v", fi, err)
	}
	gone := func(when string) {
		t.Helper()
		for _, word := range []string{"hunter2pasted", "swordfishpasted"} {
			if texts := w.searchTexts("bm25", word); len(texts) != 0 {
				t.Errorf("%s: %s found again: %q", when, word, texts)
			}
		}
		sessions, _, _ := w.cli("sessions", "--json")
		if strings.Contains(sessions, `"b"`) || strings.Contains(sessions, sid) {
			t.Errorf("%s: a forgotten session is back: %s", when, sessions)
		}
		if chain, _ := w.resumeChain("c"); strings.Join(chain, ",") != "c,a" {
			t.Errorf("%s: chain of c: %v", when, chain)
		}
	}
	gone("after the forget")

	// The cache deleted, the index rebuilt from the logs.
	if err := os.RemoveAll(filepath.Join(w.root, ".praxis-os", ".cache")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("rebuild: %s", errs)
	}
	gone("after a rebuild")
	if got := w.exchanges(); got != 2 {
		t.Errorf("%d exchanges after the rebuild, want 2 (a, c)", got)
	}
	if st := w.status(); st.Rejects == 0 {
		t.Errorf("b's lines read again are not listed as forgotten: %+v", st)
	}

	// The agent's transcript imported again: its forgotten events are
	// not written back into the logs.
	out, errs, code = w.cli("import", "--from", "claude-code", dir)
	if code != 0 || !strings.Contains(out, "forgotten") {
		t.Errorf("import again: exit %d: %s%s", code, out, errs)
	}
	logs, _ := os.ReadDir(w.logs)
	for _, f := range logs {
		data, _ := os.ReadFile(filepath.Join(w.logs, f.Name()))
		if strings.Contains(string(data), "swordfishpasted") {
			t.Errorf("the import wrote the forgotten session back into %s", f.Name())
		}
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	gone("after an import")

	// New work in b after the forget is indexed, and survives a rebuild.
	if _, errs, code := w.cli("log", "--session", "b", "--user", "beta later work", "--ai", "ok"); code != 0 {
		t.Fatalf("log: %s", errs)
	}
	if err := os.RemoveAll(filepath.Join(w.root, ".praxis-os", ".cache")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("rebuild: %s", errs)
	}
	if texts := w.searchTexts("bm25", "beta later work"); len(texts) != 1 {
		t.Errorf("b's work after the forget: %q", texts)
	}
	if texts := w.searchTexts("bm25", "hunter2pasted"); len(texts) != 0 {
		t.Errorf("b's forgotten text is back: %q", texts)
	}
}
