package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Home is where the agents keep their files: the user's home folder, or
// the folders the agents' own variables name.
type Home struct {
	Dir       string // home folder (default $HOME)
	ClaudeDir string // default $CLAUDE_CONFIG_DIR, else <Dir>/.claude
	CodexDir  string // default $CODEX_HOME, else <Dir>/.codex
	GeminiDir string // default <Dir>/.gemini
}

// DefaultHome reads the environment: home (else $CONTINUITY_AGENT_HOME)
// replaces $HOME (tests, another user's folders) and then also the agents'
// own variables; otherwise $CLAUDE_CONFIG_DIR and $CODEX_HOME are honoured.
func DefaultHome(home string) Home {
	if home == "" {
		home = os.Getenv("CONTINUITY_AGENT_HOME")
	}
	h := Home{Dir: home}
	if h.Dir == "" {
		h.Dir, _ = os.UserHomeDir()
	}
	h.ClaudeDir = os.Getenv("CLAUDE_CONFIG_DIR")
	if h.ClaudeDir == "" || home != "" {
		h.ClaudeDir = filepath.Join(h.Dir, ".claude")
	}
	h.CodexDir = os.Getenv("CODEX_HOME")
	if h.CodexDir == "" || home != "" {
		h.CodexDir = filepath.Join(h.Dir, ".codex")
	}
	h.GeminiDir = filepath.Join(h.Dir, ".gemini")
	return h
}

// ClaudeProjectDir is Claude Code's folder for a workspace:
// <claude>/projects/<cwd with every character but letters and digits
// replaced by "-">.
func (h Home) ClaudeProjectDir(workspace string) string {
	var b strings.Builder
	for _, r := range workspace {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return filepath.Join(h.ClaudeDir, "projects", b.String())
}

// CodexSessionsDir holds all Codex rollouts (of every workspace; a
// rollout's session_meta.cwd tells which).
func (h Home) CodexSessionsDir() string { return filepath.Join(h.CodexDir, "sessions") }

// GeminiProjectDir is Gemini CLI's folder for a workspace:
// <gemini>/tmp/<sha256 of the path, hex>.
func (h Home) GeminiProjectDir(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(h.GeminiDir, "tmp", hex.EncodeToString(sum[:]))
}

// NativePaths are the native locations of agent's transcripts for
// workspace, those that exist. Codex rollouts are filtered by their cwd:
// only those whose session_meta.cwd is the workspace (or inside it).
func (h Home) NativePaths(agent, workspace string) []string {
	var cands []string
	switch agent {
	case ClaudeCode:
		cands = []string{h.ClaudeProjectDir(workspace)}
	case Codex:
		return CodexRollouts(h.CodexSessionsDir(), workspace)
	case Gemini:
		cands = []string{h.GeminiProjectDir(workspace)}
	case Aider:
		cands = []string{filepath.Join(workspace, ".aider.chat.history.md")}
	case Cursor:
		return h.CursorWorkspaceDBs(workspace)
	}
	var out []string
	for _, c := range cands {
		if _, err := os.Stat(c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// CodexRollouts lists the rollouts under dir whose session_meta.cwd is
// workspace or a folder inside it.
func CodexRollouts(dir, workspace string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		if CodexRolloutIn(path, workspace) {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// CodexRolloutIn reports whether the rollout at path belongs to workspace.
func CodexRolloutIn(path, workspace string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	m, ok := ReadCodexMeta(f)
	if !ok || m.Cwd == "" {
		return false
	}
	cwd := filepath.Clean(m.Cwd)
	ws := filepath.Clean(workspace)
	return cwd == ws || strings.HasPrefix(cwd, ws+string(filepath.Separator))
}

// CursorStorageDirs are the folders where Cursor keeps one
// workspaceStorage/<id>/ per opened folder (Linux, macOS, Windows layouts
// under the home folder).
func (h Home) CursorStorageDirs() []string {
	return []string{
		filepath.Join(h.Dir, ".config", "Cursor", "User", "workspaceStorage"),
		filepath.Join(h.Dir, "Library", "Application Support", "Cursor", "User", "workspaceStorage"),
		filepath.Join(h.Dir, "AppData", "Roaming", "Cursor", "User", "workspaceStorage"),
	}
}

// CursorWorkspaceDBs lists the state.vscdb files of the Cursor
// workspaces opened on workspace: those whose workspace.json names it
// ({"folder": "file:///path"}).
func (h Home) CursorWorkspaceDBs(workspace string) []string {
	var out []string
	ws := filepath.Clean(workspace)
	for _, dir := range h.CursorStorageDirs() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name(), "workspace.json"))
			if err != nil {
				continue
			}
			var w struct {
				Folder string `json:"folder"`
			}
			if json.Unmarshal(data, &w) != nil || w.Folder == "" {
				continue
			}
			u, err := url.Parse(w.Folder)
			if err != nil || u.Scheme != "file" || filepath.Clean(u.Path) != ws {
				continue
			}
			db := filepath.Join(dir, e.Name(), "state.vscdb")
			if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
				out = append(out, db)
			}
		}
	}
	return out
}
