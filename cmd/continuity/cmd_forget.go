package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
	"golang.org/x/sys/unix"
)

// forgetRequest asks to remove sessions from the index.
type forgetRequest struct {
	Session string `json:"session"`
	Chain   bool   `json:"chain,omitempty"`
}

// forgetResponse says what was removed.
type forgetResponse struct {
	Sessions []string `json:"sessions"`
	Events   int64    `json:"events"`
}

func runForget(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "forget --session ID [--chain] [--purge-logs] [--dry-run] [--yes] [--json]", `
Remove a session from the index: its events, full-text rows and vectors.
Its lines, when the log is read again (a rescan, a restore), are not
indexed again: 'continuity rejects' lists them (file:line, without their
text) as lines of a forgotten session. Lines timestamped after the forget
are new work in that session and are indexed as usual; forget again to
remove them too.

The forget is recorded in the index: deleting .praxis-os/.cache rebuilds
the index from the logs, and brings back what they still hold.
The log lines themselves stay unless --purge-logs, which deletes the log
files holding only forgotten sessions' lines (a file mixing other sessions
is left as is and named: rewriting it would re-read everyone else's
lines). Deleting files cannot be undone: --purge-logs asks for
confirmation on a terminal and needs --yes otherwise. --dry-run says what
would be forgotten and deleted, and changes nothing. Goes through the
daemon when one runs.`)
	session := fs.String("session", "", "the session to forget")
	chain := fs.Bool("chain", false, "also forget the sessions it resumes (session_resume links, followed back)")
	purge := fs.Bool("purge-logs", false, "also delete the log files that hold only forgotten sessions' lines (asks first)")
	dryRun := fs.Bool("dry-run", false, "say what would be forgotten and which log files deleted; change nothing")
	yes := fs.Bool("yes", false, "do not ask before deleting log files (needed with --purge-logs when stdin is not a terminal)")
	asJSON := fs.Bool("json", false, `print JSON: {"sessions", "events", "purged", "kept"} (and "dry_run")`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("unexpected arguments %q", pos)
	}
	if err := logformat.ValidSessionID(*session); err != nil {
		return usageError("--session: %v", err)
	}
	p, err := e.paths()
	if err != nil {
		return err
	}
	req := forgetRequest{Session: *session, Chain: *chain}

	if *dryRun || *purge && !*yes {
		// What would go, read from the index without changing it (never
		// through the daemon: an older daemon would not know a dry run).
		plan, err := planForget(ctx, p, req)
		if err != nil {
			return err
		}
		var purged, kept []string
		if *purge {
			if purged, kept, err = classifyLogs(p.logs, plan.Sessions); err != nil {
				return err
			}
		}
		if *dryRun {
			if *asJSON {
				return printJSON(e.stdout, map[string]any{"dry_run": true, "sessions": plan.Sessions, "events": plan.Events,
					"purged": nonNil(purged), "kept": nonNil(kept)})
			}
			fmt.Fprintf(e.stdout, "dry run, nothing changed: would forget %d events of %s\n", plan.Events, strings.Join(plan.Sessions, ", "))
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

	var resp forgetResponse
	err = server.NewClient(server.SocketPath(p.cache)).Call(ctx, "forget", req, &resp)
	var se *server.Error
	switch {
	case errors.As(err, &se):
		return &exitError{code: max(se.Code, 1), err: se}
	case errors.Is(err, server.ErrNoDaemon):
		lock, db, oerr := openWriter(p)
		if oerr != nil {
			return oerr
		}
		resp, err = forget(ctx, db, nil, nil, req)
		db.Close()
		lock.Close()
		if errors.As(err, &se) {
			return &exitError{code: max(se.Code, 1), err: se}
		}
		if err != nil {
			return err
		}
	case err != nil:
		return err
	}
	var purged, kept []string
	if *purge {
		if purged, kept, err = purgeLogs(p.logs, resp.Sessions); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]any{"sessions": resp.Sessions, "events": resp.Events,
			"purged": nonNil(purged), "kept": nonNil(kept)})
	}
	fmt.Fprintf(e.stdout, "forgot %d events of %s\n", resp.Events, strings.Join(resp.Sessions, ", "))
	for _, f := range purged {
		fmt.Fprintf(e.stdout, "deleted log %s\n", f)
	}
	for _, f := range kept {
		fmt.Fprintf(e.stdout, "kept log %s: it also holds other sessions' lines (or unreadable ones)\n", f)
	}
	return nil
}

// planForget is what forget would remove, read from the index.
func planForget(ctx context.Context, p paths, req forgetRequest) (forgetResponse, error) {
	db, err := openReader(p)
	if err != nil {
		return forgetResponse{}, err
	}
	defer db.Close()
	if ok, err := db.SessionExists(ctx, req.Session); err != nil {
		return forgetResponse{}, err
	} else if !ok {
		if f, err := db.Forgotten(ctx, req.Session); err == nil && f {
			return forgetResponse{Sessions: []string{req.Session}}, nil
		}
		return forgetResponse{}, usageError("unknown session %q (see 'continuity sessions')", req.Session)
	}
	plan := forgetResponse{Sessions: []string{req.Session}}
	if req.Chain {
		if plan.Sessions, err = db.Chain(ctx, req.Session, -1); err != nil {
			return forgetResponse{}, err
		}
	}
	all, err := db.Sessions(ctx)
	if err != nil {
		return forgetResponse{}, err
	}
	events := map[string]int64{}
	for _, s := range all {
		events[s.ID] = s.Events
	}
	for _, s := range plan.Sessions {
		plan.Events += events[s]
	}
	return plan, nil
}

// stdinIsTerminal reports whether r is a terminal; tests replace it.
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// confirmPurge asks on the terminal before log files are deleted, and
// refuses when there is no terminal to ask on.
func confirmPurge(e *env, plan forgetResponse, files []string) error {
	if !stdinIsTerminal(e.stdin) {
		return usageError("--purge-logs deletes log files for good: add --yes to confirm (stdin is not a terminal to ask on), or see what would go with --dry-run")
	}
	fmt.Fprintf(e.stderr, "This forgets %d events of %s", plan.Events, strings.Join(plan.Sessions, ", "))
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

// forget deletes the sessions from the index (and from the in-memory vector
// space when vecs is given), and removes the derived files that hold their
// vectors or words (vector snapshots, the bm25 engine's files; lex, when
// given, is the running bm25 engine, rebuilt after).
func forget(ctx context.Context, db *index.DB, vecs func() *vectors.Space, lex *search.Lexicon, req forgetRequest) (forgetResponse, error) {
	if ok, err := db.SessionExists(ctx, req.Session); err != nil {
		return forgetResponse{}, err
	} else if !ok {
		if f, err := db.Forgotten(ctx, req.Session); err == nil && f {
			return forgetResponse{Sessions: []string{req.Session}}, nil
		}
		return forgetResponse{}, server.BadRequest(fmt.Errorf("unknown session %q (see 'continuity sessions')", req.Session))
	}
	sessions := []string{req.Session}
	if req.Chain {
		var err error
		if sessions, err = db.Chain(ctx, req.Session, -1); err != nil {
			return forgetResponse{}, err
		}
	}
	resp := forgetResponse{Sessions: sessions}
	if lex != nil {
		// The bm25 engine holds the sessions' words in its files: it is
		// closed and its files removed (with the snapshots, below) before
		// forget answers, and built again after.
		if err := lex.Drop(); err != nil {
			return resp, fmt.Errorf("forget: %w", err)
		}
		defer lex.Resume()
	}
	for _, s := range sessions {
		n, err := db.DeleteSession(ctx, s)
		if err != nil {
			return resp, fmt.Errorf("forget %s: %w", s, err)
		}
		resp.Events += n
		if vecs != nil {
			if v := vecs(); v != nil {
				v.RemoveSession(s)
			}
		}
	}
	if err := vectors.RemoveSnapshots(db); err != nil {
		return resp, fmt.Errorf("forget: %w", err)
	}
	return resp, nil
}

// classifyLogs lists the log files all of whose lines belong to sessions
// (purged) and those that also hold other lines (kept).
func classifyLogs(dir string, sessions []string) (purged, kept []string, err error) {
	gone := map[string]bool{}
	for _, s := range sessions {
		gone[s] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		mine, other, err := classify(f, gone)
		if err != nil {
			return purged, kept, err
		}
		switch {
		case mine && !other:
			purged = append(purged, filepath.Base(f))
		case mine:
			kept = append(kept, filepath.Base(f))
		}
	}
	return purged, kept, nil
}

// purgeLogs deletes the log files all of whose lines belong to sessions.
func purgeLogs(dir string, sessions []string) (purged, kept []string, err error) {
	doomed, kept, err := classifyLogs(dir, sessions)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range doomed {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return purged, kept, fmt.Errorf("delete %s: %w", name, err)
		}
		purged = append(purged, name)
	}
	return purged, kept, nil
}

// classify reports whether a log holds lines of the forgotten sessions, and
// lines of anything else (other sessions, unparsable lines).
func classify(path string, gone map[string]bool) (mine, other bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), logformat.DefaultLimits.MaxLineBytes+2)
	for sc.Scan() {
		line := sc.Bytes()
		if logformat.IsBlank(line) {
			continue
		}
		ev, err := logformat.Parse(line, filepath.Base(path), time.Time{})
		switch {
		case err != nil:
			other = true
		case gone[ev.SessionID] || ev.Type == logformat.TypeSessionResume && gone[ev.NewSession]:
			mine = true
		default:
			other = true
		}
	}
	if err := sc.Err(); err != nil {
		return mine, true, nil // an over-long line: not ours to delete
	}
	return mine, other, nil
}
