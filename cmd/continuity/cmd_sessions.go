package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/praxis-os/continuity/engine"
)

func runSessions(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sessions [--json]", `
List the indexed sessions, oldest first: id, the agent that wrote it (when
its events say: imported sessions do), first and last event time (UTC),
exchanges, context resets, and the session_resume links: the sessions each
one resumes and the sessions that resume it. With team memory (docs/share.md),
a TEAMMATE column names the teammate (role@machine) each session was pulled
from; the workspace's own sessions show "-".`)
	asJSON := fs.Bool("json", false, `print JSON: {"sessions": [{"id", "first", "last", "exchanges", "resets", "events", "resumes", "resumed_by", "agent", "teammate"}]}`)
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
	resp, err := c.Sessions(ctx)
	if err != nil {
		return err
	}
	rows := resp.Sessions
	if *asJSON {
		return printJSON(e.stdout, map[string]any{"sessions": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "no sessions indexed yet")
		return nil
	}
	// The TEAMMATE column only where some session came from one.
	mates := slices.ContainsFunc(rows, func(r engine.SessionRow) bool { return r.Teammate != "" })
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	head := "SESSION\tAGENT\tFIRST\tLAST\tEXCHANGES\tRESETS\tRESUMES\tRESUMED BY"
	if mates {
		head = "SESSION\tTEAMMATE\tAGENT\tFIRST\tLAST\tEXCHANGES\tRESETS\tRESUMES\tRESUMED BY"
	}
	fmt.Fprintln(w, head)
	const tf = "2006-01-02 15:04:05"
	for _, r := range rows {
		who := ""
		if mates {
			who = cmp.Or(engine.Printable(r.Teammate), "-") + "\t"
		}
		fmt.Fprintf(w, "%s\t%s%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, who, cmp.Or(engine.Printable(r.Agent), "-"), r.First.Format(tf), r.Last.Format(tf),
			r.Exchanges, r.Resets, dashIfEmpty(r.Resumes), dashIfEmpty(r.ResumedBy))
	}
	return w.Flush()
}

func dashIfEmpty(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ",")
}
