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
  claude-code  ~/.claude/projects/<workspace path, / and . as ->/   ($CLAUDE_CONFIG_DIR)
  codex        ~/.codex/sessions/**/rollout-*.jsonl whose cwd is the workspace ($CODEX_HOME)
  gemini       ~/.gemini/tmp/<sha256 of the workspace path>/
  aider        <workspace>/.aider.chat.history.md
  cursor       give the state.vscdb (workspaceStorage/<id>/state.vscdb)

  continuity import --from claude-code ~/.claude/projects/-home-me-src-app
  continuity import --from codex --json ~/.codex/sessions/2026/05/11
  continuity import --from aider .aider.chat.history.md`)
	from := fs.String("from", "", "the agent: "+strings.Join(importer.Agents, ", "))
	asJSON := fs.Bool("json", false, `print {"sessions","exchanges","resets","links","skipped","errors",...} as JSON`)
	home := fs.String("home", "", "home folder holding the agents' folders (default $HOME)")
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
	im, err := importer.New(*from, p.logs, importer.Options{Workspace: p.root})
	if err != nil {
		return usageError("--from: %v", err)
	}
	if len(pos) == 0 {
		pos = importer.DefaultHome(*home).NativePaths(*from, p.root)
		if len(pos) == 0 {
			return &exitError{code: 2, err: fmt.Errorf("no %s transcripts found for %s; give a PATH", *from, p.root)}
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
		for _, s := range res.Skips {
			fmt.Fprintln(e.stdout, "  skipped:", s)
		}
	}
	return err
}
