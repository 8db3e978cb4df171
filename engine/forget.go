package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/workspace"
)

// ForgetRequest asks to remove sessions from the index: one session (and
// its chain), or every session whose latest event is before Before
// (retention: forget --older-than, daemon --retain).
type ForgetRequest struct {
	Session string    `json:"session,omitempty"`
	Chain   bool      `json:"chain,omitempty"` // and the sessions it resumes
	Before  time.Time `json:"before,omitzero"`
}

// ForgetResponse says what was (or would be) removed, and, once done,
// what was read back to check it.
type ForgetResponse struct {
	Sessions []string `json:"sessions"`
	Events   int64    `json:"events"`
	// Recorded is the file beside the logs the forget is recorded in
	// (relative to the workspace), read back: a rebuild of the index and
	// an import honour it. Empty in a dry run.
	Recorded string `json:"recorded,omitempty"`
	// Left is how many events of the sessions the index still holds, read
	// back after the forget: 0.
	Left int64 `json:"left"`
}

// Forget removes the sessions from the index, then from every view of it
// (the full-text index, the bm25 engine's files, the vector space and
// its snapshots): nothing derived keeps their text, words or vectors.
// The forget is recorded twice: in the index, and as tombstones beside
// the logs (logformat.TombstoneFile), which outlive the index: a rebuild
// (Open) and an import read them. Then both are read back: the response
// says where the forget is recorded and how many events are left.
func (e *Engine) Forget(ctx context.Context, req ForgetRequest) (ForgetResponse, error) {
	sessions, known, err := forgetTargets(ctx, e.db, req)
	resp := ForgetResponse{Sessions: sessions}
	if err != nil && req.Session != "" && IsBadRequest(err) {
		// The session may be in the lines not indexed yet (no daemon ran:
		// a fresh clone of synced logs): say so, not just "unknown".
		if behind, berr := unindexedLines(ctx, e.db, e.ws.Logs); berr == nil && behind.bytes > 0 {
			n := behind.count()
			err = server.BadRequest(fmt.Errorf("%v; %s of the logs %s not indexed yet, and may hold it: run 'continuity ingest' (or start 'continuity daemon'), then forget it",
				err, behind.words(), words.Plural(int(n), "is", "are")))
		}
	}
	if err != nil || !known {
		return resp, err
	}
	if err := e.checkShareForget(ctx, req, sessions); err != nil {
		return resp, server.BadRequest(err)
	}
	at := time.Now()
	var tombs []logformat.Tombstone
	for _, s := range sessions {
		f, n, err := e.db.ForgetSession(ctx, index.Forget{Session: s, At: at.UnixNano()})
		if err != nil {
			return resp, fmt.Errorf("forget %s: %w", s, err)
		}
		resp.Events += n
		tombs = append(tombs, logformat.Tombstone{Session: s, At: at, Resumes: f.Resumes})
	}
	for _, v := range e.views {
		if err := v.Remove(ctx, follow.Removal{Sessions: sessions}); err != nil {
			return resp, fmt.Errorf("forget: %s: %w", v.Name(), err)
		}
	}
	// The index first: a crash before the tombstones are written leaves
	// the forget in the index, which Open writes out again.
	if err := logformat.AppendTombstones(e.ws.Logs, tombs); err != nil {
		return resp, err
	}
	return resp, e.verifyForget(ctx, &resp, at)
}

// verifyForget reads the forget back: from the tombstones, each session
// forgotten at least as late as at; from the index, the events left.
func (e *Engine) verifyForget(ctx context.Context, resp *ForgetResponse, at time.Time) error {
	tombs, err := logformat.ReadTombstones(e.ws.Logs)
	if err != nil {
		return fmt.Errorf("forget: read back: %w", err)
	}
	for _, s := range resp.Sessions {
		if t, ok := tombs[s]; !ok || t.At.UnixNano() < at.UnixNano() {
			return fmt.Errorf("forget: read back %s: the forget of %s is not there", logformat.TombstoneFileOf(logformat.MachineName()), s)
		}
		n, err := e.db.EventsOf(ctx, s)
		if err != nil {
			return fmt.Errorf("forget: read back: %w", err)
		}
		resp.Left += n
	}
	file := filepath.Join(e.ws.Logs, logformat.TombstoneFileOf(logformat.MachineName()))
	rel, err := filepath.Rel(e.ws.Root, file)
	if err != nil {
		rel = file
	}
	resp.Recorded = rel
	return nil
}

// applyTombstones makes the index and the tombstones beside the logs
// agree, before anything is read: a forget recorded beside the logs that
// the index lacks (a new index: the cache deleted, a migration, a new
// embedder; a backup from before the forget) is carried out, its
// sessions' events deleted, so that their old lines stay out; a forget
// the index holds that the tombstones lack (made before tombstones
// existed, or a crash between the two) is written out.
func applyTombstones(ctx context.Context, db *index.DB, ws workspace.Layout, log *slog.Logger) error {
	tombs, err := logformat.ReadTombstones(ws.Logs)
	if err != nil {
		return err
	}
	have, err := db.Forgets(ctx)
	if err != nil {
		return err
	}
	sessions := slices.Sorted(maps.Keys(tombs))
	for _, s := range sessions {
		t := tombs[s]
		f := index.Forget{Session: s, At: t.At.UnixNano(), Resumes: t.Resumes}
		if h, ok := have[s]; ok && h.At >= f.At {
			if !subset(f.Resumes, h.Resumes) {
				if err := db.RecordForgotten(ctx, f); err != nil { // the sessions it resumed
					return err
				}
			}
			continue
		}
		_, n, err := db.ForgetSession(ctx, f)
		if err != nil {
			return err
		}
		log.Info("forgotten session kept out (recorded beside the logs)", "session", s, "forgotten_at", t.At, "events_deleted", n)
	}
	var missing []logformat.Tombstone
	for _, s := range slices.Sorted(maps.Keys(have)) {
		h := have[s]
		t, ok := tombs[s]
		if ok && t.At.UnixNano() >= h.At && subset(h.Resumes, t.Resumes) {
			continue
		}
		missing = append(missing, logformat.Tombstone{Session: s, At: time.Unix(0, h.At), Resumes: h.Resumes})
	}
	if len(missing) > 0 {
		if err := logformat.AppendTombstones(ws.Logs, missing); err != nil {
			return err
		}
		log.Info("forgotten sessions recorded beside the logs", "sessions", len(missing), "file", logformat.TombstoneFileOf(logformat.MachineName()))
	}
	return nil
}

// tombstonePeriod is how often a running daemon looks for forgets
// recorded beside the logs since it started: another machine's, brought
// by a sync tool or a git pull.
const tombstonePeriod = time.Second

// followTombstones carries out, while the daemon runs, the forgets that
// appear beside the logs (another machine's tombstone file, synced): the
// sessions' events deleted from the index and from every view, as a
// forget made here. It looks when the tombstone files change (names,
// sizes, times).
func (e *Engine) followTombstones(ctx context.Context) error {
	t := time.NewTicker(tombstonePeriod)
	defer t.Stop()
	// No signature yet: the first look carries out what the files hold.
	// (Taken here, the signature took in a tombstone file synced between
	// Open's applyTombstones and this start, whose forgets then waited
	// for the next change of the files.)
	var f tombstoneFollow
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		e.followStep(ctx, &f)
	}
}

// tombstoneFollow is what followTombstones remembers between looks: the
// signature carried out, and the one whose failure was last reported.
type tombstoneFollow struct {
	last, warned string
}

// followStep carries out the forgets of tombstone files changed since
// f.last. A failure (a line that is not a forget) is tried again at every
// look but reported once until the files change: it was warned of every
// second, for as long as the line stayed.
func (e *Engine) followStep(ctx context.Context, f *tombstoneFollow) {
	sig := tombstoneSignature(e.ws.Logs)
	if sig == f.last {
		return
	}
	if err := e.applyNewTombstones(ctx); err != nil {
		if sig != f.warned {
			e.log.Warn("cannot carry out the forgets recorded beside the logs; trying again (said once until the files change; 'continuity doctor' names the line)", "err", err)
			f.warned = sig
		}
		return
	}
	f.last, f.warned = sig, ""
}

// applyNewTombstones forgets the sessions the tombstone files forget
// later than the index does.
func (e *Engine) applyNewTombstones(ctx context.Context) error {
	tombs, err := logformat.ReadTombstones(e.ws.Logs)
	if err != nil {
		return err
	}
	have, err := e.db.Forgets(ctx)
	if err != nil {
		return err
	}
	var sessions []string
	for _, s := range slices.Sorted(maps.Keys(tombs)) {
		t := tombs[s]
		if h, ok := have[s]; ok && h.At >= t.At.UnixNano() {
			continue
		}
		_, n, err := e.db.ForgetSession(ctx, index.Forget{Session: s, At: t.At.UnixNano(), Resumes: t.Resumes})
		if err != nil {
			return err
		}
		sessions = append(sessions, s)
		e.log.Info("forgotten session (recorded beside the logs, by another machine)", "session", s, "forgotten_at", t.At, "events_deleted", n)
	}
	if len(sessions) == 0 {
		return nil
	}
	for _, v := range e.views {
		if err := v.Remove(ctx, follow.Removal{Sessions: sessions}); err != nil {
			return fmt.Errorf("forget: %s: %w", v.Name(), err)
		}
	}
	return nil
}

// tombstoneSignature sums up the tombstone files of dir: their names,
// sizes and modification times.
func tombstoneSignature(dir string) string {
	names, _ := logformat.TombstoneFiles(dir)
	var b []byte
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		b = fmt.Appendf(b, "%s\x00%d\x00%d\n", n, fi.Size(), fi.ModTime().UnixNano())
	}
	return string(b)
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// forgetTargets are the sessions forgetting req removes: the session, or
// its chain. A session forgotten before is not known to the index any
// more (known is false: nothing to do); an unknown one is a bad request.
func forgetTargets(ctx context.Context, db *index.DB, req ForgetRequest) (sessions []string, known bool, err error) {
	if !req.Before.IsZero() {
		if req.Session != "" || req.Chain {
			return nil, false, server.BadRequest(errors.New("forget a session or the sessions older than a time, not both"))
		}
		all, err := db.Sessions(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, s := range all {
			if s.Last.Before(req.Before) {
				sessions = append(sessions, s.ID)
			}
		}
		return sessions, len(sessions) > 0, nil
	}
	if ok, err := db.SessionExists(ctx, req.Session); err != nil {
		return nil, false, err
	} else if !ok {
		if f, err := db.Forgotten(ctx, req.Session); err == nil && f {
			return []string{req.Session}, false, nil
		}
		return nil, false, UnknownSession(req.Session)
	}
	if !req.Chain {
		return []string{req.Session}, true, nil
	}
	sessions, err = db.Chain(ctx, req.Session, -1)
	return sessions, err == nil, err
}

// forgetPlan is what forgetting req would remove: the sessions and how
// many events they hold.
func forgetPlan(ctx context.Context, db *index.DB, req ForgetRequest) (ForgetResponse, error) {
	sessions, known, err := forgetTargets(ctx, db, req)
	plan := ForgetResponse{Sessions: sessions}
	if err != nil || !known {
		return plan, err
	}
	all, err := db.Sessions(ctx)
	if err != nil {
		return ForgetResponse{}, err
	}
	events := map[string]int64{}
	for _, s := range all {
		events[s.ID] = s.Events
	}
	for _, s := range sessions {
		plan.Events += events[s]
	}
	return plan, nil
}

// Forget forgets through the workspace's daemon when one runs (the
// index's one writer; the call waits for it), else by opening the
// workspace for writing here (which fails while another process, an
// ingest, holds it).
func (c *Client) Forget(ctx context.Context, req ForgetRequest) (ForgetResponse, error) {
	var resp ForgetResponse
	err := c.route(ctx, "forget", req, &resp, false, func() error {
		e, err := Open(c.ws, Options{})
		if err != nil {
			return err
		}
		defer e.Close()
		resp, err = e.Forget(ctx, req)
		return err
	})
	return resp, err
}

// PlanForget says what Forget would remove, read from the index without
// changing it (never through the daemon: an older daemon would not know a
// dry run).
func (c *Client) PlanForget(ctx context.Context, req ForgetRequest) (ForgetResponse, error) {
	db, err := openReader(c.ws)
	if err != nil {
		return ForgetResponse{}, err
	}
	defer db.Close()
	return forgetPlan(ctx, db, req)
}

// ClassifyLogs lists the log files all of whose lines belong to sessions
// (purged) and those that also hold other lines (kept), by file name.
func (c *Client) ClassifyLogs(sessions []string) (purged, kept []string, err error) {
	gone := map[string]bool{}
	for _, s := range sessions {
		gone[s] = true
	}
	files, err := filepath.Glob(filepath.Join(c.ws.Logs, "*.jsonl"))
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

// PurgeLogs deletes the log files all of whose lines belong to sessions,
// and names those it kept because they also hold other lines.
func (c *Client) PurgeLogs(sessions []string) (purged, kept []string, err error) {
	doomed, kept, err := c.ClassifyLogs(sessions)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range doomed {
		if err := os.Remove(filepath.Join(c.ws.Logs, name)); err != nil {
			return purged, kept, fmt.Errorf("delete %s: %w", name, err)
		}
		purged = append(purged, name)
	}
	return purged, kept, nil
}

// classify reports whether a log holds lines of the forgotten sessions,
// and lines of anything else (other sessions, unparsable lines).
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
