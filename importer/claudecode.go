package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Claude Code keeps one JSONL file per session in
// ~/.claude/projects/<encoded-cwd>/<session-id>.jsonl. Each line is a
// record: "user" and "assistant" messages (Anthropic Messages API content
// blocks), "system" records (compact_boundary, api_error, local_command,
// turn_duration, ...), "summary" titles, "file-history-snapshot",
// "progress", "queue-operation". Records carry sessionId, uuid,
// parentUuid, timestamp, isSidechain, isMeta, isCompactSummary.
//
// Reading rules (protocol.md, "Imported transcripts"):
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
	reSystemTags  = regexp.MustCompile(`(?s)<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics|local-command-caveat)>.*?</(system-reminder|ide_opened_file|ide_selection|ide_diagnostics|local-command-caveat)>`)
	reCommand     = regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>`)
	reCommandArg  = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
	reANSI        = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	reTaskSummary = regexp.MustCompile(`(?s)<summary>(.*?)</summary>`)
)

// ParseClaudeCode reads one Claude Code session file. name is used in
// messages and for the session id when no record carries one.
func ParseClaudeCode(r io.Reader, name string) Parsed {
	var out Parsed
	lines := newRecords(r, name, &out.Problems)
	sessions := map[string]*Session{}
	var order []*Session
	var sidechain, records int
	lastPrompt := map[string]*Item{}
	for lines.Next() {
		lineNo, t := lines.Line(), lines.Bytes()
		if bytes.HasPrefix(t, []byte("//")) {
			continue
		}
		var rec ccRecord
		if err := json.Unmarshal(t, &rec); err != nil {
			out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "not a JSON record: " + shortErr(err)})
			continue
		}
		records++
		if rec.IsSidechain {
			sidechain++
			continue
		}
		if rec.Type != "user" && rec.Type != "assistant" && !(rec.Type == "system" && rec.Subtype == "compact_boundary") &&
			!(rec.Type == "system" && (rec.Subtype == "turn_duration" || rec.Subtype == "stop_hook_summary")) {
			continue // titles, snapshots, progress, queue operations, api errors...
		}
		sid := rec.SessionID
		if sid == "" {
			sid = sessionFromName(name)
		}
		if sid == "" {
			out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "record without sessionId"})
			continue
		}
		if !validID(sid) {
			out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: fmt.Sprintf("sessionId %q is not usable as a session id", oneLine(sid, 80))})
			continue
		}
		s := sessions[sid]
		if s == nil {
			s = &Session{Agent: ClaudeCode, ID: sid, Source: name}
			sessions[sid] = s
			order = append(order, s)
		}
		ts := parseTime(rec.Timestamp)
		key := rec.UUID
		if key == "" {
			key = "L" + itoa(lineNo)
		}
		switch rec.Type {
		case "system":
			if rec.Subtype == "compact_boundary" {
				reason := "context compacted"
				if m := rec.CompactMetadata; m != nil {
					reason = "context compacted (" + nonEmpty(m.Trigger, "auto")
					if m.PreTokens > 0 {
						reason += ", " + itoa(m.PreTokens) + " tokens before"
					}
					reason += ")"
				}
				s.Items = append(s.Items, Item{Kind: ItemReset, Key: key, Time: ts, Line: lineNo, Reason: reason})
				delete(lastPrompt, sid)
			} else {
				s.Items = append(s.Items, Item{Kind: ItemEnd, Key: key, Time: ts, Line: lineNo})
			}
		case "user":
			if rec.Message == nil || rec.IsMeta || rec.IsCompactSummary {
				continue
			}
			if note, ok := ccTaskNotice(rec.Message.Content); ok {
				// a background task ended and the agent acts on it: not a
				// prompt (the turn goes on under the human's prompt), but a
				// new exchange of the turn, opened by the notice
				s.Items = append(s.Items, Item{Kind: ItemStep, Key: key, Time: ts, Line: lineNo, Text: note, Break: true})
				continue
			}
			text, files, interrupted, isPrompt := ccUserText(rec.Message.Content)
			if interrupted {
				s.Items = append(s.Items, Item{Kind: ItemStep, Key: key, Time: ts, Line: lineNo, Text: "[interrupted by the user]"})
				continue
			}
			if !isPrompt {
				if len(files) > 0 {
					s.Items = append(s.Items, Item{Kind: ItemStep, Key: key, Time: ts, Line: lineNo, Files: files})
				}
				continue
			}
			if p := lastPrompt[sid]; p != nil && p.Time.Equal(ts) && len(s.Items) > 0 && s.Items[len(s.Items)-1].Kind == ItemPrompt {
				// one prompt written as several records
				last := &s.Items[len(s.Items)-1]
				if last.Text == imageOnly {
					last.Text = ""
				}
				if text != imageOnly {
					last.Text = joinText(last.Text, text)
				}
				continue
			}
			s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: key, Time: ts, Line: lineNo, Text: text})
			lastPrompt[sid] = &s.Items[len(s.Items)-1]
		case "assistant":
			if rec.Message == nil || rec.IsAPIError {
				continue // API error notices are written by Claude Code, not answers
			}
			var blocks []ccBlock
			if err := json.Unmarshal(rec.Message.Content, &blocks); err != nil {
				var s1 string
				if json.Unmarshal(rec.Message.Content, &s1) == nil {
					blocks = []ccBlock{{Type: "text", Text: s1}}
				} else if len(rec.Message.Content) > 0 && string(rec.Message.Content) != "null" {
					out.Problems = append(out.Problems, Problem{File: name, Line: lineNo, Reason: "assistant content is neither text nor blocks"})
					continue
				}
			}
			it := Item{Kind: ItemStep, Key: key, Time: ts, Line: lineNo}
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
				continue
			}
			s.Items = append(s.Items, it)
			if rec.Message.StopReason == "end_turn" || rec.Message.StopReason == "stop_sequence" {
				s.Items = append(s.Items, Item{Kind: ItemEnd, Key: key + "/end", Time: ts, Line: lineNo})
			}
		}
	}
	// A file holding records of several sessions is a resumed session
	// carrying copies of the history of those it continues: the file's
	// own session (its name, else the last one met) resumes the others.
	if len(order) > 1 {
		main := order[len(order)-1]
		if n := sessionFromName(name); sessions[n] != nil {
			main = sessions[n]
		}
		for _, s := range order {
			if s != main && hasConversation(s) {
				main.Previous = append(main.Previous, s.ID)
			}
		}
	}
	for _, s := range order {
		if !hasConversation(s) {
			continue
		}
		out.Sessions = append(out.Sessions, s)
	}
	switch {
	case len(out.Sessions) > 0:
	case sidechain > 0:
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": subagent sidechain (its work is summarised in the parent session)")
	case len(out.Problems) == 0:
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": no conversation (no prompt or answer)")
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
	if m := reCommand.FindStringSubmatch(s); m != nil {
		cmd := strings.TrimSpace(m[1])
		if a := reCommandArg.FindStringSubmatch(s); a != nil && strings.TrimSpace(a[1]) != "" {
			cmd += " " + strings.TrimSpace(a[1])
		}
		return cmd, nil, false, cmd != ""
	}
	s = reSystemTags.ReplaceAllString(s, "")
	s = reANSI.ReplaceAllString(s, "")
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
	if m := reTaskSummary.FindStringSubmatch(s); m != nil && strings.TrimSpace(m[1]) != "" {
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
