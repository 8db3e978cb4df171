package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/praxis-os/continuity/importer"
)

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "import --from AGENT [--json] [PATH...]", `
Import an agent's own transcripts into the workspace's logs: each native
session becomes protocol events in .praxis-os/.conversations/<agent>-<session>.jsonl
(one exchange per human prompt at least: the prompt, the visible answer, tool
calls summarised, files touched; compactions as context_reset; resumed
sessions as session_resume), which the daemon then indexes like any log.

Importing again is safe: every event has an id derived from the native
record, so a second import of the same files adds nothing, and a file that
grew adds only what is new. A native record that cannot be read is reported
as FILE:LINE and skipped; the import goes on.

PATH is a file or a folder in the agent's native layout. Without PATH, the
agent's folder for this workspace is read:
  claude-code  ~/.claude/projects/<workspace path, every character but letters and digits as ->/ ($CLAUDE_CONFIG_DIR)
  codex        ~/.codex/sessions/**/rollout-*.jsonl whose cwd is the workspace ($CODEX_HOME)
  gemini       ~/.gemini/tmp/<sha256 of the workspace path>/
  aider        <workspace>/.aider.chat.history.md
  cursor       ~/.config/Cursor/User/workspaceStorage/*/state.vscdb whose workspace.json names
               the workspace (macOS: ~/Library/Application Support/Cursor/...)

  continuity import --from claude-code ~/.claude/projects/-home-me-src-app
  continuity import --from codex --json ~/.codex/sessions/2026/05/11
  continuity import --from aider .aider.chat.history.md`)
	from := fs.String("from", "", "the agent: "+strings.Join(importer.Agents, ", "))
	asJSON := fs.Bool("json", false, `print {"sessions","exchanges","resets","links","skipped","errors",...} as JSON`)
	home := fs.String("agent-home", "", "home folder holding the agents' folders .claude, .codex, .gemini (default $HOME; env CONTINUITY_AGENT_HOME)")
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
	im, err := importer.New(*from, p.logs, importer.Options{Workspace: p.root})
	if err != nil {
		return usageError("--from: %v", err)
	}
	if len(pos) == 0 {
		h := importer.DefaultHome(*home)
		pos = h.NativePaths(*from, p.root)
		if len(pos) == 0 {
			where := map[string]string{
				importer.ClaudeCode: h.ClaudeProjectDir(p.root),
				importer.Codex:      h.CodexSessionsDir() + " (rollouts whose cwd is the workspace)",
				importer.Gemini:     h.GeminiProjectDir(p.root),
				importer.Aider:      p.root + "/.aider.chat.history.md",
				importer.Cursor:     strings.Join(h.CursorStorageDirs(), ", ") + " (workspace.json naming the workspace)",
			}[*from]
			return &exitError{code: 2, err: fmt.Errorf("no %s transcripts for %s: looked in %s; give a PATH", *from, p.root, where)}
		}
	}
	start := time.Now()
	res, err := im.Import(ctx, pos)
	elapsed := time.Since(start)
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
		fmt.Fprintf(e.stdout, "%s: %d files, %d sessions: %d exchanges, %d context resets, %d resume links written; %d already there; %d skipped; %d unreadable records\n",
			*from, res.Files, res.Sessions, res.Exchanges, res.Resets, res.Links, res.Duplicates, res.Skipped, res.Errors)
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
