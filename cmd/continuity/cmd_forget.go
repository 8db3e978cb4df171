package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
	"golang.org/x/term"
)

func runForget(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "forget (--session ID [--chain] | --older-than DURATION) [--purge-logs] [--dry-run] [--yes] [--json]", `
Remove a session from the index: its events, full-text rows and vectors.
Its lines, when the log is read again (a rescan, a restore), are not
indexed again: 'continuity rejects' lists them (file:line, without their
text) as lines of a forgotten session. Lines timestamped after the forget
are new work in that session and are indexed as usual; forget again to
remove them too.

The forget is recorded twice: in the index, and beside the logs
(.praxis-os/.conversations/.forgotten.<machine>, private and git-ignored like them),
so that it outlives the index: a rebuild (the cache deleted, a migration,
a new embedder, a restored backup) and 'continuity import' keep the
session's old lines out. Links through a forgotten session keep connecting
its neighbours: when b resumed a and c resumed b, c resumes a once b is
forgotten. forget reads both back and says what it checked.
The log lines themselves stay unless --purge-logs, which deletes the log
files holding only forgotten sessions' lines (a file mixing other sessions
is left as is and named: rewriting it would re-read everyone else's
lines). Deleting files cannot be undone: --purge-logs asks for
confirmation on a terminal and needs --yes otherwise. --dry-run says what
would be forgotten and deleted, and changes nothing. Goes through the
daemon when one runs.

Retention: --older-than DURATION (30d, 2w, 72h) forgets every session whose
latest event is older than DURATION, each whole (a session with a recent
event is kept whole), recorded like any forget. It asks for confirmation on
a terminal and needs --yes otherwise; --dry-run lists what would go. For the
daemon to do it by itself: 'continuity daemon --retain DURATION'.`)
	session := fs.String("session", "", "the session to forget")
	var olderThan time.Duration
	fs.Var(ageFlag{&olderThan}, "older-than", "forget every session whose latest event is older than this `DURATION` (30d, 2w, 72h); asks first")
	chain := fs.Bool("chain", false, "also forget the sessions it resumes (session_resume links, followed back)")
	purge := fs.Bool("purge-logs", false, "also delete the log files that hold only forgotten sessions' lines (asks first)")
	dryRun := fs.Bool("dry-run", false, "say what would be forgotten and which log files deleted; change nothing")
	yes := fs.Bool("yes", false, "do not ask before forgetting by age or deleting log files (needed with --older-than and --purge-logs when stdin is not a terminal)")
	asJSON := fs.Bool("json", false, `print JSON: {"sessions", "events", "recorded", "left", "purged", "kept"} (and "dry_run")`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return sessionArgs("forget", pos, *session != "" || olderThan > 0)
	}
	if olderThan > 0 {
		if *session != "" || *chain {
			return usageError("--older-than forgets by age: give it without --session and --chain")
		}
		return forgetOlder(ctx, e, olderThan, *purge, *dryRun, *yes, *asJSON)
	}
	if err := logformat.ValidSessionID(*session); err != nil {
		return usageError("--session: %v (or --older-than DURATION)", err)
	}
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	req := engine.ForgetRequest{Session: *session, Chain: *chain}

	if *dryRun || *purge && !*yes {
		// What would go, read from the index without changing it.
		plan, err := c.PlanForget(ctx, req)
		if err != nil {
			return err
		}
		var purged, kept []string
		if *purge {
			if purged, kept, err = c.ClassifyLogs(plan.Sessions); err != nil {
				return err
			}
		}
		if *dryRun {
			if *asJSON {
				return printJSON(e.stdout, map[string]any{"dry_run": true, "sessions": plan.Sessions, "events": plan.Events,
					"purged": nonNil(purged), "kept": nonNil(kept)})
			}
			fmt.Fprintf(e.stdout, "dry run, nothing changed: would forget %d %s of %s\n", plan.Events, words.Plural(int(plan.Events), "event", "events"), strings.Join(plan.Sessions, ", "))
			for _, f := range purged {
				fmt.Fprintf(e.stdout, "would delete log %s\n", f)
			}
			for _, f := range kept {
				fmt.Fprintf(e.stdout, "would keep log %s: it also holds other sessions' lines (or unreadable ones)\n", f)
			}
			return nil
		}
		if err := confirmPurge(e, plan, purged); err != nil {
			return err
		}
	}

	resp, err := c.Forget(ctx, req)
	if err != nil {
		return err
	}
	var purged, kept []string
	if *purge {
		if purged, kept, err = c.PurgeLogs(resp.Sessions); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]any{"sessions": resp.Sessions, "events": resp.Events,
			"recorded": resp.Recorded, "left": resp.Left, "purged": nonNil(purged), "kept": nonNil(kept)})
	}
	fmt.Fprintf(e.stdout, "forgot %d %s of %s\n", resp.Events, words.Plural(int(resp.Events), "event", "events"), strings.Join(resp.Sessions, ", "))
	if resp.Recorded != "" {
		fmt.Fprintf(e.stdout, "checked: %s records the forget (read back), and the index holds %d events of %s; a rebuild of the index or an import keeps them out\n",
			resp.Recorded, resp.Left, words.Plural(len(resp.Sessions), "that session", "those sessions"))
	}
	for _, f := range purged {
		fmt.Fprintf(e.stdout, "deleted log %s\n", f)
	}
	for _, f := range kept {
		fmt.Fprintf(e.stdout, "kept log %s: it also holds other sessions' lines (or unreadable ones)\n", f)
	}
	return nil
}

// forgetOlder is forget --older-than: the sessions whose latest event is
// older than age, planned, said, confirmed, then forgotten like any other.
func forgetOlder(ctx context.Context, e *env, age time.Duration, purge, dryRun, yes, asJSON bool) error {
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	before := time.Now().Add(-age)
	req := engine.ForgetRequest{Before: before}
	window := fmt.Sprintf("older than %s (latest event before %s)", ageWords(age), before.Local().Format("2006-01-02 15:04"))
	plan, err := c.PlanForget(ctx, req)
	if err != nil {
		return err
	}
	var purged, kept []string
	if purge && len(plan.Sessions) > 0 {
		if purged, kept, err = c.ClassifyLogs(plan.Sessions); err != nil {
			return err
		}
	}
	if len(plan.Sessions) == 0 {
		if asJSON {
			return printJSON(e.stdout, map[string]any{"dry_run": dryRun, "sessions": []string{}, "events": 0, "purged": []string{}, "kept": []string{}})
		}
		fmt.Fprintf(e.stdout, "nothing to forget: no session is %s\n", window)
		return nil
	}
	if dryRun {
		if asJSON {
			return printJSON(e.stdout, map[string]any{"dry_run": true, "sessions": plan.Sessions, "events": plan.Events,
				"purged": nonNil(purged), "kept": nonNil(kept)})
		}
		fmt.Fprintf(e.stdout, "dry run, nothing changed: would forget %d %s of %d %s %s: %s\n", plan.Events, words.Plural(int(plan.Events), "event", "events"), len(plan.Sessions),
			words.Plural(len(plan.Sessions), "session", "sessions"), window, strings.Join(plan.Sessions, ", "))
		for _, f := range purged {
			fmt.Fprintf(e.stdout, "would delete log %s\n", f)
		}
		for _, f := range kept {
			fmt.Fprintf(e.stdout, "would keep log %s: it also holds other sessions' lines (or unreadable ones)\n", f)
		}
		return nil
	}
	if !yes {
		if !stdinIsTerminal(e.stdin) {
			return usageError("--older-than forgets %d %s for good: add --yes to confirm (stdin is not a terminal to ask on), or see which with --dry-run",
				len(plan.Sessions), words.Plural(len(plan.Sessions), "session", "sessions"))
		}
		fmt.Fprintf(e.stderr, "This forgets %d %s of the %d %s %s:\n  %s\n", plan.Events, words.Plural(int(plan.Events), "event", "events"), len(plan.Sessions),
			words.Plural(len(plan.Sessions), "session", "sessions"), window, strings.Join(plan.Sessions, ", "))
		if !confirm(e, purged) {
			return &exitError{code: 1, err: errors.New("not confirmed: nothing changed")}
		}
	}
	resp, err := c.Forget(ctx, req)
	if err != nil {
		return err
	}
	if purge {
		if purged, kept, err = c.PurgeLogs(resp.Sessions); err != nil {
			return err
		}
	} else {
		purged, kept = nil, nil
	}
	if asJSON {
		return printJSON(e.stdout, map[string]any{"sessions": nonNil(resp.Sessions), "events": resp.Events,
			"recorded": resp.Recorded, "left": resp.Left, "purged": nonNil(purged), "kept": nonNil(kept)})
	}
	fmt.Fprintf(e.stdout, "forgot %d %s of %d %s %s\n", resp.Events, words.Plural(int(resp.Events), "event", "events"), len(resp.Sessions), words.Plural(len(resp.Sessions), "session", "sessions"), window)
	if resp.Recorded != "" {
		fmt.Fprintf(e.stdout, "checked: %s records the forget (read back), and the index holds %d events of those sessions; a rebuild of the index or an import keeps them out\n",
			resp.Recorded, resp.Left)
	}
	for _, f := range purged {
		fmt.Fprintf(e.stdout, "deleted log %s\n", f)
	}
	for _, f := range kept {
		fmt.Fprintf(e.stdout, "kept log %s: it also holds other sessions' lines (or unreadable ones)\n", f)
	}
	return nil
}

// ageWords says a duration as it was likely given: whole days as days.
func ageWords(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		n := int(d / (24 * time.Hour))
		return fmt.Sprintf("%d %s", n, words.Plural(n, "day", "days"))
	}
	return d.String()
}

// confirm lists the log files that would be deleted (if any) and asks
// y/N on the terminal.
func confirm(e *env, files []string) bool {
	for i, f := range files {
		if i == 0 {
			fmt.Fprintf(e.stderr, "and deletes these log files for good:\n")
		}
		fmt.Fprintf(e.stderr, "  %s\n", f)
	}
	fmt.Fprintf(e.stderr, "Continue? [y/N] ")
	answer, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
}

// stdinIsTerminal reports whether r is a terminal; tests replace it.
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirmPurge asks on the terminal before log files are deleted, and
// refuses when there is no terminal to ask on.
func confirmPurge(e *env, plan engine.ForgetResponse, files []string) error {
	if !stdinIsTerminal(e.stdin) {
		return usageError("--purge-logs deletes log files for good: add --yes to confirm (stdin is not a terminal to ask on), or see what would go with --dry-run")
	}
	fmt.Fprintf(e.stderr, "This forgets %d %s of %s", plan.Events, words.Plural(int(plan.Events), "event", "events"), strings.Join(plan.Sessions, ", "))
	if len(files) == 0 {
		fmt.Fprintf(e.stderr, " (no log file holds only their lines: none will be deleted).\n")
	} else {
		fmt.Fprintf(e.stderr, " and deletes these log files for good:\n")
		for _, f := range files {
			fmt.Fprintf(e.stderr, "  %s\n", f)
		}
	}
	fmt.Fprintf(e.stderr, "Continue? [y/N] ")
	answer, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return &exitError{code: 1, err: errors.New("not confirmed: nothing changed")}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
