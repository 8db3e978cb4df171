package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the nearest ancestor of the working directory holding
// go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// TestRepoHasNoFalsePositives redacts every .go and .md file of the
// repository, which hold code and prose about tokens, secrets, passwords,
// URLs and keys but no real secret: nothing may be redacted. The redact
// folder itself (whose tests hold fake secrets) and testdata files are
// left out.
func TestRepoHasNoFalsePositives(t *testing.T) {
	root := repoRoot(t)
	var files, bytes int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || rel == "redact" || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" || strings.Contains(d.Name(), "testdata") || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		bytes += len(data)
		out, n := Redact(string(data))
		if n == 0 {
			return nil
		}
		t.Errorf("%s: %d false positive(s):", rel, n)
		for i, line := range strings.Split(out, "\n") {
			if strings.Contains(line, marker) {
				t.Errorf("  line %d: %s", i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("only %d files scanned under %s", files, root)
	}
	t.Logf("scanned %d files (%d KiB) under %s", files, bytes>>10, root)
}
