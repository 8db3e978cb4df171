package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, two folders above this package.
const root = "../.."

// Limits of the documents (issue 29): README is read by newcomers top to
// bottom, protocol.md by producers; details live in docs/.
const (
	readmeMaxLines     = 350
	readmeMaxLineChars = 400
	protocolMaxLines   = 700
)

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lines splits a document into its lines (a last line without its newline
// counts).
func lines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func TestDocumentLimits(t *testing.T) {
	readme := lines(readDoc(t, "README.md"))
	if len(readme) > readmeMaxLines {
		t.Errorf("README.md has %d lines, over %d: move details to docs/", len(readme), readmeMaxLines)
	}
	for i, l := range readme {
		if n := len([]rune(l)); n > readmeMaxLineChars {
			t.Errorf("README.md:%d: %d characters, over %d: %.60s…", i+1, n, readmeMaxLineChars, l)
		}
	}
	if n := len(lines(readDoc(t, "protocol.md"))); n > protocolMaxLines {
		t.Errorf("protocol.md has %d lines, over %d: it is the producer's contract; product behaviour goes to docs/", n, protocolMaxLines)
	}
	// The two commands the team and .ci/run rely on, verbatim.
	text := readDoc(t, "README.md")
	for _, cmd := range []string{
		"go run -tags sqlite_fts5 ./cmd/continuity daemon",
		"go test -tags sqlite_fts5 ./...",
	} {
		if !strings.Contains(text, "\n"+cmd+"\n") {
			t.Errorf("README.md lacks the line %q", cmd)
		}
	}
}

// linkedDocs are the documents whose relative links are checked.
func linkedDocs(t *testing.T) []string {
	docs := []string{"README.md", "protocol.md", "recipes/README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(more) < 5 {
		t.Fatalf("only %d documents in docs/", len(more))
	}
	for _, m := range more {
		rel, _ := filepath.Rel(root, m)
		docs = append(docs, filepath.ToSlash(rel))
	}
	return docs
}

var (
	fence   = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```[ \t]*$")
	indentd = regexp.MustCompile(`(?m)^(    |\t).*$`)
	span    = regexp.MustCompile("`[^`\n]*`")
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
)

// prose is a document without its code: fenced and indented blocks and
// code spans (where "](x)" is not a link).
func prose(text string) string {
	text = fence.ReplaceAllString(text, "")
	text = indentd.ReplaceAllString(text, "")
	return span.ReplaceAllString(text, "")
}

// slug is GitHub's anchor of a heading: lower case, punctuation but - and
// _ removed, spaces as -.
func slug(h string) string {
	h = strings.ReplaceAll(h, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a markdown document's headings, with
// GitHub's -1, -2 suffixes for repeated ones.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestRelativeLinks: every relative link of the documents leads to a file
// that exists, and a link with #anchor into a markdown file to one of its
// headings.
func TestRelativeLinks(t *testing.T) {
	checked := 0
	for _, doc := range linkedDocs(t) {
		text := readDoc(t, doc)
		for _, m := range link.FindAllStringSubmatch(prose(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
			}
			data, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				if fi, serr := os.Stat(filepath.Join(root, file)); serr == nil && fi.IsDir() && anchor == "" {
					continue
				}
				t.Errorf("%s: link %q: %s does not exist", doc, target, file)
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !anchors(string(data))[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", doc, target, file, anchor)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d relative links checked: is the link pattern still right?", checked)
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"10. Imported transcripts":            "10-imported-transcripts",
		"MCP server (Claude Code, Cursor, …)": "mcp-server-claude-code-cursor-",
		"`continuity log`":                    "continuity-log",
		"Figures behind design choices":       "figures-behind-design-choices",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
