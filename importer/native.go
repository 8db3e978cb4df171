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
	// ClineDataDir is Cline's own data folder (its CLI, JetBrains and
	// SDK builds): $CLINE_DATA_DIR, else $CLINE_DIR/data, else
	// <Dir>/.cline/data; ClineSessionsDir is $CLINE_SESSION_DATA_DIR
	// ("": <ClineDataDir>/sessions).
	ClineDataDir     string
	ClineSessionsDir string
	// XDGDataHome is $XDG_DATA_HOME, else <Dir>/.local/share (OpenCode's
	// and Goose's data on every platform but Goose's Windows one).
	XDGDataHome string
	// CopilotDir is $COPILOT_HOME, else <Dir>/.copilot; CopilotXDGDir is
	// $XDG_CONFIG_HOME/.copilot, where Copilot CLI before 1.0 kept it when
	// that variable was set ("" otherwise).
	CopilotDir    string
	CopilotXDGDir string
	// GooseSessionsDir is $GOOSE_PATH_ROOT/data/sessions, else
	// <XDGDataHome>/goose/sessions.
	GooseSessionsDir string
}

// DefaultHome reads the environment: home (else $CONTINUITY_AGENT_HOME)
// replaces $HOME (tests, another user's folders) and then also the agents'
// own variables; otherwise $CLAUDE_CONFIG_DIR, $CODEX_HOME,
// $CLINE_DATA_DIR, $CLINE_DIR, $CLINE_SESSION_DATA_DIR, $XDG_DATA_HOME,
// $COPILOT_HOME (and $XDG_CONFIG_HOME for Copilot CLI's older releases)
// and $GOOSE_PATH_ROOT are honoured.
func DefaultHome(home string) Home {
	if home == "" {
		home = os.Getenv("CONTINUITY_AGENT_HOME")
	}
	h := Home{Dir: home}
	if h.Dir == "" {
		h.Dir, _ = os.UserHomeDir()
	}
	env := func(name string) string {
		if home != "" {
			return "" // another home: its agents' folders, not this user's
		}
		return os.Getenv(name)
	}
	h.ClaudeDir = nonEmpty(env("CLAUDE_CONFIG_DIR"), filepath.Join(h.Dir, ".claude"))
	h.CodexDir = nonEmpty(env("CODEX_HOME"), filepath.Join(h.Dir, ".codex"))
	h.GeminiDir = filepath.Join(h.Dir, ".gemini")
	h.ClineDataDir = env("CLINE_DATA_DIR")
	if h.ClineDataDir == "" {
		h.ClineDataDir = filepath.Join(nonEmpty(env("CLINE_DIR"), filepath.Join(h.Dir, ".cline")), "data")
	}
	h.ClineSessionsDir = env("CLINE_SESSION_DATA_DIR")
	h.XDGDataHome = nonEmpty(absOrEmpty(env("XDG_DATA_HOME")), filepath.Join(h.Dir, ".local", "share"))
	h.CopilotDir = nonEmpty(env("COPILOT_HOME"), filepath.Join(h.Dir, ".copilot"))
	if xdg := absOrEmpty(env("XDG_CONFIG_HOME")); xdg != "" && env("COPILOT_HOME") == "" {
		h.CopilotXDGDir = filepath.Join(xdg, ".copilot")
	}
	h.GooseSessionsDir = filepath.Join(h.XDGDataHome, "goose", "sessions")
	if root := absOrEmpty(env("GOOSE_PATH_ROOT")); root != "" {
		h.GooseSessionsDir = filepath.Join(root, "data", "sessions")
	}
	return h
}

// absOrEmpty is p when it is an absolute path (the XDG rule, and
// Goose's: a relative one is ignored), else "".
func absOrEmpty(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return ""
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

// NativePaths are the native locations of agent's transcripts for the
// workspace dirs[0] (and the other folders of dirs: the other worktrees
// of its repository), those that exist. Codex rollouts and the sessions
// of the stores shared by all projects (Cline, Roo Code, Kilo Code,
// OpenCode, Copilot CLI, Goose) are filtered by the folder they ran in:
// the workspace or one inside it. A database of many sessions is listed
// whole; its sessions are filtered when it is read (Options.Roots).
func (h Home) NativePaths(agent string, dirs ...string) []string {
	var cands []string
	switch agent {
	case ClaudeCode:
		for _, d := range dirs {
			cands = append(cands, h.ClaudeProjectDir(d))
		}
	case Codex:
		var out []string
		for _, d := range dirs {
			out = append(out, CodexRollouts(h.CodexSessionsDir(), d)...)
		}
		return out
	case Gemini:
		for _, d := range dirs {
			cands = append(cands, h.GeminiProjectDir(d))
		}
	case Aider:
		for _, d := range dirs {
			cands = append(cands, filepath.Join(d, ".aider.chat.history.md"))
		}
	case Cursor:
		var out []string
		for _, d := range dirs {
			out = append(out, h.CursorWorkspaceDBs(d)...)
		}
		return out
	default:
		var out []string
		for _, u := range h.Units(agent) {
			if isDatabase(u) || within(UnitCwd(agent, u), dirs) {
				out = append(out, u)
			}
		}
		return out
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
