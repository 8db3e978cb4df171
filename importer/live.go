package importer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Follow defaults.
const (
	// DefaultPoll is how often the native folders are looked at.
	DefaultPoll = 2 * time.Second
	// DefaultQuiet is how long a transcript must be unchanged before a turn
	// without an end marker is imported anyway.
	DefaultQuiet = 30 * time.Second
)

// FollowAll, given to ParseAgents (daemon --import all), follows every
// agent of FollowAgents.
const FollowAll = "all"

// FollowAgents are the agents whose native folders can be followed live:
// every agent with an importer. Cursor's database, rewritten all the time
// and without turn markers, is imported once it has been unchanged for
// the quiet time.
var FollowAgents = Agents

// LiveImport imports, as they grow, the native transcripts of the given
// agents that belong to a workspace: Claude Code's project folder, the
// Codex rollouts whose cwd is the workspace, Gemini CLI's project folder,
// Aider's history file, Cursor's workspace database, and the sessions of
// the stores shared by all projects (Cline, Roo Code, Kilo Code, OpenCode,
// Copilot CLI, Goose) that ran in the workspace. It only writes protocol
// files into the logs folder; the daemon's tailer indexes them like any
// log. Every native file is re-read when its size or time changes; the
// store skips what the logs already hold, so each event is written once,
// across restarts too. An agent whose folder does not exist yet is looked
// for at every poll, so a session of an agent installed later is found.
type LiveImport struct {
	Agents    []string
	Workspace string
	// Dirs are the other folders the workspace covers (the other
	// worktrees of its repository): their transcripts are followed too.
	Dirs  []string
	Logs  string
	Home  Home
	Poll  time.Duration // default DefaultPoll
	Quiet time.Duration // default DefaultQuiet
	Log   *slog.Logger

	importers map[string]*Importer
	files     map[string]*followed
	member    map[string]bool // unit path -> belongs to the workspace (decided once)

	mu     sync.Mutex
	report map[string]*LiveAgent
}

type followed struct {
	size  int64
	mtime time.Time
	held  bool // imported with the last turn held back
}

// LiveReport is what a LiveImport follows (`continuity status`).
type LiveReport struct {
	// Agents: per agent followed, what it found for the workspace.
	Agents []LiveAgent `json:"agents"`
}

// LiveAgent is one followed agent in LiveReport.
type LiveAgent struct {
	Agent string `json:"agent"`
	// Files: the native files (sessions, tasks, databases) of the
	// workspace it follows now; 0 while none exists yet.
	Files int `json:"files"`
	// Events written since the daemon started, and when the last ones
	// were.
	Events     int       `json:"events"`
	LastImport time.Time `json:"last_import,omitzero"`
	// Error: the last failure to write the logs, if any (retried).
	Error string `json:"error,omitempty"`
	// Polls counts the passes over the agent's files ended since the
	// daemon started: what changed before a pass began is imported once
	// it has ended (a caught-up signal for tests and scripts).
	Polls int64 `json:"polls"`
}

// ParseAgents reads a comma-separated list of agents to follow; "all"
// stands for every agent that can be followed.
func ParseAgents(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		var names []string
		if a == FollowAll {
			names = FollowAgents
		} else if name, ok := Canonical(a); ok && slices.Contains(FollowAgents, name) {
			names = []string{name}
		} else {
			return nil, fmt.Errorf("cannot follow %q: want %s, or a comma-separated list of %s (also accepted: %s)", a, FollowAll, strings.Join(FollowAgents, ", "), AliasHelp())
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// Run follows until ctx ends. Nothing stops it but ctx: a native file
// that cannot be read, or logs that cannot be written, are logged and
// tried again at the next poll, so the daemon keeps indexing.
func (f *LiveImport) Run(ctx context.Context) error {
	if err := f.init(); err != nil {
		return err
	}
	f.Log.Info("following agent transcripts", "agents", strings.Join(f.Agents, ","), "workspace", f.Workspace, "worktrees", strings.Join(f.Dirs, ","))
	t := time.NewTicker(f.Poll)
	defer t.Stop()
	for {
		if err := f.Once(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// init sets the defaults and the importers.
func (f *LiveImport) init() error {
	if f.Poll <= 0 {
		f.Poll = DefaultPoll
	}
	if f.Quiet <= 0 {
		f.Quiet = DefaultQuiet
	}
	if f.Log == nil {
		f.Log = slog.New(slog.DiscardHandler)
	}
	f.importers = map[string]*Importer{}
	f.files = map[string]*followed{}
	f.member = map[string]bool{}
	f.mu.Lock()
	f.report = map[string]*LiveAgent{}
	f.mu.Unlock()
	for _, a := range f.Agents {
		im, err := New(a, f.Logs, Options{Workspace: f.Workspace, Roots: f.dirs()})
		if err != nil {
			return err
		}
		f.importers[a] = im
		f.mu.Lock()
		f.report[a] = &LiveAgent{Agent: a}
		f.mu.Unlock()
	}
	return nil
}

// dirs are the workspace and the other folders it covers.
func (f *LiveImport) dirs() []string {
	return append([]string{f.Workspace}, f.Dirs...)
}

// Once looks at every native file once and imports what changed.
func (f *LiveImport) Once(ctx context.Context) error {
	if f.importers == nil {
		if err := f.init(); err != nil {
			return err
		}
	}
	for _, a := range f.Agents {
		im := f.importers[a]
		if err := im.refresh(); err != nil {
			f.Log.Error("import: cannot read the logs folder; retrying", "agent", a, "err", err)
			continue
		}
		files := f.nativeFiles(a)
		f.note(a, func(r *LiveAgent) { r.Files = len(files) })
		for _, path := range files {
			if ctx.Err() != nil {
				return nil
			}
			f.follow(a, im, path)
		}
		f.note(a, func(r *LiveAgent) { r.Polls++ })
	}
	return nil
}

// follow imports one native file of agent a when it changed since it was
// last imported (or its held turn has become quiet).
func (f *LiveImport) follow(a string, im *Importer, path string) {
	size, mtime, ok := unitStamp(a, path)
	if !ok {
		return
	}
	st := f.files[path]
	changed := st == nil || st.size != size || !st.mtime.Equal(mtime)
	quiet := time.Since(mtime) >= f.Quiet
	if !changed && !(st.held && quiet) {
		return
	}
	if a == Cursor && !quiet {
		return // rewritten all the time: read once it is quiet
	}
	o := im.Options
	o.HoldOpenTurn = !quiet
	res, err := im.ImportFile(path, o)
	if err != nil {
		// cannot write the logs (disk full, permissions): the daemon
		// goes on indexing; this file is tried again next time
		f.Log.Error("import: cannot write the logs; retrying", "agent", a, "file", path, "err", err)
		f.note(a, func(r *LiveAgent) { r.Error = err.Error() })
		return
	}
	f.files[path] = &followed{size: size, mtime: mtime, held: o.HoldOpenTurn}
	for _, p := range res.Problems {
		f.Log.Warn("import: unreadable record skipped", "agent", a, "record", p)
	}
	if n := res.Exchanges + res.Resets + res.Links; n > 0 {
		f.Log.Info("imported", "agent", a, "file", path, "exchanges", res.Exchanges, "resets", res.Resets, "links", res.Links)
		f.note(a, func(r *LiveAgent) { r.Events += n; r.LastImport = time.Now().UTC(); r.Error = "" })
	}
}

// note updates the report of agent a.
func (f *LiveImport) note(a string, update func(*LiveAgent)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.report[a]; r != nil {
		update(r)
	}
}

// Report says what the follower follows, agents in the order given.
func (f *LiveImport) Report() LiveReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := LiveReport{Agents: []LiveAgent{}}
	for _, a := range f.Agents {
		if r := f.report[a]; r != nil {
			out.Agents = append(out.Agents, *r)
		}
	}
	return out
}

// nativeFiles lists the agent's native files for the workspace, oldest
// first.
func (f *LiveImport) nativeFiles(agent string) []string {
	var paths []string
	switch agent {
	case Codex:
		_ = filepath.WalkDir(f.Home.CodexSessionsDir(), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, ".jsonl") {
				return nil
			}
			if f.belongs(path, func() (string, bool) {
				fi, err := d.Info()
				return codexCwd(path), err == nil && fi.Size() > 0 // decided once its session_meta is there
			}) {
				paths = append(paths, path)
			}
			return nil
		})
		sort.Strings(paths)
		return paths
	case ClaudeCode, Gemini, Aider, Cursor:
		files, err := f.importers[agent].Files(f.Home.NativePaths(agent, f.dirs()...))
		if err != nil {
			return nil
		}
		return files
	}
	for _, u := range f.Home.Units(agent) {
		if isDatabase(u) || f.belongs(u, func() (string, bool) {
			cwd := UnitCwd(agent, u)
			return cwd, cwd != ""
		}) {
			paths = append(paths, u)
		}
	}
	sort.SliceStable(paths, func(i, j int) bool { return rank(agent, paths[i]) < rank(agent, paths[j]) })
	return paths
}

// belongs reports whether the session of a unit file ran in the
// workspace; cwd reads its folder and whether that is final (the answer
// is kept then, else asked again at the next poll).
func (f *LiveImport) belongs(path string, cwd func() (string, bool)) bool {
	if in, ok := f.member[path]; ok {
		return in
	}
	dir, final := cwd()
	in := within(dir, f.dirs())
	if final {
		f.member[path] = in
	}
	return in
}

// codexCwd is the session_meta cwd of a rollout.
func codexCwd(path string) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	m, _ := ReadCodexMeta(fh)
	return m.Cwd
}

// unitStamp is what tells that a unit file changed: its size and time,
// with those of the files beside it that grow with it (a database's
// write-ahead log, an OpenCode session's messages, a Cline session's
// compaction).
func unitStamp(agent, path string) (int64, time.Time, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0, time.Time{}, false
	}
	size, mtime := fi.Size(), fi.ModTime()
	add := func(p string) {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
			if fi.ModTime().After(mtime) {
				mtime = fi.ModTime()
			}
		}
	}
	switch {
	case isDatabase(path) || filepath.Base(path) == "state.vscdb":
		add(path + "-wal")
	case agent == Cline && strings.HasSuffix(path, clineSessionSuffix):
		add(strings.TrimSuffix(path, clineSessionSuffix) + ".compaction.json")
	case agent == OpenCode || agent == Kilo && openCodeLayout(path):
		var s ocSession
		if b, err := readCapped(path, 16<<20); err == nil && jsonUnmarshal(b, &s) && s.ID != "" {
			msgDir, _ := openCodeDirs(path, s.ID)
			msgs, _ := filepath.Glob(filepath.Join(msgDir, "*.json"))
			for _, m := range msgs {
				add(m)
			}
		}
	}
	return size, mtime, true
}

// refresh makes the importer's store see events written to the logs by
// others (the CLI, the hook) since it was opened.
func (im *Importer) refresh() error {
	if im.store == nil {
		return im.open()
	}
	return im.store.refresh()
}
