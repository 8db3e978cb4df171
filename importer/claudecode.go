package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// Claude Code keeps one JSONL file per session in
// ~/.claude/projects/<encoded-cwd>/<session-id>.jsonl. Each line is a
// record: "user" and "assistant" messages (Anthropic Messages API content
// blocks), "system" records (compact_boundary, api_error, local_command,
// turn_duration, ...), "summary" titles, "file-history-snapshot",
// "progress", "queue-operation". Records carry sessionId, uuid,
// parentUuid, timestamp, isSidechain, isMeta, isCompactSummary.
//
// Reading rules (docs/importers.md, "Reading rules"):
//   - a human prompt is a user record whose content is text (not only
//     tool_result blocks), that is not isMeta, not isCompactSummary, not an
//     interruption notice; consecutive prompt records with the same
//     timestamp are one prompt split by Claude Code;
//   - assistant text blocks are the answer; tool_use blocks are summarised;
//     thinking blocks, tool results and images are left out;
//   - system/compact_boundary is a context reset;
//   - sidechain records (subagents, the compaction summariser) are skipped:
//     the parent's exchange records the Task call and the answer built on
//     its result;
//   - lines starting with "//" are comments some tools prepend, skipped.

// imageOnly stands for a prompt made of images only (left out).
const imageOnly = "[image]"

// maxNativeLine bounds one native record in memory (a screenshot in a tool
// result can be several MB).
const maxNativeLine = 64 << 20

type ccRecord struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	SessionID        string          `json:"sessionId"`
	UUID             string          `json:"uuid"`
	Timestamp        string          `json:"timestamp"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	IsAPIError       bool            `json:"isApiErrorMessage"`
	Cwd              string          `json:"cwd"`
	Content          json.RawMessage `json:"content"` // system records
	Message          *struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	} `json:"message"`
	CompactMetadata *struct {
		Trigger   string `json:"trigger"`
		PreTokens int    `json:"preTokens"`
	} `json:"compactMetadata"`
}

type ccBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

var (
	reSystemTags  = lazyre.New(`(?s)<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics|local-command-caveat)>.*?</(system-reminder|ide_opened_file|ide_selection|ide_diagnostics|local-command-caveat)>`)
	reCommand     = lazyre.New(`(?s)<command-name>(.*?)</command-name>`)
	reCommandArg  = lazyre.New(`(?s)<command-args>(.*?)</command-args>`)
	reANSI        = lazyre.New("\x1b\\[[0-9;]*[A-Za-z]")
	reTaskSummary = lazyre.New(`(?s)<summary>(.*?)</summary>`)
)

// ParseClaudeCode reads one Claude Code session file. name is used in
// messages and for the session id when no record carries one.
func ParseClaudeCode(r io.Reader, name string) Parsed {
	p := &ccParser{name: name, sessions: map[string]*Session{}, lastPrompt: map[string]*Item{}}
	lines := newRecords(r, name, &p.out.Problems)
	for lines.Next() {
		p.record(lines.Line(), lines.Bytes())
	}
	return p.finish()
}

// ccParser is ParseClaudeCode's state: the sessions met, in order, and
// what is needed to read the next record.
type ccParser struct {
	name       string
	out        Parsed
	sessions   map[string]*Session
	order      []*Session
	sidechain  int              // sidechain records skipped
	lastPrompt map[string]*Item // per session, its last prompt item
}

func (p *ccParser) problem(line int, reason string) {
	p.out.Problems = append(p.out.Problems, Problem{File: p.name, Line: line, Reason: reason})
}

// ccItem is what one record's item is made of: the session it goes to,
// its key (the record's uuid), time and line.
type ccItem struct {
	s    *Session
	key  string
	ts   time.Time
	line int
}

func (c ccItem) item(kind ItemKind) Item {
	return Item{Kind: kind, Key: c.key, Time: c.ts, Line: c.line}
}

// record reads one record (line lineNo) into its session's items.
func (p *ccParser) record(lineNo int, t []byte) {
	if bytes.HasPrefix(t, []byte("//")) {
		return
	}
	var rec ccRecord
	if err := json.Unmarshal(t, &rec); err != nil {
		p.problem(lineNo, "not a JSON record: "+shortErr(err))
		return
	}
	if rec.IsSidechain {
		p.sidechain++
		return
	}
	if rec.Type != "user" && rec.Type != "assistant" && !(rec.Type == "system" && rec.Subtype == "compact_boundary") &&
		!(rec.Type == "system" && (rec.Subtype == "turn_duration" || rec.Subtype == "stop_hook_summary")) {
		return // titles, snapshots, progress, queue operations, api errors...
	}
	s := p.session(lineNo, rec.SessionID)
	if s == nil {
		return
	}
	c := ccItem{s: s, key: rec.UUID, ts: parseTime(rec.Timestamp), line: lineNo}
	if c.key == "" {
		c.key = "L" + itoa(lineNo)
	}
	switch rec.Type {
	case "system":
		p.system(c, &rec)
	case "user":
		p.user(c, &rec)
	case "assistant":
		p.assistant(c, &rec)
	}
}

// session returns the session of a record with sessionId sid (the file
// name's when empty), or nil, with a problem, when there is none usable.
func (p *ccParser) session(lineNo int, sid string) *Session {
	if sid == "" {
		sid = sessionFromName(p.name)
	}
	if sid == "" {
		p.problem(lineNo, "record without sessionId")
		return nil
	}
	if !validID(sid) {
		p.problem(lineNo, fmt.Sprintf("sessionId %q is not usable as a session id", oneLine(sid, 80)))
		return nil
	}
	s := p.sessions[sid]
	if s == nil {
		s = &Session{Agent: ClaudeCode, ID: sid, Source: p.name}
		p.sessions[sid] = s
		p.order = append(p.order, s)
	}
	return s
}

// system reads a compact_boundary (a reset) or the end of a turn.
func (p *ccParser) system(c ccItem, rec *ccRecord) {
	s := c.s
	if rec.Subtype != "compact_boundary" {
		s.Items = append(s.Items, c.item(ItemEnd))
		return
	}
	reason := "context compacted"
	if m := rec.CompactMetadata; m != nil {
		reason = "context compacted (" + nonEmpty(m.Trigger, "auto")
		if m.PreTokens > 0 {
			reason += ", " + itoa(m.PreTokens) + " tokens before"
		}
		reason += ")"
	}
	it := c.item(ItemReset)
	it.Reason = reason
	s.Items = append(s.Items, it)
	delete(p.lastPrompt, s.ID)
}

// user reads a user record: a prompt (or more of the previous one), a
// task notice, an interruption, or tool results naming files.
func (p *ccParser) user(c ccItem, rec *ccRecord) {
	if rec.Message == nil || rec.IsMeta || rec.IsCompactSummary {
		return
	}
	s := c.s
	if note, ok := ccTaskNotice(rec.Message.Content); ok {
		// a background task ended and the agent acts on it: not a
		// prompt (the turn goes on under the human's prompt), but a new
		// exchange of the turn, opened by the notice
		it := c.item(ItemStep)
		it.Text, it.Break = note, true
		s.Items = append(s.Items, it)
		return
	}
	text, files, interrupted, isPrompt := ccUserText(rec.Message.Content)
	if interrupted {
		it := c.item(ItemStep)
		it.Text = "[interrupted by the user]"
		s.Items = append(s.Items, it)
		return
	}
	if !isPrompt {
		if len(files) > 0 {
			it := c.item(ItemStep)
			it.Files = files
			s.Items = append(s.Items, it)
		}
		return
	}
	if prev := p.lastPrompt[s.ID]; prev != nil && prev.Time.Equal(c.ts) && len(s.Items) > 0 && s.Items[len(s.Items)-1].Kind == ItemPrompt {
		// one prompt written as several records
		last := &s.Items[len(s.Items)-1]
		if last.Text == imageOnly {
			last.Text = ""
		}
		if text != imageOnly {
			last.Text = joinText(last.Text, text)
		}
		return
	}
	it := c.item(ItemPrompt)
	it.Text = text
	s.Items = append(s.Items, it)
	p.lastPrompt[s.ID] = &s.Items[len(s.Items)-1]
}

// assistant reads an answer: its text blocks, its tool calls summarised,
// and the end of the turn when it stops.
func (p *ccParser) assistant(c ccItem, rec *ccRecord) {
	if rec.Message == nil || rec.IsAPIError {
		return // API error notices are written by Claude Code, not answers
	}
	var blocks []ccBlock
	if err := json.Unmarshal(rec.Message.Content, &blocks); err != nil {
		var s1 string
		if json.Unmarshal(rec.Message.Content, &s1) == nil {
			blocks = []ccBlock{{Type: "text", Text: s1}}
		} else if len(rec.Message.Content) > 0 && string(rec.Message.Content) != "null" {
			p.problem(c.line, "assistant content is neither text nor blocks")
			return
		}
	}
	it := c.item(ItemStep)
	for _, b := range blocks {
		switch b.Type {
		case "text":
			it.Text = joinText(it.Text, b.Text)
		case "tool_use", "server_tool_use":
			sum, files := summariseTool(b.Name, b.Input)
			it.Tools = append(it.Tools, sum)
			it.Files = append(it.Files, files...)
		}
	}
	if it.Text == "" && len(it.Tools) == 0 {
		return
	}
	s := c.s
	s.Items = append(s.Items, it)
	if rec.Message.StopReason == "end_turn" || rec.Message.StopReason == "stop_sequence" {
		end := c.item(ItemEnd)
		end.Key += "/end"
		s.Items = append(s.Items, end)
	}
}

// finish links the sessions of the file and returns those holding a
// conversation, or why the file gave none.
func (p *ccParser) finish() Parsed {
	out := p.out
	// A file holding records of several sessions is a resumed session
	// carrying copies of the history of those it continues: the file's
	// own session (its name, else the last one met) resumes the others.
	if len(p.order) > 1 {
		main := p.order[len(p.order)-1]
		if n := sessionFromName(p.name); p.sessions[n] != nil {
			main = p.sessions[n]
		}
		for _, s := range p.order {
			if s != main && hasConversation(s) {
				main.Previous = append(main.Previous, s.ID)
			}
		}
	}
	for _, s := range p.order {
		if !hasConversation(s) {
			continue
		}
		out.Sessions = append(out.Sessions, s)
	}
	switch {
	case len(out.Sessions) > 0:
	case p.sidechain > 0:
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, p.name+": subagent sidechain (its work is summarised in the parent session)")
	case len(out.Problems) == 0:
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, p.name+": no conversation (no prompt or answer)")
	}
	return out
}

func hasConversation(s *Session) bool {
	for _, it := range s.Items {
		if it.Kind == ItemPrompt || it.Kind == ItemStep && (it.Text != "" || len(it.Tools) > 0) {
			return true
		}
	}
	return false
}

// ccUserText reads a user record's content: the prompt text, the files
// named by tool results (none), whether it is an interruption notice, and
// whether it is a human prompt at all.
func ccUserText(raw json.RawMessage) (text string, files []string, interrupted, prompt bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return cleanPrompt(s)
	}
	var blocks []ccBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", nil, false, false
	}
	var texts []string
	images := 0
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "image", "document":
			images++
		}
	}
	if len(texts) == 0 && images == 0 {
		return "", nil, false, false // tool results only
	}
	t, _, intr, ok := cleanPrompt(strings.Join(texts, "\n\n"))
	if intr {
		return "", nil, true, false
	}
	if images > 0 && t == "" {
		return imageOnly, nil, false, true
	}
	if images > 0 {
		// images are left out; the marker is not part of the prompt's
		// identity (a copied prompt may split text and images apart)
		return t, nil, false, true
	}
	return t, nil, false, ok
}

// cleanPrompt strips what Claude Code wraps around a prompt (system
// reminders, IDE context) and turns a slash command into its name and
// arguments.
func cleanPrompt(s string) (string, []string, bool, bool) {
	trim := strings.TrimSpace(s)
	if strings.HasPrefix(trim, "[Request interrupted by user") {
		return "", nil, true, false
	}

	if strings.HasPrefix(trim, "<local-command-stdout>") || strings.HasPrefix(trim, "<local-command-stderr>") ||
		strings.HasPrefix(trim, "<bash-stdout>") || strings.HasPrefix(trim, "<bash-stderr>") {
		// command output: written by Claude Code, not typed
		return "", nil, false, false
	}
	if m := reCommand().FindStringSubmatch(s); m != nil {
		cmd := strings.TrimSpace(m[1])
		if a := reCommandArg().FindStringSubmatch(s); a != nil && strings.TrimSpace(a[1]) != "" {
			cmd += " " + strings.TrimSpace(a[1])
		}
		return cmd, nil, false, cmd != ""
	}
	s = reSystemTags().ReplaceAllString(s, "")
	s = reANSI().ReplaceAllString(s, "")
	s = strings.TrimSpace(s)
	return s, nil, false, s != ""
}

// ccTaskNotice reads a <task-notification> user record: "[task
// notification] <its summary>".
func ccTaskNotice(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var blocks []ccBlock
		if json.Unmarshal(raw, &blocks) != nil || len(blocks) != 1 || blocks[0].Type != "text" {
			return "", false
		}
		s = blocks[0].Text
	}
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<task-notification>") {
		return "", false
	}
	note := "background task finished"
	if m := reTaskSummary().FindStringSubmatch(s); m != nil && strings.TrimSpace(m[1]) != "" {
		note = strings.TrimSpace(m[1])
	}
	return "[task notification] " + oneLine(note, 500), true
}

func joinText(a, b string) string {
	b = strings.TrimSpace(b)
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n\n" + b
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}
	}
	return t.UTC()
}

func shortErr(err error) string {
	return oneLine(err.Error(), 200)
}

// sessionFromName is a session id from a native file name when it holds a
// valid one (<uuid>.jsonl).
func sessionFromName(name string) string {
	b := filepath.Base(name)
	b = strings.TrimSuffix(b, filepath.Ext(b))
	if validID(b) {
		return b
	}
	return ""
}

// readLine reads one line of at most max bytes (without its "\n"); a
// longer one is consumed and reported as tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, e := r.ReadLine()
		if e != nil {
			return line, tooLong, e
		}
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !isPrefix {
			if line == nil {
				line = []byte{}
			}
			return line, tooLong, nil
		}
	}
}
