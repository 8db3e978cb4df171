package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
)

// TestVersion: `continuity version`, `--version` and `version --json`
// tell the release, the Go release and the default embedder's model, in
// process and from the binary the end-to-end tests built (which, built
// in a checkout, knows its revision).
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"--root", t.TempDir(), "version"}} {
		out, errs, code := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		lines := map[string]string{} // first column: the rest
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			k, v, _ := strings.Cut(l, "  ")
			lines[k] = strings.TrimSpace(v)
		}
		if lines["continuity"] != engine.Version || !strings.HasPrefix(lines["go"], runtime.Version()) ||
			!strings.HasPrefix(lines["default embedder"], embed.DefaultProvider+": "+embed.DefaultProvider+":") || lines["revision"] == "" {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	if _, errs, code := runCLI(t, "", "version", "extra"); code != 2 || !strings.Contains(errs, "unexpected arguments") {
		t.Errorf("version extra: exit %d: %s", code, errs)
	}

	ws := newWorkspace(t)
	out, errs, code := ws.cli("version", "--json")
	if code != 0 {
		t.Fatalf("version --json: exit %d: %s", code, errs)
	}
	var b engine.Build
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	if b.Version != engine.Version || b.Go == "" || b.Module == "" || b.Embedder != embed.DefaultProvider ||
		!strings.HasPrefix(b.Model, embed.DefaultProvider+":") || !strings.HasPrefix(b.Space, b.Model+"#") {
		t.Errorf("version --json: %+v", b)
	}
	// go build in a git checkout stamps its revision (go help buildvcs;
	// TestMain asks for it), where the checkout's .git is a folder: not
	// in a worktree, whose .git is a file.
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Logf("not in a git checkout (%v): the revision is not checked", err)
		return
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Logf("a git worktree, which go build does not stamp: the revision is not checked")
		return
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if b.Revision != strings.TrimSpace(string(head)) || b.Time == "" {
		t.Errorf("version --json: revision %q at %q, want %s", b.Revision, b.Time, head)
	}
}
