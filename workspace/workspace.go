// Package workspace finds a workspace's root and lays out the folders
// continuity keeps in it: the conversation logs agents append to and the
// private cache holding the index. Both are created private (0700) and
// git-ignored, so that `git add -A` never commits a conversation or the
// index built from them unless the user opts in.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is the folder, directly in the workspace root, holding continuity's
// folders (and possibly other praxis-os files, which are left alone).
const Dir = ".praxis-os"

// Layout is where continuity's folders are in one workspace.
type Layout struct {
	Root  string // the workspace
	Logs  string // <root>/.praxis-os/.conversations: the watched logs
	Cache string // <root>/.praxis-os/.cache/continuity: the index, lock, socket
	// Named: the user named the root (--root), which is then used as
	// given, even a broad folder (Broad).
	Named bool
}

// At is the layout of the workspace rooted at root (an absolute path).
func At(root string) Layout {
	return Layout{
		Root:  root,
		Logs:  filepath.Join(root, Dir, ".conversations"),
		Cache: filepath.Join(root, Dir, ".cache", "continuity"),
	}
}

// Find returns the workspace of a command run in dir (absolute): the
// nearest ancestor of dir (dir included) holding a .praxis-os folder;
// else the root of the git repository dir is in (the nearest ancestor
// holding .git, a folder or, in a worktree or submodule, a file); else dir
// itself. A command run in a repository's subfolder thus uses one
// workspace for the whole repository instead of creating one per folder.
//
// The top folder of a linked git worktree shares the memory of its
// repository's main worktree (Shared; worktree.go).
//
// A .praxis-os in a broad folder (the home folder, a filesystem root:
// Broad) is not taken for a git repository below it, which uses its own:
// one workspace there would hold the conversations of every project.
func Find(dir string) string {
	ws, wsOK := nearest(dir, func(d string) bool {
		fi, err := os.Stat(filepath.Join(d, Dir))
		return err == nil && fi.IsDir()
	})
	git, gitOK := nearest(dir, func(d string) bool {
		_, err := os.Lstat(filepath.Join(d, ".git"))
		return err == nil
	})
	switch {
	case wsOK && gitOK && len(git) > len(ws) && Broad(ws): // both hold dir: git is below ws
		return Shared(git)
	case wsOK:
		return Shared(ws)
	case gitOK:
		return Shared(git)
	}
	return dir
}

// Broad reports whether dir is the home folder or a filesystem root:
// folders continuity does not make a workspace of unless the user names
// them (--root), since a workspace there holds whatever runs below it. A
// global MCP entry started from the home folder would otherwise create
// one that every project without its own logs into.
func Broad(dir string) bool {
	if filepath.Dir(dir) == dir {
		return true
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return false
	}
	if filepath.Clean(dir) == filepath.Clean(home) {
		return true
	}
	a, errA := filepath.EvalSymlinks(dir)
	b, errB := filepath.EvalSymlinks(home)
	return errA == nil && errB == nil && a == b
}

// BroadError is the refusal to create a workspace in a broad folder
// (Broad) that the user did not name.
type BroadError struct{ Root string }

func (e *BroadError) Error() string {
	what := "a filesystem root"
	if filepath.Dir(e.Root) != e.Root {
		what = "your home folder"
	}
	return fmt.Sprintf("%s is %s: continuity does not create a workspace there unless told, since it would hold the conversations of every project below it; "+
		"run continuity in a project's folder (a git repository), or give --root %s to use this folder anyway", e.Root, what, e.Root)
}

// CheckCreate refuses to create .praxis-os in a broad folder the user
// did not name (a *BroadError); one already there is used.
func (l Layout) CheckCreate() error {
	if l.Named || !Broad(l.Root) {
		return nil
	}
	if fi, err := os.Stat(filepath.Join(l.Root, Dir)); err == nil && fi.IsDir() {
		return nil
	}
	return &BroadError{Root: l.Root}
}

// StartHint is the advice for a workspace that has no index yet: start
// the daemon or run ingest, except in a broad folder (Broad) that holds no
// workspace and was not named, where both would refuse (CheckCreate): then
// it says where to run continuity instead, or how to use this folder
// anyway.
func (l Layout) StartHint() string {
	if err := l.CheckCreate(); err != nil {
		what := "a filesystem root"
		if filepath.Dir(l.Root) != l.Root {
			what = "your home folder"
		}
		return fmt.Sprintf("%s is %s, where continuity makes no workspace unless told (it would hold every project's conversations): "+
			"cd to a project's folder (a git repository) and run continuity there, or give --root %s to use this folder anyway ('continuity daemon --root %s')",
			l.Root, what, l.Root, l.Root)
	}
	return "start 'continuity daemon' or run 'continuity ingest'"
}

func nearest(dir string, match func(string) bool) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if match(d) {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// CheckRoot checks a workspace named explicitly (--root): it must be an
// existing directory. Continuity creates its folders inside a workspace,
// never the workspace itself: a mistyped path must not become a new,
// silently empty workspace.
func CheckRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist (give an existing folder; continuity creates .praxis-os inside it)", root)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", root)
	}
	return nil
}

// Ignore files, written when continuity creates (or first uses) its
// folders, never over an existing file.
const (
	// CacheIgnore goes in .praxis-os/.cache: the index is derived, holds
	// every conversation, and is rebuilt from the logs.
	CacheIgnore = `# Written by continuity: this cache (the index of every conversation in
# .praxis-os/.conversations) is private and rebuilt from the logs.
# It is never meant to be committed.
*
`
	// LogsIgnore goes in .praxis-os/.conversations.
	LogsIgnore = `# Written by continuity: the conversation logs hold whatever the agents
# read and wrote here (code, paths, personal data, secrets), so git ignores
# them. To commit them on purpose, replace the "*" line below by a comment
# (keep this file: continuity writes it again when it is missing, but never
# changes it once it exists), or add files with "git add -f".
*
`
)

// PrepareLogs creates the logs folder (0700, with its parents) and its
// ignore file when missing.
func (l Layout) PrepareLogs() error {
	if err := l.CheckCreate(); err != nil {
		return err
	}
	if err := os.MkdirAll(l.Logs, 0o700); err != nil {
		return fmt.Errorf("create logs folder: %w", err)
	}
	return writeIgnore(filepath.Join(l.Logs, ".gitignore"), LogsIgnore)
}

// PrepareCache creates the cache folder (0700, with its parents) and the
// ignore file of .praxis-os/.cache when missing.
func (l Layout) PrepareCache() error {
	if err := l.CheckCreate(); err != nil {
		return err
	}
	if err := os.MkdirAll(l.Cache, 0o700); err != nil {
		return fmt.Errorf("create cache folder: %w", err)
	}
	return writeIgnore(filepath.Join(filepath.Dir(l.Cache), ".gitignore"), CacheIgnore)
}

// writeIgnore creates path with text unless something (a file the user
// edited, a link) is already there.
func writeIgnore(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
