package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/praxis-os/continuity/importer"
	wspace "github.com/praxis-os/continuity/workspace"
)

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "import --from AGENT [--json] [PATH...]", `
Import an agent's own transcripts into the workspace's logs: each native
session becomes protocol events in .praxis-os/.conversations/<agent>-<session>~<machine>.jsonl
(one exchange per human prompt at least: the prompt, the visible answer, tool
calls summarised, files touched; compactions as context_reset; resumed
sessions as session_resume), which the daemon then indexes like any log.

Importing again is safe: every event has an id derived from the native
record, so a second import of the same files adds nothing, and a file that
grew adds only what is new. A native record that cannot be read is reported
as FILE:LINE and skipped; the import goes on.

PATH is a file or a folder in the agent's native layout; every session in it is
imported. Without PATH, the agent's sessions of this workspace (and of the other
worktrees of its repository) are read from where the agent keeps them:
  claude-code  ~/.claude/projects/<workspace path, every character but letters and digits as ->/ ($CLAUDE_CONFIG_DIR)
  codex        ~/.codex/sessions/**/rollout-*.jsonl whose cwd is the workspace ($CODEX_HOME)
  gemini       ~/.gemini/tmp/<sha256 of the workspace path>/
  aider        <workspace>/.aider.chat.history.md (a folder given as PATH: every *.chat.history.md,
               *chat-history.md, and any .md file holding an aider chat; the others are listed as skipped)
  cursor       ~/.config/Cursor/User/workspaceStorage/*/state.vscdb whose workspace.json names
               the workspace (macOS: ~/Library/Application Support/Cursor/...)
  cline        the tasks of ~/.cline/data ($CLINE_DATA_DIR, $CLINE_DIR) and of VS Code's
               globalStorage/saoudrizwan.claude-dev (~/.config/Code/User/..., macOS ~/Library/Application
               Support/Code/User/..., Windows %APPDATA%\Code\User\...; also Insiders, VSCodium, Cursor,
               Windsurf, remote servers), and ~/.cline/data/sessions, that ran in the workspace
  roo-code     the same for globalStorage/rooveterinaryinc.roo-cline (subtasks linked to their parent)
  kilo-code    the same for globalStorage/kilocode.kilo-code, and Kilo Code 5's
               ${XDG_DATA_HOME:-~/.local/share}/kilo (kilo.db, storage/: OpenCode's layout)
  opencode     ${XDG_DATA_HOME:-~/.local/share}/opencode: opencode.db, or storage/session/** (older
               releases); the sessions whose directory is the workspace; an 'opencode export' file as PATH
  copilot-cli  ~/.copilot/session-state/*/events.jsonl ($COPILOT_HOME) whose cwd is the workspace
  goose        ~/.local/share/goose/sessions ($GOOSE_PATH_ROOT/data/sessions; Windows
               %APPDATA%\Block\goose\data\sessions): sessions.db, or *.jsonl (before 1.10)

  continuity import --from claude-code ~/.claude/projects/-home-me-src-app
  continuity import --from codex --json ~/.codex/sessions/2026/05/11
  continuity import --from cline
  continuity import --from aider ~/notes/old-chats

Other names are accepted for the agents (case, spaces, dashes and underscores
do not matter: "Claude Code", claude_code): `+importer.AliasHelp()+`.`)
	from := fs.String("from", "", "the agent: "+strings.Join(importer.Agents, ", ")+" (or another name for one, listed above)")
	asJSON := fs.Bool("json", false, `print {"sessions","exchanges","resets","links","duplicates","repeated","skipped","errors",...} as JSON (repeated: duplicates this import itself wrote from another file)`)
	home := fs.String("agent-home", "", "home folder holding the agents' folders (.claude, .codex, .gemini, .cline, .copilot, .config, .local/share, ...) in place of $HOME; the agents' own variables are then ignored (env CONTINUITY_AGENT_HOME)")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if *from == "" {
		return usageError("--from is required: one of %s", strings.Join(importer.Agents, ", "))
	}
	p, err := e.paths()
	if err != nil {
		return err
	}
	// The imported logs are private and git-ignored like any other.
	if err := p.layout().PrepareLogs(); err != nil {
		return err
	}
	o := importer.Options{Workspace: p.root}
	explicit := len(pos) > 0
	if !explicit {
		// this workspace's sessions only, from the stores every project shares
		o.Roots = wspace.Worktrees(p.root)
	}
	im, err := importer.New(*from, p.logs, o)
	if err != nil {
		return usageError("--from: %v", err)
	}
	if !explicit {
		h := importer.DefaultHome(*home)
		pos = h.NativePaths(im.Agent, o.Roots...)
		if len(pos) == 0 {
			return &exitError{code: 2, err: fmt.Errorf("no %s transcripts for %s: looked in %s; give a PATH", im.Agent, p.root, nativeWhere(h, im.Agent, p.root))}
		}
	}
	start := time.Now()
	res, err := im.Import(ctx, pos)
	elapsed := time.Since(start)
	if explicit && res.Files == 0 && err == nil {
		// a folder holding none of the agent's files: say so (and what
		// was left out, below), rather than "0 files"
		err = &exitError{code: 2, err: fmt.Errorf("no %s transcripts found in %s", im.Agent, strings.Join(pos, ", "))}
	}
	if *asJSON {
		out := struct {
			importer.Result
			Seconds float64 `json:"seconds"`
		}{res, elapsed.Seconds()}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(out); jerr != nil {
			return jerr
		}
	} else {
		for _, pr := range res.Problems {
			fmt.Fprintln(e.stderr, "skipped record:", pr)
		}
		fmt.Fprintln(e.stdout, res.Summary(im.Agent))
		const shown = 10
		for i, s := range res.Skips {
			if i == shown {
				fmt.Fprintf(e.stdout, "  ... and %d more skipped (--json lists them all)\n", len(res.Skips)-shown)
				break
			}
			fmt.Fprintln(e.stdout, "  skipped:", s)
		}
	}
	return err
}

// nativeWhere says where the transcripts of agent for the workspace root
// were looked for.
func nativeWhere(h importer.Home, agent, root string) string {
	switch agent {
	case importer.ClaudeCode:
		return h.ClaudeProjectDir(root)
	case importer.Codex:
		return h.CodexSessionsDir() + " (rollouts whose cwd is the workspace)"
	case importer.Gemini:
		return h.GeminiProjectDir(root)
	case importer.Aider:
		return filepath.Join(root, ".aider.chat.history.md")
	case importer.Cursor:
		return strings.Join(h.CursorStorageDirs(), ", ") + " (workspace.json naming the workspace)"
	}
	var found []string
	for _, d := range h.StoreDirs(agent) {
		if _, err := os.Stat(d); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		all := h.StoreDirs(agent)
		where := strings.Join(all[:min(3, len(all))], ", ")
		if len(all) > 3 {
			where += ", …"
		}
		return where + " (none of them exists; 'continuity import --help' lists them all)"
	}
	return strings.Join(found, ", ") + " (no session there ran in this workspace)"
}
