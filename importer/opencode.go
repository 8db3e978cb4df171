package importer

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// OpenCode (sst/opencode, now anomalyco/opencode) keeps its sessions under
// ${XDG_DATA_HOME:-~/.local/share}/opencode/ (on every platform), in two
// layouts:
//   - releases until early 2026: JSON files, storage/session/<projectID>/
//     <sessionID>.json (id, directory, parentID, title, time), storage/
//     message/<sessionID>/<messageID>.json (role, time, finish, summary,
//     ...) and storage/part/<messageID>/<partID>.json (type: text,
//     reasoning, tool {tool, state{input, output}}, file, patch {files},
//     step-start, step-finish, compaction, subtask, ...);
//   - later releases: the same objects in SQLite, opencode.db (or
//     opencode-<channel>.db): tables session (id, directory, parent_id,
//     ...), message (id, session_id, time_created, data JSON) and part
//     (id, message_id, data JSON).
// `opencode export <id>` prints one session as {info, messages: [{info,
// parts}]}; that file is read too.
//
// Reading rules: a user message's text parts (not synthetic, not ignored)
// are the prompt; an assistant message's text parts are the answer, its
// tool parts summarised (files from their input, patch parts' files),
// reasoning and tool outputs left out; a compaction part is a context
// reset and the assistant summary that follows it (summary: true) a copy,
// left out (such a summary without a compaction part before it, as older
// releases wrote them, is the reset). A message whose finish is not "tool-calls" ends the turn. A
// session started by another (parentID: a subagent's task) is linked to
// it by a session_resume.

type ocSession struct {
	ID        string          `json:"id"`
	Directory string          `json:"directory"`
	ParentID  string          `json:"parentID"`
	Time      json.RawMessage `json:"time"`
}

type ocMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Time    ocTimes         `json:"time"`
	Finish  string          `json:"finish"`
	Summary json.RawMessage `json:"summary"`
	Error   json.RawMessage `json:"error"`
	Path    json.RawMessage `json:"path"`
	parts   []ocPart
}

type ocTimes struct {
	Created   json.RawMessage `json:"created"`
	Completed json.RawMessage `json:"completed"`
	Start     json.RawMessage `json:"start"`
}

type ocPart struct {
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Text      string   `json:"text"`
	Synthetic bool     `json:"synthetic"`
	Ignored   bool     `json:"ignored"`
	Tool      string   `json:"tool"`
	Files     []string `json:"files"`
	Mime      string   `json:"mime"`
	Prompt    string   `json:"prompt"`
	Auto      bool     `json:"auto"`
	Time      ocTimes  `json:"time"`
	State     *struct {
		Input json.RawMessage `json:"input"`
	} `json:"state"`
}

// ocTime reads an OpenCode time: Unix milliseconds, or RFC 3339.
func ocTime(raw json.RawMessage) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	return cursorTime(raw)
}

// openCodeSession makes a session of info and its messages (each with
// its parts), in order.
func openCodeSession(info ocSession, msgs []ocMessage, source string) *Session {
	s := &Session{Agent: OpenCode, ID: info.ID, Source: source, Cwd: info.Directory}
	var created struct {
		Created json.RawMessage `json:"created"`
	}
	if json.Unmarshal(info.Time, &created) == nil {
		s.Time = ocTime(created.Created)
	}
	if info.ParentID != "" && validID(info.ParentID) {
		s.Previous = []string{info.ParentID}
	}
	sort.SliceStable(msgs, func(i, j int) bool {
		ti, tj := ocTime(msgs[i].Time.Created), ocTime(msgs[j].Time.Created)
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return msgs[i].ID < msgs[j].ID
	})
	for i := range msgs {
		openCodeMessage(s, &msgs[i], i+1)
	}
	return s
}

// openCodeMessage adds the items of message m (line: its place).
func openCodeMessage(s *Session, m *ocMessage, line int) {
	sort.SliceStable(m.parts, func(i, j int) bool { return m.parts[i].ID < m.parts[j].ID })
	it := Item{Key: nonEmpty(m.ID, "m"+itoa(line)), Time: ocTime(m.Time.Created), Line: line}
	var reset *Item
	image := false
	for _, p := range m.parts {
		switch p.Type {
		case "file":
			image = image || strings.HasPrefix(p.Mime, "image/")
		case "text":
			if !p.Synthetic && !p.Ignored {
				it.Text = joinText(it.Text, p.Text)
			}
		case "subtask":
			if m.Role == "user" && it.Text == "" {
				it.Text = strings.TrimSpace(p.Prompt)
			}
		case "tool":
			var input json.RawMessage
			if p.State != nil {
				input = p.State.Input
			}
			sum, files := summariseTool(p.Tool, input)
			it.Tools = append(it.Tools, sum)
			it.Files = append(it.Files, files...)
		case "patch":
			it.Files = append(it.Files, p.Files...)
		case "compaction":
			reason := "context compacted"
			if p.Auto {
				reason = "context compacted (auto)"
			}
			reset = &Item{Kind: ItemReset, Key: nonEmpty(p.ID, it.Key+"/compaction"), Time: it.Time, Line: line, Reason: reason}
		}
	}
	summary := string(bytes.TrimSpace(m.Summary)) == "true"
	switch {
	case m.Role == "user":
		if reset != nil {
			s.Items = append(s.Items, *reset)
		}
		if strings.TrimSpace(it.Text) == "" && image {
			it.Text = imageOnly // a prompt of images only: the image left out
		}
		if strings.TrimSpace(it.Text) != "" {
			it.Kind, it.Text, it.Tools = ItemPrompt, strings.TrimSpace(it.Text), nil
			s.Items = append(s.Items, it)
		}
	case m.Role == "assistant" && summary:
		// a compaction's summary is a copy, left out; releases before the
		// compaction part marked a compaction by this message alone
		if n := len(s.Items); n == 0 || s.Items[n-1].Kind != ItemReset {
			s.Items = append(s.Items, Item{Kind: ItemReset, Key: it.Key + "/summary", Time: it.Time, Line: line, Reason: "context compacted"})
		}
	case m.Role == "assistant":
		if it.Text != "" || len(it.Tools) > 0 || len(it.Files) > 0 {
			it.Kind = ItemStep
			s.Items = append(s.Items, it)
		}
		if reset != nil {
			s.Items = append(s.Items, *reset)
		}
		if m.Finish != "" && m.Finish != "tool-calls" && m.Finish != "unknown" || len(m.Time.Completed) > 0 && len(m.Error) > 0 {
			s.Items = append(s.Items, Item{Kind: ItemEnd, Key: it.Key + "/end", Time: it.Time, Line: line})
		}
	}
}

// ParseOpenCodeStorage reads a session file of the JSON storage
// (storage/session/<project>/<session>.json) with its messages and parts.
func ParseOpenCodeStorage(path string) Parsed {
	var out Parsed
	data, err := readCapped(path, 64<<20)
	if err != nil {
		out.Problems = append(out.Problems, Problem{File: path, Reason: err.Error()})
		return out
	}
	var info ocSession
	if err := json.Unmarshal(data, &info); err != nil {
		out.Problems = append(out.Problems, Problem{File: path, Line: lineOf(data, err), Reason: "not an OpenCode session: " + shortErr(err)})
		return out
	}
	if info.ID == "" {
		info.ID = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	if !validID(info.ID) {
		out.Problems = append(out.Problems, Problem{File: path, Reason: fmt.Sprintf("session id %q is not usable", oneLine(info.ID, 80))})
		return out
	}
	msgDir, partDir := openCodeDirs(path, info.ID)
	msgs := readOpenCodeDir[ocMessage](msgDir, &out)
	for i := range msgs {
		msgs[i].parts = readOpenCodeDir[ocPart](partDir(msgs[i].ID), &out)
	}
	addOpenCodeSession(&out, openCodeSession(info, msgs, path))
	return out
}

// openCodeDirs are the folders of a session file's messages and of a
// message's parts: storage/message/<session>/ and storage/part/<message>/;
// in the first releases' layout (project/<slug>/storage/session/info/
// <session>.json), storage/session/message/<session>/ and
// storage/session/part/<session>/<message>/.
func openCodeDirs(path, session string) (string, func(string) string) {
	if filepath.Base(filepath.Dir(path)) == "info" {
		base := filepath.Dir(filepath.Dir(path))
		return filepath.Join(base, "message", session), func(m string) string { return filepath.Join(base, "part", session, m) }
	}
	storage := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	return filepath.Join(storage, "message", session), func(m string) string { return filepath.Join(storage, "part", m) }
}

// readOpenCodeDir reads every *.json object of dir (none when it is
// missing); an unreadable one is a problem.
func readOpenCodeDir[T any](dir string, out *Parsed) []T {
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(names)
	var items []T
	for _, n := range names {
		data, err := readCapped(n, 64<<20)
		if err != nil {
			out.Problems = append(out.Problems, Problem{File: n, Reason: err.Error()})
			continue
		}
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			out.Problems = append(out.Problems, Problem{File: n, Line: lineOf(data, err), Reason: "not JSON: " + shortErr(err)})
			continue
		}
		items = append(items, v)
	}
	return items
}

// addOpenCodeSession adds s to out, or says why it is left out.
func addOpenCodeSession(out *Parsed, s *Session) {
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, s.Source+": session "+s.ID+": no conversation")
		return
	}
	out.Sessions = append(out.Sessions, s)
}

// ParseOpenCodeExport reads the output of `opencode export`: {info,
// messages: [{info, parts}]}.
func ParseOpenCodeExport(data []byte, name string) Parsed {
	var out Parsed
	var ex struct {
		Info     ocSession `json:"info"`
		Messages []struct {
			Info  ocMessage `json:"info"`
			Parts []ocPart  `json:"parts"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &ex); err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Line: lineOf(data, err), Reason: "not an OpenCode export: " + shortErr(err)})
		return out
	}
	if !validID(ex.Info.ID) {
		out.Problems = append(out.Problems, Problem{File: name, Reason: fmt.Sprintf("session id %q is not usable", oneLine(ex.Info.ID, 80))})
		return out
	}
	var msgs []ocMessage
	for _, m := range ex.Messages {
		m.Info.parts = m.Parts
		msgs = append(msgs, m.Info)
	}
	addOpenCodeSession(&out, openCodeSession(ex.Info, msgs, name))
	return out
}

// ParseOpenCodeDB reads an opencode.db, read-only: the sessions that ran
// in one of roots (all when roots is empty).
func ParseOpenCodeDB(path string, roots []string) (Parsed, error) {
	var out Parsed
	db, err := openReadOnly(path)
	if err != nil {
		return out, err
	}
	defer db.Close()
	sessions, err := queryRows(db, `SELECT * FROM session`)
	if err != nil {
		return out, fmt.Errorf("%s: not an OpenCode database: %w", path, err)
	}
	for _, row := range sessions {
		info := ocSession{ID: row["id"], Directory: row["directory"], ParentID: row["parent_id"]}
		if len(roots) > 0 && !within(info.Directory, roots) {
			continue
		}
		if !validID(info.ID) {
			out.Problems = append(out.Problems, Problem{File: path, Reason: fmt.Sprintf("session id %q is not usable", oneLine(info.ID, 80))})
			continue
		}
		info.Time, _ = json.Marshal(map[string]json.RawMessage{"created": rawTime(row["time_created"])})
		msgs, err := openCodeDBMessages(db, path, info.ID, &out)
		if err != nil {
			return out, err
		}
		addOpenCodeSession(&out, openCodeSession(info, msgs, path))
	}
	return out, nil
}

// openCodeDBMessages reads a session's messages and their parts.
func openCodeDBMessages(db *sql.DB, path, session string, out *Parsed) ([]ocMessage, error) {
	rows, err := queryRows(db, `SELECT * FROM message WHERE session_id = ?`, session)
	if err != nil {
		return nil, fmt.Errorf("%s: read messages: %w", path, err)
	}
	var msgs []ocMessage
	byID := map[string]int{}
	for _, r := range rows {
		var m ocMessage
		if err := json.Unmarshal([]byte(r["data"]), &m); err != nil {
			out.Problems = append(out.Problems, Problem{File: path, Reason: "message " + oneLine(r["id"], 80) + ": " + shortErr(err)})
			continue
		}
		m.ID = r["id"]
		if len(m.Time.Created) == 0 {
			m.Time.Created = rawTime(r["time_created"])
		}
		byID[m.ID] = len(msgs)
		msgs = append(msgs, m)
	}
	parts, err := queryRows(db, `SELECT p.* FROM part p JOIN message m ON p.message_id = m.id WHERE m.session_id = ?`, session)
	if err != nil {
		return nil, fmt.Errorf("%s: read parts: %w", path, err)
	}
	for _, r := range parts {
		i, ok := byID[r["message_id"]]
		if !ok {
			continue
		}
		var p ocPart
		if err := json.Unmarshal([]byte(r["data"]), &p); err != nil {
			out.Problems = append(out.Problems, Problem{File: path, Reason: "part " + oneLine(r["id"], 80) + ": " + shortErr(err)})
			continue
		}
		p.ID = r["id"]
		msgs[i].parts = append(msgs[i].parts, p)
	}
	return msgs, nil
}

// rawTime is a column's time as JSON: a number stays one, text becomes a
// string.
func rawTime(v string) json.RawMessage {
	if v == "" {
		return nil
	}
	if json.Valid([]byte(v)) && (v[0] >= '0' && v[0] <= '9') {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// openReadOnly opens a SQLite database another program may be writing,
// read-only.
func openReadOnly(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// queryRows runs a query and returns each row as its columns' text.
func queryRows(db *sql.DB, query string, args ...any) ([]map[string]string, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].String
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// within reports whether dir is one of roots or inside one.
func within(dir string, roots []string) bool {
	if dir == "" {
		return false
	}
	d := filepath.Clean(dir)
	for _, r := range roots {
		r = filepath.Clean(r)
		if d == r || strings.HasPrefix(d, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
