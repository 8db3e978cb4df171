package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/praxis-os/continuity/engine"
)

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version [--json]", `
Print continuity's version; the module version, version-control revision
and time of this build (from the binary's build information, when it was
built in a checkout), and whether the checkout had uncommitted changes;
the Go release that built it; and the default embedder with its model's
identity (the vector space its vectors are stored under). The same as
'continuity --version'.`)
	asJSON := fs.Bool("json", false, `print JSON: {"version", "module", "vcs_revision", "vcs_time", "vcs_modified", "go", "platform", "embedder", "model", "space"}`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("unexpected arguments %q", pos)
	}
	b := engine.ReadBuild()
	if *asJSON {
		return printJSON(e.stdout, b)
	}
	rev := b.Revision
	switch {
	case rev == "":
		rev = "unknown (not stamped: built outside a git checkout, in a linked worktree, or with -buildvcs=false)"
	case b.Modified:
		rev += " (with uncommitted changes)"
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "continuity\t%s\n", b.Version)
	fmt.Fprintf(w, "module\t%s\n", b.Module)
	fmt.Fprintf(w, "revision\t%s\n", rev)
	if b.Time != "" {
		fmt.Fprintf(w, "committed\t%s\n", b.Time)
	}
	fmt.Fprintf(w, "go\t%s (%s)\n", b.Go, b.Platform)
	fmt.Fprintf(w, "default embedder\t%s: %s\n", b.Embedder, b.Model)
	return w.Flush()
}
