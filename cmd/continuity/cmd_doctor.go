package main

import (
	"context"
	"fmt"
	"os"
)

func runDoctor(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "doctor [--json]", `
Check the workspace and say what to fix: the logs folder (a private real
folder), the log files and those skipped, the privacy of the index files,
whether a daemon runs and answers on its socket, the integrity and schema of
the index, what is not indexed yet, rejected lines, whether the embedder
answers (the running daemon's, with a warning when this environment chooses
another; without a daemon, the configured one), and (retention) whether an
agent's own cleanup is about to delete transcripts of this workspace that were never imported: Claude Code
deletes those older than cleanupPeriodDays (default 30) at each start. One line
per check: OK, WARN or FAIL, with the fix. Exits 1 if a check fails, 0
otherwise (warnings included).`)
	asJSON := fs.Bool("json", false, "print JSON: {\"workspace\", \"checks\": [{\"name\",\"status\",\"message\",\"fix\"}], \"ok\", \"warnings\", \"failures\"}")
	home := fs.String("agent-home", "", "home folder holding the agents' folders (.claude, ...) in place of $HOME (env CONTINUITY_AGENT_HOME)")
	if err := parseFlagsOnly(e, fs, args); err != nil {
		return err
	}
	if *home != "" {
		// the retention check reads the agents' folders through the
		// environment, as every command does
		if err := os.Setenv("CONTINUITY_AGENT_HOME", *home); err != nil {
			return err
		}
	}
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	r := c.Doctor(ctx)
	if *asJSON {
		err = printJSON(e.stdout, r)
	} else {
		err = r.Print(e.stdout)
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if r.Failures > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d checks failed", r.Failures, len(r.Checks))}
	}
	return nil
}
