package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir, failing the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestWorktreesShareMemory: a command run in a linked worktree (or deep
// inside it) uses the main worktree's workspace, the folder of what `git
// rev-parse --git-common-dir` names; CONTINUITY_WORKTREE=own keeps the
// worktree's own; a bare repository's worktrees share the repository
// folder; Worktrees lists them all.
func TestWorktreesShareMemory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	main := filepath.Join(base, "app")
	os.MkdirAll(filepath.Join(main, "src"), 0o755)
	git(t, main, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(main, "src", "a.go"), []byte("package a\n"), 0o644)
	git(t, main, "add", ".")
	git(t, main, "commit", "-q", "-m", "one")
	wt := filepath.Join(base, "app-fix")
	git(t, main, "worktree", "add", "-q", wt, "-b", "fix")

	common := git(t, filepath.Join(wt, "src"), "rev-parse", "--path-format=absolute", "--git-common-dir")
	if got, want := Find(filepath.Join(wt, "src")), filepath.Dir(common); got != want || got != main {
		t.Errorf("Find in the worktree = %s, want the main worktree %s (git common dir %s)", got, want, common)
	}
	if got := Find(filepath.Join(main, "src")); got != main {
		t.Errorf("Find in the main worktree = %s", got)
	}
	// a .praxis-os at the worktree's top (praxis-os files committed) is
	// still the repository's memory
	os.MkdirAll(filepath.Join(wt, Dir), 0o755)
	if got := Find(filepath.Join(wt, "src")); got != main {
		t.Errorf("Find with .praxis-os in the worktree = %s, want %s", got, main)
	}
	if got := Worktrees(main); len(got) != 2 || got[0] != main || got[1] != wt {
		t.Errorf("Worktrees = %v, want [%s %s]", got, main, wt)
	}
	t.Setenv(EnvWorktree, "own")
	if got := Find(filepath.Join(wt, "src")); got != wt {
		t.Errorf("%s=own: Find = %s, want the worktree %s", EnvWorktree, got, wt)
	}
	if got := Worktrees(main); len(got) != 1 {
		t.Errorf("%s=own: Worktrees = %v", EnvWorktree, got)
	}
	t.Setenv(EnvWorktree, "")

	bare := filepath.Join(base, "repo.git")
	git(t, base, "clone", "-q", "--bare", main, bare)
	bwt := filepath.Join(base, "bare-wt")
	git(t, bare, "worktree", "add", "-q", bwt, "main")
	if got := Find(bwt); got != bare {
		t.Errorf("Find in a bare repository's worktree = %s, want %s", got, bare)
	}
	if got := Worktrees(bare); len(got) != 2 || got[1] != bwt {
		t.Errorf("Worktrees(bare) = %v", got)
	}
}

// TestNotAWorktree: a submodule's .git file (no commondir) and a .git
// file naming nothing keep their own folder.
func TestNotAWorktree(t *testing.T) {
	base := t.TempDir()
	sub := filepath.Join(base, "super", "sub")
	modules := filepath.Join(base, "super", ".git", "modules", "sub")
	os.MkdirAll(sub, 0o755)
	os.MkdirAll(modules, 0o755)
	os.WriteFile(filepath.Join(sub, ".git"), []byte("gitdir: ../.git/modules/sub\n"), 0o644)
	if got := Shared(sub); got != sub {
		t.Errorf("submodule: Shared = %s", got)
	}
	odd := filepath.Join(base, "odd")
	os.MkdirAll(odd, 0o755)
	os.WriteFile(filepath.Join(odd, ".git"), []byte("gitdir: /nowhere/worktrees/x\n"), 0o644)
	if got := Shared(odd); got != odd {
		t.Errorf("dangling .git file: Shared = %s", got)
	}
}
