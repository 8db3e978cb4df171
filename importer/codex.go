package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// Codex CLI (and Codex Desktop) write one "rollout" per session in
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session-id>.jsonl. Each line
// is {"timestamp","type","payload"}: session_meta (id, cwd,
// forked_from_id), response_item (the model's input and output items:
// message, function_call, custom_tool_call, web_search_call, reasoning,
// and their outputs), event_msg (user_message, agent_message,
// task_complete, context_compacted, token_count, ...), turn_context,
// compacted (a compaction with its replacement history). Rollouts from
// before the {type,payload} envelope hold the response items bare after a
// first {id,timestamp,instructions} line; they are read too.
//
// Reading rules: the human prompts are the event_msg user_message records
// (the response_item user messages also carry AGENTS.md and environment
// context, injected by Codex); in a rollout with no user_message event,
// user messages that are not injected context are the prompts. The answer
// is the assistant output_text messages (agent_message events when the
// rollout has no assistant message items). Tool calls are summarised;
// reasoning, outputs and images are left out. compacted (or
// context_compacted alone) is a context reset; its replacement history is
// a copy and is skipped. forked_from_id is a session_resume link.

type codexLine struct {
	Timestamp string        `json:"timestamp"`
	Type      string        `json:"type"`
	Payload   *codexPayload `json:"payload"` // decoded with the line: one pass
	// legacy first line
	ID string `json:"id"`
}

type codexPayload struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Cwd       string          `json:"cwd"`
	Forked    string          `json:"forked_from_id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Message   string          `json:"message"`
	Images    []any           `json:"images"`
	Action    json.RawMessage `json:"action"`
}

var reInjected = regexp.MustCompile(`^\s*(<environment_context>|<user_instructions>|<permissions|<INSTRUCTIONS>|# AGENTS\.md|<user_shell_command>|<turn_aborted>)`)

// CodexMeta is the session_meta of a rollout: what the follower needs to
// decide whether a rollout belongs to a workspace.
type CodexMeta struct {
	ID  string
	Cwd string
}

// ReadCodexMeta reads the session_meta of a rollout (its first records).
func ReadCodexMeta(r io.Reader) (CodexMeta, bool) {
	br := bufio.NewReaderSize(r, 1<<16)
	for i := 0; i < 5; i++ {
		line, tooLong, err := readLine(br, maxNativeLine)
		if err != nil && len(line) == 0 {
			return CodexMeta{}, false
		}
		if tooLong {
			continue
		}
		var l codexLine
		if json.Unmarshal(bytes.TrimSpace(line), &l) != nil {
			continue
		}
		if l.Type == "session_meta" && l.Payload != nil {
			return CodexMeta{ID: l.Payload.ID, Cwd: l.Payload.Cwd}, true
		}
	}
	return CodexMeta{}, false
}

// ParseCodex reads one Codex rollout.
func ParseCodex(r io.Reader, name string) Parsed {
	var out Parsed
	type rec struct {
		line int
		ts   string
		typ  string
		p    codexPayload
	}
	var recs []rec
	lines := newRecords(r, name, &out.Problems)
	sid := ""
	var previous []string
	haveUserEvents, haveAssistantItems := false, false
	for lines.Next() {
		lineNo, t := lines.Line(), lines.Bytes()

		var l codexLine
		if err := json.Unmarshal(t, &l); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "not a JSON record: " + shortErr(err)})
			continue
		}
		var p codexPayload
		switch {
		case l.Payload != nil:
			p = *l.Payload
		case l.Type == "" && l.ID != "":
			// legacy first line: {id, timestamp, instructions}
			if sid == "" && validID(l.ID) {
				sid = l.ID
			}
			continue
		default:
			// legacy bare response item
			if err := json.Unmarshal(t, &p); err != nil {
				out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "record: " + shortErr(err)})
				continue
			}
			l.Type = "response_item"
		}
		switch {
		case l.Type == "session_meta":
			if sid == "" && validID(p.ID) {
				sid = p.ID
			} else if p.ID != "" && p.ID != sid && validID(p.ID) {
				previous = append(previous, p.ID)
			}
			if p.Forked != "" && validID(p.Forked) {
				previous = append(previous, p.Forked)
			}
			continue
		case l.Type == "event_msg" && p.Type == "user_message":
			haveUserEvents = true
		case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
			haveAssistantItems = true
		}
		recs = append(recs, rec{line: lineNo, ts: l.Timestamp, typ: l.Type, p: p})
	}
	if sid == "" {
		sid = codexIDFromName(name)
	}
	if sid == "" {
		if len(recs) > 0 {
			out.Problems = append(out.Problems, Problem{File: name, Reason: "no session id (no session_meta, and the file name holds none)"})
		}
		return out
	}
	s := &Session{Agent: Codex, ID: sid, Source: name, Previous: previous}
	for _, r := range recs {
		ts := parseTime(r.ts)
		key := "L" + itoa(r.line)
		p := r.p
		switch r.typ {
		case "event_msg":
			switch p.Type {
			case "user_message":
				text := strings.TrimSpace(p.Message)
				if n := len(p.Images); n > 0 {
					text = joinText(text, "["+itoa(n)+" image(s)]")
				}
				if text == "" {
					continue
				}
				s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: key, Time: ts, Line: r.line, Text: text})
			case "agent_message":
				if !haveAssistantItems && strings.TrimSpace(p.Message) != "" {
					s.Items = append(s.Items, Item{Kind: ItemStep, Key: key, Time: ts, Line: r.line, Text: p.Message})
				}
			case "task_complete", "turn_aborted":
				s.Items = append(s.Items, Item{Kind: ItemEnd, Key: key, Time: ts, Line: r.line})
			case "context_compacted":
				if n := len(s.Items); n > 0 && s.Items[n-1].Kind == ItemReset {
					continue
				}
				s.Items = append(s.Items, Item{Kind: ItemReset, Key: key, Time: ts, Line: r.line, Reason: "context compacted"})
			}
		case "compacted":
			// one compaction is written as compacted and event_msg
			// context_compacted, in either order: one reset
			if n := len(s.Items); n > 0 && s.Items[n-1].Kind == ItemReset {
				continue
			}
			s.Items = append(s.Items, Item{Kind: ItemReset, Key: key, Time: ts, Line: r.line, Reason: "context compacted"})
		case "response_item":
			switch p.Type {
			case "message":
				text := codexText(p.Content)
				switch p.Role {
				case "assistant":
					if text != "" {
						s.Items = append(s.Items, Item{Kind: ItemStep, Key: key, Time: ts, Line: r.line, Text: text})
					}
				case "user":
					if !haveUserEvents && text != "" && !reInjected.MatchString(text) {
						s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: key, Time: ts, Line: r.line, Text: text})
					}
				}
			case "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call":
				in := json.RawMessage(p.Arguments)
				if p.Type == "custom_tool_call" {
					b, _ := json.Marshal(map[string]string{"input": p.Input})
					in = b
				}
				if len(p.Action) > 0 && (p.Type == "local_shell_call" || p.Type == "web_search_call") {
					in = p.Action
				}
				toolName := p.Name
				if toolName == "" {
					toolName = strings.TrimSuffix(p.Type, "_call")
				}
				sum, files := summariseTool(toolName, in)
				s.Items = append(s.Items, Item{Kind: ItemStep, Key: key, Time: ts, Line: r.line, Tools: []string{sum}, Files: files})
			}
		}
	}
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no conversation (no prompt or answer)")
		return out
	}
	out.Sessions = append(out.Sessions, s)
	return out
}

// codexText is the text of a message's content (input_text, output_text
// or text parts; images left out).
func codexText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out string
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
			out = joinText(out, p.Text)
		}
	}
	return out
}

var reRolloutID = regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

func codexIDFromName(name string) string {
	if m := reRolloutID.FindStringSubmatch(filepath.Base(name)); m != nil {
		return m[1]
	}
	return ""
}
