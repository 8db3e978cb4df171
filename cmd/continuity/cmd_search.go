package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/engine"
	"golang.org/x/term"
)

func runSearch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "search [flags] QUERY", `
Search past exchanges: BM25 over the user and assistant text fused with
vector similarity (the uselite sentence-embedding model inside the binary
unless configured). Answered by the daemon when it runs, else from the index
directly: the same answers.

Results are ordered by their score (a relevance estimate from 0 to 1, shown
to two decimals), higher first; at equal score the newer exchange first. An
exchange that asks again a question asked before and answers it differently
supersedes the earlier one: it ranks above it, and both say so. Identifiers
(send_reset_email, SendResetEmail, auth/views.py, E1234, a3f9c2e) match
whole first, then by their parts; the files logged with an exchange are
searched too.

A query that names a time ("two weeks ago", "last Saturday", "yesterday",
"in March", "over the past month") ranks the exchanges of that span higher,
without hiding the others; calendar words are read in your time zone (TZ),
"yesterday" being yesterday from midnight to midnight. A query about
nothing but a time ("what did we do yesterday") lists that span's
exchanges, newest first. --since and --until bound the time strictly. When
nothing within --since/--until, --session or --chain matches, the answer
says how many exchanges outside them do.

When no result reaches the floor, the few closest matches are shown, marked
weak; "nothing found" means nothing matches at all. A search answered by the
daemon first waits (up to 2 s) for lines just written to the logs to be
indexed, and says so when some still are not. An embedder given on the
command line (--embedder and the embed flags) is checked and used: when
the daemon runs another, the search is answered from the index with the
stored vectors of the one given (words only when it has none), and says so.

  continuity search "why does the build fail"
  continuity search --chain S --since 2026-11-01 --limit 5 "sqlite lock"
  continuity search --context 1 "which database did we pick"`)
	var req engine.SearchRequest
	fs.StringVar(&req.Session, "session", "", "only this session")
	fs.StringVar(&req.Chain, "chain", "", "only this session and the sessions it resumes (session_resume links, followed back)")
	fs.StringVar(&req.Since, "since", "", "only events at or after this time (RFC 3339 or YYYY-MM-DD), this long ago (7d, 2w, 12h), or the start of a day or span in words (yesterday, last week, 3 days ago: local time)")
	fs.StringVar(&req.Until, "until", "", "only events before this time (RFC 3339, or this long ago: 7d, 12h), or up to the end of this day (YYYY-MM-DD, UTC: the day is included) or of a day or span in words (yesterday, last week: included)")
	fs.IntVar(&req.Limit, "limit", engine.DefaultLimit, fmt.Sprintf("most results (1 to %d)", engine.MaxLimit))
	fs.StringVar(&req.AsOf, "as-of", "", `read the query's relative times ("yesterday", "two weeks ago", "last Saturday") as of this time, not now (RFC 3339; a date or a time without offset is local, as TZ says)`)
	fs.IntVar(&req.Context, "context", 0, fmt.Sprintf("show each result with up to N exchanges of its session before and after it (like grep -C; 0 to %d), marked as context, not as matches: the answer to a question found is often the next exchange", engine.MaxContext))
	fs.StringVar(&req.Mode, "mode", "hybrid", "ranking: hybrid, bm25 (lexical only) or vector (vectors only)")
	minScore := fs.Float64("min-score", engine.DefaultMinScore, "leave out results scoring under this, 0 to 1 (0 keeps every match, however weak). Not given: once a result scores 0.2, results down to 0.1 are kept; when none does, the 5 closest are shown marked weak; --mode vector has no floor unless given. A score estimates relevance the same way for every query (see docs/search.md, \"Search scores\")")
	asJSON := fs.Bool("json", false, `print JSON: {"query", "results": [{"id","session_id","timestamp","user","ai","files","score","weak","superseded_by","supersedes","file","line","context": [{"offset","id","timestamp","user","ai","files","file","line"}] with --context}], "min_score", "time_span": {"phrase","from","to"} when the query names a time, "time_only", "span_exchanges": how many exchanges that span holds, "weak" when no result reached the floor, "pending" when lines just written are not searchable yet, "empty_window": {"since","until"} when the --since/--until window holds no exchange at all, "no_match_in_scope": {"since","until","session","chain","empty","outside","outside_more"} when nothing within --since/--until, --session or --chain matches (empty: they admit no exchange at all; outside: how many exchanges the same search finds without them), "vectors_missing": why vectors took no part, when they did not}`)
	var ef embedFlags
	ef.register(fs)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	req.Query = strings.TrimSpace(strings.Join(pos, " "))
	if *minScore < 0 || *minScore > 1 || *minScore != *minScore {
		return usageError("--min-score %v: want 0 to 1", *minScore)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "min-score" {
			req.MinScore = minScore // else the default of the mode
		}
	})
	if req.Query == "" {
		return usageError("what should I search for? (continuity search QUERY)")
	}
	if req.Context < 0 || req.Context > engine.MaxContext {
		return usageError("--context %d: want 0 to %d exchanges on each side", req.Context, engine.MaxContext)
	}
	c, err := e.client(&ef)
	if err != nil {
		return err
	}
	if ef.given(fs) {
		c.PinEmbedder()
	}
	resp, err := c.Search(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, resp)
	}
	if resp.Note != "" {
		fmt.Fprintf(e.stderr, "continuity search: note: %s\n", resp.Note)
	}
	if resp.VectorsMissing != "" {
		fmt.Fprintf(e.stderr, "continuity search: note: %s\n", resp.VectorsMissing)
	}
	printResults(e.stdout, resp, isTerminal(e.stdout), req.MinScore != nil, req.Limit, req.Mode == "vector")
	return nil
}

// scopeMissText says that nothing was found within the search's filters,
// and what the same search finds without them.
func scopeMissText(m engine.ScopeMiss) string {
	in := fmt.Sprintf("nothing found in %s: none of the exchanges there matches these words or their meaning", m)
	if m.Empty {
		in = fmt.Sprintf("nothing found: there is no exchange in %s", m)
	}
	if m.Outside == 0 {
		if m.Empty {
			return in + ", and none outside matches these words or their meaning"
		}
		return in + ", and none outside does either"
	}
	n := fmt.Sprintf("%d exchanges outside match", m.Outside)
	switch {
	case m.OutsideMore:
		n = fmt.Sprintf("%d or more exchanges outside match", m.Outside)
	case m.Outside == 1:
		n = "1 exchange outside matches"
	}
	verb := "widen or drop" // a window can be widened, a session only dropped
	if m.Since.IsZero() && m.Until.IsZero() {
		verb = "drop"
	}
	return fmt.Sprintf("%s; %s (%s %s to see them)", in, n, verb, scopeFlags(m))
}

// scopeFlags names the flags that set the scope m: "--session, --since".
func scopeFlags(m engine.ScopeMiss) string {
	var flags []string
	for _, f := range []struct {
		set  bool
		name string
	}{{m.Session != "", "--session"}, {m.Chain != "", "--chain"}, {!m.Since.IsZero(), "--since"}, {!m.Until.IsZero(), "--until"}} {
		if f.set {
			flags = append(flags, f.name)
		}
	}
	return strings.Join(flags, ", ")
}

// printResults prints one compact block per hit; on a terminal the query's
// terms are highlighted. Times are local. floorGiven: the floor was the
// caller's (--min-score), not the default's gate; limit: --limit;
// vectorOnly: --mode vector.
func printResults(w io.Writer, resp engine.SearchResponse, color, floorGiven bool, limit int, vectorOnly bool) {
	if p := resp.Pending; p != nil {
		fmt.Fprintf(w, "note: %s.\n\n", p.Note)
	}
	if t := resp.TimeSpan; t != nil {
		from, to := t.From.Local().Format("2006-01-02 15:04"), t.To.Local().Format("2006-01-02 15:04")
		if resp.TimeOnly {
			fmt.Fprintf(w, "(%q: the exchanges from %s to %s, newest first%s)\n\n", t.Phrase, from, to, spanShown(resp, limit))
		} else {
			fmt.Fprintf(w, "(%q: exchanges from %s to %s rank higher)\n\n", t.Phrase, from, to)
		}
	}
	if len(resp.Results) == 0 {
		switch {
		case resp.Pending != nil && (resp.Pending.Bytes > 0 || resp.Pending.NotInFullText > 0):
			fmt.Fprintln(w, "nothing found among the lines indexed so far (see the note above)")
		case resp.EmptyIndex:
			fmt.Fprintln(w, "nothing found: the index holds no exchange yet (no line of .praxis-os/.conversations/*.jsonl indexed, or every session forgotten; 'continuity status' shows which)")
		case resp.EmptyWindow != nil:
			fmt.Fprintf(w, "nothing found: the time window (%s) holds no exchange at all; widen --since/--until\n", resp.EmptyWindow)
		case resp.NoMatchInScope != nil:
			fmt.Fprintln(w, scopeMissText(*resp.NoMatchInScope))
		case resp.TimeOnly:
			fmt.Fprintln(w, "no exchange in that span")
		case floorGiven && resp.MinScore > 0:
			fmt.Fprintf(w, "nothing relevant found: no past exchange scores %.2f or more (--min-score 0 lists the weakest matches too)\n", resp.MinScore)
		case resp.VectorsMissing != "" && vectorOnly:
			// Not "nothing matches": nothing was compared.
			fmt.Fprintln(w, "nothing found: the search by meaning could not run (see the note above); --mode bm25 or hybrid searches by words")
		case resp.VectorsMissing != "":
			fmt.Fprintln(w, "nothing found by these words; their meaning was not searched (see the note above)")
		default:
			fmt.Fprintln(w, "nothing found: no past exchange matches these words or their meaning")
		}
		return
	}
	if resp.Weak {
		fmt.Fprintf(w, "no past exchange scores %.2f or more; the closest matches, weak (probably not what you are looking for):\n\n", resp.MinScore)
	}
	hl := func(s string) string { return s }
	if color {
		if re := termsPattern(resp.Query); re != nil {
			hl = func(s string) string { return re.ReplaceAllString(s, "\033[1;33m$0\033[0m") }
		}
	}
	for i, r := range resp.Results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printResult(w, r, hl)
	}
}

// spanShown says, for a query about nothing but a time whose span holds
// more exchanges than are shown, how many are and how to see them all:
// ": 10 of 22; --limit 22 shows all"; "" when all are shown.
func spanShown(resp engine.SearchResponse, limit int) string {
	n, total := len(resp.Results), resp.SpanExchanges
	switch {
	case total <= int64(n):
		return ""
	case n < limit:
		// Fewer than the limit: identical exchanges are shown once.
		return fmt.Sprintf(": %d of %d, identical exchanges shown once", n, total)
	case total > engine.MaxLimit:
		return fmt.Sprintf(": %d of %d; --limit %d shows the newest %d, --since and --until narrow the span", n, total, engine.MaxLimit, engine.MaxLimit)
	}
	return fmt.Sprintf(": %d of %d; --limit %d shows all", n, total, total)
}

// printResult prints one hit: its place, score, texts, files and what it
// supersedes or is superseded by.
func printResult(w io.Writer, r engine.SearchResult, hl func(string) string) {
	weak := ""
	if r.Weak {
		weak = ", weak"
	}
	// Stored text shows its control characters escaped (the highlights
	// are added after).
	fmt.Fprintf(w, "%s  %s  %s:%d  (%.2f%s)\n", r.Timestamp.Local().Format("2006-01-02 15:04"), r.SessionID, engine.Printable(r.File), r.Line, r.Score, weak)
	// Its neighbours (--context), in the session's order around it.
	i := 0
	for ; i < len(r.Context) && r.Context[i].Offset < 0; i++ {
		printContext(w, r.Context[i], hl)
	}
	if len(r.Context) > 0 {
		fmt.Fprintln(w, "  = the result:")
	}
	printTexts(w, "  ", r.User, r.AI, r.Files, hl)
	for ; i < len(r.Context); i++ {
		printContext(w, r.Context[i], hl)
	}
	if o := r.SupersededBy; o != nil {
		fmt.Fprintf(w, "  superseded by the exchange of %s (%s): the same question, answered differently later\n", o.Timestamp.Local().Format("2006-01-02 15:04"), o.SessionID)
	}
	for _, o := range r.Supersedes {
		fmt.Fprintf(w, "  supersedes the exchange of %s (%s): the same question, answered differently before\n", o.Timestamp.Local().Format("2006-01-02 15:04"), o.SessionID)
	}
}

// printTexts prints an exchange's texts and files, indented.
func printTexts(w io.Writer, indent, user, ai string, files []string, hl func(string) string) {
	if user != "" {
		fmt.Fprintf(w, "%suser: %s\n", indent, hl(engine.Printable(snippet(user, 300))))
	}
	if ai != "" {
		fmt.Fprintf(w, "%sai:   %s\n", indent, hl(engine.Printable(snippet(ai, 300))))
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "%sfiles: %s\n", indent, hl(engine.Printable(snippet(strings.Join(files, ", "), 300))))
	}
}

// printContext prints a neighbour of a result (--context): where it is,
// marked as context, and its texts, indented under it.
func printContext(w io.Writer, c engine.SearchContext, hl func(string) string) {
	where := "after"
	n := c.Offset
	if n < 0 {
		where, n = "before", -n
	}
	fmt.Fprintf(w, "  - context, %d %s (%s  %s:%d):\n", n, where, c.Timestamp.Local().Format("2006-01-02 15:04"), engine.Printable(c.File), c.Line)
	printTexts(w, "      ", c.User, c.AI, c.Files, hl)
}

// snippet folds the white space of text and cuts it to about n bytes.
// Only the first n+1 bytes of the folded text are built: an exchange's
// text can be many kilobytes, and splitting all of it into words made
// fresh heap pages that the CLI paid for in page faults.
func snippet(text string, n int) string {
	var b strings.Builder
	for w := range strings.FieldsSeq(text) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if rest := n + 1 - b.Len(); len(w) > rest {
			w = w[:rest] // past byte n nothing is shown
		}
		b.WriteString(w)
		if b.Len() > n {
			break
		}
	}
	s := b.String()
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + " …"
}

// termsPattern matches the query's words (not stopwords), as prefixes so
// that "authenticate" also lights "authentication".
func termsPattern(q string) *regexp.Regexp {
	var alts []string
	for _, t := range analyze.Tokens(q) {
		if len(t) < 3 || analyze.IsStopword(t) {
			continue
		}
		alts = append(alts, regexp.QuoteMeta(analyze.Stem(t)))
	}
	if len(alts) == 0 {
		return nil
	}
	re, err := regexp.Compile(`(?i)\b(` + strings.Join(alts, "|") + `)\w*`)
	if err != nil {
		return nil
	}
	return re
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
