package importer

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver (cgo)

	"github.com/praxis-os/continuity/internal/lazyre"
)

// Cursor keeps its chats in SQLite files named state.vscdb (a key/value
// table), in two layouts:
//   - workspace storage (…/workspaceStorage/<id>/state.vscdb), table
//     ItemTable: "workbench.panel.aichat.view.aichat.chatdata" (chat tabs:
//     {tabId, chatTitle, lastSendTime, bubbles: [{type: user|ai, id,
//     text}]}) and "composer.composerData" ({allComposers: [{composerId,
//     createdAt, lastUpdatedAt, conversation: [{type: 1 user | 2 ai,
//     bubbleId, text, …}]}]});
//   - global storage (2025 on), table cursorDiskKV: "composerData:<id>"
//     ({composerId, createdAt, conversation or fullConversationHeadersOnly:
//     [{bubbleId, type}]}) and "bubbleId:<composerId>:<bubbleId>" (one
//     bubble: {type, text, createdAt, toolFormerData, …}).
//
// Each chat tab and each composer is a session (its own id). User bubbles
// are prompts, AI bubbles' text the answer; code blocks, diffs and
// context attachments are left out. Bubbles carry no time in the older
// layouts: a session's items take its creation (or last send) time, and
// prompts are told apart by their bubble id.

// reCursorFence finds the file of a code block: ```lang:path
var reCursorFence = lazyre.New("(?m)^```[A-Za-z0-9_+-]*:([^\\s`]+)\\s*$")

// ParseCursor reads a Cursor state.vscdb, read-only.
func ParseCursor(path string) (Parsed, error) {
	var out Parsed
	abs, err := filepath.Abs(path)
	if err != nil {
		return out, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return out, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	tables := map[string]bool{}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return out, fmt.Errorf("%s: not a readable SQLite database: %w", path, err)
	}
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			tables[n] = true
		}
	}
	rows.Close()
	if tables["ItemTable"] {
		for _, key := range []string{"workbench.panel.aichat.view.aichat.chatdata", "composer.composerData"} {
			var v []byte
			err := db.QueryRow(`SELECT value FROM ItemTable WHERE key = ?`, key).Scan(&v)
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				return out, fmt.Errorf("%s: read %s: %w", path, key, err)
			}
			var p Parsed
			if key == "composer.composerData" {
				p = ParseCursorComposers(v, path+":"+key, nil)
			} else {
				p = ParseCursorChatData(v, path+":"+key)
			}
			merge(&out, p)
		}
	}
	if tables["cursorDiskKV"] {
		p, err := parseCursorDiskKV(db, path)
		if err != nil {
			return out, err
		}
		merge(&out, p)
	}
	if len(out.Sessions) == 0 && len(out.Problems) == 0 {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, path+": no Cursor chats in this database")
	}
	return out, nil
}

func merge(a *Parsed, b Parsed) {
	a.Sessions = append(a.Sessions, b.Sessions...)
	a.Problems = append(a.Problems, b.Problems...)
	a.Skipped += b.Skipped
	a.SkipReasons = append(a.SkipReasons, b.SkipReasons...)
}

type cursorBubble struct {
	Type      json.RawMessage `json:"type"` // "user"/"ai" or 1/2
	ID        string          `json:"id"`
	BubbleID  string          `json:"bubbleId"`
	Text      string          `json:"text"`
	RawText   string          `json:"rawText"`
	CreatedAt json.RawMessage `json:"createdAt"`
	Tool      *struct {
		Name   string `json:"name"`
		Params string `json:"params"`
	} `json:"toolFormerData"`
}

// role is "user", "ai" or "".
func (b cursorBubble) role() string {
	var s string
	if json.Unmarshal(b.Type, &s) == nil {
		switch s {
		case "user":
			return "user"
		case "ai":
			return "ai"
		}
		return ""
	}
	var n int
	if json.Unmarshal(b.Type, &n) == nil {
		switch n {
		case 1:
			return "user"
		case 2:
			return "ai"
		}
	}
	return ""
}

// ParseCursorChatData reads the old chat tabs value.
func ParseCursorChatData(v []byte, name string) Parsed {
	var out Parsed
	var data struct {
		Tabs []struct {
			TabID        string         `json:"tabId"`
			Title        string         `json:"chatTitle"`
			LastSendTime float64        `json:"lastSendTime"`
			Bubbles      []cursorBubble `json:"bubbles"`
		} `json:"tabs"`
	}
	if err := json.Unmarshal(v, &data); err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Reason: "chat data is not JSON: " + shortErr(err)})
		return out
	}
	for i, tab := range data.Tabs {
		if !validID(tab.TabID) {
			out.Problems = append(out.Problems, Problem{File: name, Line: i + 1, Reason: fmt.Sprintf("tab %d: id %q is not usable", i, oneLine(tab.TabID, 60))})
			continue
		}
		s := &Session{Agent: Cursor, ID: tab.TabID, Source: name, Time: msTime(tab.LastSendTime)}
		for j, b := range tab.Bubbles {
			cursorItem(s, b, j, name)
		}
		addCursorSession(&out, s, name)
	}
	return out
}

// ParseCursorComposers reads composer.composerData (or, with load, the
// composerData:<id> values of the global layout).
func ParseCursorComposers(v []byte, name string, load func(composer, bubble string) (cursorBubble, bool)) Parsed {
	var out Parsed
	var data struct {
		All []json.RawMessage `json:"allComposers"`
	}
	if err := json.Unmarshal(v, &data); err != nil {
		out.Problems = append(out.Problems, Problem{File: name, Reason: "composer data is not JSON: " + shortErr(err)})
		return out
	}
	for i, raw := range data.All {
		s, pr := cursorComposer(raw, name, i+1, load)
		if pr != nil {
			out.Problems = append(out.Problems, *pr)
			continue
		}
		addCursorSession(&out, s, name)
	}
	return out
}

type cursorComposerData struct {
	ComposerID    string          `json:"composerId"`
	CreatedAt     float64         `json:"createdAt"`
	LastUpdatedAt float64         `json:"lastUpdatedAt"`
	Conversation  []cursorBubble  `json:"conversation"`
	Headers       []cursorBubble  `json:"fullConversationHeadersOnly"`
	Name          json.RawMessage `json:"name"`
}

func cursorComposer(raw json.RawMessage, name string, line int, load func(string, string) (cursorBubble, bool)) (*Session, *Problem) {
	var c cursorComposerData
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, &Problem{File: name, Line: line, Reason: "composer: " + shortErr(err)}
	}
	if !validID(c.ComposerID) {
		return nil, &Problem{File: name, Line: line, Reason: fmt.Sprintf("composer id %q is not usable", oneLine(c.ComposerID, 60))}
	}
	s := &Session{Agent: Cursor, ID: c.ComposerID, Source: name, Time: msTime(c.CreatedAt)}
	bubbles := c.Conversation
	if len(bubbles) == 0 && load != nil {
		for _, h := range c.Headers {
			if b, ok := load(c.ComposerID, h.BubbleID); ok {
				if b.BubbleID == "" {
					b.BubbleID = h.BubbleID
				}
				if len(b.Type) == 0 {
					b.Type = h.Type
				}
				bubbles = append(bubbles, b)
			}
		}
	}
	for j, b := range bubbles {
		cursorItem(s, b, j, name)
	}
	return s, nil
}

func cursorItem(s *Session, b cursorBubble, j int, name string) {
	key := nonEmpty(b.BubbleID, b.ID)
	if key == "" {
		key = "B" + itoa(j)
	}
	text := strings.TrimSpace(nonEmpty(b.Text, b.RawText))
	ts := cursorTime(b.CreatedAt)
	switch b.role() {
	case "user":
		if text != "" {
			s.Items = append(s.Items, Item{Kind: ItemPrompt, Key: key, Time: ts, Line: j + 1, Text: text, KeyedTurn: true})
		}
	case "ai":
		it := Item{Kind: ItemStep, Key: key, Time: ts, Line: j + 1, Text: text}
		for _, m := range reCursorFence().FindAllStringSubmatch(text, 100) {
			it.Files = append(it.Files, m[1])
		}
		if b.Tool != nil && b.Tool.Name != "" {
			sum, files := summariseTool(b.Tool.Name, json.RawMessage(b.Tool.Params))
			it.Tools = append(it.Tools, sum)
			it.Files = append(it.Files, files...)
		}
		if it.Text != "" || len(it.Tools) > 0 {
			s.Items = append(s.Items, it)
		}
	}
}

func addCursorSession(out *Parsed, s *Session, name string) {
	if !hasConversation(s) {
		out.Skipped++
		out.SkipReasons = append(out.SkipReasons, name+": "+s.ID+": empty chat")
		return
	}
	s.Items = append(s.Items, Item{Kind: ItemEnd, Key: "end"})
	out.Sessions = append(out.Sessions, s)
}

// parseCursorDiskKV reads the global layout.
func parseCursorDiskKV(db *sql.DB, path string) (Parsed, error) {
	var out Parsed
	rows, err := db.Query(`SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%'`)
	if err != nil {
		return out, fmt.Errorf("%s: read cursorDiskKV: %w", path, err)
	}
	type comp struct {
		key string
		v   []byte
	}
	var comps []comp
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return out, fmt.Errorf("%s: read cursorDiskKV: %w", path, err)
		}
		comps = append(comps, comp{k, v})
	}
	rows.Close()
	sort.Slice(comps, func(i, j int) bool { return comps[i].key < comps[j].key })
	load := func(composer, bubble string) (cursorBubble, bool) {
		var v []byte
		if db.QueryRow(`SELECT value FROM cursorDiskKV WHERE key = ?`, "bubbleId:"+composer+":"+bubble).Scan(&v) != nil {
			return cursorBubble{}, false
		}
		var b cursorBubble
		if json.Unmarshal(v, &b) != nil {
			return cursorBubble{}, false
		}
		return b, true
	}
	for i, c := range comps {
		if len(c.v) == 0 || string(c.v) == "null" {
			continue
		}
		s, pr := cursorComposer(c.v, path+":"+c.key, i+1, load)
		if pr != nil {
			out.Problems = append(out.Problems, *pr)
			continue
		}
		addCursorSession(&out, s, path)
	}
	return out, nil
}

// msTime reads Unix milliseconds (0: unknown).
func msTime(ms float64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// cursorTime reads a bubble's createdAt: Unix milliseconds or RFC 3339.
func cursorTime(raw json.RawMessage) time.Time {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return msTime(f)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parseTime(s)
	}
	return time.Time{}
}
