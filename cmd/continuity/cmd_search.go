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
	"golang.org/x/sys/unix"
)

func runSearch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "search [flags] QUERY", `
Search past exchanges: BM25 over the user and assistant text fused with
vector similarity (the uselite sentence-embedding model inside the binary
unless configured). Answered by the daemon when it runs, else from the index
directly: the same answers.

A query that names a time ("two weeks ago", "last Saturday", "yesterday",
"in March", "over the past month") ranks the exchanges of that span higher,
without hiding the others; --since and --until bound the time strictly.

  continuity search "why does the build fail"
  continuity search --chain S --since 2026-11-01 --limit 5 "sqlite lock"`)
	var req engine.SearchRequest
	fs.StringVar(&req.Session, "session", "", "only this session")
	fs.StringVar(&req.Chain, "chain", "", "only this session and the sessions it resumes (session_resume links, followed back)")
	fs.StringVar(&req.Since, "since", "", "only events at or after this time (RFC 3339 or YYYY-MM-DD)")
	fs.StringVar(&req.Until, "until", "", "only events before this time (RFC 3339 or YYYY-MM-DD)")
	fs.IntVar(&req.Limit, "limit", engine.DefaultLimit, fmt.Sprintf("most results (1 to %d)", engine.MaxLimit))
	fs.StringVar(&req.AsOf, "as-of", "", `read the query's relative times ("two weeks ago", "last Saturday") as of this time, not now (RFC 3339 or YYYY-MM-DD)`)
	fs.StringVar(&req.Mode, "mode", "hybrid", "ranking: hybrid, bm25 (lexical only) or vector (vectors only)")
	minScore := fs.Float64("min-score", engine.DefaultMinScore, "leave out results scoring under this, 0 to 1 (0 keeps every match, however weak). Not given: a query none of whose results scores 0.2 finds nothing, and once one does, results down to 0.1 are kept; --mode vector has no floor unless given. A score estimates relevance the same way for every query (see protocol.md, \"Search scores\")")
	asJSON := fs.Bool("json", false, `print JSON: {"query", "results": [{"id","session_id","timestamp","user","ai","score","file","line"}], "min_score", "time_span": {"phrase","from","to"} when the query names a time, "vectors_missing": why vectors took no part, when they did not}`)
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
	c, err := e.client(&ef)
	if err != nil {
		return err
	}
	resp, err := c.Search(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, resp)
	}
	if resp.VectorsMissing != "" {
		fmt.Fprintf(e.stderr, "continuity search: note: %s\n", resp.VectorsMissing)
	}
	printResults(e.stdout, resp, isTerminal(e.stdout))
	return nil
}

// printResults prints one compact block per hit; on a terminal the query's
// terms are highlighted.
func printResults(w io.Writer, resp engine.SearchResponse, color bool) {
	if t := resp.TimeSpan; t != nil {
		fmt.Fprintf(w, "(%q: exchanges from %s to %s rank higher)\n\n", t.Phrase,
			t.From.Local().Format("2006-01-02 15:04"), t.To.Local().Format("2006-01-02 15:04"))
	}
	if len(resp.Results) == 0 {
		if resp.MinScore > 0 {
			fmt.Fprintf(w, "nothing relevant found: no past exchange scores %.2f or more (--min-score 0 lists the weakest matches too)\n", resp.MinScore)
		} else {
			fmt.Fprintln(w, "nothing found: no indexed exchange matches (is the daemon running? 'continuity status' tells)")
		}
		return
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
		fmt.Fprintf(w, "%s  %s  %s:%d  (%.3f)\n", r.Timestamp.Format("2006-01-02 15:04"), r.SessionID, r.File, r.Line, r.Score)
		if r.User != "" {
			fmt.Fprintf(w, "  user: %s\n", hl(snippet(r.User, 300)))
		}
		if r.AI != "" {
			fmt.Fprintf(w, "  ai:   %s\n", hl(snippet(r.AI, 300)))
		}
	}
}

// snippet folds white space and cuts s to about n bytes.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
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
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
