package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitRemoteFix: doctor's advice on logs tracked by a repository with a
// remote fits the repository. The logs' own repository (recipes/sync) was
// told to 'git rm -r --cached .praxis-os/.conversations', a path that does
// not exist in it; a project whose workspace is a subfolder of the
// repository got a path relative to the workspace, not to the repository.
func TestGitRemoteFix(t *testing.T) {
	top := t.TempDir()
	ws := filepath.Join(top, "app")
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		top       string
		want, not []string
	}{
		{top: logs, want: []string{"holds the logs alone", "continuity.private true"}, not: []string{"rm -r --cached"}},
		{top: top, want: []string{"git -C " + top + " rm -r --cached app/.praxis-os/.conversations;", "continuity.private true"}},
		{top: ws, want: []string{"git -C " + ws + " rm -r --cached .praxis-os/.conversations;"}},
	} {
		got := gitRemoteFix(tc.top, logs)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("gitRemoteFix(%s): %q lacks %q", tc.top, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("gitRemoteFix(%s): %q has %q", tc.top, got, n)
			}
		}
	}
}
