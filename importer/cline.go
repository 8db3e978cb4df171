package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// Cline (VS Code extension saoudrizwan.claude-dev, its CLI and JetBrains
// builds) and its forks Roo Code (rooveterinaryinc.roo-cline) and Kilo
// Code (kilocode.kilo-code) keep one folder per task:
// <storage>/tasks/<taskId>/ (taskId: a time in ms for Cline, a UUID for
// Roo and Kilo) holding
//   - ui_messages.json: what the user saw, a JSON array of messages {ts
//     (ms), type: ask|say, ask or say (the kind), text, images, partial,
//     conversationHistoryDeletedRange, contextCondense, ...};
//   - api_conversation_history.json: what the model was sent, a JSON
//     array of Anthropic messages (role, content blocks; Roo adds ts,
//     isSummary); a condensed Roo task keeps only what followed the
//     condensation;
//   - task_metadata.json (files in context, models), history_item.json
//     (Roo: workspace, parentTaskId) and, beside tasks/, state/
//     taskHistory.json (Cline: cwdOnTaskInitialization per task).
//
// Reading rules (docs/importers.md, "Reading rules"): ui_messages.json is
// the transcript (the API history is read only when it is missing): the
// task's first message (say task, or say text for Roo) and every
// say user_feedback are the human prompts; say text, completion_result
// and the questions the agent asks (followup, plan_mode_respond) are the
// answer; tool asks (read, edit, search, command, MCP, browser) are
// summarised on one line; reasoning, API requests, command output, tool
// results, checkpoints and errors are left out. A condensation (Roo
// condense_context, Cline condense/summarize_task/compaction) or a
// truncation of the context (sliding_window_truncation, a new
// conversationHistoryDeletedRange) is a context reset. A task the agent
// hands its context to (Cline new_task) or starts as a subtask (Roo
// new_task) is linked to it by a session_resume, as is a Roo subtask to
// its parentTaskId. A subtask's result, returned to the parent, opens a
// new exchange of the parent's turn: "[subtask result] <its first line>".

// clineChangesFlag ends a Cline completion result whose task changed
// files (COMPLETION_RESULT_CHANGES_FLAG); it is not part of the text.
const clineChangesFlag = "HAS_CHANGES"

// maxClineFile bounds a task file read whole.
const maxClineFile = 512 << 20

// The files of a task folder.
const (
	clineUIFile    = "ui_messages.json"
	clineOldUIFile = "claude_messages.json" // its name before Cline 2 (Claude Dev)
	clineAPIFile   = "api_conversation_history.json"
	clineHistFile  = "history_item.json"
	clineMetaFile  = "task_metadata.json"
	clineIndexFile = "taskHistory.json"
)

// clineTaskFile reports whether name is a file of a task folder.
func clineTaskFile(name string) bool {
	switch name {
	case clineUIFile, clineOldUIFile, clineAPIFile, clineHistFile, clineMetaFile:
		return true
	}
	return false
}

// clineMsg is one ui_messages.json message.
type clineMsg struct {
	Ts        json.Number     `json:"ts"`
	Type      string          `json:"type"`
	Ask       string          `json:"ask"`
	Say       string          `json:"say"`
	Text      string          `json:"text"`
	Images    []string        `json:"images"`
	Partial   bool            `json:"partial"`
	Deleted   json.RawMessage `json:"conversationHistoryDeletedRange"`
	Condense  *clineCondense  `json:"contextCondense"`
	Truncated *struct {
		MessagesRemoved int `json:"messagesRemoved"`
	} `json:"contextTruncation"`
}

type clineCondense struct {
	Prev int `json:"prevContextTokens"`
	New  int `json:"newContextTokens"`
}

// ParseClineTask reads the task folder of path (ui_messages.json, or any
// other file of the folder) of agent (Cline, Roo, Kilo).
func ParseClineTask(agent, path string) Parsed {
	var out Parsed
	base := filepath.Base(path)
	if base == clineIndexFile || base == "_index.json" {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, path+": the task index, not a transcript (its tasks are read from tasks/<id>/)")
		return out
	}
	dir := filepath.Dir(path)
	if !clineTaskFile(base) {
		dir = path // a task folder given as a file name: read what it holds
	}
	sid := sanitizeID(filepath.Base(dir))
	if sid == "" {
		sid = "task"
	}
	info := readClineTaskInfo(dir)
	ui := filepath.Join(dir, clineUIFile)
	if !regular(ui) && regular(filepath.Join(dir, clineOldUIFile)) {
		ui = filepath.Join(dir, clineOldUIFile) // a task not opened since Claude Dev
	}
	if data, err := readCapped(ui, maxClineFile); err == nil {
		out = ParseClineUI(data, ui, agent, sid)
	} else if !os.IsNotExist(err) {
		out.Problems = append(out.Problems, Problem{File: ui, Reason: err.Error()})
		return out
	} else {
		api := filepath.Join(dir, clineAPIFile)
		data, err := readCapped(api, maxClineFile)
		if err != nil {
			out.Problems = append(out.Problems, Problem{File: dir, Reason: "no ui_messages.json or api_conversation_history.json: " + err.Error()})
			return out
		}
		out = ParseAnthropicMessages(data, api, agent, sid, info.start)
	}
	for _, s := range out.Sessions {
		if s.Cwd == "" {
			s.Cwd = info.cwd
		}
		if info.parent != "" && validID(info.parent) {
			s.Previous = append(s.Previous, info.parent)
		}
	}
	return out
}

// readCapped reads a whole file of at most max bytes.
func readCapped(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("file over %d bytes, skipped", max)
	}
	return os.ReadFile(path)
}

// clineTaskInfo is what a task folder says about its task besides its
// messages.
type clineTaskInfo struct {
	cwd    string    // where the task ran
	parent string    // the task that started it as a subtask (Roo)
	start  time.Time // when it started (a Cline task id is a time in ms)
}

// readClineTaskInfo reads history_item.json (Roo), the state/
// taskHistory.json index beside tasks/ (Cline), and failing those the
// environment details of the first request.
func readClineTaskInfo(dir string) clineTaskInfo {
	var info clineTaskInfo
	id := filepath.Base(dir)
	if ms, err := strconv.ParseInt(id, 10, 64); err == nil && ms > 1e12 && ms < 1e14 {
		info.start = time.UnixMilli(ms).UTC()
	}
	var hist struct {
		Workspace string `json:"workspace"`
		Parent    string `json:"parentTaskId"`
		Cwd       string `json:"cwdOnTaskInitialization"`
	}
	if data, err := readCapped(filepath.Join(dir, clineHistFile), 1<<20); err == nil && json.Unmarshal(data, &hist) == nil {
		info.cwd, info.parent = nonEmpty(hist.Workspace, hist.Cwd), hist.Parent
	}
	if info.cwd == "" {
		info.cwd = clineIndexCwd(filepath.Join(filepath.Dir(filepath.Dir(dir)), "state", clineIndexFile), id)
	}
	if info.cwd == "" {
		info.cwd = clineEnvCwd(dir)
	}
	return info
}

// clineIndexCwd is the cwdOnTaskInitialization of task id in a
// taskHistory.json index.
func clineIndexCwd(index, id string) string {
	return cachedIndexCwds(index)[id]
}

// reEnvCwd finds the working folder in the environment details Cline
// ("Current Working Directory (/path) Files") and Roo ("Current Workspace
// Directory (/path) Files") add to each request.
var reEnvCwd = lazyre.New(`# Current (?:Working|Workspace) Directory \(([^)\n]+)\)`)

// clineEnvCwd reads the working folder from the first request of a task
// (the start of its API history, else of its UI messages).
func clineEnvCwd(dir string) string {
	for _, name := range []string{clineAPIFile, clineUIFile, clineOldUIFile} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		buf := make([]byte, 1<<20)
		n, _ := f.Read(buf)
		f.Close()
		if m := reEnvCwd().FindSubmatch(buf[:n]); m != nil {
			// the text is JSON-escaped in the file
			var s string
			if json.Unmarshal([]byte(`"`+string(m[1])+`"`), &s) != nil {
				s = string(m[1])
			}
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// ParseClineUI reads a task's ui_messages.json (data; name for messages)
// as session sid of agent.
func ParseClineUI(data []byte, name, agent, sid string) Parsed {
	var out Parsed
	raw, ok := jsonArray(data, name, &out)
	if !ok {
		return out
	}
	u := &clineUI{s: &Session{Agent: agent, ID: sid, Source: name}, keys: map[string]int{}}
	for i, r := range raw {
		var m clineMsg
		if err := json.Unmarshal(r, &m); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: "message " + itoa(i) + ": " + shortErr(err)})
			continue
		}
		u.message(i, &m)
	}
	addTask(&out, u.s, name)
	return out
}

// addTask adds the session of a task to out (its first prompt its
// Opening, which a handoff may match), or says why it has none.
func addTask(out *Parsed, s *Session, name string) {
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no conversation (no prompt or answer)")
		return
	}
	for _, it := range s.Items {
		if it.Kind == ItemPrompt {
			s.Opening = handoffKey(it.Text)
			break
		}
	}
	out.Sessions = append(out.Sessions, s)
}

// jsonArray decodes data as a JSON array, reporting why not.
func jsonArray(data []byte, name string, out *Parsed) ([]json.RawMessage, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": empty file")
		return nil, false
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Line: lineOf(data, err), Reason: "not a JSON array of messages: " + shortErr(err)})
		return nil, false
	}
	return raw, true
}

// clineUI is ParseClineUI's state.
type clineUI struct {
	s       *Session
	keys    map[string]int // message keys met (a repeated ts gets a suffix)
	deleted string         // the last conversationHistoryDeletedRange met
	resetOK bool           // a reset since that range changed
	n       int            // messages read
}

// message reads message i.
func (u *clineUI) message(i int, m *clineMsg) {
	u.n++
	key := "t" + m.Ts.String()
	if m.Ts == "" {
		key = "m" + itoa(i)
	}
	if k := u.keys[key]; k > 0 {
		u.keys[key] = k + 1
		key += "#" + itoa(k)
	} else {
		u.keys[key] = 1
	}
	it := Item{Key: key, Time: clineTime(m.Ts), Line: i + 1}
	u.truncation(it, m)
	kind := m.Say
	if m.Type == "ask" {
		kind = "ask:" + m.Ask
	}
	switch kind {
	case "task", "user_feedback":
		u.prompt(it, m)
	case "text":
		if u.n == 1 {
			u.prompt(it, m) // Roo writes the task as its first say text
		} else {
			u.step(it, stripThinking(m.Text))
		}
	case "completion_result", "ask:completion_result":
		u.step(it, strings.TrimSuffix(strings.TrimSpace(m.Text), clineChangesFlag))
		if kind == "ask:completion_result" {
			u.end(it)
		}
	case "ask:followup", "ask:plan_mode_respond", "ask:act_mode_respond":
		u.step(it, clineQuestion(m.Text))
		u.end(it)
	case "ask:resume_task", "ask:resume_completed_task", "ask:mistake_limit_reached":
		u.end(it)
	case "subtask_result":
		if t := strings.TrimSpace(m.Text); t != "" {
			it.Kind, it.Text, it.Break = ItemStep, "[subtask result] "+oneLine(t, 500), true
			u.s.Items = append(u.s.Items, it)
		}
	case "condense_context", "ask:condense", "ask:summarize_task", "compaction":
		if m.Partial && m.Condense == nil && kind == "condense_context" {
			return // still condensing
		}
		u.reset(it, clineCondenseReason(kind, m.Condense))
	case "sliding_window_truncation":
		reason := "context truncated"
		if m.Truncated != nil && m.Truncated.MessagesRemoved > 0 {
			reason += " (" + itoa(m.Truncated.MessagesRemoved) + " messages removed)"
		}
		u.reset(it, reason)
	default:
		u.tool(it, kind, m)
	}
}

// truncation makes a new conversationHistoryDeletedRange (Cline dropped
// older messages from the context) a reset, unless a condensation
// already reset the context since the last range.
func (u *clineUI) truncation(it Item, m *clineMsg) {
	var rg []int
	if json.Unmarshal(m.Deleted, &rg) != nil || len(rg) != 2 || rg[1] <= rg[0] {
		return // none, or nothing dropped
	}
	r := itoa(rg[0]) + "-" + itoa(rg[1])
	if r == u.deleted {
		return
	}
	u.deleted = r
	if u.resetOK {
		u.resetOK = false
		return
	}
	it.Key += "/truncated"
	u.reset(it, "context truncated (older messages dropped)")
	u.resetOK = false
}

// tool reads a tool call (or a message left out).
func (u *clineUI) tool(it Item, kind string, m *clineMsg) {
	var sum string
	var files []string
	switch kind {
	case "tool", "ask:tool":
		var t map[string]any
		if json.Unmarshal([]byte(m.Text), &t) != nil {
			return
		}
		if tn, _ := t["tool"].(string); tn == "summarizeTask" {
			u.reset(it, "context summarized")
			return
		}
		sum, files, it.Handoff = clineSayTool(t)
	case "command", "ask:command":
		sum, files = clineTool("execute_command", map[string]any{"command": m.Text})
	case "use_mcp_server", "ask:use_mcp_server":
		var t struct {
			Server string `json:"serverName"`
			Tool   string `json:"toolName"`
			URI    string `json:"uri"`
		}
		if json.Unmarshal([]byte(m.Text), &t) != nil {
			return
		}
		sum = "mcp " + oneLine(t.Server+"/"+nonEmpty(t.Tool, t.URI), maxToolArg)
	case "ask:browser_action_launch":
		sum, files = clineTool("browser_action", map[string]any{"url": m.Text})
	case "browser_action":
		var t map[string]any
		_ = json.Unmarshal([]byte(m.Text), &t)
		a, _ := t["action"].(string)
		sum = "browser_action: " + oneLine(a, maxToolArg)
	case "ask:new_task":
		text := m.Text
		var t struct {
			Context string `json:"context"`
		}
		if json.Unmarshal([]byte(m.Text), &t) == nil && t.Context != "" {
			text = t.Context
		}
		sum, files = clineTool("new_task", map[string]any{"prompt": text})
		it.Kind, it.Tools, it.Files, it.Handoff = ItemStep, []string{sum}, files, handoffKey(text)
		u.s.Items = append(u.s.Items, it)
		u.end(it) // it waits for the user to start the new task
		return
	case "ask:use_subagents":
		var t struct {
			Prompts []string `json:"prompts"`
		}
		_ = json.Unmarshal([]byte(m.Text), &t)
		for _, p := range t.Prompts {
			s, _ := clineTool("use_subagents", map[string]any{"prompt": p})
			it.Tools = append(it.Tools, s)
		}
		if len(it.Tools) > 0 {
			it.Kind = ItemStep
			u.s.Items = append(u.s.Items, it)
		}
		return
	default:
		return // reasoning, API requests, outputs, checkpoints, errors: left out
	}
	if sum == "" {
		return
	}
	it.Kind, it.Tools, it.Files = ItemStep, []string{sum}, files
	u.s.Items = append(u.s.Items, it)
}

func (u *clineUI) prompt(it Item, m *clineMsg) {
	text := strings.TrimSpace(m.Text)
	if text == "" && len(m.Images) > 0 {
		text = imageOnly
	}
	if text == "" {
		return
	}
	it.Kind, it.Text = ItemPrompt, text
	u.s.Items = append(u.s.Items, it)
}

func (u *clineUI) step(it Item, text string) {
	it.Kind, it.Text = ItemStep, strings.TrimSpace(text)
	u.s.Items = append(u.s.Items, it)
}

func (u *clineUI) end(it Item) {
	it.Kind = ItemEnd
	it.Key += "/end"
	u.s.Items = append(u.s.Items, it)
}

// reset adds a context reset, unless the item before it is one already.
func (u *clineUI) reset(it Item, reason string) {
	u.resetOK = true
	if n := len(u.s.Items); n > 0 && u.s.Items[n-1].Kind == ItemReset {
		return
	}
	it.Kind, it.Reason = ItemReset, reason
	u.s.Items = append(u.s.Items, it)
}

// clineCondenseReason says what condensed the context.
func clineCondenseReason(kind string, c *clineCondense) string {
	switch kind {
	case "ask:summarize_task":
		return "context summarized"
	case "compaction":
		return "context compacted"
	}
	reason := "context condensed"
	if c != nil && c.Prev > 0 {
		reason += " (" + itoa(c.Prev) + " tokens before, " + itoa(c.New) + " after)"
	}
	return reason
}

// clineQuestion is what a followup or plan-mode ask shows: its question
// or response (JSON), else its text.
func clineQuestion(text string) string {
	var q struct {
		Question string `json:"question"`
		Response string `json:"response"`
	}
	if json.Unmarshal([]byte(text), &q) == nil && (q.Question != "" || q.Response != "") {
		return nonEmpty(q.Question, q.Response)
	}
	return text
}

// clineTime reads a ts in ms (a number, sometimes written with a
// fraction).
func clineTime(ts json.Number) time.Time {
	f, err := ts.Float64()
	if err != nil || f <= 0 {
		return time.Time{}
	}
	return msTime(f)
}

var reThinking = lazyre.New(`(?s)<thinking>.*?</thinking>`)

// stripThinking removes the <thinking> blocks XML-era models wrote in
// their visible text.
func stripThinking(s string) string {
	if !strings.Contains(s, "<thinking>") {
		return s
	}
	return strings.TrimSpace(reThinking().ReplaceAllString(s, ""))
}

// clineSayTool summarises a ClineSayTool message ({tool, path, regex,
// query, url, mode, content, batchFiles, ...}); a new task's content is a
// handoff.
func clineSayTool(t map[string]any) (sum string, files []string, handoff string) {
	name, _ := t["tool"].(string)
	str := func(k string) string { v, _ := t[k].(string); return v }
	args := map[string]any{}
	switch name {
	case "readFile", "editedExistingFile", "newFileCreated", "appliedDiff", "insertContent", "searchAndReplace", "fileDeleted", "generateImage":
		var paths []any
		for _, k := range []string{"batchFiles", "batchDiffs"} {
			if b, ok := t[k].([]any); ok {
				for _, f := range b {
					if m, ok := f.(map[string]any); ok && m["path"] != nil {
						paths = append(paths, m["path"])
					}
				}
			}
		}
		if len(paths) > 0 {
			args["paths"] = paths
		} else {
			args["path"] = str("path")
		}
	case "newTask":
		content := str("content")
		args["prompt"] = strings.TrimSpace(str("mode") + " " + oneLine(content, maxToolArg))
		handoff = handoffKey(content)
	case "searchFiles":
		args["pattern"] = str("regex")
	case "codebaseSearch", "webSearch":
		args["query"] = str("query")
	case "webFetch":
		args["url"] = str("url")
	case "switchMode":
		args["description"] = str("mode")
	case "listFilesTopLevel", "listFilesRecursive", "listCodeDefinitionNames":
		args["dir_path"] = str("path")
	default:
		args["description"] = nonEmpty(str("path"), str("command"))
	}
	sum, files = clineTool(name, args)
	return sum, files, handoff
}

// clineTool is summariseTool for the argument maps the Cline readers
// build.
func clineTool(name string, args map[string]any) (string, []string) {
	b, _ := json.Marshal(args)
	return summariseTool(name, b)
}
