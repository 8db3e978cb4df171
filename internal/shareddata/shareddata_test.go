package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir finds the folder beside the repository from any depth inside it,
// and LongMemEval prefers the environment.
func TestDir(t *testing.T) {
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
	t.Setenv(EnvLongMemEval, "/elsewhere")
	if got := LongMemEval(); got != "/elsewhere" {
		t.Errorf("with %s set: %s", EnvLongMemEval, got)
	}
	t.Setenv(EnvLongMemEval, "")
	if got := LongMemEval(); got != filepath.Join(root, "shared", "data", "longmemeval-s-dev") {
		t.Errorf("without %s: %s", EnvLongMemEval, got)
	}
}
