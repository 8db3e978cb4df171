package importer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// FollowAgents are the agents whose native folders can be followed live.
var FollowAgents = []string{ClaudeCode, Codex, Gemini, Aider}

// Follower imports, as they grow, the native transcripts of the given
// agents that belong to a workspace: Claude Code's project folder, the
// Codex rollouts whose cwd is the workspace, Gemini CLI's project folder,
// Aider's history file. It only writes protocol files into the logs
// folder; the daemon's tailer indexes them like any log. Every native
// file is re-read when its size or time changes; the store skips what the
// logs already hold, so each event is written once, across restarts too.
type Follower struct {
	Agents    []string
	Workspace string
	Logs      string
	Home      Home
	Poll      time.Duration // default DefaultPoll
	Quiet     time.Duration // default DefaultQuiet
	Log       *slog.Logger

	importers map[string]*Importer
	files     map[string]*followed
	codexSeen map[string]bool // rollout path -> belongs to the workspace
}

type followed struct {
	size  int64
	mtime time.Time
	held  bool // imported with the last turn held back
}

// ParseAgents reads a comma-separated list of agents to follow.
func ParseAgents(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		ok := false
		for _, f := range FollowAgents {
			ok = ok || f == a
		}
		if !ok {
			return nil, fmt.Errorf("cannot follow %q: want a comma-separated list of %s", a, strings.Join(FollowAgents, ", "))
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// Run follows until ctx ends. Nothing stops it but ctx: a native file
// that cannot be read, or logs that cannot be written, are logged and
// tried again at the next poll, so the daemon keeps indexing.
func (f *Follower) Run(ctx context.Context) error {
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
	f.codexSeen = map[string]bool{}
	for _, a := range f.Agents {
		im, err := New(a, f.Logs, Options{Workspace: f.Workspace})
		if err != nil {
			return err
		}
		f.importers[a] = im
	}
	f.Log.Info("following agent transcripts", "agents", strings.Join(f.Agents, ","), "claude-code", f.Home.ClaudeProjectDir(f.Workspace),
		"codex", f.Home.CodexSessionsDir(), "gemini", f.Home.GeminiProjectDir(f.Workspace))
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

// Once looks at every native file once and imports what changed.
func (f *Follower) Once(ctx context.Context) error {
	now := time.Now()
	for _, a := range f.Agents {
		im := f.importers[a]
		if err := im.refresh(); err != nil {
			f.Log.Error("import: cannot read the logs folder; retrying", "agent", a, "err", err)
			continue
		}
		for _, path := range f.nativeFiles(a) {
			if ctx.Err() != nil {
				return nil
			}
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			st := f.files[path]
			changed := st == nil || st.size != fi.Size() || !st.mtime.Equal(fi.ModTime())
			quiet := now.Sub(fi.ModTime()) >= f.Quiet
			if !changed && !(st.held && quiet) {
				continue
			}
			o := im.Options
			o.HoldOpenTurn = !quiet
			res, err := im.ImportFile(path, o)
			if err != nil {
				// cannot write the logs (disk full, permissions): the daemon
				// goes on indexing; this file is tried again next time
				f.Log.Error("import: cannot write the logs; retrying", "agent", a, "file", path, "err", err)
				continue
			}
			f.files[path] = &followed{size: fi.Size(), mtime: fi.ModTime(), held: o.HoldOpenTurn}
			for _, p := range res.Problems {
				f.Log.Warn("import: unreadable record skipped", "agent", a, "record", p)
			}
			if n := res.Exchanges + res.Resets + res.Links; n > 0 {
				f.Log.Info("imported", "agent", a, "file", path, "exchanges", res.Exchanges, "resets", res.Resets, "links", res.Links)
			}
		}
	}
	return nil
}

// nativeFiles lists the agent's native files for the workspace, oldest
// first.
func (f *Follower) nativeFiles(agent string) []string {
	var paths []string
	switch agent {
	case Codex:
		_ = filepath.WalkDir(f.Home.CodexSessionsDir(), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, ".jsonl") {
				return nil
			}
			in, ok := f.codexSeen[path]
			if !ok {
				in = CodexRolloutIn(path, f.Workspace)
				if fi, err := d.Info(); err == nil && fi.Size() > 0 {
					f.codexSeen[path] = in // decided once its session_meta is there
				}
			}
			if in {
				paths = append(paths, path)
			}
			return nil
		})
		sort.Strings(paths)
		return paths
	default:
		roots := f.Home.NativePaths(agent, f.Workspace)
		files, err := f.importers[agent].Files(roots)
		if err != nil {
			return nil
		}
		return files
	}
}

// refresh makes the importer's store see events written to the logs by
// others (the CLI, the hook) since it was opened.
func (im *Importer) refresh() error {
	if im.store == nil {
		return im.open()
	}
	return im.store.refresh()
}
