package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/praxis-os/continuity/engine"
)

func runVectors(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "vectors [--drop EMBEDDER] [--json]", `
List the vectors the index stores, by embedder: how many and the disk
they take, and which embedder is in use (the daemon's, else the one
configured here).

Each embedder's vectors are kept when you switch to another one, so that
switching back costs nothing (no exchange is embedded again); they stay
until you drop them: --drop EMBEDDER removes one embedder's vectors (as
listed), never those of the embedder in use. Goes through the daemon when
one runs.`)
	drop := fs.String("drop", "", "remove the stored vectors of this embedder (its identity as listed, or a unique beginning: uselite, hash)")
	asJSON := fs.Bool("json", false, `print JSON: {"in_use" (with "?" for the dimension of a remote embedder whose server has not answered yet: the sets of any dimension it matches are probably its own, and --drop refuses them), "sets": [{"embedder", "vectors", "bytes"}]}, or with --drop {"embedder", "vectors"}`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("unexpected arguments %q", pos)
	}
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	if *drop != "" {
		resp, err := c.DropVectors(ctx, engine.DropVectorsRequest{Embedder: *drop})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, resp)
		}
		fmt.Fprintf(e.stdout, "dropped %d vectors of %s\n", resp.Vectors, resp.Embedder)
		return nil
	}
	sets, err := c.VectorSets(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, sets)
	}
	if len(sets.Sets) == 0 {
		fmt.Fprintln(e.stdout, "no vectors stored yet")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "EMBEDDER\tVECTORS\tSIZE\t")
	others := 0
	for _, s := range sets.Sets {
		mark := ""
		switch {
		case s.Identity == sets.InUse:
			mark = "in use"
		case engine.MayBeInUse(sets.InUse, s.Identity):
			mark = "in use, if its server still gives " + dimensionOf(s.Identity) + " dimensions (it has not answered yet)"
		default:
			others++
		}
		fmt.Fprintf(w, "%s\t%d\t%.1f MiB\t%s\n", s.Identity, s.Vectors, float64(s.Bytes)/(1<<20), mark)
	}
	w.Flush()
	if others > 0 {
		fmt.Fprintln(e.stdout, "\nvectors of other embedders are kept for a switch back; 'continuity vectors --drop EMBEDDER' removes them")
	}
	return nil
}

// dimensionOf is the dimension a space identity names
// ("ollama:toy:768#user" → "768").
func dimensionOf(id string) string {
	id, _, _ = strings.Cut(id, "#")
	return id[strings.LastIndex(id, ":")+1:]
}
