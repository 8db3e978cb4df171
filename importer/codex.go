package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/praxis-os/continuity/internal/lazyre"
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

var reInjected = lazyre.New(`^\s*(<environment_context>|<user_instructions>|<permissions|<INSTRUCTIONS>|# AGENTS\.md|<user_shell_command>|<turn_aborted>)`)

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
	ro := &codexRollout{}
	lines := newRecords(r, name, &out.Problems)
	for lines.Next() {
		if err := ro.record(lines.Line(), lines.Bytes()); err != "" {
			out.Problems = append(out.Problems, Problem{File: name, Line: lines.Line(), Reason: err})
		}
	}
	sid := ro.sid
	if sid == "" {
		sid = codexIDFromName(name)
	}
	if sid == "" {
		if len(ro.recs) > 0 {
			out.Problems = append(out.Problems, Problem{File: name, Reason: "no session id (no session_meta, and the file name holds none)"})
		}
		return out
	}
	s := &Session{Agent: Codex, ID: sid, Source: name, Previous: ro.previous}
	for _, r := range ro.recs {
		ro.addItem(s, r)
	}
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no conversation (no prompt or answer)")
		return out
	}
	out.Sessions = append(out.Sessions, s)
	return out
}

// codexRollout is what ParseCodex reads of a rollout before it makes its
// items: which records are there decides how some are read (the prompts
// are the user_message events when there are any, ...).
type codexRollout struct {
	sid      string   // from session_meta (or a legacy first line)
	previous []string // sessions this one resumes or forks
	recs     []codexRec

	haveUserEvents, haveAssistantItems bool
}

// codexRec is a record of a rollout other than session_meta.
type codexRec struct {
	line int
	ts   string
	typ  string // "response_item" for a legacy bare item
	p    codexPayload
}

// record reads the record of line lineNo; it returns why it is unreadable,
// or "".
func (ro *codexRollout) record(lineNo int, t []byte) string {
	var l codexLine
	if err := json.Unmarshal(t, &l); err != nil {
		return "not a JSON record: " + shortErr(err)
	}
	var p codexPayload
	switch {
	case l.Payload != nil:
		p = *l.Payload
	case l.Type == "" && l.ID != "":
		// legacy first line: {id, timestamp, instructions}
		if ro.sid == "" && validID(l.ID) {
			ro.sid = l.ID
		}
		return ""
	default:
		// legacy bare response item
		if err := json.Unmarshal(t, &p); err != nil {
			return "record: " + shortErr(err)
		}
		l.Type = "response_item"
	}
	switch {
	case l.Type == "session_meta":
		if ro.sid == "" && validID(p.ID) {
			ro.sid = p.ID
		} else if p.ID != "" && p.ID != ro.sid && validID(p.ID) {
			ro.previous = append(ro.previous, p.ID)
		}
		if p.Forked != "" && validID(p.Forked) {
			ro.previous = append(ro.previous, p.Forked)
		}
		return ""
	case l.Type == "event_msg" && p.Type == "user_message":
		ro.haveUserEvents = true
	case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
		ro.haveAssistantItems = true
	}
	ro.recs = append(ro.recs, codexRec{line: lineNo, ts: l.Timestamp, typ: l.Type, p: p})
	return ""
}

// addItem adds the item of record r, if any, to s.
func (ro *codexRollout) addItem(s *Session, r codexRec) {
	it := Item{Key: "L" + itoa(r.line), Time: parseTime(r.ts), Line: r.line}
	switch r.typ {
	case "event_msg":
		ro.eventItem(s, it, &r.p)
	case "compacted":
		// one compaction is written as compacted and event_msg
		// context_compacted, in either order: one reset
		addReset(s, it)
	case "response_item":
		ro.responseItem(s, it, &r.p)
	}
}

// addReset adds a reset to s, unless its last item is one.
func addReset(s *Session, it Item) {
	if n := len(s.Items); n > 0 && s.Items[n-1].Kind == ItemReset {
		return
	}
	it.Kind, it.Reason = ItemReset, "context compacted"
	s.Items = append(s.Items, it)
}

// eventItem adds the item of an event_msg: a prompt, an answer (when the
// rollout has no assistant message items), an end, a reset.
func (ro *codexRollout) eventItem(s *Session, it Item, p *codexPayload) {
	switch p.Type {
	case "user_message":
		text := strings.TrimSpace(p.Message)
		if n := len(p.Images); n > 0 {
			text = joinText(text, "["+itoa(n)+" image(s)]")
		}
		if text == "" {
			return
		}
		it.Kind, it.Text = ItemPrompt, text
	case "agent_message":
		if ro.haveAssistantItems || strings.TrimSpace(p.Message) == "" {
			return
		}
		it.Kind, it.Text = ItemStep, p.Message
	case "task_complete", "turn_aborted":
		it.Kind = ItemEnd
	case "context_compacted":
		addReset(s, it)
		return
	default:
		return
	}
	s.Items = append(s.Items, it)
}

// responseItem adds the item of a response_item: an answer, a prompt
// (when the rollout has no user_message events, and it is not injected
// context), a tool call summarised.
func (ro *codexRollout) responseItem(s *Session, it Item, p *codexPayload) {
	switch p.Type {
	case "message":
		text := codexText(p.Content)
		switch {
		case text == "":
			return
		case p.Role == "assistant":
			it.Kind = ItemStep
		case p.Role == "user" && !ro.haveUserEvents && !reInjected().MatchString(text):
			it.Kind = ItemPrompt
		default:
			return
		}
		it.Text = text
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
		it.Kind, it.Tools, it.Files = ItemStep, []string{sum}, files
	default:
		return
	}
	s.Items = append(s.Items, it)
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

var reRolloutID = lazyre.New(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

func codexIDFromName(name string) string {
	if m := reRolloutID().FindStringSubmatch(filepath.Base(name)); m != nil {
		return m[1]
	}
	return ""
}
