package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/praxis-os/continuity/engine"
)

func runSessions(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sessions [--json]", `
List the indexed sessions, oldest first: id, the agent that wrote it (when
its events say: imported sessions do), first and last event time (UTC),
exchanges, context resets, and the session_resume links: the sessions each
one resumes and the sessions that resume it.`)
	asJSON := fs.Bool("json", false, `print JSON: {"sessions": [{"id", "first", "last", "exchanges", "resets", "events", "resumes", "resumed_by", "agent"}]}`)
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
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tAGENT\tFIRST\tLAST\tEXCHANGES\tRESETS\tRESUMES\tRESUMED BY")
	const tf = "2006-01-02 15:04:05"
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, cmp.Or(engine.Printable(r.Agent), "-"), r.First.Format(tf), r.Last.Format(tf),
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
