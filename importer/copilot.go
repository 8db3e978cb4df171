package importer

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// GitHub Copilot CLI keeps one event log per session in
// ~/.copilot/session-state/<sessionId>/events.jsonl ($COPILOT_HOME
// replaces ~/.copilot; older builds wrote session-state/<id>.jsonl). Each
// line is an event {type, data, id, timestamp, parentId}: session.start
// {sessionId, context{cwd, gitRoot, ...}}, user.message {content,
// attachments}, assistant.message {content, toolRequests[{name,
// arguments}], parentToolCallId for a subagent's}, assistant.turn_start/
// turn_end, tool.execution_start/complete, session.compaction_complete,
// session.truncation, session.resume, session.shutdown, and more.
//
// Reading rules: user.message is a prompt; assistant.message's content is
// the answer and its toolRequests are summarised (tool outputs and
// reasoning left out); a subagent's messages (parentToolCallId) are left
// out like Claude Code's sidechains; a compaction or a truncation is a
// context reset; assistant.turn_end and session.shutdown end the turn; a
// finished background agent (system.notification agent_completed) opens
// a new exchange of the turn, like Claude Code's task notices.

type copilotEvent struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

type copilotData struct {
	SessionID string `json:"sessionId"`
	Content   string `json:"content"`
	Context   *struct {
		Cwd     string `json:"cwd"`
		GitRoot string `json:"gitRoot"`
	} `json:"context"`
	ToolRequests []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolRequests"`
	ParentToolCall string `json:"parentToolCallId"`
	Success        *bool  `json:"success"` // session.compaction_complete
	Removed        int    `json:"messagesRemovedDuringTruncation"`
	Kind           *struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"kind"`
}

// ParseCopilot reads one Copilot CLI event log; name is used in messages
// and for the session id when no session.start names it.
func ParseCopilot(r io.Reader, name string) Parsed {
	var out Parsed
	s := &Session{Agent: Copilot, Source: name}
	keys := map[string]bool{}
	sidechain := 0
	lines := newRecords(r, name, &out.Problems)
	for lines.Next() {
		n := lines.Line()
		var ev copilotEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: n, Reason: "not a JSON event: " + shortErr(err)})
			continue
		}
		var d copilotData
		if len(ev.Data) > 0 && string(ev.Data) != "null" {
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				// the schema is undocumented and changes: an event that is
				// not read anyway is not a problem when its shape differs
				if copilotRead[ev.Type] {
					out.Problems = append(out.Problems, Problem{File: name, Line: n, Reason: ev.Type + ": " + shortErr(err)})
				}
				continue
			}
		}
		key := ev.ID
		if key == "" || keys[key] {
			key = "L" + itoa(n) // ids missing or repeated: the line is stable in an append-only log
		}
		keys[key] = true
		if d.ParentToolCall != "" {
			sidechain++
			continue
		}
		copilotItem(s, &ev, &d, Item{Key: key, Time: parseTime(ev.Timestamp), Line: n})
	}
	if s.ID == "" {
		s.ID = copilotIDFromName(name)
	}
	if s.Cwd == "" {
		s.Cwd = copilotWorkspaceCwd(name)
	}
	addCopilotSession(&out, s, "no session id (no session.start, and the file name holds none)")
	return out
}

// addCopilotSession adds s to out, or says why it is left out (noID: why
// it has no id).
func addCopilotSession(out *Parsed, s *Session, noID string) {
	switch {
	case !validID(s.ID):
		out.Problems = append(out.Problems, Problem{File: s.Source, Reason: noID})
	case !hasConversation(s):
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, s.Source+": no conversation (no prompt or answer)")
	default:
		out.Sessions = append(out.Sessions, s)
	}
}

// copilotTool summarises a tool request, its arguments an object or an
// object written as a JSON string.
func copilotTool(name string, args json.RawMessage) (string, []string) {
	var str string
	if json.Unmarshal(args, &str) == nil {
		args = json.RawMessage(str)
	}
	return summariseTool(name, args)
}

// copilotRead are the events whose data ParseCopilot reads.
var copilotRead = map[string]bool{"session.start": true, "session.resume": true, "user.message": true, "assistant.message": true,
	"session.truncation": true, "session.compaction_complete": true, "system.notification": true}

// copilotItem reads one event into s.
func copilotItem(s *Session, ev *copilotEvent, d *copilotData, it Item) {
	switch ev.Type {
	case "session.start", "session.resume":
		if s.ID == "" && validID(d.SessionID) {
			s.ID = d.SessionID
		}
		if d.Context != nil && s.Cwd == "" && filepath.IsAbs(d.Context.Cwd) {
			s.Cwd = d.Context.Cwd
		}
	case "user.message":
		if t := strings.TrimSpace(d.Content); t != "" {
			it.Kind, it.Text = ItemPrompt, t
			s.Items = append(s.Items, it)
		}
	case "assistant.message":
		it.Kind, it.Text = ItemStep, strings.TrimSpace(d.Content)
		for _, tr := range d.ToolRequests {
			sum, files := copilotTool(tr.Name, tr.Arguments)
			it.Tools = append(it.Tools, sum)
			it.Files = append(it.Files, files...)
		}
		if it.Text != "" || len(it.Tools) > 0 {
			s.Items = append(s.Items, it)
		}
	case "session.compaction_complete", "session.truncation":
		if d.Success != nil && !*d.Success {
			return // the compaction failed: the context is as it was
		}
		it.Kind, it.Reason = ItemReset, "context compacted"
		if ev.Type == "session.truncation" {
			it.Reason = "context truncated"
			if d.Removed > 0 {
				it.Reason += " (" + itoa(d.Removed) + " messages removed)"
			}
		}
		s.Items = append(s.Items, it)
	case "assistant.turn_end", "session.shutdown":
		it.Kind = ItemEnd
		s.Items = append(s.Items, it)
	case "system.notification":
		if d.Kind != nil && d.Kind.Type == "agent_completed" {
			it.Kind, it.Break = ItemStep, true
			it.Text = "[task notification] " + oneLine(nonEmpty(d.Kind.Description, "background agent finished"), 500)
			s.Items = append(s.Items, it)
		}
	}
}

// copilotIDFromName is the session id of an event log's path:
// <id>/events.jsonl, or <id>.jsonl.
func copilotIDFromName(name string) string {
	b := filepath.Base(name)
	if b == "events.jsonl" {
		b = filepath.Base(filepath.Dir(name))
	} else {
		b = strings.TrimSuffix(b, filepath.Ext(b))
	}
	if validID(b) {
		return b
	}
	return ""
}

// copilotCwd reads the folder a Copilot CLI session ran in from its
// first events.
func copilotCwd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	for i := 0; i < 20; i++ {
		line, tooLong, err := readLine(br, 4<<20)
		if err != nil && len(line) == 0 {
			break
		}
		if tooLong {
			continue
		}
		var ev copilotEvent
		var d copilotData
		if json.Unmarshal(line, &ev) != nil || ev.Type != "session.start" && ev.Type != "session.resume" || json.Unmarshal(ev.Data, &d) != nil || d.Context == nil {
			continue
		}
		return d.Context.Cwd
	}
	return copilotWorkspaceCwd(path)
}

// copilotWorkspaceCwd reads the cwd of the workspace.yaml Copilot CLI
// writes beside a session's events.jsonl ("cwd: /path", quoted or not);
// "" when there is none.
func copilotWorkspaceCwd(eventsPath string) string {
	if filepath.Base(eventsPath) != "events.jsonl" {
		return ""
	}
	b, err := readCapped(filepath.Join(filepath.Dir(eventsPath), "workspace.yaml"), 1<<20)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "cwd:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			if v[0] == '"' {
				_ = json.Unmarshal([]byte(v), &v)
			} else {
				v = v[1 : len(v)-1]
			}
		}
		if filepath.IsAbs(v) {
			return v
		}
		return ""
	}
	return ""
}

// ParseCopilotLegacy reads a session of the first Copilot CLI releases,
// ~/.copilot/history-session-state/<name>.json: one JSON object {sessionId,
// startTime, chatMessages: [{role: user | assistant | tool, content,
// tool_calls: [{function: {name, arguments}}]}], timeline}. Its messages
// carry no time of their own (the session's start time stands in) and it
// names no folder, so only an import given its path reads it.
func ParseCopilotLegacy(data []byte, name string) Parsed {
	var out Parsed
	var f struct {
		SessionID string            `json:"sessionId"`
		StartTime string            `json:"startTime"`
		Messages  []json.RawMessage `json:"chatMessages"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Line: lineOf(data, err), Reason: "not a Copilot CLI session: " + shortErr(err)})
		return out
	}
	sid := f.SessionID
	if !validID(sid) {
		sid = sanitizeID(strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)))
	}
	s := &Session{Agent: Copilot, ID: sid, Source: name, Time: parseTime(f.StartTime)}
	for i, raw := range f.Messages {
		var m struct {
			Role      string `json:"role"`
			Content   any    `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: "message " + itoa(i) + ": " + shortErr(err)})
			continue
		}
		text, _ := m.Content.(string)
		it := Item{Key: "m" + itoa(i), Line: i + 1, Time: s.Time, KeyedTurn: true}
		switch m.Role {
		case "user":
			if t := strings.TrimSpace(text); t != "" {
				it.Kind, it.Text = ItemPrompt, t
				s.Items = append(s.Items, it)
			}
		case "assistant":
			it.Kind, it.Text = ItemStep, strings.TrimSpace(text)
			for _, tc := range m.ToolCalls {
				sum, files := copilotTool(tc.Function.Name, tc.Function.Arguments)
				it.Tools = append(it.Tools, sum)
				it.Files = append(it.Files, files...)
			}
			if it.Text != "" || len(it.Tools) > 0 {
				s.Items = append(s.Items, it)
			}
		}
	}
	addCopilotSession(&out, s, "no usable session id (no sessionId, and the file name holds none)")
	return out
}
