package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	base := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		d := filepath.Join(base, p)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	mk("repo/.git")
	mk("repo/a/b/c")
	mk("repo/x/.praxis-os")
	mk("repo/x/y")
	mk("outer/.praxis-os")
	mk("outer/repo2/.git")
	mk("outer/repo2/d")
	mk("plain/e")
	os.MkdirAll(filepath.Join(base, "wt", "f"), 0o755)
	os.WriteFile(filepath.Join(base, "wt", ".git"), []byte("gitdir: elsewhere\n"), 0o644)
	os.MkdirAll(filepath.Join(base, "file", "g"), 0o755)
	os.WriteFile(filepath.Join(base, "file", ".praxis-os"), []byte("not a folder"), 0o644)

	for _, tc := range []struct{ dir, want string }{
		{"repo/a/b/c", "repo"},     // git root, no .praxis-os above
		{"repo", "repo"},           // at the root itself
		{"repo/x/y", "repo/x"},     // a .praxis-os below the git root wins
		{"outer/repo2/d", "outer"}, // a .praxis-os above the repository wins too
		{"wt/f", "wt"},             // .git file: worktree or submodule
		{"file/g", "file/g"},       // a .praxis-os file is not a workspace
	} {
		got := Find(filepath.Join(base, tc.dir))
		if rel, _ := filepath.Rel(base, got); rel != tc.want {
			t.Errorf("Find(%s) = %s, want %s", tc.dir, rel, tc.want)
		}
	}
	// Outside any repository or workspace: the directory itself (unless
	// the temporary folder lies in one).
	if Find(filepath.Join(base, "plain", "e")) == filepath.Join(base, "plain", "e") {
		return
	}
	t.Log("the temporary folder is inside a workspace or repository: plain case not checked")
}

func TestCheckRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	if err := CheckRoot(dir); err != nil {
		t.Errorf("existing folder: %v", err)
	}
	if err := CheckRoot(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing folder: %v", err)
	}
	if err := CheckRoot(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("CheckRoot created the folder")
	}
}

// TestPrepare: folders 0700, ignore files written once and never over a
// file the user changed or a link.
func TestPrepare(t *testing.T) {
	l := At(t.TempDir())
	if err := l.PrepareLogs(); err != nil {
		t.Fatal(err)
	}
	if err := l.PrepareCache(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{l.Logs, l.Cache, filepath.Dir(l.Cache)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, fi.Mode(), err)
		}
	}
	logsIgnore := filepath.Join(l.Logs, ".gitignore")
	if b, _ := os.ReadFile(logsIgnore); string(b) != LogsIgnore {
		t.Errorf("logs ignore file holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(l.Cache), ".gitignore")); string(b) != CacheIgnore {
		t.Errorf("cache ignore file holds %q", b)
	}
	os.WriteFile(logsIgnore, []byte("# mine\n"), 0o644)
	if err := l.PrepareLogs(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(logsIgnore); string(b) != "# mine\n" {
		t.Errorf("user's ignore file overwritten: %q", b)
	}
	os.Remove(logsIgnore)
	target := filepath.Join(t.TempDir(), "target")
	os.Symlink(target, logsIgnore)
	if err := l.PrepareLogs(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("ignore file written through a symbolic link")
	}
}
