package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/internal/shareddata"
	"github.com/praxis-os/continuity/logformat"
)

// sharedDir2 is the second shared set of native transcripts (Cline, Roo
// Code, OpenCode, Copilot CLI, Goose): $CONTINUITY_SHARED/data/
// agent-transcripts-2, else beside the repository.
func sharedDir2(t testing.TB) string {
	t.Helper()
	return shareddata.Require(t, "agent-transcripts-2")
}

// sqlDump loads a SQL dump of the shared set into a new SQLite database
// named name, as the agent would have written it.
func sqlDump(t testing.TB, dump, name string) string {
	t.Helper()
	text, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(text)); err != nil {
		t.Fatalf("%s: %v", dump, err)
	}
	return path
}

// shared2Units lists, per agent, the files of the shared set that each
// hold a native session (a task, a session file, a database loaded from
// its dump), the way the agent stores them.
func shared2Units(t *testing.T) map[string][]string {
	dir := sharedDir2(t)
	out := map[string][]string{}
	for agent, sub := range map[string]string{Cline: "cline", Roo: "roo-code", OpenCode: "opencode", Copilot: "copilot-cli", Goose: "goose"} {
		im, _ := New(agent, t.TempDir(), Options{})
		files, err := im.Files([]string{filepath.Join(dir, sub)})
		if err != nil {
			t.Fatal(err)
		}
		out[agent] = files
	}
	out[OpenCode] = append(out[OpenCode], sqlDump(t, filepath.Join(dir, "opencode/vshulcz__deja-vu/opencode/opencode.sql"), "opencode.db"))
	out[Goose] = append(out[Goose], sqlDump(t, filepath.Join(dir, "goose/vshulcz__deja-vu/goose/sessions/goose.sql"), "sessions.db"))
	return out
}

// TestSharedTranscripts2 imports every session of the second shared set
// on its own: no errors, at least one exchange per human prompt (counted
// by the plain rules of each format, apart from the parsers), one reset
// per compaction or condensation, every written line valid protocol, and
// a second import adds nothing.
func TestSharedTranscripts2(t *testing.T) {
	units := shared2Units(t)
	total := 0
	for _, agent := range []string{Cline, Roo, OpenCode, Copilot, Goose} {
		if len(units[agent]) == 0 {
			t.Fatalf("%s: no files found", agent)
		}
		for _, f := range units[agent] {
			total++
			t.Run(agent+"/"+filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
				logs := t.TempDir()
				res := importOne(t, agent, logs, f, Options{})
				if res.Errors != 0 {
					t.Errorf("errors: %v", res.Problems)
				}
				evs := stored(t, logs)
				perSession := map[string]int{}
				resets := 0
				for _, ev := range evs {
					switch ev.Type {
					case logformat.TypeExchange:
						perSession[ev.SessionID]++
					case logformat.TypeContextReset:
						resets++
					}
				}
				prompts, compactions := nativeCounts2(t, agent, f)
				for sid, n := range prompts {
					if perSession[sid] < n {
						t.Errorf("session %s: %d exchanges for %d human prompts", sid, perSession[sid], n)
					}
				}
				if len(prompts) == 0 {
					t.Errorf("the counter found no prompts: the test would check nothing")
				}
				if resets != compactions {
					t.Errorf("%d resets for %d compactions", resets, compactions)
				}
				res2 := importOne(t, agent, logs, f, Options{})
				if res2.Exchanges+res2.Resets+res2.Links != 0 {
					t.Errorf("second import added %d exchanges, %d resets, %d links", res2.Exchanges, res2.Resets, res2.Links)
				}
				t.Logf("%v prompts, %d compactions -> %v exchanges, %d resets, %d links, %d skipped", prompts, compactions, perSession, resets, res.Links, res.Skipped)
			})
		}
	}
	if total < 10 {
		t.Errorf("only %d sessions found in the shared set", total)
	}
}

// nativeCounts2 counts, per session, the human prompts of a native file
// and its compactions, by the plain rules of each format.
func nativeCounts2(t *testing.T, agent, path string) (map[string]int, int) {
	prompts := map[string]int{}
	compactions := 0
	switch {
	case agent == Cline || agent == Roo:
		return clineCounts(t, path)
	case strings.HasSuffix(path, ".db"):
		return dbCounts(t, agent, path)
	case agent == OpenCode:
		var s ocSession
		readJSON(t, path, &s)
		storage := filepath.Dir(filepath.Dir(filepath.Dir(path)))
		msgs, _ := filepath.Glob(filepath.Join(storage, "message", s.ID, "*.json"))
		for _, m := range msgs {
			var msg map[string]any
			readJSON(t, m, &msg)
			parts, _ := filepath.Glob(filepath.Join(storage, "part", msg["id"].(string), "*.json"))
			typed := false
			for _, p := range parts {
				var part map[string]any
				readJSON(t, p, &part)
				if part["type"] == "compaction" {
					compactions++
				}
				typed = typed || part["type"] == "text" && part["synthetic"] != true && msg["role"] == "user"
			}
			if typed {
				prompts[s.ID]++
			}
		}
	case agent == Copilot:
		data, _ := os.ReadFile(path)
		sid := ""
		for _, l := range strings.Split(string(data), "\n") {
			var ev struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if json.Unmarshal([]byte(l), &ev) != nil {
				continue
			}
			switch ev.Type {
			case "session.start":
				sid, _ = ev.Data["sessionId"].(string)
			case "user.message":
				prompts[sid]++
			case "session.compaction_complete", "session.truncation":
				compactions++
			}
		}
	case agent == Goose:
		data, _ := os.ReadFile(path)
		sid := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, `"role":"user"`) && strings.Contains(l, `"type":"text"`) {
				prompts[sid]++
			}
		}
	}
	return prompts, compactions
}

// clineCounts counts the prompts of a Cline or Roo task: in its
// ui_messages.json the task's first message and every user_feedback, in
// an API history alone the user turns wrapping a <task>, <feedback>,
// <answer> or <user_message>, in a session's messages the user turns
// with text.
func clineCounts(t *testing.T, path string) (map[string]int, int) {
	prompts := map[string]int{}
	compactions := 0
	dir := filepath.Dir(path)
	var msgs []map[string]any
	switch {
	case strings.HasSuffix(path, clineSessionSuffix):
		var f struct {
			Messages []map[string]any `json:"messages"`
		}
		readJSON(t, path, &f)
		var man struct {
			ID string `json:"session_id"`
		}
		readJSON(t, strings.TrimSuffix(path, clineSessionSuffix)+".json", &man)
		for _, m := range f.Messages {
			if m["role"] == "user" && strings.Contains(mustJSON(m["content"]), `"type":"text"`) {
				prompts[man.ID]++
			}
		}
	case filepath.Base(path) == clineUIFile:
		readJSON(t, path, &msgs)
		for i, m := range msgs {
			if i == 0 && (m["say"] == "text" || m["say"] == "task") || m["say"] == "user_feedback" {
				prompts[filepath.Base(dir)]++
			}
			if m["say"] == "condense_context" {
				compactions++
			}
		}
	default:
		readJSON(t, path, &msgs)
		for _, m := range msgs {
			c := mustJSON(m["content"])
			if m["role"] == "user" && (strings.Contains(c, "<task>") || strings.Contains(c, "<feedback>") || strings.Contains(c, "<answer>") || strings.Contains(c, "<user_message>")) {
				prompts[filepath.Base(dir)]++
			}
			if m["isSummary"] == true {
				compactions++
			}
		}
	}
	return prompts, compactions
}

// dbCounts counts the user messages with text of a database.
func dbCounts(t *testing.T, agent, path string) (map[string]int, int) {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT m.session_id, count(*) FROM message m JOIN part p ON p.message_id = m.id WHERE m.data LIKE '%"role":"user"%' AND p.data LIKE '%"type":"text"%' GROUP BY m.session_id`
	if agent == Goose {
		q = `SELECT session_id, count(*) FROM messages WHERE role = 'user' AND content_json LIKE '%"type":"text"%' GROUP BY session_id`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prompts := map[string]int{}
	for rows.Next() {
		var sid string
		var n int
		if err := rows.Scan(&sid, &n); err != nil {
			t.Fatal(err)
		}
		prompts[sid] = n
	}
	return prompts, 0
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func mustJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.String()
}

// TestSharedWholeSet2 imports each agent's folder of the second shared
// set at once and reports the figures for the notes.
func TestSharedWholeSet2(t *testing.T) {
	units := shared2Units(t)
	for _, agent := range []string{Cline, Roo, OpenCode, Copilot, Goose} {
		logs := t.TempDir()
		im, _ := New(agent, logs, Options{})
		res, err := im.Import(context.Background(), units[agent])
		if err != nil {
			t.Fatal(err)
		}
		if res.Errors != 0 {
			t.Errorf("%s: %v", agent, res.Problems)
		}
		stored(t, logs)
		t.Logf("%s: %d files, %d sessions, %d exchanges, %d resets, %d links, %d skipped (%v)", agent, res.Files, res.Sessions, res.Exchanges, res.Resets, res.Links, res.Skipped, res.Skips)
		im2, _ := New(agent, logs, Options{})
		res2, _ := im2.Import(context.Background(), units[agent])
		if res2.Exchanges+res2.Resets+res2.Links != 0 {
			t.Errorf("%s: second import added %+v", agent, res2)
		}
	}
}
