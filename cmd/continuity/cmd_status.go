package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/importer"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
)

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status [--json]", `
Show whether a daemon runs (it answers on its socket; else who holds the
index), and what the index holds: per log file its generation, committed
offset, size and lag (bytes not indexed yet; a file no daemon has seen yet,
new or replaced while none ran, counts whole; an unfinished last line waits
for its newline); counts of events by type,
exchanges, sessions, rejected lines, duplicates skipped (and ids reused with
other content), byte order marks skipped; the logs edited in place and what
their edits changed, removed and added; what waits for the full-text index
and for a vector, and the embedder (the running daemon's, with a note when
this command's settings choose another; without a daemon, the configured
one); the daemon's bm25 engine (ready, or building while FTS5
answers; the exchanges it holds, the queries it answered); the daemon's
retention (daemon --retain: how old an idle session may get, when it last
looked, how many it forgot); files skipped as
a whole (symlinks, FIFOs, unreadable, compressed logs that cannot be read)
with the reason; the index's size on disk (the whole cache folder, and
index.db, fulltext.db, the bm25 segments and any vector snapshot) beside
the logs' size, and the ratio. A compressed rotated log (x.jsonl.1.gz) shows
its size on disk and the offset reached in its content.`)
	asJSON := fs.Bool("json", false, "print JSON")
	var ef embedFlags
	ef.register(fs)
	if err := parseFlagsOnly(e, fs, args); err != nil {
		return err
	}
	c, err := e.client(&ef)
	if err != nil {
		return err
	}
	r, err := c.Status(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	printStatus(e.stdout, r)
	return nil
}

// printStatus writes the report as tables: the counts, then the files and
// the files skipped.
func printStatus(out io.Writer, r engine.StatusReport) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "workspace\t%s\n", r.Workspace)
	switch d := r.Daemon; {
	case d.Running:
		fmt.Fprintf(w, "daemon\trunning (pid %d)\n", d.PID)
	case d.Holder != "":
		fmt.Fprintf(w, "daemon\tnot running; %s (pid %d) holds the index\n", d.Holder, d.PID)
	default:
		fmt.Fprintf(w, "daemon\tnot running: new lines are not indexed until `continuity daemon` (or `ingest`) runs\n")
	}
	switch u := r.UnfinishedBytes; {
	case u == 0:
		fmt.Fprintf(w, "not indexed yet\t%d bytes\n", r.LagBytes)
	case u == r.LagBytes:
		fmt.Fprintf(w, "not indexed yet\t%d bytes, an unfinished last line: indexed once its newline is written\n", r.LagBytes)
	default:
		fmt.Fprintf(w, "not indexed yet\t%d bytes (%d of them unfinished last lines, indexed once their newline is written)\n", r.LagBytes, u)
	}
	fmt.Fprintf(w, "events\t%d\n", r.Events)
	types := make([]string, 0, len(r.EventsByType))
	for t := range r.EventsByType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		fmt.Fprintf(w, "  %s\t%d\n", t, r.EventsByType[t])
	}
	fmt.Fprintf(w, "sessions\t%d\n", r.Sessions)
	fmt.Fprintf(w, "index on disk\t%s\n", r.Disk.Summary())
	if p := r.Disk.Parts(); p != "" {
		fmt.Fprintf(w, "  parts\t%s\n", p)
	}
	if r.FullTextPending >= 0 {
		fmt.Fprintf(w, "waiting for full-text indexing\t%d\n", r.FullTextPending)
	} else {
		fmt.Fprintf(w, "full-text index\tnot built yet\n")
	}
	fmt.Fprintf(w, "bm25 engine\t%s\n", lexiconLine(r.BM25, r.Daemon.Running))
	if r.Retention != nil {
		fmt.Fprintf(w, "retention\t%s\n", retentionLine(*r.Retention, time.Now()))
	}
	printFollowed(w, r.Import)
	if sh := r.Share; sh != nil {
		fmt.Fprintf(w, "team memory	team %s, scope %s, on %s\n", sh.Team, sh.Scope, sh.Server)
		backlog := fmt.Sprintf("%d %s not shipped yet", sh.Backlog, words.Plural(int(sh.Backlog), "event", "events"))
		if sh.Backlog > 0 && sh.BacklogAge != "" {
			backlog += ", the oldest " + sh.BacklogAge + " old"
		}
		fmt.Fprintf(w, "  shipping\t%s; %d shipped since the daemon started\n", backlog, sh.ShippedNow)
		fmt.Fprintf(w, "  pulled\t%d %s of teammates since the daemon started\n", sh.Pulled, words.Plural(int(sh.Pulled), "event", "events"))
		if sh.LastError != "" {
			fmt.Fprintf(w, "  last error\t%s\n", sh.LastError)
		}
		if sh.PullError != "" {
			fmt.Fprintf(w, "  pull error\t%s\n", sh.PullError)
		}
	}
	fmt.Fprintf(w, "embedder\t%s\n", embedderLine(r))
	if i := r.EmbedderInfo; i != nil && i.Note != "" {
		fmt.Fprintf(w, "  note\t%s\n", i.Note)
	}
	if r.EmbedPending >= 0 {
		fmt.Fprintf(w, "  waiting for a vector\t%d\n", r.EmbedPending)
	}
	if r.Embedding != nil {
		fmt.Fprintf(w, "  embedded\t%s\n", embeddedLine(r.Embedding))
	}
	if m := r.VectorMemory; m != nil {
		fmt.Fprintf(w, "  vectors in memory\t%s\n", vectorMemoryLine(m))
	}
	pattern := ""
	if i := r.EmbedderInfo; i != nil {
		pattern = i.SpacePattern
	}
	for _, id := range slices.Sorted(maps.Keys(r.Vectors)) {
		switch {
		case id == r.Embedder:
		case engine.MayBeInUse(pattern, id):
			// Its server has not answered: not another embedder's.
			fmt.Fprintf(w, "  vectors stored\t%s: %d vectors, this embedder's if its server still gives %s dimensions (it has not answered yet)\n", id, r.Vectors[id], dimensionOf(id))
		default:
			fmt.Fprintf(w, "  kept of another embedder\t%s: %d vectors, for a switch back ('continuity vectors --drop' removes them)\n", id, r.Vectors[id])
		}
	}
	fmt.Fprintf(w, "rejected lines\t%d\t(%s)\n", r.Rejected.Invalid, r.Rejected.Note())
	fmt.Fprintf(w, "duplicate ids skipped\t%d\n", r.DuplicatesSkipped)
	if r.ReusedIDs > 0 {
		fmt.Fprintf(w, "  ids reused with other content\t%d\t(those lines are not indexed: see 'continuity rejects')\n", r.ReusedIDs)
	}
	fmt.Fprintf(w, "secrets redacted\t%d\n", r.Redactions)
	if r.UnknownTypes+r.UnknownFields > 0 {
		fmt.Fprintf(w, "unknown types / fields kept\t%d / %d\n", r.UnknownTypes, r.UnknownFields)
	}
	printProducerCounts(w, r.ProducerCounts)
	if t := r.EditTotals; t.Edits > 0 {
		fmt.Fprintf(w, "logs edited in place\t%d %s\t(%s; see the files below)\n", t.Edits, words.Plural(int(t.Edits), "edit", "edits"), editLines(t))
	}
	w.Flush()
	if len(r.Files) > 0 {
		fmt.Fprintln(out, "\nfiles:")
		w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "  PATH\tGEN\tOFFSET\tSIZE\tLAG\t")
		for _, f := range r.Files {
			state := ""
			switch {
			case f.Gone:
				state = "(gone)"
			case f.NotSeen:
				state = "(not seen yet)"
			case f.Missing:
				state = "(missing from the folder)"
			case f.Compressed:
				state = "(compressed: the offset is in its content, read whole)"
			}
			fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%d\t%s\n", f.Path, f.Generation, f.Offset, f.Size, f.Lag, state)
		}
		w.Flush()
	}
	if len(r.Edits) > 0 {
		fmt.Fprintln(out, "\nedited in place (the index followed each edit):")
		for _, ed := range r.Edits {
			fmt.Fprintf(out, "  %s: %d %s, %s; last %s\n", ed.File, ed.Edits, words.Plural(int(ed.Edits), "edit", "edits"), editLines(ed),
				ed.Last.Local().Format("2006-01-02 15:04:05"))
		}
	}
	if len(r.SyncCopies) > 0 {
		fmt.Fprintln(out, "\nconflict copies of a sync tool (kept and read):")
		for _, c := range r.SyncCopies {
			fmt.Fprintf(out, "  %s (of %s): %s\n", c.File, c.CopyOf, c.Done)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintln(out, "\nskipped files:")
		for _, s := range r.Skipped {
			fmt.Fprintf(out, "  %s: %s\n", s.Name, s.Reason)
		}
	}
}

// editLines says what edits did to lines.
func editLines(e engine.EditStatus) string {
	return fmt.Sprintf("%d %s changed, %d removed, %d added", e.Changed, words.Plural(int(e.Changed), "line", "lines"), e.Removed, e.Added)
}

// printFollowed lists the agents the daemon follows (daemon --import):
// those with transcripts of this workspace, then those it waits for.
func printFollowed(w io.Writer, r *importer.LiveReport) {
	if r == nil {
		return
	}
	var waiting []string
	fmt.Fprintf(w, "importing live	\n")
	for _, a := range r.Agents {
		if a.Files == 0 && a.Events == 0 {
			waiting = append(waiting, a.Agent)
			continue
		}
		line := fmt.Sprintf("%d %s", a.Files, words.Plural(a.Files, "file", "files"))
		if a.Events > 0 {
			line += fmt.Sprintf(", %d %s imported since the daemon started (last %s)", a.Events, words.Plural(a.Events, "event", "events"), a.LastImport.Local().Format("2006-01-02 15:04:05"))
		}
		if a.Error != "" {
			line += "; cannot write the logs (retrying): " + a.Error
		}
		fmt.Fprintf(w, "  %s\t%s\n", a.Agent, line)
	}
	if len(waiting) > 0 {
		fmt.Fprintf(w, "  no transcripts of this workspace yet\t%s\n", strings.Join(waiting, ", "))
	}
}

// lexiconLine renders the engine's state for the status table.
func lexiconLine(st *engine.BM25Status, daemon bool) string {
	if st == nil {
		if daemon {
			return "unknown (the daemon did not say)"
		}
		return "not running (the daemon keeps it; searches without a daemon use FTS5)"
	}
	var s string
	switch st.State {
	case "ready":
		s = fmt.Sprintf("ready: %d %s, up to event %d (plain-word BM25 queries use it)", st.Docs, words.Plural(st.Docs, "exchange", "exchanges"), st.Watermark)
	case "building":
		s = fmt.Sprintf("building: %d %s, up to event %d, %d events to read (FTS5 answers meanwhile)", st.Docs, words.Plural(st.Docs, "exchange", "exchanges"), st.Watermark, st.Behind)
	case "dropped":
		s = "being removed (forget); built again after"
	default:
		s = st.State
	}
	if st.Answered+st.FellBack > 0 {
		s += fmt.Sprintf("; %d %s answered, %d left to FTS5", st.Answered, words.Plural(int(st.Answered), "query", "queries"), st.FellBack)
	}
	if st.BuildSeconds > 0 {
		s += fmt.Sprintf("; last build %.1fs", st.BuildSeconds)
	}
	if st.Error != "" {
		s += "; last error: " + st.Error
	}
	return s
}

// embedderLine renders the embedder described: its identity, whose it
// is and where it runs.
func embedderLine(r engine.StatusReport) string {
	i := r.EmbedderInfo
	if i == nil {
		return r.Embedder
	}
	s := r.Embedder
	if i.Source == engine.EmbedderOfDaemon {
		s += " (the daemon's"
	} else {
		s += " (configured here; no daemon answers"
	}
	if i.Provider != "" {
		s += ": " + i.Provider + ", " + i.Where()
	}
	switch {
	case i.Reachable != nil && !*i.Reachable:
		s += "; it fails: " + i.LastError
	case i.LastError != "":
		s += "; last failure: " + i.LastError
	}
	return s + ")"
}

// embeddedLine renders the embedding progress for the status table.
func embeddedLine(p *engine.EmbedProgress) string {
	s := fmt.Sprintf("%d of %d exchanges (%.1f%%)", p.Done, p.Total, p.Percent)
	switch {
	case p.Done == p.Total:
	case p.Rate > 0:
		s += fmt.Sprintf(", %.0f/s, about %s left", p.Rate, (time.Duration(p.ETASeconds) * time.Second).Round(time.Second))
	default:
		s += ", no rate yet (the daemon or `continuity ingest` embeds the rest)"
	}
	return s
}

// printProducerCounts writes the counts that are not zero, as
// tab-separated lines.
func printProducerCounts(w io.Writer, c engine.ProducerCounts) {
	if len(c.UnknownFieldNames) > 0 {
		names := make([]string, 0, len(c.UnknownFieldNames))
		for n := range c.UnknownFieldNames {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := c.UnknownFieldNames[names[i]], c.UnknownFieldNames[names[j]]
			return a > b || a == b && names[i] < names[j]
		})
		var parts []string
		for i, n := range names {
			if i == 10 {
				parts = append(parts, fmt.Sprintf("and %d more", len(names)-10))
				break
			}
			part := fmt.Sprintf("%q %d", n, c.UnknownFieldNames[n])
			if k := logformat.LooksLikeKnownField(n); k != "" {
				part += fmt.Sprintf(" (write %q?)", k)
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(w, "  unknown fields, kept but not searched\t%s\n", strings.Join(parts, ", "))
	}
	if c.TimestampsNoOffset > 0 {
		fmt.Fprintf(w, "timestamps without offset\t%d\t(read as local time; write Z or +hh:mm)\n", c.TimestampsNoOffset)
	}
	if c.TimestampsAhead > 0 {
		fmt.Fprintf(w, "timestamps ahead of their reading\t%d\t(dated after they were read: a clock ahead, or local time written with Z; `continuity doctor` names the sessions)\n", c.TimestampsAhead)
	}
	if c.AIFromAlias > 0 {
		fmt.Fprintf(w, "answers given as \"assistant\"\t%d\t(read as \"ai\")\n", c.AIFromAlias)
	}
	if c.BOMsSkipped > 0 {
		fmt.Fprintf(w, "byte order marks skipped\t%d\t(UTF-8 BOM at the start of a file, as Windows PowerShell writes)\n", c.BOMsSkipped)
	}
	if c.Forgotten > 0 {
		fmt.Fprintf(w, "forgotten sessions\t%d\n", c.Forgotten)
		fmt.Fprintf(w, "lines of forgotten sessions not indexed\t%d\t(listed by 'continuity rejects')\n", c.ForgottenSkipped)
	}
}

// retentionLine says the running daemon's retention (daemon --retain).
func retentionLine(r engine.RetentionStatus, now time.Time) string {
	if r.Retain <= 0 {
		return "off: every session is kept (daemon --retain 180d forgets the sessions idle longer)"
	}
	keep := r.Retain.String()
	if r.Retain%(24*time.Hour) == 0 {
		keep = fmt.Sprintf("%dd", r.Retain/(24*time.Hour))
	}
	s := "sessions idle over " + keep + " are forgotten"
	if r.LastPass.IsZero() {
		return s + "; not checked yet"
	}
	return fmt.Sprintf("%s; checked %s ago, %d %s forgotten since the daemon started", s,
		max(now.Sub(r.LastPass), 0).Round(time.Second), r.Forgotten, words.Plural(int(r.Forgotten), "session", "sessions"))
}

// vectorMemoryLine says how much of the daemon's vectors is in memory.
func vectorMemoryLine(m *engine.VectorMemory) string {
	if m.InMemory >= m.Vectors {
		return fmt.Sprintf("all %d (within daemon --vector-memory %d MiB)", m.Vectors, m.BudgetMiB)
	}
	return fmt.Sprintf("%d of %d: the others are read from the index by each search that scores them, the same results more slowly "+
		"(daemon --vector-memory %d MiB; a larger budget keeps more)", m.InMemory, m.Vectors, m.BudgetMiB)
}
