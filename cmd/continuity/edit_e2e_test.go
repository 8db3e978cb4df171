package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// projectLog is a 12-line log without ids and without timestamps, as
// `echo >>` writes it: 11 exchanges of the file's session, then a reset.
func projectLog() string {
	var b strings.Builder
	for i := 1; i <= 11; i++ {
		user := fmt.Sprintf("question %d about the login flow", i)
		if i == 3 {
			user = "Sessions or JWT? cookiejar"
		}
		fmt.Fprintf(&b, `{"type":"exchange","user":%q,"ai":"answer %d"}`+"\n", user, i)
	}
	b.WriteString(`{"type":"context_reset","reason":"window full"}` + "\n")
	return b.String()
}

// searchTexts is the user texts of every result of a search in mode
// (bm25 or vector), whatever its score.
func (w *workspace) searchTexts(mode, query string) []string {
	w.t.Helper()
	out, errs, code := w.cli("search", "--json", "--mode", mode, "--min-score", "0", "--limit", "50", query)
	if code != 0 {
		w.t.Fatalf("search: exit %d: %s", code, errs)
	}
	var r struct {
		Results []struct {
			User string `json:"user"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		w.t.Fatalf("search --json: %v\n%s", err, out)
	}
	var texts []string
	for _, h := range r.Results {
		texts = append(texts, h.User)
	}
	return texts
}

// sh runs a shell command in the logs folder.
func (w *workspace) sh(script string) {
	w.t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = w.logs
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("sh %q: %v\n%s", script, err, out)
	}
}

// waitEdited waits until status counts edits edits of the logs, and the
// index holds exchanges exchanges and resets resets, each with its vector
// and nothing else, and the full-text index is caught up.
func (w *workspace) waitEdited(edits, exchanges, resets int64) engine.StatusReport {
	w.t.Helper()
	var st engine.StatusReport
	eventually(w.t, 60*time.Second, fmt.Sprintf("%d edits, %d exchanges, %d resets, all embedded", edits, exchanges, resets), func() bool {
		st = w.status()
		return st.EditTotals.Edits == edits && st.Exchanges == exchanges && st.EventsByType["context_reset"] == resets &&
			st.EmbedPending == 0 && st.Vectors[st.Embedder] == exchanges && st.FullTextPending == 0 && st.LagBytes == 0
	})
	return st
}

// TestEditInPlace: a log edited in place (sed -i, an editor's save by
// rename, deleting or inserting lines, a truncate-and-rewrite) is the same
// log: the index follows the edit instead of indexing the log twice; the
// old text of a changed line leaves search and the vectors, and status
// says what the edit did. Before, the 12-line log became 24 exchanges and
// 2 resets after `sed -i`.
func TestEditInPlace(t *testing.T) {
	const file = "project.jsonl"
	tests := []struct {
		name                    string
		edit                    string // shell, in the logs folder
		exchanges               int64
		changed, removed, added int64
		gone, found             string // a word only in the old text, one only in the new (or "")
		inode                   bool   // the edit keeps the inode
	}{
		{name: "sed -i", edit: `sed -i 's/Sessions or JWT? cookiejar/Sessions or JWT tokens? biscuitjar/' ` + file,
			exchanges: 11, changed: 1, gone: "cookiejar", found: "biscuitjar"},
		{name: "sed -i on every line", edit: `sed -i 's/about the login flow/about the login page/' ` + file,
			exchanges: 11, changed: 10, gone: "flow", found: ""},
		{name: "editor save by rename", edit: `sed 's/cookiejar/biscuitjar/' ` + file + ` > .project.jsonl.swp && mv .project.jsonl.swp ` + file,
			exchanges: 11, changed: 1, gone: "cookiejar", found: "biscuitjar"},
		{name: "delete a line", edit: `sed -i '3d' ` + file, exchanges: 10, removed: 1, gone: "cookiejar"},
		{name: "insert lines in the middle", edit: `sed -i '6a {"type":"exchange","user":"inserted biscuitjar","ai":"x"}\n{"type":"exchange","user":"inserted two","ai":"y"}' ` + file,
			exchanges: 13, added: 2, found: "biscuitjar"},
		{name: "truncate and rewrite", edit: `sed 's/cookiejar/biscuitjar/' ` + file + ` > ../copy && cat ../copy > ` + file,
			exchanges: 11, changed: 1, gone: "cookiejar", found: "biscuitjar", inode: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			if err := os.WriteFile(filepath.Join(w.logs, file), []byte(projectLog()), 0o600); err != nil {
				t.Fatal(err)
			}
			d := w.startDaemon()
			w.waitEdited(0, 11, 1)
			ino := inode(t, filepath.Join(w.logs, file))
			w.sh(tt.edit)
			if got := inode(t, filepath.Join(w.logs, file)) == ino; got != tt.inode {
				t.Fatalf("the edit kept the inode: %v, want %v", got, tt.inode)
			}
			st := w.waitEdited(1, tt.exchanges, 1)
			e := st.EditTotals
			if e.Changed != tt.changed || e.Removed != tt.removed || e.Added != tt.added {
				t.Errorf("status: %d changed, %d removed, %d added; want %d, %d, %d", e.Changed, e.Removed, e.Added, tt.changed, tt.removed, tt.added)
			}
			if len(st.Edits) != 1 || st.Edits[0].File != file {
				t.Errorf("edits per file: %+v", st.Edits)
			}
			for _, mode := range []string{"bm25", "vector"} {
				if tt.gone != "" {
					for _, text := range w.searchTexts(mode, tt.gone) {
						if strings.Contains(text, tt.gone) {
							t.Errorf("%s search still finds the old text %q", mode, text)
						}
					}
				}
			}
			if tt.found != "" {
				if texts := w.searchTexts("bm25", tt.found); len(texts) != 1 || !strings.Contains(texts[0], tt.found) {
					t.Errorf("bm25 search for the new text %q: %q", tt.found, texts)
				}
			}
			// resume: the edited log's exchanges, each once, where they
			// were (before the reset that ends the log, none of them
			// counted as still in context), the old text gone.
			users := w.resumeUsers("project")
			if int64(len(users.before)) != tt.exchanges || len(users.after) != 0 {
				t.Errorf("resume: %d exchanges before the reset, %d after; want %d, 0: %q", len(users.before), len(users.after), tt.exchanges, users)
			}
			for _, u := range users.before {
				if tt.gone != "" && strings.Contains(u, tt.gone) {
					t.Errorf("resume still shows the old text %q", u)
				}
			}
			if tt.found != "" && !slices.ContainsFunc(users.before, func(u string) bool { return strings.Contains(u, tt.found) }) {
				t.Errorf("resume lacks the new text %q: %q", tt.found, users.before)
			}
			out, _, _ := w.cli("status")
			if !strings.Contains(out, "logs edited in place") {
				t.Errorf("status does not say the log was edited:\n%s", out)
			}
			// Appended after the edit: read once.
			w.shellAppend(file, `{"type":"exchange","user":"after the edit","ai":"z"}`+"\n")
			w.waitEdited(1, tt.exchanges+1, 1)
			if !strings.Contains(d.stderr.String(), "log edited in place") {
				t.Errorf("the daemon did not log the edit:\n%s", d.stderr.String())
			}
		})
	}
}

// TestEditWithIDs: lines with ids follow their ids: a line whose text is
// edited keeps its id and is replaced, lines reordered are kept.
func TestEditWithIDs(t *testing.T) {
	w := newWorkspace(t)
	var b strings.Builder
	for i := 1; i <= 6; i++ {
		b.WriteString(exchangeLine("s1", fmt.Sprintf("ev-%d", i), fmt.Sprintf("message number %d", i), "ok"))
	}
	if err := os.WriteFile(filepath.Join(w.logs, "s1.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	w.startDaemon()
	w.waitEdited(0, 6, 0)
	// Swap lines 1 and 2, and edit the text of the line with id ev-4.
	w.sh(`sed -i -e '1{h;d}' -e '2G' -e 's/message number 4/message number four, corrected/' s1.jsonl`)
	st := w.waitEdited(1, 6, 0)
	if e := st.EditTotals; e.Changed != 1 || e.Removed != 0 || e.Added != 0 || e.Kept != 5 {
		t.Errorf("status: %+v, want 1 changed, 5 kept", e)
	}
	if texts := w.searchTexts("bm25", "corrected"); len(texts) != 1 {
		t.Errorf("the corrected line: %q", texts)
	}
	out, _, _ := w.cli("export", "--session", "s1", "--format", "jsonl")
	if strings.Count(out, `"id":"ev-4"`) != 1 || strings.Contains(out, `"message number 4"`) {
		t.Errorf("export after the edit:\n%s", out)
	}
	if len(w.rejects()) != 0 {
		t.Errorf("rejects: %+v", w.rejects())
	}
}

// TestEditKill9: the daemon killed (kill -9) just before and just after it
// applies an edit: once started again, every line of the edited log is
// indexed once, the edit counted once.
func TestEditKill9(t *testing.T) {
	const file = "project.jsonl"
	for _, when := range []string{"before", "after"} {
		t.Run(when, func(t *testing.T) {
			w := newWorkspace(t)
			if err := os.WriteFile(filepath.Join(w.logs, file), []byte(projectLog()), 0o600); err != nil {
				t.Fatal(err)
			}
			d := w.startDaemon()
			w.waitEdited(0, 11, 1)
			d.stop(t)
			cmd := exec.Command(binPath, "daemon", "--root", w.root, "--log-level", "debug")
			cmd.Env = append(os.Environ(), "CONTINUITY_TEST_EDIT_PAUSE=3s")
			d = w.start(cmd)
			eventually(t, 30*time.Second, "the daemon answers", func() bool { return w.status().Daemon.Running })
			// The first line changes: the new generation starts at 0.
			w.sh(`sed -i -e '1s/question 1/first question, edited/' -e '3s/cookiejar/biscuitjar/' -e '5d' ` + file)
			hook := "test hook: pausing " + when + " applying the edit"
			eventually(t, 30*time.Second, "the daemon pauses "+when+" the edit", func() bool { return strings.Contains(d.stderr.String(), hook) })
			if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-d.done
			w.startDaemon()
			st := w.waitEdited(1, 10, 1)
			if e := st.EditTotals; e.Changed != 2 || e.Removed != 1 || e.Added != 0 {
				t.Errorf("status after the restart: %+v, want 2 changed, 1 removed", e)
			}
			if texts := w.searchTexts("bm25", "cookiejar"); len(texts) != 0 {
				t.Errorf("the old text is still found: %q", texts)
			}
		})
	}
}

// resumedUsers are the user texts of a session's exchanges as resume
// puts them in order, before and after its latest context reset (those
// after count as still in the agent's context).
type resumedUsers struct{ before, after []string }

// resumeUsers reads a session's exchanges from `resume --json`: those
// shown (with --budget large enough for all), and how many are still in
// context.
func (w *workspace) resumeUsers(session string) resumedUsers {
	w.t.Helper()
	out, errs, code := w.cli("resume", "--session", session, "--budget", "20000", "--json")
	if code != 0 {
		w.t.Fatalf("resume: exit %d: %s", code, errs)
	}
	var p struct {
		Exchanges []struct {
			User string `json:"user"`
		} `json:"exchanges"`
		InContext int `json:"in_context"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		w.t.Fatalf("resume --json: %v\n%s", err, out)
	}
	var r resumedUsers
	for _, e := range p.Exchanges {
		r.before = append(r.before, e.User)
	}
	r.after = make([]string, p.InContext)
	return r
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
