package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// helpFlag is a flag line of a FlagSet's usage: "  -name type".
var helpFlag = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// docSections splits a markdown file into its "## " sections by title.
func docSections(text string) map[string]string {
	out := map[string]string{}
	title := ""
	for _, line := range strings.Split(text, "\n") {
		if t, ok := strings.CutPrefix(line, "## "); ok {
			title = strings.TrimSpace(t)
			continue
		}
		out[title] += line + "\n"
	}
	return out
}

// TestCommandsDocumented: every command has its section in
// docs/commands.md, every flag its --help lists is named there (in the
// command's section, or in "Embedder flags" when the section links to it),
// and README's command list names every command. A flag added to a command
// without its documentation fails here.
func TestCommandsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := docSections(string(doc))
	shared := sections["Embedder flags"]
	if shared == "" {
		t.Fatal(`docs/commands.md has no "## Embedder flags" section`)
	}
	help := func(args ...string) string {
		var out bytes.Buffer
		if code := run(context.Background(), append(args, "--help"), strings.NewReader(""), &out, &out); code != 0 {
			t.Fatalf("continuity %s --help: exit %d\n%s", strings.Join(args, " "), code, out.String())
		}
		return out.String()
	}
	if len(commands) < 10 {
		t.Fatalf("only %d commands", len(commands))
	}
	checked := 0
	for _, c := range commands {
		sec, ok := sections[c.name]
		if !ok {
			t.Errorf(`docs/commands.md: no "## %s" section`, c.name)
			continue
		}
		if !strings.Contains(string(readme), "`continuity "+c.name) {
			t.Errorf("README.md: command %s is not in the command list", c.name)
		}
		usages := []string{help(c.name)}
		if c.name == "model" {
			for _, sub := range []string{"pull", "list", "rm"} {
				usages = append(usages, help(c.name, sub))
			}
		}
		for _, u := range usages {
			for _, m := range helpFlag.FindAllStringSubmatch(u, -1) {
				name := "`--" + m[1]
				checked++
				switch {
				case m[1] == "root":
					// Every command's; documented once at the top.
				case strings.Contains(sec, name+"`") || strings.Contains(sec, name+" "):
				case strings.Contains(shared, name) && strings.Contains(sec, "(#embedder-flags)"):
				default:
					t.Errorf("docs/commands.md, %s: flag --%s of its --help is not documented", c.name, m[1])
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d flags found in the commands' --help: is the usage format still \"  -name\"?", checked)
	}
}
