package workspace

import (
	"errors"
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

// TestBroadFolders: the home folder and a filesystem root are broad: no
// .praxis-os is created there unless the user names the folder, and one
// already there does not capture a git repository below it.
func TestBroadFolders(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		dir  string
		want bool
	}{{home, true}, {home + "/", true}, {"/", true}, {filepath.Join(home, "proj"), false}, {filepath.Dir(home), false}} {
		if got := Broad(tc.dir); got != tc.want {
			t.Errorf("Broad(%s) = %v, want %v", tc.dir, got, tc.want)
		}
	}
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err == nil && !Broad(link) {
		t.Errorf("a link to the home folder is not broad")
	}

	var be *BroadError
	if err := At(home).PrepareLogs(); !errors.As(err, &be) || !strings.Contains(err.Error(), "is your home folder") || !strings.Contains(err.Error(), "--root "+home) {
		t.Errorf("PrepareLogs in the home folder: %v", err)
	}
	if err := At(home).PrepareCache(); !errors.As(err, &be) {
		t.Errorf("PrepareCache in the home folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, Dir)); !os.IsNotExist(err) {
		t.Fatalf("%s/.praxis-os was created: %v", home, err)
	}
	if err := (Layout{Root: "/"}).CheckCreate(); err == nil || !strings.Contains(err.Error(), "a filesystem root") {
		t.Errorf("CheckCreate(/): %v", err)
	}
	proj := filepath.Join(home, "code", "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o700)
	os.MkdirAll(filepath.Join(proj, "src"), 0o700)
	if got := Find(home); got != home {
		t.Errorf("Find(home) = %s", got)
	}
	// Named (--root): created.
	named := At(home)
	named.Named = true
	if err := named.PrepareLogs(); err != nil {
		t.Fatalf("PrepareLogs of a named home folder: %v", err)
	}
	// Now there: used in the home folder itself, not by the repository.
	if err := At(home).PrepareCache(); err != nil {
		t.Errorf("PrepareCache once .praxis-os is there: %v", err)
	}
	for dir, want := range map[string]string{home: home, filepath.Join(proj, "src"): proj, filepath.Join(home, "notes"): home} {
		os.MkdirAll(dir, 0o700)
		if got := Find(dir); got != want {
			t.Errorf("Find(%s) = %s, want %s", dir, got, want)
		}
	}
}

// TestStartHint: the advice for a missing index names the daemon, except
// in a broad folder nobody named, where the daemon would refuse.
func TestStartHint(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	if h := At(filepath.Join(home, "proj")).StartHint(); !strings.Contains(h, "start 'continuity daemon'") {
		t.Errorf("a project: %s", h)
	}
	h := At(home).StartHint()
	if !strings.Contains(h, "is your home folder") || !strings.Contains(h, "--root "+home) || strings.Contains(h, "start 'continuity daemon'") {
		t.Errorf("the home folder: %s", h)
	}
	named := At(home)
	named.Named = true
	if h := named.StartHint(); !strings.Contains(h, "start 'continuity daemon'") {
		t.Errorf("the home folder named with --root: %s", h)
	}
}
