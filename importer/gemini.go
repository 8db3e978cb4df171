package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Gemini CLI keeps, per project, ~/.gemini/tmp/<project-hash>/:
//   - chats/session-<time>-<id8>.json: one JSON object per session,
//     rewritten as it grows: {sessionId, projectHash, startTime,
//     lastUpdated, messages: [{id, timestamp, type: user|gemini|info|error,
//     content (text or parts), toolCalls: [{name, args, result, ...}],
//     thoughts}]};
//   - logs.json: every prompt typed in the project, [{sessionId,
//     messageId, type: "user", message, timestamp}];
//   - checkpoint-<tag>.json (/chat save): the model history, an array of
//     {role: user|model, parts: [{text} | {functionCall} |
//     {functionResponse}]} (no times, no session id).
//
// Reading rules: user messages are prompts, gemini messages' content is
// the answer, toolCalls are summarised (results left out), thoughts left
// out. logs.json holds prompts only: a session whose chat recording is
// imported in the same run, or whose exchanges are already in the logs,
// is skipped there; otherwise its prompts become user-only exchanges.
// A checkpoint becomes session "checkpoint-<tag>" with the file's time.

type geminiChat struct {
	SessionID string          `json:"sessionId"`
	StartTime string          `json:"startTime"`
	Messages  []geminiMessage `json:"messages"`
	History   json.RawMessage `json:"history"`
}

type geminiMessage struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"toolCalls"`
}

type geminiLog struct {
	SessionID string `json:"sessionId"`
	MessageID int    `json:"messageId"`
	Type      string `json:"type"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text         string `json:"text"`
		Thought      bool   `json:"thought"`
		FunctionCall *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
	} `json:"parts"`
}

// maxGeminiFile bounds a Gemini JSON file read whole.
const maxGeminiFile = 512 << 20

// ParseGemini reads one Gemini CLI file (chat recording, logs.json or
// checkpoint). mtime stands in for the time of records that have none.
func ParseGemini(r io.Reader, name string, mtime time.Time) Parsed {
	var out Parsed
	data, err := io.ReadAll(io.LimitReader(r, maxGeminiFile+1))
	if err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Reason: "read: " + err.Error()})
		return out
	}
	if len(data) > maxGeminiFile {
		out.Problems = append(out.Problems, Problem{File: name, Reason: fmt.Sprintf("file over %d bytes, skipped", maxGeminiFile)})
		return out
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": empty file")
		return out
	}
	if data[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: lineOf(data, err), Reason: "not JSON: " + shortErr(err)})
			return out
		}
		if len(raw) == 0 {
			out.Skipped++
			out.SkipReasons = append(out.SkipReasons, name+": empty list")
			return out
		}
		var probe map[string]json.RawMessage
		_ = json.Unmarshal(raw[0], &probe)
		if _, ok := probe["role"]; ok {
			return parseGeminiHistory(raw, name, mtime)
		}
		return parseGeminiLogs(raw, name)
	}
	var chat geminiChat
	if err := json.Unmarshal(data, &chat); err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Line: lineOf(data, err), Reason: "not a Gemini chat: " + shortErr(err)})
		return out
	}
	if len(chat.History) > 0 && chat.Messages == nil {
		var raw []json.RawMessage
		if err := json.Unmarshal(chat.History, &raw); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Reason: "history: " + shortErr(err)})
			return out
		}
		p := parseGeminiHistory(raw, name, mtime)
		if chat.SessionID != "" && validID(chat.SessionID) {
			for _, s := range p.Sessions {
				s.ID = chat.SessionID
			}
		}
		return p
	}
	sid := chat.SessionID
	if !validID(sid) {
		out.Problems = append(out.Problems, Problem{File: name, Reason: fmt.Sprintf("sessionId %q is not usable as a session id", oneLine(sid, 80))})
		return out
	}
	s := &Session{Agent: Gemini, ID: sid, Source: name}
	for i, m := range chat.Messages {
		ts := parseTime(m.Timestamp)
		key := m.ID
		if key == "" {
			key = "M" + itoa(i)
		}
		text := geminiText(m.Content)
		switch m.Type {
		case "user":
			if strings.TrimSpace(text) == "" {
				continue
			}
			s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: key, Time: ts, Line: i + 1, Text: strings.TrimSpace(text)})
		case "gemini", "model", "assistant":
			it := Item{Kind: ItemStep, Key: key, Time: ts, Line: i + 1, Text: text}
			for _, tc := range m.ToolCalls {
				sum, files := summariseTool(tc.Name, tc.Args)
				it.Tools = append(it.Tools, sum)
				it.Files = append(it.Files, files...)
			}
			if strings.TrimSpace(it.Text) == "" && len(it.Tools) == 0 {
				continue
			}
			s.Items = append(s.Items, it)
		}
	}
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no conversation")
		return out
	}
	// a chat file is rewritten whole and always complete: its last turn is closed
	s.Items = append(s.Items, Item{Kind: ItemEnd, Key: "end"})
	out.Sessions = append(out.Sessions, s)
	return out
}

// parseGeminiLogs reads logs.json: prompts only, grouped by session.
func parseGeminiLogs(raw []json.RawMessage, name string) Parsed {
	var out Parsed
	sessions := map[string]*Session{}
	var order []*Session
	for i, r := range raw {
		var l geminiLog
		if err := json.Unmarshal(r, &l); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: "entry " + itoa(i) + ": " + shortErr(err)})
			continue
		}
		if l.Type != "user" || strings.TrimSpace(l.Message) == "" {
			continue
		}
		if !validID(l.SessionID) {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: fmt.Sprintf("entry %d: sessionId %q is not usable", i, oneLine(l.SessionID, 80))})
			continue
		}
		s := sessions[l.SessionID]
		if s == nil {
			s = &Session{Agent: Gemini, ID: l.SessionID, Source: name}
			sessions[l.SessionID] = s
			order = append(order, s)
		}
		s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: "log" + itoa(l.MessageID), Time: parseTime(l.Timestamp), Line: i + 1, Text: strings.TrimSpace(l.Message)})
	}
	for _, s := range order {
		s.Items = append(s.Items, Item{Kind: ItemEnd, Key: "end"})
		out.Sessions = append(out.Sessions, s)
	}
	return out
}

// parseGeminiHistory reads a checkpoint (model history without times).
func parseGeminiHistory(raw []json.RawMessage, name string, mtime time.Time) Parsed {
	var out Parsed
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	sid := sanitizeID(base)
	if sid == "" {
		sid = "checkpoint"
	}
	s := &Session{Agent: Gemini, ID: sid, Source: name}
	t := mtime.UTC()
	for i, r := range raw {
		var c geminiContent
		if err := json.Unmarshal(r, &c); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: "entry " + itoa(i) + ": " + shortErr(err)})
			continue
		}
		it := Item{Key: "H" + itoa(i), Time: t, Line: i + 1}
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				sum, files := summariseTool(p.FunctionCall.Name, p.FunctionCall.Args)
				it.Tools = append(it.Tools, sum)
				it.Files = append(it.Files, files...)
			} else if !p.Thought {
				it.Text = joinText(it.Text, p.Text)
			}
		}
		switch c.Role {
		case "user":
			if it.Text == "" || strings.HasPrefix(it.Text, "This is the Gemini CLI") {
				continue // function responses and the injected context
			}
			it.Kind = ItemPrompt
		case "model":
			if it.Text == "" && len(it.Tools) == 0 {
				continue
			}
			it.Kind = ItemStep
		default:
			continue
		}
		s.Items = append(s.Items, it)
	}
	if hasConversation(s) {
		s.Items = append(s.Items, Item{Kind: ItemEnd, Key: "end"})
		out.Sessions = append(out.Sessions, s)
	} else {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no conversation")
	}
	return out
}

// geminiText is a message's text: a string, or the text parts of a part
// list (thoughts, inline data and function parts left out).
func geminiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text    string `json:"text"`
		Thought bool   `json:"thought"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out string
		for _, p := range parts {
			if !p.Thought {
				out = joinText(out, p.Text)
			}
		}
		return out
	}
	var one struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &one) == nil {
		return one.Text
	}
	return ""
}

// lineOf is the line of a JSON syntax error's offset.
func lineOf(data []byte, err error) int {
	if se, ok := err.(*json.SyntaxError); ok && se.Offset <= int64(len(data)) {
		return bytes.Count(data[:se.Offset], []byte("\n")) + 1
	}
	return 0
}
