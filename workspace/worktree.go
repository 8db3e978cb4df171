package workspace

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Worktrees of one repository share one memory: a workspace found at the
// top folder of a linked git worktree (`git worktree add`) is the main
// worktree's, the folder holding the repository's common .git (what `git
// rev-parse --git-common-dir` names; for a bare repository, the
// repository folder itself). So an agent working in ../app-fix-123 finds
// what was said in ../app, and the other way round. The files are read
// as git reads them (<worktree>/.git: "gitdir: <common>/worktrees/<name>",
// whose commondir file names the common folder); git itself is not run.
//
// EnvWorktree=own keeps each worktree's own memory; --root DIR always
// names the workspace as given.
const EnvWorktree = "CONTINUITY_WORKTREE"

// ShareWorktrees reports whether worktrees share their repository's
// memory (EnvWorktree is not "own").
func ShareWorktrees() bool {
	return !strings.EqualFold(strings.TrimSpace(os.Getenv(EnvWorktree)), "own")
}

// Shared is the workspace whose memory a workspace found at root uses:
// the main worktree of the repository when root is the top folder of a
// linked worktree (and worktrees are shared), else root.
func Shared(root string) string {
	if !ShareWorktrees() {
		return root
	}
	if main, ok := mainWorktree(root); ok {
		return main
	}
	return root
}

// gitDir is the git folder of the worktree whose top folder is root:
// root/.git, or the folder a .git file names.
func gitDir(root string) (string, bool) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return dotgit, true
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(root, gd)
	}
	return filepath.Clean(gd), true
}

// commonDir is the common folder of a git folder: the one its commondir
// file names, else itself.
func commonDir(gd string) string {
	data, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return gd
	}
	cd := strings.TrimSpace(string(data))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gd, cd)
	}
	return filepath.Clean(cd)
}

// mainWorktree is the main worktree's folder of the linked worktree whose
// top folder is root (false when root is not one: a main worktree, a
// submodule, a folder outside git, a .git file naming nothing).
func mainWorktree(root string) (string, bool) {
	gd, ok := gitDir(root)
	if !ok {
		return "", false
	}
	cd := commonDir(gd)
	if cd == gd {
		return "", false // a main worktree or a submodule: its own repository
	}
	main := cd
	if filepath.Base(cd) == ".git" {
		main = filepath.Dir(cd)
	}
	if fi, err := os.Stat(main); err != nil || !fi.IsDir() {
		return "", false
	}
	return main, true
}

// Worktrees lists the folders of the worktrees of the repository whose
// memory root is (root first, when it is a worktree): root and the
// linked worktrees git records (<common>/worktrees/*/gitdir), those that
// exist. Outside git, or with EnvWorktree=own, just root.
func Worktrees(root string) []string {
	out := []string{root}
	if !ShareWorktrees() {
		return out
	}
	cd := root
	if gd, ok := gitDir(root); ok {
		cd = commonDir(gd)
	}
	names, _ := filepath.Glob(filepath.Join(cd, "worktrees", "*", "gitdir"))
	sort.Strings(names)
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		wt := filepath.Dir(filepath.Clean(strings.TrimSpace(string(data))))
		if fi, err := os.Stat(wt); err == nil && fi.IsDir() && wt != root {
			out = append(out, wt)
		}
	}
	return out
}
