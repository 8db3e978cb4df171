package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/praxis-os/continuity/engine"
)

func runRejects(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "rejects [--json] [--limit N]", `
List the log lines that were not indexed, newest first, each with its file
(as it is called now: a rotated log's lines under x.jsonl.1 or x.jsonl.1.gz),
line number, byte offset, the reason and a short excerpt. A line skipped
because its id is already indexed names the line that used the id first: a
replay of the same line (indexed once, no mistake) or an id reused with
other content (a producer's bug: ids must be unique). The daemon also logs
each one as it finds it (at most 20 a minute, then a count). Rejected lines
never stop the daemon and never affect the lines around them; fix the
producer, then append a corrected line, or fix the line in place (the index
follows an edit of the log).`)
	asJSON := fs.Bool("json", false, "print JSON: {\"rejects\": [{\"file\",\"line\",\"offset\",\"reason\",\"excerpt\"}]}")
	limit := fs.Int("limit", 1000, "most rejects listed (newest first)")
	if err := parseFlagsOnly(e, fs, args); err != nil {
		return err
	}
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	rs, err := c.Rejects(ctx, *limit)
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []engine.Reject{}
	}
	slices.Reverse(rs) // newest first, as the help says
	if *asJSON {
		return printJSON(e.stdout, map[string]any{"rejects": rs})
	}
	if len(rs) == 0 {
		fmt.Fprintln(e.stdout, "no rejected lines")
		return nil
	}
	for _, r := range rs {
		fmt.Fprintf(e.stdout, "%s:%d: %s\n", engine.Printable(r.File), r.Line, engine.Printable(r.Reason))
		if r.Excerpt != "" { // a forgotten session's line keeps none
			fmt.Fprintf(e.stdout, "    %q\n", r.Excerpt)
		}
	}
	return nil
}
