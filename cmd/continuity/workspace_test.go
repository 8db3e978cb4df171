package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWorkspaceDiscovery: without --root, a command run deep inside a git
// repository uses the repository's root when no .praxis-os exists above,
// the nearest .praxis-os when one does, and the current directory outside
// any repository. --root must name an existing directory.
func TestWorkspaceDiscovery(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "proj")
	deep := filepath.Join(repo, "src", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if out, errs, code := runCLI(t, "", "log", "--session", "s1", "--user", "where am I"); code != 0 {
		t.Fatalf("log: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(deep, ".praxis-os")); err == nil {
		t.Errorf("log in proj/src/pkg created proj/src/pkg/.praxis-os")
	}
	if _, err := os.Stat(filepath.Join(repo, ".praxis-os", ".conversations", "session-s1~m1.jsonl")); err != nil {
		t.Errorf("log did not write to the git root's .praxis-os: %v", err)
	}

	// A .praxis-os between the git root and the current directory wins.
	mid := filepath.Join(repo, "src")
	if err := os.Mkdir(filepath.Join(mid, ".praxis-os"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, "", "log", "--session", "s2", "--user", "nearer"); code != 0 {
		t.Fatal("log failed")
	}
	if _, err := os.Stat(filepath.Join(mid, ".praxis-os", ".conversations", "session-s2~m1.jsonl")); err != nil {
		t.Errorf("log did not use the nearest .praxis-os: %v", err)
	}

	// A git worktree or submodule has a .git file, not a folder.
	wt := filepath.Join(base, "wt")
	os.MkdirAll(filepath.Join(wt, "a"), 0o755)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	t.Chdir(filepath.Join(wt, "a"))
	if _, _, code := runCLI(t, "", "log", "--session", "s3", "--user", "worktree"); code != 0 {
		t.Fatal("log failed")
	}
	if _, err := os.Stat(filepath.Join(wt, ".praxis-os", ".conversations", "session-s3~m1.jsonl")); err != nil {
		t.Errorf("log in a worktree did not use its root: %v", err)
	}

	// --root that does not exist, or is a file: a clear error, nothing created.
	missing := filepath.Join(base, "nonexistent")
	for _, args := range [][]string{
		{"--root", missing, "log", "--session", "s", "--user", "x"},
		{"--root", missing, "daemon"},
		{"--root", missing, "ingest"},
		{"--root", filepath.Join(wt, ".git"), "status"},
	} {
		// Bounded: a daemon that starts on the mistyped root would run on.
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit(5*time.Second))
		var out, errb bytes.Buffer
		code := run(ctx, args, strings.NewReader(""), &out, &errb)
		cancel()
		errs := errb.String()
		if code != 2 || !strings.Contains(errs, "--root") || !(strings.Contains(errs, "does not exist") || strings.Contains(errs, "not a directory")) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and a clear --root error", args, code, errs)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("--root %s was created", missing)
	}
}

// TestPrivateByDefault: the folders continuity creates are ignored by git,
// so `git add -A` in the workspace stages neither the index (every
// conversation) nor the logs; an ignore file the user edited is kept.
func TestPrivateByDefault(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	root := t.TempDir()
	git(root, "init", "-q")
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)
	if _, errs, code := runCLI(t, "", "--root", root, "log", "--session", "s1", "--user", "my private question", "--ai", "an answer"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := runCLI(t, "", "--root", root, "ingest", "--no-embed"); code != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(root, ".praxis-os", ".cache", "continuity", "index.db")); err != nil {
		t.Fatalf("no index: %v", err)
	}
	git(root, "add", "-A")
	status := git(root, "status", "--porcelain", "--untracked-files=all", "--ignored=no")
	if strings.Contains(status, ".praxis-os") {
		t.Errorf("git add -A stages continuity's files:\n%s", status)
	}
	if !strings.Contains(status, "main.go") {
		t.Errorf("git status does not show the user's own file:\n%s", status)
	}

	// An existing workspace (made before ignore files existed): the
	// daemon or ingest adds them, and keeps a file the user edited.
	old := t.TempDir()
	git(old, "init", "-q")
	logs := filepath.Join(old, ".praxis-os", ".conversations")
	os.MkdirAll(logs, 0o700)
	os.WriteFile(filepath.Join(logs, "session-a.jsonl"), []byte(`{"type":"exchange","session_id":"a","user":"u"}`+"\n"), 0o600)
	mine := "# we commit our logs on purpose\n"
	os.WriteFile(filepath.Join(logs, ".gitignore"), []byte(mine), 0o644)
	if _, errs, code := runCLI(t, "", "--root", old, "ingest", "--no-embed"); code != 0 {
		t.Fatal(errs)
	}
	if b, _ := os.ReadFile(filepath.Join(logs, ".gitignore")); string(b) != mine {
		t.Errorf("user's .gitignore overwritten: %q", b)
	}
	git(old, "add", "-A")
	status = git(old, "status", "--porcelain", "--untracked-files=all")
	if strings.Contains(status, ".cache") || !strings.Contains(status, "session-a.jsonl") {
		t.Errorf("want the cache ignored and the opted-in logs staged:\n%s", status)
	}
}
