package importer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// Result counts what an import did. Exchanges, Resets and Links count
// events newly written; a second import of the same files counts 0.
type Result struct {
	Files      int `json:"files"`
	Sessions   int `json:"sessions"`
	Exchanges  int `json:"exchanges"`
	Resets     int `json:"resets"`
	Links      int `json:"links"`
	Duplicates int `json:"duplicates"` // events already in the logs
	// Repeated counts the Duplicates this import itself wrote, from
	// another file: a session in more than one file (two captures of one
	// session, a resumed copy's history). A first import of such files
	// has duplicates, all of them repeated.
	Repeated int      `json:"repeated"`
	Skipped  int      `json:"skipped"` // native sessions or files left out on purpose
	Errors   int      `json:"errors"`  // native records that could not be read
	Problems []string `json:"problems,omitempty"`
	Skips    []string `json:"skips,omitempty"`
	Bytes    int64    `json:"bytes"` // native bytes read
}

// Summary is the one-line account of an import of agent's files.
// Duplicates the import itself wrote from another file (Repeated) are
// told apart, so that a first import does not seem to find events
// already there.
func (r Result) Summary(agent string) string {
	dups := fmt.Sprintf("%d already there", r.Duplicates)
	if r.Repeated > 0 {
		dups += fmt.Sprintf(" (%d of them read earlier in this import: a session in more than one file, such as two copies of one session or a resumed session's history)", r.Repeated)
	}
	n := func(v int, one, many string) string {
		if v == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", v, many)
	}
	return fmt.Sprintf("%s: %s, %s: %s, %s, %s written; %s; %d skipped; %s",
		agent, n(r.Files, "file", "files"), n(r.Sessions, "session", "sessions"), n(r.Exchanges, "exchange", "exchanges"),
		n(r.Resets, "context reset", "context resets"), n(r.Links, "resume link", "resume links"), dups, r.Skipped,
		n(r.Errors, "unreadable record", "unreadable records"))
}

// Add adds r2's counts to r.
func (r *Result) Add(r2 Result) {
	r.Files += r2.Files
	r.Sessions += r2.Sessions
	r.Exchanges += r2.Exchanges
	r.Resets += r2.Resets
	r.Links += r2.Links
	r.Duplicates += r2.Duplicates
	r.Repeated += r2.Repeated
	r.Skipped += r2.Skipped
	r.Errors += r2.Errors
	r.Problems = append(r.Problems, r2.Problems...)
	r.Skips = append(r.Skips, r2.Skips...)
	r.Bytes += r2.Bytes
}

// Store is what the logs folder already holds from one agent's imports:
// event ids, and per turn the session it went to and how far into the
// turn earlier imports got. It appends new events with logformat's atomic
// writer, one file per native session: <agent>-<session>~<machine>.jsonl.
//
// The logs themselves are the state: no side file. Opening a store reads
// the agent's files in the logs folder once.
type Store struct {
	dir      string
	agent    string
	ids      map[string]string // event id -> session
	turns    map[string]*turnState
	sessions map[string]bool                // sessions with events in the logs
	offsets  map[string]int64               // per log file, how far it was read
	files    map[string]*logformat.Appender // open during one Import
	// handoffs and openings: per handoffKey, the session that handed the
	// text to a new task, and the session whose first prompt it is.
	handoffs map[string]string
	openings map[string]string
	// forgotten: the sessions `continuity forget` removed (the tombstones
	// beside the logs): their events from before the forget are not
	// written again.
	forgotten map[string]logformat.Tombstone
	// run: the event ids and turns written since BeginRun (this import),
	// to tell a repeat within the import from what the logs held.
	run map[string]bool
}

// BeginRun starts an import: duplicates of what it writes from here on
// are counted as Repeated.
func (st *Store) BeginRun() { st.run = map[string]bool{} }

// dup counts an event already there; key (its id, or its turn) says
// whether this import wrote it.
func (st *Store) dup(res *Result, key string) {
	res.Duplicates++
	if st.run[key] {
		res.Repeated++
	}
}

type turnState struct {
	session  string
	throughs []string
}

// OpenStore reads what logsDir already holds from agent's imports.
func OpenStore(logsDir, agent string) (*Store, error) {
	st := &Store{dir: logsDir, agent: agent, ids: map[string]string{}, turns: map[string]*turnState{}, sessions: map[string]bool{}, offsets: map[string]int64{},
		handoffs: map[string]string{}, openings: map[string]string{}}
	if err := st.refresh(); err != nil {
		return nil, err
	}
	return st, nil
}

// refresh reads what was appended to the agent's log files since the
// last read (by this store or by another writer).
func (st *Store) refresh() error {
	forgotten, err := logformat.ReadTombstones(st.dir)
	if err != nil {
		return fmt.Errorf("importer: %w", err)
	}
	st.forgotten = forgotten
	names, err := filepath.Glob(filepath.Join(st.dir, st.agent+"-*.jsonl"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := st.load(name); err != nil {
			return err
		}
	}
	return nil
}

// storedLine is the part of a stored line the store needs.
type storedLine struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	NewSess   string `json:"new_session"`
	Metadata  struct {
		Turn     string   `json:"turn"`
		Through  string   `json:"through"`
		Handoffs []string `json:"handoffs"`
		Opening  string   `json:"opening"`
	} `json:"metadata"`
}

func (st *Store) load(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil // the tailer reports it; we never write through a link
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("importer: read %s: %w", path, err)
	}
	defer f.Close()
	off := st.offsets[path]
	if fi.Size() < off {
		off = 0 // rewritten: read it again
	}
	if fi.Size() == off {
		return nil
	}
	if _, err := f.Seek(off, 0); err != nil {
		return fmt.Errorf("importer: read %s: %w", path, err)
	}
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			off += int64(len(line))
			var s storedLine
			if json.Unmarshal(line, &s) == nil && s.ID != "" {
				sess := s.SessionID
				if sess == "" {
					sess = s.NewSess
				}
				st.note(s.ID, sess, s.Metadata.Turn, s.Metadata.Through)
				st.noteHandoffs(sess, s.Metadata.Handoffs, s.Metadata.Opening)
			}
		}
		if err != nil {
			break
		}
	}
	st.offsets[path] = off
	return nil
}

func (st *Store) note(id, session, turn, through string) {
	if _, known := st.ids[id]; known {
		return
	}
	st.ids[id] = session
	st.sessions[session] = true
	if turn == "" {
		return
	}
	ts := st.turns[turn]
	if ts == nil {
		ts = &turnState{session: session}
		st.turns[turn] = ts
	}
	ts.throughs = append(ts.throughs, through)
}

// noteHandoffs records the handoffs and the opening of a stored exchange
// of session (the first one met wins).
func (st *Store) noteHandoffs(session string, handoffs []string, opening string) {
	for _, h := range handoffs {
		if _, ok := st.handoffs[h]; !ok && h != "" {
			st.handoffs[h] = session
		}
	}
	if _, ok := st.openings[opening]; !ok && opening != "" {
		st.openings[opening] = session
	}
}

// hasSession reports whether the logs hold events of session.
func (st *Store) hasSession(session string) bool { return st.sessions[session] }

// HasSession reports whether the logs hold events of the agent's
// session (it was imported, at least in part).
func (st *Store) HasSession(session string) bool { return st.hasSession(session) }

// Has reports whether an event with id is in the logs.
func (st *Store) Has(id string) bool { _, ok := st.ids[id]; return ok }

// FileFor is the log file this machine appends a session to:
// <agent>-<session>~<machine>.jsonl (logformat.MachineName), so that two
// machines sharing the logs never append to the same file. The store
// reads every file of the agent, other machines' included.
func (st *Store) FileFor(session string) string {
	return filepath.Join(st.dir, logformat.MachineLogName(st.agent+"-"+session, logformat.MachineName()))
}

// Import renders s and appends the events the logs do not hold yet:
// already-imported events are skipped by id; a turn that grew since it was
// imported gets a continuation exchange with only what is new; a turn
// already stored under another session (history copied into a resumed
// session) is not stored again, and a session_resume link records where
// it came from.
func (st *Store) Import(s *Session, o Options, res *Result) (err error) {
	defer func() {
		for path, a := range st.files {
			if cerr := a.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("importer: close %s: %w", path, cerr)
			}
		}
		st.files = nil
	}()
	plans := render(s, o)
	// the steps of each turn, in order, across its parts
	pos := map[string]map[string]int{}
	steps := map[string]Item{}
	for _, it := range s.Items {
		if it.Kind == ItemStep {
			for _, p := range splitStep(it, o.withDefaults().PartBytes) {
				steps[p.Key] = p
			}
		}
	}
	for _, p := range plans {
		if p.turn == "" {
			continue
		}
		m := pos[p.turn]
		if m == nil {
			m = map[string]int{}
			pos[p.turn] = m
		}
		for _, k := range p.steps {
			m[k] = len(m)
		}
	}
	linked := map[string]bool{}
	for _, p := range plans {
		if p.turn == "" {
			if st.Has(p.ev.ID) {
				st.dup(res, p.ev.ID)
				continue
			}
			if err := st.write(p, res); err != nil {
				return err
			}
			continue
		}
		ts := st.turns[p.turn]
		if ts == nil {
			if st.Has(p.ev.ID) {
				st.dup(res, p.ev.ID)
				continue
			}
			if err := st.write(p, res); err != nil {
				return err
			}
			continue
		}
		if ts.session != s.ID {
			// copied history: stored once, under the session it came from
			st.dup(res, p.turn)
			if !linked[ts.session] && ts.session != "" {
				linked[ts.session] = true
				if err := st.link(ts.session, s, p, res); err != nil {
					return err
				}
			}
			continue
		}
		covered := -1
		for _, th := range ts.throughs {
			if th == "" {
				continue
			}
			i, ok := pos[p.turn][th]
			if !ok {
				covered = len(pos[p.turn]) // written from another reading: leave the turn alone
				break
			}
			covered = max(covered, i)
		}
		var fresh []string
		for _, k := range p.steps {
			if pos[p.turn][k] > covered {
				fresh = append(fresh, k)
			}
		}
		switch {
		case len(fresh) == 0:
			st.dup(res, p.turn)
		case len(fresh) == len(p.steps) && !st.Has(p.ev.ID):
			if err := st.write(p, res); err != nil {
				return err
			}
		default:
			q := p
			q.steps = fresh
			q = rerender(q, s, o, steps)
			if st.Has(q.ev.ID) {
				st.dup(res, q.ev.ID)
				continue
			}
			if err := st.write(q, res); err != nil {
				return err
			}
		}
	}
	return st.linkHandoffs(s, plans, res)
}

// link records that s continues prev (history copied from prev).
func (st *Store) link(prev string, s *Session, p planned, res *Result) error {
	return st.linkSessions(prev, s.ID, p.ev.Timestamp, s.Source, res)
}

// linkSessions records that session next continues prev, in next's log
// file, once (nor when prev already continues next).
func (st *Store) linkSessions(prev, next string, ts time.Time, source string, res *Result) error {
	if prev == next || logformat.ValidSessionID(prev) != nil || logformat.ValidSessionID(next) != nil {
		return nil
	}
	id := st.agent + ":resume:" + prev + ":" + next
	if st.Has(id) || st.Has(st.agent+":resume:"+next+":"+prev) {
		return nil
	}
	ev := logformat.Event{
		Type: logformat.TypeSessionResume, SessionID: next, PreviousSession: prev, NewSession: next,
		ID: id, Timestamp: ts.UTC(),
		Metadata: metaJSON(meta{Source: st.agent, Native: filepath.Base(source)}),
	}
	return st.write(planned{ev: ev}, res)
}

// countLink reports whether the link from prev to next is still to
// write, counting it as a duplicate when the logs hold it (once per
// import of next, the session it belongs to).
func (st *Store) countLink(prev, next string, res *Result) bool {
	if id := st.agent + ":resume:" + prev + ":" + next; st.Has(id) {
		st.dup(res, id)
		return false
	}
	return true
}

// linkHandoffs links s to the task that handed it its first prompt, and
// the tasks s handed a text to, when the logs hold them (the two may be
// imported in either order).
func (st *Store) linkHandoffs(s *Session, plans []planned, res *Result) error {
	if s.Opening != "" {
		if parent := st.handoffs[s.Opening]; parent != "" && parent != s.ID && st.countLink(parent, s.ID, res) {
			ts := time.Time{}
			if len(plans) > 0 {
				ts = plans[0].ev.Timestamp
			}
			if ts.IsZero() {
				ts = mtimeOr(firstTime(s.Items))
			}
			if err := st.linkSessions(parent, s.ID, ts, s.Source, res); err != nil {
				return err
			}
		}
	}
	for _, it := range s.Items {
		if it.Handoff == "" {
			continue
		}
		if child := st.openings[it.Handoff]; child != "" && child != s.ID {
			if err := st.linkSessions(s.ID, child, mtimeOr(it.Time), s.Source, res); err != nil {
				return err
			}
		}
	}
	return nil
}

// write appends one event to its session's file; not an event of a
// forgotten session from before the forget.
func (st *Store) write(p planned, res *Result) error {
	if t, ok := st.forgotten[p.ev.SessionID]; ok && t.Covers(p.ev.Timestamp, p.ev.Timestamp.IsZero()) {
		res.Skipped++
		why := fmt.Sprintf("session %s: forgotten (continuity forget, %s): its events from before are not imported again",
			p.ev.SessionID, t.At.UTC().Format(time.RFC3339))
		if !slices.Contains(res.Skips, why) {
			res.Skips = append(res.Skips, why)
		}
		return nil
	}
	line, err := p.ev.MarshalLine()
	if err != nil {
		res.Errors++
		res.Problems = append(res.Problems, Problem{File: p.ev.SessionID, Line: p.srcLine, Reason: "cannot write event: " + err.Error()}.String())
		return nil
	}
	path := st.FileFor(p.ev.SessionID)
	a := st.files[path]
	if a == nil {
		if a, err = logformat.OpenAppender(path); err != nil {
			return fmt.Errorf("importer: append to %s: %w", path, err)
		}
		if st.files == nil {
			st.files = map[string]*logformat.Appender{}
		}
		st.files[path] = a
	}
	if err := a.Append(line); err != nil {
		return fmt.Errorf("importer: append to %s: %w", path, err)
	}
	var through string
	if len(p.steps) > 0 {
		through = p.steps[len(p.steps)-1]
	}
	st.note(p.ev.ID, p.ev.SessionID, p.turn, through)
	if st.run != nil {
		st.run[p.ev.ID] = true
		if p.turn != "" {
			st.run[p.turn] = true
		}
	}
	if p.ev.Type == logformat.TypeExchange {
		var m meta
		if json.Unmarshal(p.ev.Metadata, &m) == nil {
			st.noteHandoffs(p.ev.SessionID, m.Handoffs, m.Opening)
		}
	}
	switch p.ev.Type {
	case logformat.TypeExchange:
		res.Exchanges++
	case logformat.TypeContextReset:
		res.Resets++
	case logformat.TypeSessionResume:
		res.Links++
	}
	return nil
}

// sessionFileName reports whether name is one of agent's log files.
func sessionFileName(name, agent string) bool {
	return strings.HasPrefix(name, agent+"-") && strings.HasSuffix(name, ".jsonl")
}
