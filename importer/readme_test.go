package importer

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// userDocs is README.md and the Markdown under docs/, whitespace folded
// to single spaces, wherever a section lives.
func userDocs(t *testing.T) string {
	t.Helper()
	var parts []string
	if b, err := os.ReadFile(filepath.Join("..", "README.md")); err == nil {
		parts = append(parts, string(b))
	} else {
		t.Fatal(err)
	}
	filepath.WalkDir(filepath.Join("..", "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			if b, err := os.ReadFile(p); err == nil {
				parts = append(parts, string(b))
			}
		}
		return nil
	})
	return strings.Join(strings.Fields(strings.Join(parts, "\n")), " ")
}

// TestReadmeImportCounts: the import figures README gives for the shared
// transcripts are what importing the shared folders, as a user does
// (one folder per agent, into fresh logs), reports. Before, README said
// OpenCode 4 sessions and 5 exchanges, Goose 2 and 2: figures of the
// test's own loading of the SQL dumps, not of the folders users import.
func TestReadmeImportCounts(t *testing.T) {
	one, two := sharedDir(t), sharedDir2(t)
	doc := userDocs(t)
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	for _, tc := range []struct {
		agent, dir, pattern string
		got                 func(r Result) []int
	}{
		{ClaudeCode, filepath.Join(one, "claude-code"), `Claude Code (\d+) files → (\d+) sessions, (\d+) exchanges, (\d+) context resets`,
			func(r Result) []int { return []int{r.Files, r.Sessions, r.Exchanges, r.Resets} }},
		{ClaudeCode, filepath.Join(one, "claude-code"), `Claude Code's first import reports "(\d+) already there \((\d+) of them read earlier`,
			func(r Result) []int { return []int{r.Duplicates, r.Repeated} }},
		{Codex, filepath.Join(one, "codex"), `Codex (\d+) rollouts → (\d+) exchanges, (\d+) reset`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges, r.Resets} }},
		{Gemini, filepath.Join(one, "gemini"), `Gemini CLI (\d+) chats → (\d+) exchanges`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges} }},
		{Cursor, filepath.Join(one, "cursor"), `Cursor (\d+) database → (\d+) chats, (\d+) exchanges`,
			func(r Result) []int { return []int{r.Files, r.Sessions, r.Exchanges} }},
		{Aider, filepath.Join(one, "aider"), `Aider (\d+) histories → (\d+) sessions, (\d+) exchanges`,
			func(r Result) []int { return []int{r.Files, r.Sessions, r.Exchanges} }},
		{Roo, filepath.Join(two, "roo-code"), `Roo Code (\d+) tasks → (\d+) exchanges for \d+ human prompts, 1 condensation → (\d+) reset`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges, r.Resets} }},
		{Cline, filepath.Join(two, "cline"), `Cline (\d+) \(one per layout\) → (\d+) exchanges`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges} }},
		{OpenCode, filepath.Join(two, "opencode"), `OpenCode (\d+) sessions \(JSON storage\) → (\d+) exchanges, (\d+) reset`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges, r.Resets} }},
		{Copilot, filepath.Join(two, "copilot-cli"), `Copilot CLI (\d+) → (\d+) exchanges, (\d+) reset`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges, r.Resets} }},
		{Goose, filepath.Join(two, "goose"), `Goose (\d+) \(JSONL\) → (\d+) exchange`,
			func(r Result) []int { return []int{r.Sessions, r.Exchanges} }},
	} {
		m := regexp.MustCompile(tc.pattern).FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("README no longer gives %s's figures as /%s/", tc.agent, tc.pattern)
			continue
		}
		var want []int
		for _, s := range m[1:] {
			want = append(want, n(s))
		}
		im, err := New(tc.agent, t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := im.Import(context.Background(), []string{tc.dir})
		if err != nil {
			t.Fatalf("%s: %v", tc.agent, err)
		}
		if got := tc.got(res); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("README says %q; importing %s gives %v (%s)", m[0], tc.dir, got, res.Summary(tc.agent))
		}
	}
	// The dumps: a folder import says how to load them; loaded, each
	// database adds what README says.
	m := regexp.MustCompile(`loaded \(.sqlite3 opencode.db < opencode.sql.\), each adds (\d+) session → (\d+) exchange`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("README no longer says what the loaded dumps add")
	}
	for agent, dump := range map[string]string{
		OpenCode: filepath.Join(two, "opencode/vshulcz__deja-vu/opencode/opencode.sql"),
		Goose:    filepath.Join(two, "goose/vshulcz__deja-vu/goose/sessions/goose.sql"),
	} {
		im, _ := New(agent, t.TempDir(), Options{})
		res, err := im.Import(context.Background(), []string{filepath.Dir(dump)})
		if err != nil || !strings.Contains(strings.Join(res.Skips, "\n"), filepath.Base(dump)+": a SQL dump, not a database: load it into one (sqlite3 "+dumpDatabase(agent)) {
			t.Errorf("%s: the dump is not listed with how to load it: %v %q", agent, err, res.Skips)
		}
		db := sqlDump(t, dump, dumpDatabase(agent))
		res, err = im.Import(context.Background(), []string{db})
		if err != nil || strconv.Itoa(res.Sessions) != m[1] || strconv.Itoa(res.Exchanges) != m[2] {
			t.Errorf("%s's loaded dump: %v %s; README says %s", agent, err, res.Summary(agent), m[0])
		}
	}
}
