package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// checkRender renders every parsed session: it must not panic, and every
// event it plans must be a valid protocol line (or be reported).
func checkRender(t *testing.T, p Parsed) {
	for _, s := range p.Sessions {
		for _, pl := range render(s, Options{PartBytes: 512}) {
			if _, err := pl.ev.MarshalLine(); err != nil {
				t.Fatalf("session %s: planned event does not encode: %v (%+v)", s.ID, err, pl.ev)
			}
		}
	}
}

func seed(f *testing.F, glob string) {
	dir := os.Getenv("CONTINUITY_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "data", "agent-transcripts", glob))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
}

func FuzzParseClaudeCode(f *testing.F) {
	f.Add([]byte(`{"type":"user","sessionId":"s1","uuid":"u","timestamp":"2026-01-01T00:00:00Z","message":{"content":"hi"}}
{"type":"assistant","sessionId":"s1","uuid":"a","message":{"content":[{"type":"text","text":"yo"},{"type":"tool_use","name":"Edit","input":{"file_path":"/x"}}]}}
{"type":"system","subtype":"compact_boundary","sessionId":"s1","uuid":"c"}
`))
	seed(f, "claude-code/*/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseClaudeCode(bytes.NewReader(data), "f.jsonl"))
	})
}

func FuzzParseCodex(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}"}}
{"timestamp":"2026-01-01T00:00:03Z","type":"compacted","payload":{"message":""}}
`))
	seed(f, "codex/*/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseCodex(bytes.NewReader(data), "rollout.jsonl"))
	})
}

func FuzzParseGemini(f *testing.F) {
	f.Add([]byte(`{"sessionId":"g1","messages":[{"id":"1","type":"user","content":"hi"},{"id":"2","type":"gemini","content":[{"text":"yo"}],"toolCalls":[{"name":"read_file","args":{"file_path":"a"}}]}]}`))
	f.Add([]byte(`[{"sessionId":"g1","messageId":0,"type":"user","message":"hi","timestamp":"2026-01-01T00:00:00Z"}]`))
	f.Add([]byte(`[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]}]`))
	seed(f, "gemini/*/*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseGemini(bytes.NewReader(data), "session-x.json", time.Unix(1700000000, 0)))
	})
}

func FuzzParseAider(f *testing.F) {
	f.Add([]byte("# aider chat started at 2024-08-05 15:10:33\n\n> aider\n#### fix it\n\nfile.py\n```python\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n```\n"))
	seed(f, "aider/*/.aider.chat.history.md")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseAider(bytes.NewReader(data), "h.md", time.Unix(1700000000, 0)))
	})
}

func FuzzParseCursorJSON(f *testing.F) {
	f.Add([]byte(`{"tabs":[{"tabId":"t1","lastSendTime":1731818231743,"bubbles":[{"type":"user","id":"b1","text":"hi"},{"type":"ai","id":"b2","text":"yo"}]}]}`))
	f.Add([]byte(`{"allComposers":[{"composerId":"c1","createdAt":1731784818255,"conversation":[{"type":1,"bubbleId":"b1","text":"hi"},{"type":2,"bubbleId":"b2","text":"yo"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseCursorChatData(data, "chat"))
		checkRender(t, ParseCursorComposers(data, "composers", nil))
	})
}
