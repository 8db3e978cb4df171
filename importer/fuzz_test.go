package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/shareddata"
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
	names, _ := filepath.Glob(filepath.Join(shareddata.Dir("agent-transcripts"), glob))
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

func seed2(f *testing.F, glob string) {
	names, _ := filepath.Glob(filepath.Join(shareddata.Dir("agent-transcripts-2"), glob))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
}

func FuzzParseClineUI(f *testing.F) {
	f.Add([]byte(`[{"ts":1767300000000,"type":"say","say":"task","text":"hi"},{"ts":1767300001000,"type":"ask","ask":"tool","text":"{\"tool\":\"newTask\",\"content\":\"go\"}"},
{"ts":1767300002000,"type":"say","say":"condense_context","contextCondense":{"prevContextTokens":9}},{"ts":1767300003000,"type":"say","say":"text","text":"ok","conversationHistoryDeletedRange":[2,5]},
{"ts":1767300004000,"type":"ask","ask":"new_task","text":"{\"context\":\"c\"}"},{"ts":1767300005000,"type":"say","say":"subtask_result","text":"r"}]`))
	seed2(f, "roo-code/*/*/*/ui_messages.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseClineUI(data, "ui_messages.json", Roo, "t1"))
	})
}

func FuzzParseAnthropicMessages(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":[{"type":"text","text":"<task>\nx\n</task>"}]},{"role":"assistant","content":"<read_file><path>a</path></read_file><attempt_completion><result>done</result></attempt_completion>"},
{"role":"assistant","isSummary":true,"content":"s"},{"role":"user","content":[{"type":"tool_result"},{"type":"text","text":"<feedback>more</feedback>"}]},{"role":"assistant","content":[{"type":"tool_use","name":"new_task","input":{"message":"m"}}]}]`))
	f.Add([]byte(`{"version":2,"messages":[{"role":"user","content":[{"type":"text","text":"<user_message>q</user_message>"}]},{"type":"reasoning","encrypted_content":"x"},
{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c","toolName":"read_file","input":{"path":"a"}}]},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","output":"o"}]}]}`))
	seed2(f, "cline/*/cline/legacy/tasks/*/api_conversation_history.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseAnthropicMessages(data, "api_conversation_history.json", Cline, "t1", time.Unix(1700000000, 0)))
	})
}

func FuzzParseOpenCodeExport(f *testing.F) {
	f.Add([]byte(`{"info":{"id":"ses_1","directory":"/w","parentID":"ses_0"},"messages":[{"info":{"id":"msg_1","role":"user","time":{"created":1700000000000}},"parts":[{"id":"p1","type":"text","text":"hi"},{"id":"p2","type":"compaction","auto":true}]},
{"info":{"id":"msg_2","role":"assistant","finish":"stop","summary":true},"parts":[{"id":"p3","type":"tool","tool":"edit","state":{"input":{"filePath":"/w/a"}}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseOpenCodeExport(data, "export.json"))
	})
}

func FuzzParseCopilot(f *testing.F) {
	f.Add([]byte(`{"type":"session.start","data":{"sessionId":"s1","context":{"cwd":"/w"}},"id":"e1","timestamp":"2026-01-01T00:00:00Z"}
{"type":"user.message","data":{"content":"hi"},"id":"e2","timestamp":"2026-01-01T00:00:01Z"}
{"type":"assistant.message","data":{"content":"yo","toolRequests":[{"name":"bash","arguments":"{\"command\":\"ls\"}"}]},"id":"e3"}
{"type":"session.compaction_complete","data":{},"id":"e4"}
`))
	seed2(f, "copilot-cli/*/copilot/*.jsonl")
	seed2(f, "copilot-cli/*/copilot/*/*/events.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseCopilot(bytes.NewReader(data), "events.jsonl"))
	})
}

func FuzzParseGoose(f *testing.F) {
	f.Add([]byte(`{"working_dir":"/w","description":"d"}
{"id":"m1","role":"user","created":1700000000,"content":[{"type":"text","text":"hi"}]}
{"id":"m2","role":"assistant","created":1700000001,"content":[{"type":"toolRequest","toolCall":{"value":{"name":"shell","arguments":{"command":"ls"}}}},{"type":"conversationCompacted","msg":"x"}]}
`))
	seed2(f, "goose/*/goose/sessions/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseGoose(bytes.NewReader(data), "20250101_1.jsonl"))
	})
}

func FuzzParseCopilotLegacy(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s1","startTime":"2025-10-08T21:10:16.398Z","chatMessages":[{"role":"user","content":"hi"},
{"role":"assistant","content":"ok","tool_calls":[{"function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","content":"out"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRender(t, ParseCopilotLegacy(data, "session_s1.json"))
	})
}
