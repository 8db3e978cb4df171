package importer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// The Anthropic-style message histories of the Cline family: a task's
// api_conversation_history.json (read when its ui_messages.json is
// missing) and the messages of Cline's newer sessions (clinesdk.go). Each
// message is {role, content: text or blocks (text, tool_use, tool_result,
// image, thinking), ts (ms), id; Roo: isSummary, isTruncationMarker}.
// Roo Code's newer histories (RooMessage, 2026) wrap the list in
// {version: 2, messages} and use the AI SDK's shapes: blocks tool-call
// {toolName, input} and tool-result, a role "tool" message for tool
// outputs, and reasoning items without a role; both shapes are read.
//
// What the model was sent is not what the user typed: Cline wraps the
// first prompt in <task>, a resumed task's new message in <user_message>,
// feedback on a result in <feedback>, an answer to a question in
// <answer>, and appends <environment_details> to every user turn; the
// newer sessions wrap input in <user_input>. Those wrappers are read, the
// environment details and tool results ([read_file for 'x'] Result:) are
// left out. Older (XML) versions call tools as XML in the assistant's
// text (<read_file><path>x</path></read_file>): the call is summarised,
// and the texts meant for the user (attempt_completion's result,
// ask_followup_question's question, plan_mode_respond's response) are
// kept as the answer.

// apiMsg is one message of an Anthropic-style history.
type apiMsg struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Ts        json.Number     `json:"ts"`
	ID        string          `json:"id"`
	Summary   bool            `json:"isSummary"`
	Truncated bool            `json:"isTruncationMarker"`
}

// apiBlock is one content block.
type apiBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Name     string          `json:"name"`
	ToolName string          `json:"toolName"` // AI SDK tool-call
	Input    json.RawMessage `json:"input"`
}

// ParseAnthropicMessages reads a JSON array of messages, or an object
// holding it as its messages (Roo's {version: 2, messages}) (data; name
// for messages) as session sid of agent; start stands in for the time of
// messages without one.
func ParseAnthropicMessages(data []byte, name, agent, sid string, start time.Time) Parsed {
	var out Parsed
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var env struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(trimmed, &env); err != nil || len(env.Messages) == 0 {
			reason := "not a JSON array of messages, nor an object holding one"
			if err != nil {
				reason += ": " + shortErr(err)
			}
			out.Problems = append(out.Problems, Problem{File: name, Line: lineOf(data, err), Reason: reason})
			return out
		}
		data = env.Messages
	}
	raw, ok := jsonArray(data, name, &out)
	if !ok {
		return out
	}
	s := &Session{Agent: agent, ID: sid, Source: name, Time: start}
	keys := map[string]bool{}
	for i, r := range raw {
		var m apiMsg
		if err := json.Unmarshal(r, &m); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: "message " + itoa(i) + ": " + shortErr(err)})
			continue
		}
		key := "m" + itoa(i)
		switch {
		case m.ID != "":
			key = "id:" + m.ID
		case m.Ts != "":
			key = "t" + m.Ts.String()
		}
		if keys[key] {
			key += "#" + itoa(i)
		}
		keys[key] = true
		apiMessage(s, &m, Item{Key: key, Time: clineTime(m.Ts), Line: i + 1}, &out, name)
	}
	addTask(&out, s, name)
	return out
}

// apiMessage reads one message into s.
func apiMessage(s *Session, m *apiMsg, it Item, out *Parsed, name string) {
	switch {
	case m.Summary:
		it.Kind, it.Reason = ItemReset, "context condensed"
		s.Items = append(s.Items, it)
		return
	case m.Truncated:
		it.Kind, it.Reason = ItemReset, "context truncated"
		s.Items = append(s.Items, it)
		return
	}
	blocks, ok := apiBlocks(m.Content)
	if !ok {
		out.Problems = append(out.Problems, Problem{File: name, Line: it.Line, Reason: "content is neither text nor blocks"})
		return
	}
	switch m.Role {
	case "user":
		// a turn answering a tool call carries its output in text blocks
		// too: only what the user wrote (<feedback>, <answer>,
		// <user_message>) is a prompt there
		results := false
		for _, b := range blocks {
			results = results || b.Type == "tool_result" || b.Type == "tool-result" || b.Type == "text" && toolResultHeader(b.Text)
		}
		var prompts []string
		for _, b := range blocks {
			if b.Type != "text" {
				continue // tool results, images, documents
			}
			if results && !userTagged(b.Text) {
				continue
			}
			if p := apiUserText(b.Text); p != "" {
				prompts = append(prompts, p)
			}
		}
		if len(prompts) > 0 {
			it.Kind, it.Text = ItemPrompt, strings.Join(prompts, "\n\n")
			s.Items = append(s.Items, it)
		}
	case "assistant":
		apiAnswer(s, blocks, it)
	}
}

// apiBlocks reads content: a string or a list of blocks.
func apiBlocks(raw json.RawMessage) ([]apiBlock, bool) {
	var blocks []apiBlock
	if json.Unmarshal(raw, &blocks) == nil {
		return blocks, true
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []apiBlock{{Type: "text", Text: text}}, true
	}
	return nil, len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null"
}

// apiAnswer reads an assistant message: its visible text, its tool calls
// (blocks, or XML in the text) summarised, and the end of the turn when
// it waits for the user.
func apiAnswer(s *Session, blocks []apiBlock, it Item) {
	it.Kind = ItemStep
	waits := true
	for _, b := range blocks {
		var x xmlTools
		switch b.Type {
		case "text":
			x = parseXMLTools(stripThinking(b.Text))
		case "tool_use", "tool-call":
			x = apiToolUse(nonEmpty(b.Name, b.ToolName), b.Input)
		default:
			continue // thinking, images
		}
		it.Text = joinText(it.Text, x.text)
		it.Tools = append(it.Tools, x.tools...)
		it.Files = append(it.Files, x.files...)
		if x.handoff != "" {
			it.Handoff = x.handoff
		}
		waits = waits && !x.works
	}
	if it.Text == "" && len(it.Tools) == 0 {
		return
	}
	s.Items = append(s.Items, it)
	if waits {
		end := it
		end.Kind, end.Key = ItemEnd, it.Key+"/end"
		s.Items = append(s.Items, end)
	}
}

var (
	reEnvDetails = lazyre.New(`(?s)<environment_details>.*?(</environment_details>|$)`)
	reNotices    = lazyre.New(`(?s)<(mode_notice|environment_notice)>.*?</(mode_notice|environment_notice)>`)
	reUserCmd    = lazyre.New(`(?s)^<user_command[^>]*slash="([^"]+)"[^>]*>(.*)</user_command>$`)
)

// apiUserText is the prompt a user text block holds, "" when it holds
// none (a tool result, the environment details, a resumption notice).
func apiUserText(t string) string {
	t = strings.TrimSpace(reEnvDetails().ReplaceAllString(t, ""))
	for _, tag := range []string{"task", "feedback", "user_message", "answer"} {
		if in, ok := tagged(t, tag); ok {
			return strings.TrimSpace(in)
		}
	}
	if toolResultHeader(t) || strings.HasPrefix(t, "[TASK RESUMPTION]") ||
		strings.HasPrefix(t, "[ERROR]") || strings.HasPrefix(t, "<files>") || strings.HasPrefix(t, "Tool #") ||
		strings.HasPrefix(t, "The user has provided feedback") || strings.HasPrefix(t, "[Response interrupted") {
		return ""
	}
	t = strings.TrimSpace(reNotices().ReplaceAllString(t, ""))
	if m := reUserCmd().FindStringSubmatch(t); m != nil {
		return strings.TrimSpace("/" + m[1] + " " + strings.TrimSpace(m[2]))
	}
	if in, ok := tagged(t, "user_input"); ok {
		return strings.TrimSpace(in)
	}
	return t
}

// toolResultHeader reports whether a user text is the header Cline puts
// before a tool's output ("[read_file for 'x'] Result:").
func toolResultHeader(t string) bool {
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "[") && strings.Contains(firstLine(t), "] Result:")
}

// userTagged reports whether a user text holds what the user wrote
// inside one of Cline's wrappers.
func userTagged(t string) bool {
	for _, tag := range []string{"<task>", "<feedback>", "<user_message>", "<answer>"} {
		if strings.Contains(t, tag) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// tagged is the text inside <tag>…</tag> in s.
func tagged(s, tag string) (string, bool) {
	open, close := "<"+tag+">", "</"+tag+">"
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(open):]
	if j := strings.LastIndex(rest, close); j >= 0 {
		rest = rest[:j]
	}
	return rest, true
}

// xmlTools is what an assistant text with XML tool calls shows: the text
// meant for the user, the calls summarised, the files they touch, a
// handoff (new_task) and whether a call works on (false when it waits for
// the user: a question, a result, a plan).
type xmlTools struct {
	text    string
	tools   []string
	files   []string
	handoff string
	works   bool
}

// clineTools are the tools of the XML-era Cline family, whose calls are
// tags in the assistant's text.
var clineTools = []string{"execute_command", "read_file", "simple_read_file", "write_to_file", "replace_in_file", "apply_diff",
	"insert_content", "search_and_replace", "search_files", "list_files", "list_code_definition_names", "browser_action",
	"use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion", "plan_mode_respond", "new_task",
	"switch_mode", "update_todo_list", "codebase_search", "fetch_instructions", "load_mcp_documentation", "condense",
	"summarize_task", "web_fetch", "web_search", "new_rule", "report_bug", "generate_image", "run_slash_command", "focus_chain"}

var reXMLTool = lazyre.Func(func() string { return `<(` + strings.Join(clineTools, "|") + `)>` })

// parseXMLTools reads the XML tool calls of an assistant text.
func parseXMLTools(text string) xmlTools {
	var x xmlTools
	var keep strings.Builder
	for {
		loc := reXMLTool().FindStringSubmatchIndex(text)
		if loc == nil {
			keep.WriteString(text)
			break
		}
		name := text[loc[2]:loc[3]]
		keep.WriteString(text[:loc[0]])
		body := text[loc[1]:]
		closeTag := "</" + name + ">"
		end := strings.Index(body, closeTag)
		if end < 0 {
			text = ""
		} else {
			text = body[end+len(closeTag):]
			body = body[:end]
		}
		t := xmlTool(name, func(k string) string { v, _ := tagged(body, k); return strings.TrimSpace(v) })
		if t.text != "" {
			keep.WriteString("\n\n" + t.text + "\n\n")
		}
		x.tools = append(x.tools, t.tools...)
		x.files = append(x.files, t.files...)
		if t.handoff != "" {
			x.handoff = t.handoff
		}
		x.works = x.works || t.works
	}
	x.text = strings.TrimSpace(keep.String())
	return x
}

// apiToolUse reads a tool_use block: a Cline tool as its XML form, any
// other by its input.
func apiToolUse(name string, input json.RawMessage) xmlTools {
	if slices.Contains(clineTools, name) {
		var args map[string]any
		_ = json.Unmarshal(input, &args)
		return xmlTool(name, func(k string) string {
			switch v := args[k].(type) {
			case string:
				return v
			case nil:
				return ""
			default:
				b, _ := json.Marshal(v)
				return string(b)
			}
		})
	}
	sum, files := summariseTool(name, input)
	return xmlTools{tools: []string{sum}, files: files, works: true}
}

// xmlTool reads one tool call (its parameters through arg): the text it
// shows the user, or its summary.
func xmlTool(name string, arg func(string) string) xmlTools {
	switch name {
	case "attempt_completion":
		return xmlTools{text: arg("result")}
	case "ask_followup_question":
		return xmlTools{text: arg("question")}
	case "plan_mode_respond":
		return xmlTools{text: arg("response")}
	case "new_task":
		text := nonEmpty(arg("message"), arg("context"))
		sum, _ := clineTool(name, map[string]any{"prompt": strings.TrimSpace(arg("mode") + " " + oneLine(text, maxToolArg))})
		return xmlTools{tools: []string{sum}, handoff: handoffKey(text)}
	}
	args := map[string]any{}
	switch name {
	case "read_file", "simple_read_file", "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace":
		if p := arg("path"); p != "" {
			args["path"] = p
		} else if files := arg("args"); files != "" {
			var paths []any
			for _, f := range strings.Split(files, "<path>")[1:] {
				if j := strings.Index(f, "</path>"); j > 0 {
					paths = append(paths, strings.TrimSpace(f[:j]))
				}
			}
			args["paths"] = paths
		}
	case "execute_command":
		args["command"] = arg("command")
	case "search_files", "codebase_search", "web_search":
		args["query"] = nonEmpty(arg("regex"), arg("query"))
	case "use_mcp_tool", "access_mcp_resource":
		args["description"] = arg("server_name") + "/" + nonEmpty(arg("tool_name"), arg("uri"))
	case "browser_action", "web_fetch":
		args["url"] = nonEmpty(arg("url"), arg("action"))
	case "list_files", "list_code_definition_names":
		args["dir_path"] = arg("path")
	case "switch_mode":
		args["description"] = arg("mode_slug")
	}
	sum, files := clineTool(name, args)
	return xmlTools{tools: []string{sum}, files: files, works: true}
}
