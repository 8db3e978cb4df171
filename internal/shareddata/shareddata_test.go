package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir finds the folder beside the repository from any depth inside it,
// and LongMemEval and Root prefer the environment.
func TestDir(t *testing.T) {
	t.Setenv(EnvShared, "")
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "shared", "data", "set")
	for _, wd := range []string{repo, deep} {
		t.Chdir(wd)
		if got := Dir("set"); got != want {
			t.Errorf("from %s: %s, want %s", wd, got, want)
		}
	}
	if got := Dir("set/sub"); got != filepath.Join(want, "sub") {
		t.Errorf("a path under a set: %s", got)
	}
	t.Setenv(EnvLongMemEval, "/elsewhere")
	if got := LongMemEval(); got != "/elsewhere" {
		t.Errorf("with %s set: %s", EnvLongMemEval, got)
	}
	t.Setenv(EnvLongMemEval, "")
	if got := LongMemEval(); got != filepath.Join(root, "shared", "data", "longmemeval-s-dev") {
		t.Errorf("without %s: %s", EnvLongMemEval, got)
	}
	t.Setenv(EnvShared, "/other")
	if got := Dir("set"); got != filepath.Join("/other", "data", "set") {
		t.Errorf("with %s set: %s", EnvShared, got)
	}
}

// fakeTB records a skip instead of ending the test.
type fakeTB struct{ skipped string }

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
}

// Require skips on any error of the path, whatever its wording (absent,
// a file where a folder is expected, unreadable), and passes a present
// one through.
func TestRequire(t *testing.T) {
	shared := t.TempDir()
	t.Setenv(EnvShared, shared)
	t.Setenv(EnvLongMemEval, "")
	if err := os.MkdirAll(filepath.Join(shared, "data", "set"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "data", "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		skip bool
	}{
		{"set", false},
		{"file", false},
		{"absent", true},
		{"absent/deeper", true},
		{"file/under-a-file", true}, // ENOTDIR, not ENOENT
	} {
		var f fakeTB
		got := Require(&f, c.name)
		if got != Dir(c.name) {
			t.Errorf("%s: returned %s, want %s", c.name, got, Dir(c.name))
		}
		if (f.skipped != "") != c.skip {
			t.Errorf("%s: skipped %q, want a skip: %v", c.name, f.skipped, c.skip)
		}
		if c.skip && (!strings.Contains(f.skipped, got) || !strings.Contains(f.skipped, EnvShared)) {
			t.Errorf("%s: the skip %q does not name the path and $%s", c.name, f.skipped, EnvShared)
		}
	}
	var f fakeTB
	RequireLongMemEval(&f)
	if !strings.Contains(f.skipped, "queries.jsonl") || !strings.Contains(f.skipped, EnvLongMemEval) {
		t.Errorf("LongMemEval absent: skip %q", f.skipped)
	}
	lme := filepath.Join(shared, "data", "longmemeval-s-dev")
	if err := os.MkdirAll(lme, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lme, "queries.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f = fakeTB{}
	if got := RequireLongMemEval(&f); got != lme || f.skipped != "" {
		t.Errorf("LongMemEval present: %s, skip %q", got, f.skipped)
	}
}
