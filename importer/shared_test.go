package importer

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/shareddata"
	"github.com/praxis-os/continuity/logformat"
)

// sharedDir is the shared transcripts: $CONTINUITY_SHARED/data/agent-transcripts,
// else shared/data/agent-transcripts beside the repository (../shared from
// its root) or beside one of its parents (a git worktree in a subfolder).
func sharedDir(t testing.TB) string {
	t.Helper()
	return shareddata.Require(t, "agent-transcripts")
}

// stored reads every event the logs folder holds, validated as the
// daemon would.
func stored(t testing.TB, logs string) []logformat.Event {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(logs, "*.jsonl"))
	var out []logformat.Event
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 2<<20)
		for line := 1; sc.Scan(); line++ {
			ev, err := logformat.Parse(sc.Bytes(), filepath.Base(n), time.Now())
			if err != nil {
				t.Errorf("%s:%d: written line is not valid protocol: %v", filepath.Base(n), line, err)
				continue
			}
			out = append(out, ev)
		}
		f.Close()
	}
	return out
}

// nativeCounts counts, independently of the parsers, the human prompts
// and compactions of a native file, by the plain rules of each format.
func nativeCounts(t *testing.T, agent, path string) (prompts, compactions int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch agent {
	case Gemini:
		var chat struct {
			Messages []struct {
				Type    string `json:"type"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(data, &chat) == nil {
			for _, m := range chat.Messages {
				if m.Type == "user" {
					prompts++
				}
			}
		}
		return prompts, 0
	}
	seen := map[string]bool{}
	sawCompacted := false
	for _, line := range strings.Split(string(data), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) != nil {
			continue
		}
		switch agent {
		case ClaudeCode:
			if r["isSidechain"] == true {
				continue
			}
			if r["type"] == "system" && r["subtype"] == "compact_boundary" {
				compactions++
			}
			if r["type"] != "user" || r["isMeta"] == true || r["isCompactSummary"] == true {
				continue
			}
			msg, _ := r["message"].(map[string]any)
			text := ""
			switch c := msg["content"].(type) {
			case string:
				text = c
			case []any:
				for _, b := range c {
					if m, _ := b.(map[string]any); m["type"] == "text" {
						s, _ := m["text"].(string)
						text += s
					}
				}
			}
			text = strings.TrimSpace(reIDE.ReplaceAllString(text, ""))
			if text == "" || strings.HasPrefix(text, "[Request interrupted") || strings.HasPrefix(text, "<local-command-std") ||
				strings.HasPrefix(text, "<task-notification>") || strings.HasPrefix(text, "<bash-std") {
				continue
			}
			ts, _ := r["timestamp"].(string)
			key := ts + "\x00" + text
			if !seen[key] {
				seen[key] = true
				prompts++
			}
		case Codex:
			p, _ := r["payload"].(map[string]any)
			switch {
			case r["type"] == "event_msg" && p["type"] == "user_message":
				prompts++
			case r["type"] == "compacted":
				compactions++
				sawCompacted = true
			case r["type"] == "event_msg" && p["type"] == "context_compacted" && !sawCompacted:
				compactions++
			}
		}
	}
	return prompts, compactions
}

var reIDE = regexp.MustCompile(`(?s)<(ide_[a-z_]+|system-reminder)>.*?</(ide_[a-z_]+|system-reminder)>`)

// TestSharedTranscripts imports every Claude Code, Codex and Gemini file
// of the shared set on its own: no errors, at least one exchange per human
// prompt, one reset per compaction, every written line valid, and a second
// import adds nothing.
func TestSharedTranscripts(t *testing.T) {
	dir := sharedDir(t)
	for _, agent := range []string{ClaudeCode, Codex, Gemini} {
		im0, _ := New(agent, t.TempDir(), Options{})
		files, err := im0.Files([]string{filepath.Join(dir, agent)})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no files found", agent)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			t.Run(rel, func(t *testing.T) {
				logs := t.TempDir()
				im, err := New(agent, logs, Options{})
				if err != nil {
					t.Fatal(err)
				}
				res, err := im.Import(context.Background(), []string{f})
				if err != nil {
					t.Fatal(err)
				}
				if res.Errors != 0 {
					t.Errorf("errors: %v", res.Problems)
				}
				evs := stored(t, logs)
				exchanges, resets := 0, 0
				for _, ev := range evs {
					switch ev.Type {
					case logformat.TypeExchange:
						exchanges++
					case logformat.TypeContextReset:
						resets++
					}
				}
				if exchanges != res.Exchanges || resets != res.Resets {
					t.Errorf("result says %d exchanges, %d resets; the logs hold %d, %d", res.Exchanges, res.Resets, exchanges, resets)
				}
				prompts, compactions := nativeCounts(t, agent, f)
				if filepath.Base(f) == "logs.json" {
					prompts = 0 // prompts only, repeated from the chat recordings
				}
				if exchanges < prompts {
					t.Errorf("%d exchanges for %d human prompts", exchanges, prompts)
				}
				if resets != compactions {
					t.Errorf("%d resets for %d compactions", resets, compactions)
				}
				again, err := New(agent, logs, Options{})
				if err != nil {
					t.Fatal(err)
				}
				res2, err := again.Import(context.Background(), []string{f})
				if err != nil {
					t.Fatal(err)
				}
				if res2.Exchanges+res2.Resets+res2.Links != 0 {
					t.Errorf("second import added %d exchanges, %d resets, %d links", res2.Exchanges, res2.Resets, res2.Links)
				}
				t.Logf("%d prompts, %d compactions -> %d exchanges, %d resets, %d links, %d skipped", prompts, compactions, exchanges, resets, res.Links, res.Skipped)
			})
		}
	}
}

// TestSharedWholeSet imports each agent's whole folder at once (resumed
// copies, sidechains and logs.json meet their originals) and reports the
// figures for the notes.
func TestSharedWholeSet(t *testing.T) {
	dir := sharedDir(t)
	for _, agent := range []string{ClaudeCode, Codex, Gemini} {
		logs := t.TempDir()
		im, _ := New(agent, logs, Options{})
		start := time.Now()
		res, err := im.Import(context.Background(), []string{filepath.Join(dir, agent)})
		el := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if res.Errors != 0 {
			t.Errorf("%s: %v", agent, res.Problems)
		}
		stored(t, logs)
		t.Logf("%s: %d files, %d sessions, %d exchanges, %d resets, %d links, %d skipped; %.1f MB in %v", agent, res.Files, res.Sessions, res.Exchanges, res.Resets, res.Links, res.Skipped, float64(res.Bytes)/1e6, el)
		im2, _ := New(agent, logs, Options{})
		res2, _ := im2.Import(context.Background(), []string{filepath.Join(dir, agent)})
		if res2.Exchanges+res2.Resets+res2.Links != 0 {
			t.Errorf("%s: second import added %+v", agent, res2)
		}
	}
}

// TestGrowingFileExactlyOnce imports real sessions cut at several points,
// then whole: every answer text of the session ends up in exactly one
// exchange, whatever the cuts (a turn that grew gets a continuation with
// only the new part).
func TestGrowingFileExactlyOnce(t *testing.T) {
	dir := sharedDir(t)
	for _, name := range []string{
		"claude-code/codemie-code/-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
		"claude-code/spotter/tool_heavy.jsonl",
		"codex/codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
		"claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
	} {
		agent := strings.SplitN(name, "/", 2)[0]
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		t.Run(name, func(t *testing.T) {
			logs := t.TempDir()
			native := filepath.Join(t.TempDir(), filepath.Base(name))
			for _, cut := range []int{len(lines) / 5, len(lines) / 3, len(lines) / 2, len(lines) * 3 / 4, len(lines)} {
				if err := os.WriteFile(native, []byte(strings.Join(lines[:cut], "")), 0o600); err != nil {
					t.Fatal(err)
				}
				im, _ := New(agent, logs, Options{})
				if _, err := im.Import(context.Background(), []string{native}); err != nil {
					t.Fatal(err)
				}
			}
			evs := stored(t, logs)
			var all strings.Builder
			for _, ev := range evs {
				all.WriteString(ev.AI + "\n\x00\n")
			}
			whole := Parsed{}
			f, _ := os.Open(native)
			if agent == ClaudeCode {
				whole = ParseClaudeCode(f, native)
			} else {
				whole = ParseCodex(f, native)
			}
			f.Close()
			texts := 0
			for _, s := range whole.Sessions {
				for _, it := range s.Items {
					if it.Kind != ItemStep || strings.TrimSpace(it.Text) == "" || len(it.Text) < 40 {
						continue
					}
					texts++
					if n := strings.Count(all.String(), strings.TrimSpace(it.Text)); n != 1 {
						t.Errorf("answer text %q is in %d exchanges, want 1", oneLine(it.Text, 60), n)
					}
				}
			}
			if texts == 0 {
				t.Fatal("no answer texts to check")
			}
		})
	}
}
