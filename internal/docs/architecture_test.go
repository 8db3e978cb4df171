package docs

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/praxis-os/continuity"

// goList is every package of the module (path relative to the module,
// "." for its root) with its in-module imports, as go list gives them with
// the tag the test command uses.
func goList(t *testing.T) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-tags", "sqlite_fts5", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, msg)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	pkgs := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		p, ok := rel(f[0])
		if !ok {
			t.Fatalf("go list: %s is not in %s", f[0], module)
		}
		imps := []string{}
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				imps = append(imps, r)
			}
		}
		slices.Sort(imps)
		pkgs[p] = imps
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list gave only %d packages", len(pkgs))
	}
	return pkgs
}

// picture is the mermaid graph of docs/architecture.md: its groups
// (layers, top to bottom) with their packages, and its edges.
type picture struct {
	layers  []string            // group ids, in order
	titles  map[string]string   // group id -> title
	layerOf map[string]int      // package -> index in layers
	members map[string][]string // group id -> packages, in order
	imports map[string][]string // package -> packages it imports
}

var (
	mermaidBlock = regexp.MustCompile("(?s)```mermaid\n(.*?)```")
	groupLine    = regexp.MustCompile(`^subgraph\s+(\w+)\s*\["([^"]+)"\]$`)
	nodeLine     = regexp.MustCompile(`^(\w+)\["([^"]+)"\]$`)
	edgeLine     = regexp.MustCompile(`^(\w+)\s*-->\s*(\w+)$`)
)

func parsePicture(t *testing.T, doc string) picture {
	t.Helper()
	blocks := mermaidBlock.FindAllStringSubmatch(doc, -1)
	if len(blocks) != 1 {
		t.Fatalf("docs/architecture.md: %d mermaid blocks, want 1", len(blocks))
	}
	p := picture{titles: map[string]string{}, layerOf: map[string]int{}, members: map[string][]string{}, imports: map[string][]string{}}
	pkgOf := map[string]string{} // node id -> package
	group := ""
	var edges [][2]string
	for i, raw := range strings.Split(blocks[0][1], "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || line == "flowchart TD" || strings.HasPrefix(line, "%%"):
		case groupLine.MatchString(line):
			m := groupLine.FindStringSubmatch(line)
			group = m[1]
			p.layers = append(p.layers, group)
			p.titles[group] = m[2]
		case line == "end":
			group = ""
		case nodeLine.MatchString(line):
			m := nodeLine.FindStringSubmatch(line)
			if group == "" {
				t.Errorf("docs/architecture.md, mermaid line %d: package %s outside a layer", i+1, m[2])
				continue
			}
			if _, dup := p.layerOf[m[2]]; dup {
				t.Errorf("docs/architecture.md: package %s drawn twice", m[2])
			}
			pkgOf[m[1]] = m[2]
			p.layerOf[m[2]] = len(p.layers) - 1
			p.members[group] = append(p.members[group], m[2])
		case edgeLine.MatchString(line):
			m := edgeLine.FindStringSubmatch(line)
			edges = append(edges, [2]string{m[1], m[2]})
		default:
			t.Errorf("docs/architecture.md, mermaid line %d: not understood: %q", i+1, line)
		}
	}
	for _, e := range edges {
		from, ok1 := pkgOf[e[0]]
		to, ok2 := pkgOf[e[1]]
		if !ok1 || !ok2 {
			t.Errorf("docs/architecture.md: edge %s --> %s names a node that is not drawn", e[0], e[1])
			continue
		}
		p.imports[from] = append(p.imports[from], to)
	}
	for k := range p.imports {
		slices.Sort(p.imports[k])
	}
	return p
}

func nodeID(pkg string) string {
	return regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(pkg, "_")
}

// render is the mermaid block for pkgs, keeping p's layers; packages p
// does not place go to an "unplaced" group.
func render(p picture, pkgs map[string][]string) string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart TD\n")
	var order []string
	var unplaced []string
	for k := range pkgs {
		if _, ok := p.layerOf[k]; !ok {
			unplaced = append(unplaced, k)
		}
	}
	slices.Sort(unplaced)
	groups := append([]string{}, p.layers...)
	members := map[string][]string{}
	for _, g := range p.layers {
		for _, m := range p.members[g] {
			if _, ok := pkgs[m]; ok {
				members[g] = append(members[g], m)
			}
		}
	}
	titles := p.titles
	if len(unplaced) > 0 {
		groups = append([]string{"unplaced"}, groups...)
		members["unplaced"] = unplaced
		titles = map[string]string{"unplaced": "unplaced: move each into its layer"}
		for k, v := range p.titles {
			titles[k] = v
		}
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "  subgraph %s [%q]\n", g, titles[g])
		for _, m := range members[g] {
			fmt.Fprintf(&b, "    %s[%q]\n", nodeID(m), m)
			order = append(order, m)
		}
		b.WriteString("  end\n")
	}
	for _, m := range order {
		for _, imp := range pkgs[m] {
			fmt.Fprintf(&b, "  %s --> %s\n", nodeID(m), nodeID(imp))
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// TestArchitecturePicture: the picture of docs/architecture.md draws every
// package of the module and every import between two of them, nothing
// more, and no import goes up a layer.
func TestArchitecturePicture(t *testing.T) {
	doc := readDoc(t, "docs/architecture.md")
	p := parsePicture(t, doc)
	pkgs := goList(t)
	for k, imps := range pkgs {
		if _, ok := p.layerOf[k]; !ok {
			t.Errorf("package %s is not in the picture", k)
			continue
		}
		if got := p.imports[k]; !slices.Equal(got, imps) {
			t.Errorf("package %s: the picture draws imports %v, go list gives %v", k, got, imps)
		}
		for _, imp := range imps {
			if l, ok := p.layerOf[imp]; ok && l < p.layerOf[k] {
				t.Errorf("package %s (layer %q) imports %s, a layer above (%q): move one of them, or the import", k, p.titles[p.layers[p.layerOf[k]]], imp, p.titles[p.layers[l]])
			}
		}
	}
	for k := range p.layerOf {
		if _, ok := pkgs[k]; !ok {
			t.Errorf("the picture draws %s, which go list does not know", k)
		}
	}
	if t.Failed() {
		t.Logf("the picture go list gives (paste it into docs/architecture.md, then place any new package in its layer):\n%s", render(p, pkgs))
	}
}
