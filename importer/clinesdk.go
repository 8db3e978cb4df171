package importer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Cline's newer sessions (its SDK, CLI and desktop app, 2026) live in
// <cline data>/sessions/<id>/ (~/.cline/data/sessions; $CLINE_DATA_DIR,
// $CLINE_SESSION_DATA_DIR):
//   - <id>.json, the manifest: {session_id, created_at, cwd,
//     workspace_root, prompt, messages_path, ...};
//   - <id>.messages.json: {version, updated_at, sessionId, messages: [...]},
//     the messages in the Anthropic shape (clineapi.go);
//   - <id>.compaction.json, after a compaction: {updated_at,
//     source_message_count, messages: the compacted replacement}; the
//     messages file keeps the whole history, so the compaction is a reset
//     after its first source_message_count messages (the replacement, a
//     copy, is left out);
//   - <agent>.messages.json beside them: a subagent's messages, skipped
//     like Claude Code's sidechains.

// clineSessionSuffix ends the messages file of a session.
const clineSessionSuffix = ".messages.json"

// ParseClineSession reads the session of a <id>.messages.json file.
func ParseClineSession(path string) Parsed {
	var out Parsed
	dir := filepath.Dir(path)
	stem := strings.TrimSuffix(filepath.Base(path), clineSessionSuffix)
	if stem != filepath.Base(dir) && filepath.Base(filepath.Dir(dir)) == "sessions" {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, path+": a subagent's messages (its work returns to the session's own)")
		return out
	}
	data, err := readCapped(path, maxClineFile)
	if err != nil {
		out.Problems = append(out.Problems, Problem{File: path, Reason: err.Error()})
		return out
	}
	var file struct {
		SessionID string          `json:"sessionId"`
		Messages  json.RawMessage `json:"messages"`
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		file.Messages = trimmed // the messages alone, without the envelope
	} else if err := json.Unmarshal(data, &file); err != nil {
		out.Problems = append(out.Problems, Problem{File: path, Line: lineOf(data, err), Reason: "not a Cline session messages file: " + shortErr(err)})
		return out
	}
	var man struct {
		ID        string `json:"session_id"`
		Created   string `json:"created_at"`
		Cwd       string `json:"cwd"`
		Workspace string `json:"workspace_root"`
	}
	if b, err := readCapped(filepath.Join(dir, stem+".json"), 1<<20); err == nil {
		_ = json.Unmarshal(b, &man)
	}
	sid := nonEmpty(man.ID, nonEmpty(file.SessionID, stem))
	if !validID(sid) {
		sid = sanitizeID(sid)
	}
	if len(file.Messages) == 0 {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, path+": no messages")
		return out
	}
	out = ParseAnthropicMessages(file.Messages, path, Cline, sid, parseTime(man.Created))
	for _, s := range out.Sessions {
		s.Cwd = nonEmpty(man.Cwd, man.Workspace)
		clineCompaction(s, filepath.Join(dir, stem+".compaction.json"))
	}
	return out
}

// clineCompaction places the reset of a session's compaction sidecar
// after the messages it replaced.
func clineCompaction(s *Session, path string) {
	b, err := readCapped(path, maxClineFile)
	if err != nil {
		return
	}
	var c struct {
		Updated string `json:"updated_at"`
		Count   int    `json:"source_message_count"`
	}
	if json.Unmarshal(b, &c) != nil || c.Count <= 0 {
		return
	}
	reset := Item{Kind: ItemReset, Key: "compaction:" + itoa(c.Count), Time: parseTime(c.Updated), Reason: "context compacted", Line: c.Count}
	at := len(s.Items)
	for i, it := range s.Items {
		if it.Line > c.Count {
			at = i
			break
		}
	}
	s.Items = append(s.Items[:at], append([]Item{reset}, s.Items[at:]...)...)
}

// clineSessionCwd is the folder a session manifest names.
func clineSessionCwd(messagesPath string) string {
	dir := filepath.Dir(messagesPath)
	stem := strings.TrimSuffix(filepath.Base(messagesPath), clineSessionSuffix)
	b, err := os.ReadFile(filepath.Join(dir, stem+".json"))
	if err != nil {
		return ""
	}
	var man struct {
		Cwd       string `json:"cwd"`
		Workspace string `json:"workspace_root"`
	}
	_ = json.Unmarshal(b, &man)
	return nonEmpty(man.Cwd, man.Workspace)
}
