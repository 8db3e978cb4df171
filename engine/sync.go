package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
)

// SyncCopy is a sync tool's conflict copy found in the logs folder (a
// Syncthing .sync-conflict- file, a Dropbox "conflicted copy") and what
// was done with it: a log's copy is read like any log, each of its lines
// indexed once (a line the index already holds, from the file it copies,
// is the same event: its id is; protocol.md, "Sync"), a tombstone file's
// copy is read with the others.
type SyncCopy struct {
	File   string `json:"file"`
	CopyOf string `json:"copy_of"`
	// Kind: "log" or "forgotten" (a copy of a tombstone file).
	Kind string `json:"kind"`
	// Indexed: the copy's lines indexed from it (lines no other file
	// held); Same: its lines already indexed from another file.
	Indexed int64  `json:"indexed"`
	Same    int64  `json:"same"`
	Done    string `json:"done"`
}

// syncCopies lists the conflict copies of the logs folder, with what the
// index did with their lines (db nil: not asked).
func syncCopies(ctx context.Context, logs string, db *index.DB) ([]SyncCopy, error) {
	ents, err := os.ReadDir(logs)
	if errors.Is(err, fs.ErrNotExist) {
		return []SyncCopy{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []SyncCopy{}
	for _, e := range ents {
		of, ok := logformat.ConflictCopy(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		c := SyncCopy{File: e.Name(), CopyOf: of}
		switch {
		case strings.HasPrefix(e.Name(), logformat.TombstoneFile):
			c.Kind, c.Done = "forgotten", "read with the other tombstone files: its forgets hold"
		default:
			if _, isLog := logformat.ParseLogName(e.Name()); !isLog {
				continue
			}
			c.Kind = "log"
			if db != nil {
				if c.Indexed, c.Same, err = db.FileLines(ctx, e.Name()); err != nil {
					return nil, err
				}
			}
			c.Done = fmt.Sprintf("read as a log: %d %s only in it indexed, %d already indexed from another file (the same events, indexed once)",
				c.Indexed, words.Plural(int(c.Indexed), "line", "lines"), c.Same)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// checkSync names the sync tools' conflict copies of the logs folder and
// what was done with them, and warns when the logs are tracked by a git
// repository with a remote: the logs are raw (secrets are redacted in the
// index, not in the logs).
func (d *doctor) checkSync(ctx context.Context) {
	const name = "sync"
	var db *index.DB
	if _, err := os.Stat(filepath.Join(d.ws.Cache, index.FileName)); err == nil {
		if r, err := openReader(d.ws); err == nil {
			defer r.Close()
			db = r
		}
	}
	copies, err := syncCopies(ctx, d.ws.Logs, db)
	switch {
	case err != nil:
		d.add(name, StatusWarn, fmt.Sprintf("cannot list the conflict copies of %s: %v", d.ws.Logs, err), "")
	case len(copies) > 0:
		var b strings.Builder
		fmt.Fprintf(&b, "%d conflict %s of a sync tool, kept and read:", len(copies), words.Plural(len(copies), "copy", "copies"))
		for _, c := range copies {
			fmt.Fprintf(&b, " %s (of %s): %s;", c.File, c.CopyOf, c.Done)
		}
		d.add(name, StatusOK, strings.TrimSuffix(b.String(), ";"),
			"nothing to do: each line is indexed once; keep the copies (a line may be only in one), or delete one once its lines are in another file")
	}
	d.checkGitRemote(ctx)
}

// checkGitRemote warns when the logs folder is inside a git repository
// whose remote would carry them: tracked files, or a repository of the
// logs folder itself, with a remote, unless marked private (git config
// continuity.private true).
func (d *doctor) checkGitRemote(ctx context.Context) {
	const name = "logs in git"
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", d.ws.Logs}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := os.Stat(d.ws.Logs); err != nil {
		return
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil || top == "" {
		return // not in a repository
	}
	tracked, _ := git("ls-files", "--", ".")
	if tracked == "" {
		return // in a repository, but the logs are not tracked (ignored: the default)
	}
	remotes, _ := git("remote", "-v")
	if remotes == "" {
		d.add(name, StatusOK, fmt.Sprintf("the logs are tracked by the git repository %s, which has no remote", top), "")
		return
	}
	remote := strings.Fields(strings.SplitN(remotes, "\n", 2)[0])
	url := ""
	if len(remote) > 1 {
		url = remote[0] + " " + remote[1]
	}
	if p, _ := git("config", "--bool", "continuity.private"); p == "true" {
		d.add(name, StatusOK, fmt.Sprintf("the logs are tracked by the git repository %s, remote %s, marked private (git config continuity.private true)", top, url), "")
		return
	}
	d.add(name, StatusWarn, fmt.Sprintf("the logs are tracked by the git repository %s, and its remote %s would carry them: they are raw (whatever the agents read and wrote: code, personal data, secrets; redaction happens in the index, not in the logs)", top, url),
		gitRemoteFix(top, d.ws.Logs))
}

// gitRemoteFix is what to do about logs tracked by the repository top
// with a remote: a repository of the logs folder itself (recipes/sync)
// needs a private remote; a project's repository must stop tracking them
// (the path to untrack is relative to top, which the workspace need not be).
func gitRemoteFix(top, logs string) string {
	private := "git -C " + logs + " config continuity.private true"
	rel, err := filepath.Rel(evalSymlinks(top), evalSymlinks(logs))
	if err == nil && rel == "." {
		return "this repository holds the logs alone (recipes/sync): keep its remote private and yours (never a shared or public one); when it is, say so: " + private
	}
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = logs
	}
	return "keep the logs out of a shared repository (git -C " + top + " rm -r --cached " + rel + "; the folder's .gitignore ignores them), " +
		"or sync them through a private repository of their own (recipes/sync); when this remote is private and yours, say so: " + private
}

// evalSymlinks is path with its links resolved (git prints the resolved
// top), else path as is.
func evalSymlinks(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}

// checkTombstones fails when a file of forgets beside the logs
// (.forgotten.<machine>) holds a line that is not a forget (a merge
// marker, a stray edit): until it is fixed no daemon starts and no forget
// is made (a forget that cannot be read must not let a session back in),
// which 'daemon' alone said; doctor told to start the daemon.
func (d *doctor) checkTombstones() {
	if _, err := logformat.ReadTombstones(d.ws.Logs); err != nil {
		d.add("forgotten sessions", StatusFail, err.Error(),
			"fix that line, or delete it if it records no forget; until then no daemon starts and 'forget' fails, so that no forgotten session comes back")
	}
}
