package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/index"
)

// TestAgentGone (issue 22, item 7): a session whose agent is gone —
// imported from a transcript, continued in another session, or ended
// before another session's context reset — resumes with its own
// exchanges; a session whose agent may be the one asking keeps the
// boundary. Before: "its own N exchanges are still in context", nothing
// shown, for an imported, finished session.
func TestAgentGone(t *testing.T) {
	ex := func(session, ts, user, meta string) string {
		if meta != "" {
			meta = `,"metadata":` + meta
		}
		return `{"type":"exchange","timestamp":"` + ts + `","session_id":"` + session + `","user":"` + user + `","ai":"done"` + meta + `}`
	}
	log := strings.Join([]string{
		ex("imported", "2026-03-01T10:00:00Z", "wire the importer", `{"source":"claude-code","native":"abc.jsonl:3"}`),
		ex("imported", "2026-03-01T10:05:00Z", "add its tests", `{"source":"claude-code","native":"abc.jsonl:9"}`),
		ex("tagged", "2026-03-02T10:00:00Z", "a live agent's own tag", `{"source":"cursor"}`),
		ex("continued", "2026-03-03T10:00:00Z", "first part of the work", ""),
		`{"type":"session_resume","timestamp":"2026-03-03T11:00:00Z","previous_session":"continued","new_session":"next"}`,
		ex("next", "2026-03-03T11:01:00Z", "second part", ""),
		ex("before-reset", "2026-03-04T09:00:00Z", "an older session", ""),
		`{"type":"context_reset","timestamp":"2026-03-04T10:00:00Z","session_id":"other","reason":"compacted"}`,
		ex("other", "2026-03-04T10:01:00Z", "after the reset", ""),
		ex("live", "2026-03-05T10:00:00Z", "the newest session", ""),
	}, "\n") + "\n"
	src := &IndexSource{DB: indexLog(t, log)}
	for _, tc := range []struct {
		session string
		gone    string // in the reason; "" for a session whose agent may be live
		shown   int
	}{
		{"imported", "imported from claude-code's transcript", 2},
		{"continued", "continued in session next", 1},
		{"before-reset", "a context reset of session other came after", 1},
		{"tagged", "a context reset of session other came after", 1},
		{"live", "", 0},
		{"other", "", 0},
	} {
		t.Run(tc.session, func(t *testing.T) {
			p := build(t, src, Options{Session: tc.session})
			if tc.gone == "" {
				if p.AgentGone != "" || len(p.Exchanges) != 0 || p.InContext == 0 {
					t.Errorf("agent gone %q, %d shown, %d in context; want its exchanges in context:\n%s", p.AgentGone, len(p.Exchanges), p.InContext, p.Text)
				}
				return
			}
			if !strings.Contains(p.AgentGone, tc.gone) || len(p.Exchanges) != tc.shown || p.InContext != 0 ||
				!strings.Contains(p.Text, "own exchanges are included: "+p.AgentGone) {
				t.Errorf("agent gone %q (want %q), %d shown (want %d), %d in context:\n%s", p.AgentGone, tc.gone, len(p.Exchanges), tc.shown, p.InContext, p.Text)
			}
			// Asked for, the boundary is the caller's to set.
			if q := build(t, src, Options{Session: tc.session, IncludeCurrent: true}); q.AgentGone != "" || len(q.Exchanges) != tc.shown {
				t.Errorf("with IncludeCurrent: agent gone %q, %d shown", q.AgentGone, len(q.Exchanges))
			}
		})
	}
}

// TestLatestWithNothing (issue 22, item 10): --latest on a new session
// linked to a session the index does not hold (what the SessionStart
// hook's /clear records) packs the latest session that has exchanges, as
// a fresh start would; linked to a known one, it packs the chain.
func TestLatestWithNothing(t *testing.T) {
	for _, tc := range []struct {
		name, prev string
		session    string // of the pack
		instead    string
	}{
		{"previous unknown", "unknown", "mcp-1", "new"},
		{"previous known", "mcp-1", "new", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := `{"type":"exchange","timestamp":"2026-03-01T10:00:00Z","session_id":"mcp-1","user":"pick the queue","ai":"SQS FIFO"}` + "\n" +
				`{"type":"session_resume","timestamp":"2026-03-01T11:00:00Z","previous_session":"` + tc.prev + `","new_session":"new"}` + "\n"
			p := build(t, &IndexSource{DB: indexLog(t, log)}, Options{Latest: true, IncludeCurrent: true})
			if p.SessionID != tc.session || p.Instead != tc.instead || len(p.Exchanges) != 1 {
				t.Errorf("pack of %s (instead of %q), %d exchanges:\n%s", p.SessionID, p.Instead, len(p.Exchanges), p.Text)
			}
		})
	}
}

// indexLog indexes log, the lines of one log file, in a new workspace
// through the real stack (indexDir); the index is closed at the end of
// the test.
func indexLog(t *testing.T, log string) *index.DB {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".praxis-os", ".conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log.jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := indexDir(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
