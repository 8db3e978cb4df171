package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/importer"
)

// docs reads the user documentation: README.md, protocol.md and every
// Markdown file under docs/ (wherever a section moved to), keyed by path
// relative to the repository.
func docs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{"README.md", "protocol.md", "recipes/README.md"} {
		if data, err := os.ReadFile(filepath.Join("..", "..", p)); err == nil {
			out[p] = string(data)
		}
	}
	filepath.WalkDir(filepath.Join("..", "..", "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			if data, err := os.ReadFile(p); err == nil {
				rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
				out[rel] = string(data)
			}
		}
		return nil
	})
	if _, ok := out["README.md"]; !ok {
		t.Fatal("README.md not found")
	}
	return out
}

// paragraphs returns the paragraphs (blank-line separated) of the docs
// that contain s, each with its file.
func paragraphs(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for file, text := range docs(t) {
		for _, p := range strings.Split(text, "\n\n") {
			if strings.Contains(p, s) {
				out[file+": "+strings.TrimSpace(p)] = p
			}
		}
	}
	return out
}

// TestDocsCacheDeletedKeepsForgets: what the docs say of deleting the
// cache agrees with what it does (TestForgetSurvivesRebuild: forgotten
// sessions stay out, the forgets being kept in .forgotten beside the
// logs). Before, README said forgotten sessions come back.
func TestDocsCacheDeletedKeepsForgets(t *testing.T) {
	found := paragraphs(t, "rm -rf .praxis-os/.cache")
	if len(found) == 0 {
		t.Fatal("the docs no longer say what deleting the cache does")
	}
	for where, p := range found {
		flat := strings.Join(strings.Fields(p), " ")
		if !strings.Contains(flat, "forget") {
			continue
		}
		if regexp.MustCompile(`(?i)forgotten sessions (come|are) back|come back`).MatchString(flat) || !strings.Contains(flat, ".forgotten") {
			t.Errorf("the docs say forgotten sessions come back after the cache is deleted, or not where forgets are kept:\n%s", where)
		}
	}
}

// TestDocsHookSettings: the settings.json snippet in recipes/README.md is
// the shipped recipes/claude-code/settings.json, and its matcher holds
// every source the hook's table describes. Before, the doc's matcher
// left out resume, while its text said resume was included.
func TestDocsHookSettings(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(recipesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(filepath.Join(recipesDir, "claude-code", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(shipped, &want); err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	n := 0
	for _, b := range blocks {
		if !strings.Contains(b[1], "SessionStart") {
			continue
		}
		n++
		var got any
		if err := json.Unmarshal([]byte(b[1]), &got); err != nil {
			t.Errorf("recipes/README.md's SessionStart snippet is not JSON: %v\n%s", err, b[1])
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("recipes/README.md's snippet differs from claude-code/settings.json:\n%s\nshipped:\n%s", b[1], shipped)
		}
	}
	if n == 0 {
		t.Fatal("recipes/README.md shows no SessionStart settings")
	}
	var settings struct {
		Hooks struct {
			SessionStart []struct {
				Matcher string `json:"matcher"`
			}
		} `json:"hooks"`
	}
	json.Unmarshal(shipped, &settings)
	matcher := map[string]bool{}
	for _, ss := range settings.Hooks.SessionStart {
		for _, m := range strings.Split(ss.Matcher, "|") {
			matcher[m] = true
		}
	}
	for _, row := range regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		if src := row[1]; src == "startup" || src == "resume" || src == "clear" || src == "compact" {
			if !matcher[src] {
				t.Errorf("the hook's table describes source %q; the shipped matcher %v leaves it out", src, settings.Hooks.SessionStart)
			}
		}
	}
}

// TestHelpListsImporters: `continuity help` names every agent import
// reads (importer.Registry), and `import --help` the other names it
// accepts. Before, help named 5 of 11.
func TestHelpListsImporters(t *testing.T) {
	out, err := exec.Command(binPath, "help").CombinedOutput()
	if err != nil {
		t.Fatalf("help: %v\n%s", err, out)
	}
	for _, a := range importer.Registry {
		if !strings.Contains(string(out), a.Title) {
			t.Errorf("help does not name %s:\n%s", a.Title, out)
		}
	}
	out, _ = exec.Command(binPath, "import", "--help").CombinedOutput()
	for _, want := range []string{"roo (roo-code)", "copilot (copilot-cli)", "goose"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("import --help does not say %q:\n%s", want, out)
		}
	}
}

// TestDocsEmbeddingRatesNameTheMachine: the embedding rates README gives
// say which machine they were measured on (a user's differs: ingest
// shows the rate on theirs). Before, they said "the 2-core machine".
func TestDocsEmbeddingRatesNameTheMachine(t *testing.T) {
	n := 0
	for _, marker := range []string{"short exchanges a second", "Embedding on every core"} {
		for where, p := range paragraphs(t, marker) {
			n++
			if !strings.Contains(strings.Join(strings.Fields(p), " "), "AMD EPYC") {
				t.Errorf("embedding rates without the machine they were measured on:\n%s", where)
			}
		}
	}
	if n == 0 {
		t.Error("the docs no longer give embedding rates where this test looks")
	}
}
