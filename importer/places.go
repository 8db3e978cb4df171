package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Where the agents added after Claude Code, Codex, Gemini, Cursor and
// Aider keep their transcripts, on Linux, macOS and Windows, as their own
// source code defines it (docs/importers.md, "Where the agents keep them").
// These agents keep every project's sessions in one store, so a store's
// sessions are told apart by the folder each ran in (its cwd), read
// cheaply from each session's first records (UnitCwd).

// vsCodeApps are the VS Code builds whose globalStorage may hold Cline,
// Roo Code or Kilo Code tasks.
var vsCodeApps = []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf", "Trae", "Kiro"}

// extensionIDs are the extension folders of the VS Code agents.
var extensionIDs = map[string]string{
	Cline: "saoudrizwan.claude-dev",
	Roo:   "rooveterinaryinc.roo-cline",
	Kilo:  "kilocode.kilo-code",
}

// globalStorages are the globalStorage folders of every VS Code build
// (Linux ~/.config, macOS ~/Library/Application Support, Windows
// %APPDATA%, remote servers ~/.vscode-server/data and ~/.vscode-remote/data).
func (h Home) globalStorages() []string {
	var out []string
	for _, app := range vsCodeApps {
		for _, base := range []string{
			filepath.Join(h.Dir, ".config"),
			filepath.Join(h.Dir, "Library", "Application Support"),
			filepath.Join(h.Dir, "AppData", "Roaming"),
		} {
			out = append(out, filepath.Join(base, app, "User", "globalStorage"))
		}
	}
	for _, remote := range []string{".vscode-server", ".vscode-remote", ".cursor-server", ".windsurf-server"} {
		out = append(out, filepath.Join(h.Dir, remote, "data", "User", "globalStorage"))
	}
	return out
}

// StoreDirs are the folders where agent keeps its transcripts (existing
// or not), most likely first.
func (h Home) StoreDirs(agent string) []string {
	var out []string
	switch agent {
	case Cline, Roo, Kilo:
		for _, g := range h.globalStorages() {
			out = append(out, filepath.Join(g, extensionIDs[agent]))
		}
		if agent == Kilo {
			// Kilo Code 5 (its CLI, and the extension built on it) is an
			// OpenCode fork: ${XDG_DATA_HOME:-~/.local/share}/kilo.
			out = append(out, filepath.Join(h.XDGDataHome, "kilo"))
		}
		if agent == Cline {
			out = append([]string{h.ClineDataDir}, out...)
			if h.ClineSessionsDir != "" {
				out = append(out, h.ClineSessionsDir)
			}
		}
	case OpenCode:
		out = []string{filepath.Join(h.XDGDataHome, "opencode")}
	case Copilot:
		out = []string{filepath.Join(h.CopilotDir, "session-state"), filepath.Join(h.CopilotDir, "history-session-state")}
		if h.CopilotXDGDir != "" {
			out = append(out, filepath.Join(h.CopilotXDGDir, "session-state"))
		}
	case Goose:
		out = []string{h.GooseSessionsDir}
		if h.GooseSessionsDir == filepath.Join(h.XDGDataHome, "goose", "sessions") {
			out = append(out, filepath.Join(h.Dir, "AppData", "Roaming", "Block", "goose", "data", "sessions"))
		}
	}
	return out
}

// unitGlobs are the patterns, under a store folder, of the files that
// each hold a native session (or a database of them).
var unitGlobs = map[string][]string{
	Cline:    {"tasks/*/" + clineUIFile, "tasks/*/" + clineAPIFile, "sessions/*/*" + clineSessionSuffix, "*/*" + clineSessionSuffix},
	Roo:      {"tasks/*/" + clineUIFile, "tasks/*/" + clineAPIFile},
	Kilo:     {"tasks/*/" + clineUIFile, "tasks/*/" + clineAPIFile, "storage/session/*/*.json", "kilo.db", "kilo-*.db", "opencode-*.db"},
	OpenCode: {"storage/session/*/*.json", "project/*/storage/session/info/*.json", "opencode.db", "opencode-*.db"},
	Copilot:  {"*/events.jsonl", "*.jsonl"},
	Goose:    {"*.jsonl", "sessions.db"},
}

// Units lists the files of agent's stores that each hold a session (or a
// database of them), of every project: a task's API history only when it
// has no ui_messages.json.
func (h Home) Units(agent string) []string {
	var out []string
	seen := map[string]bool{}
	for _, dir := range h.StoreDirs(agent) {
		if dir == "" {
			continue
		}
		for _, g := range unitGlobs[agent] {
			names, _ := filepath.Glob(filepath.Join(dir, g))
			for _, n := range names {
				if seen[n] || !regular(n) {
					continue
				}
				if filepath.Base(n) == clineAPIFile && regular(filepath.Join(filepath.Dir(n), clineUIFile)) {
					continue
				}
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func regular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// isDatabase reports whether a unit is a database of many sessions
// (filtered by folder when read, not by UnitCwd).
func isDatabase(path string) bool { return strings.HasSuffix(path, ".db") }

// UnitCwd is the folder the session of a unit file ran in, read from its
// first records; "" when the files do not say (yet).
func UnitCwd(agent, path string) string {
	switch {
	case agent == Kilo && openCodeLayout(path):
		return openCodeCwd(path)
	case agent == Cline || agent == Roo || agent == Kilo:
		if strings.HasSuffix(path, clineSessionSuffix) {
			return clineSessionCwd(path)
		}
		return readClineTaskInfo(filepath.Dir(path)).cwd
	case agent == OpenCode:
		return openCodeCwd(path)
	case agent == Copilot:
		return copilotCwd(path)
	case agent == Goose:
		return gooseCwd(path)
	}
	return ""
}

// openCodeCwd is the directory of a session file of OpenCode's JSON
// storage.
func openCodeCwd(path string) string {
	b, err := readCapped(path, 16<<20)
	if err != nil {
		return ""
	}
	var s ocSession
	_ = json.Unmarshal(b, &s)
	return s.Directory
}

// openCodeLayout reports whether path is a file of OpenCode's layout (a
// database, a session file of its JSON storage), which Kilo Code 5 (an
// OpenCode fork) writes too.
func openCodeLayout(path string) bool {
	b := filepath.Base(path)
	return strings.HasSuffix(b, ".db") || strings.HasSuffix(b, ".json") && filepath.Base(filepath.Dir(filepath.Dir(path))) == "session"
}

// indexCache keeps the parsed taskHistory.json indexes (one per store,
// read for each of its tasks) while they do not change.
var indexCache sync.Map // path -> indexEntry

type indexEntry struct {
	size  int64
	mtime time.Time
	cwds  map[string]string
}

// cachedIndexCwds is the task id -> folder map of a taskHistory.json.
func cachedIndexCwds(index string) map[string]string {
	fi, err := os.Stat(index)
	if err != nil {
		return nil
	}
	if e, ok := indexCache.Load(index); ok {
		if e := e.(indexEntry); e.size == fi.Size() && e.mtime.Equal(fi.ModTime()) {
			return e.cwds
		}
	}
	data, err := readCapped(index, 256<<20)
	if err != nil {
		return nil
	}
	var items []struct {
		ID        string `json:"id"`
		Cwd       string `json:"cwdOnTaskInitialization"`
		Workspace string `json:"workspace"`
	}
	_ = json.Unmarshal(data, &items)
	cwds := map[string]string{}
	for _, it := range items {
		if c := nonEmpty(it.Cwd, it.Workspace); c != "" {
			cwds[it.ID] = c
		}
	}
	indexCache.Store(index, indexEntry{size: fi.Size(), mtime: fi.ModTime(), cwds: cwds})
	return cwds
}

// jsonUnmarshal reports whether data decodes into v.
func jsonUnmarshal(data []byte, v any) bool { return json.Unmarshal(data, v) == nil }
