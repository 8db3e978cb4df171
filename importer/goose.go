package importer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// Goose (block/goose) keeps its sessions in <data>/sessions/, where <data>
// is $GOOSE_PATH_ROOT/data, else ${XDG_DATA_HOME:-~/.local/share}/goose on
// Linux and macOS, %APPDATA%\Block\goose\data on Windows:
//   - before 1.10, one <id>.jsonl per session: line 1 the session's
//     metadata {working_dir, description, ...}, then one message a line
//     {id, role, created (Unix s), content: [...], metadata};
//   - since, sessions.db (SQLite): sessions (id, working_dir, session_type,
//     ...) and messages (session_id, message_id, role, content_json,
//     created_timestamp, metadata_json).
// A message's content is a list of {type: text | image | toolRequest
// {toolCall{value{name, arguments}}} | toolResponse | thinking |
// conversationCompacted | summarizationRequested | systemNotification |
// ...}; metadata {userVisible, agentVisible} hides a message from one
// side.
//
// Reading rules: a user message's text is the prompt (a user message of
// tool responses only is not one); an assistant message's text is the
// answer and its tool requests are summarised; thinking and tool
// responses are left out, as are the messages the user never saw (a
// compaction's summary: userVisible false). A compaction marker
// (conversationCompacted, summarizationRequested, or a system
// notification about compacting) is a context reset. A sub-agent's
// session (session_type sub_agent) is skipped like Claude Code's
// sidechains.

type gooseMsg struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"`
	Created  json.RawMessage `json:"created"`
	Content  json.RawMessage `json:"content"`
	Metadata *struct {
		UserVisible *bool `json:"userVisible"`
	} `json:"metadata"`
}

type gooseContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Msg      string `json:"msg"`
	ToolCall *struct {
		Value *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"value"`
	} `json:"toolCall"`
}

var reGooseCompact = lazyre.New(`(?i)compact|summari[sz]`)

// ParseGoose reads a legacy Goose session file (<id>.jsonl).
func ParseGoose(r io.Reader, name string) Parsed {
	var out Parsed
	sid := sanitizeID(strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)))
	if sid == "" {
		sid = "session"
	}
	s := &Session{Agent: Goose, ID: sid, Source: name}
	lines := newRecords(r, name, &out.Problems)
	first := true
	for lines.Next() {
		n := lines.Line()
		if first {
			first = false
			var meta struct {
				WorkingDir string `json:"working_dir"`
				Role       string `json:"role"`
			}
			if err := json.Unmarshal(lines.Bytes(), &meta); err == nil && meta.Role == "" {
				s.Cwd = meta.WorkingDir
				continue
			}
		}
		var m gooseMsg
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: n, Reason: "not a JSON message: " + shortErr(err)})
			continue
		}
		if err := gooseMessage(s, &m, n); err != "" {
			out.Problems = append(out.Problems, Problem{File: name, Line: n, Reason: err})
		}
	}
	addGooseSession(&out, s)
	return out
}

// gooseMessage adds the items of message m (line: its place); it returns
// why the message cannot be read.
func gooseMessage(s *Session, m *gooseMsg, line int) string {
	var content []gooseContent
	if err := json.Unmarshal(m.Content, &content); err != nil && len(m.Content) > 0 {
		return "content: " + shortErr(err)
	}
	it := Item{Key: nonEmpty(m.ID, "L"+itoa(line)), Time: gooseTime(m.Created), Line: line}
	if m.Metadata != nil && m.Metadata.UserVisible != nil && !*m.Metadata.UserVisible {
		return "" // a compaction's summary, instructions for the model
	}
	image := false
	for _, c := range content {
		switch c.Type {
		case "image":
			image = true
		case "text":
			it.Text = joinText(it.Text, c.Text)
		case "toolRequest", "frontendToolRequest":
			if c.ToolCall != nil && c.ToolCall.Value != nil {
				sum, files := summariseTool(c.ToolCall.Value.Name, c.ToolCall.Value.Arguments)
				it.Tools = append(it.Tools, sum)
				it.Files = append(it.Files, files...)
			}
		case "conversationCompacted", "summarizationRequested", "contextLengthExceeded":
			gooseReset(s, Item{Kind: ItemReset, Key: it.Key + "/reset", Time: it.Time, Line: line, Reason: "context compacted"})
		case "systemNotification":
			if reGooseCompact().MatchString(c.Msg) {
				gooseReset(s, Item{Kind: ItemReset, Key: it.Key + "/reset", Time: it.Time, Line: line, Reason: "context compacted"})
			}
		}
	}
	switch m.Role {
	case "user":
		t := strings.TrimSpace(it.Text)
		if t == "" && image {
			t = imageOnly // a prompt of images only: the image left out
		}
		if t != "" {
			it.Kind, it.Text, it.Tools = ItemPrompt, t, nil
			s.Items = append(s.Items, it)
		}
	case "assistant":
		if it.Text != "" || len(it.Tools) > 0 {
			it.Kind = ItemStep
			s.Items = append(s.Items, it)
			if len(it.Tools) == 0 {
				// an answer without a tool call waits for the user
				s.Items = append(s.Items, Item{Kind: ItemEnd, Key: it.Key + "/end", Time: it.Time, Line: line})
			}
		}
	}
	return ""
}

// gooseReset adds a reset, unless the item before it is one already (a
// compaction writes several notices: "Exceeded auto-compact threshold",
// "Compaction complete").
func gooseReset(s *Session, it Item) {
	if n := len(s.Items); n > 0 && s.Items[n-1].Kind == ItemReset {
		return
	}
	s.Items = append(s.Items, it)
}

// gooseTime reads a time: Unix seconds (or milliseconds), or RFC 3339.
func gooseTime(raw json.RawMessage) time.Time {
	var f float64
	if json.Unmarshal(raw, &f) == nil && f > 0 {
		if f > 1e11 {
			return msTime(f)
		}
		return time.Unix(int64(f), 0).UTC()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t := parseTime(s); !t.IsZero() {
			return t
		}
		if t, err := time.Parse("2006-01-02 15:04:05", s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func addGooseSession(out *Parsed, s *Session) {
	if !validID(s.ID) {
		out.Problems = append(out.Problems, Problem{File: s.Source, Reason: fmt.Sprintf("session id %q is not usable", oneLine(s.ID, 80))})
		return
	}
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, s.Source+": session "+s.ID+": no conversation")
		return
	}
	out.Sessions = append(out.Sessions, s)
}

// ParseGooseDB reads a Goose sessions.db, read-only: the sessions that
// ran in one of roots (all when roots is empty).
func ParseGooseDB(path string, roots []string) (Parsed, error) {
	var out Parsed
	db, err := openReadOnly(path)
	if err != nil {
		return out, err
	}
	defer db.Close()
	sessions, err := queryRows(db, `SELECT * FROM sessions`)
	if err != nil {
		return out, fmt.Errorf("%s: not a Goose sessions database: %w", path, err)
	}
	for _, row := range sessions {
		if len(roots) > 0 && !within(row["working_dir"], roots) {
			continue
		}
		if row["session_type"] == "sub_agent" {
			out.Skipped++
			out.SkipReasons = append(out.SkipReasons, path+": session "+row["id"]+": a sub-agent's session (its work returns to its parent)")
			continue
		}
		s := &Session{Agent: Goose, ID: row["id"], Source: path, Cwd: row["working_dir"], Time: gooseTime(rawTime(row["created_at"]))}
		msgs, err := queryRows(db, `SELECT * FROM messages WHERE session_id = ? ORDER BY id`, s.ID)
		if err != nil {
			return out, fmt.Errorf("%s: read messages: %w", path, err)
		}
		for i, r := range msgs {
			m := gooseMsg{ID: r["message_id"], Role: r["role"], Created: rawTime(r["created_timestamp"]), Content: json.RawMessage(r["content_json"])}
			if m.ID == "" {
				m.ID = "row" + r["id"]
			}
			if md := r["metadata_json"]; md != "" {
				_ = json.Unmarshal([]byte(md), &m.Metadata)
			}
			if e := gooseMessage(s, &m, i+1); e != "" {
				out.Problems = append(out.Problems, Problem{File: path, Reason: "session " + s.ID + " message " + oneLine(m.ID, 80) + ": " + e})
			}
		}
		addGooseSession(&out, s)
	}
	return out, nil
}

// gooseCwd reads the working_dir of a legacy session file's first line.
func gooseCwd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _, _ := readLine(bufio.NewReaderSize(f, 1<<16), 4<<20)
	var meta struct {
		WorkingDir string `json:"working_dir"`
	}
	_ = json.Unmarshal(line, &meta)
	return meta.WorkingDir
}
