package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
)

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export --session ID [--chain] [--format markdown|jsonl]", `
Print every event of a session, by time: as markdown (whole texts, nothing
cut), or as JSON lines exactly as they were stored (byte for byte, one per
line). With --chain, the sessions it resumes too (session_resume links
followed back, as resume does).`)
	session := fs.String("session", "", "the session to export")
	chain := fs.Bool("chain", false, "also export the sessions it resumes, following session_resume links back")
	format := fs.String("format", "markdown", "markdown, or jsonl (the stored lines, byte for byte)")
	maxDepth := fs.Int("max-depth", engine.DefaultMaxDepth, "with --chain, most links followed back")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return sessionArgs("export", pos, *session != "")
	case *session == "":
		return usageError("which session? give --session ID (see 'continuity sessions')")
	case *format != "markdown" && *format != "jsonl":
		return usageError("--format %q: want markdown or jsonl", *format)
	case *maxDepth <= 0:
		return usageError("--max-depth %d: must be positive", *maxDepth)
	}
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	x, err := c.Export(ctx, *session, *chain, *maxDepth)
	if err != nil {
		return err
	}
	events := x.Events
	w := bufio.NewWriter(e.stdout)
	if *format == "jsonl" {
		for _, ev := range events {
			w.Write(ev.Raw)
			w.WriteByte('\n')
		}
	} else {
		// Stored text shows its control characters escaped.
		writeMarkdownExport(engine.PrintableWriter{W: w}, *session, x.Chain, *chain, events)
	}
	return w.Flush()
}

const exportTime = "2006-01-02 15:04:05"

// writeMarkdownExport writes the events grouped by session (sessions by
// their first event), each event whole.
func writeMarkdownExport(w io.Writer, session string, c engine.Chain, chain bool, events []engine.Event) {
	if chain {
		fmt.Fprintf(w, "# Export of session %s and the sessions it resumes (times UTC)\n", session)
		fmt.Fprintf(w, "Chain, newest first: %s\n", strings.Join(c.Sessions, " ← "))
	} else {
		fmt.Fprintf(w, "# Export of session %s (times UTC)\n", session)
	}
	if len(events) == 0 {
		fmt.Fprintln(w, "\nNo events indexed.")
		return
	}
	var order []string
	groups := map[string][]engine.Event{}
	for _, ev := range events {
		if groups[ev.SessionID] == nil {
			order = append(order, ev.SessionID)
		}
		groups[ev.SessionID] = append(groups[ev.SessionID], ev)
	}
	for _, s := range order {
		evs := groups[s]
		fmt.Fprintf(w, "\n## Session %s · %s → %s · %d %s\n", s,
			evs[0].Timestamp.Format(exportTime), evs[len(evs)-1].Timestamp.Format(exportTime), len(evs), words.Plural(len(evs), "event", "events"))
		for _, ev := range evs {
			ts := ev.Timestamp.Format(exportTime)
			switch ev.Type {
			case logformat.TypeExchange:
				fmt.Fprintf(w, "\n[%s]\n", ts)
				if ev.User != "" {
					fmt.Fprintf(w, "User: %s\n", ev.User)
				}
				if ev.AI != "" {
					fmt.Fprintf(w, "AI: %s\n", ev.AI)
				}
				if len(ev.Files) > 0 {
					fmt.Fprintf(w, "Files: %s\n", strings.Join(ev.Files, ", "))
				}
			case logformat.TypeContextReset:
				if ev.Reason != "" {
					fmt.Fprintf(w, "\n[%s] context reset: %s\n", ts, ev.Reason)
				} else {
					fmt.Fprintf(w, "\n[%s] context reset\n", ts)
				}
			case logformat.TypeSessionResume:
				fmt.Fprintf(w, "\n[%s] %s resumes session %s\n", ts, ev.NewSession, ev.PreviousSession)
			default:
				fmt.Fprintf(w, "\n[%s] event of type %q\n", ts, ev.Type)
			}
		}
	}
}
