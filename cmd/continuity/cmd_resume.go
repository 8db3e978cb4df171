package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/internal/words"
)

func runResume(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "resume (--session ID | --latest) [--query Q] [--budget N] [--include-current] [--explain] [--json]", `
Print what an agent needs from its past when it starts a new session or its
context was reset: one markdown text, ready to paste into a prompt, never
over the token budget (counted with a real tokenizer, headers included).

It draws from the session and the sessions it resumes (session_resume links,
followed back), leaves out the session's exchanges after its latest
context_reset (still in the agent's window; --include-current adds them;
with --latest they are included unless --include-current=false: --latest is
for a new session, which has none of them in its window),
always shows what was being done just before that boundary, then the
exchanges most relevant to --query (the best whole), then the most recent
ones, until the budget is used; when everything fits, everything is shown
whole. A long exchange is cut on line and sentence boundaries to its
relevant part, each cut saying how much was left out ("[… 1,234
characters cut]"), code fences closed. See docs/resume.md.

Like a search, a resume answered by the daemon first waits (up to 2 s) for
lines just written to the logs to be indexed (so --latest names the session
just logged to), and says on stderr when some still are not; without a
daemon it says how much of the logs is not indexed.

With --explain, the pack is followed by why each exchange of the chain is
in it (recent, relevant to the query, or the whole chain fits), cut, or left
out (not reached, no room, a duplicate, still in context).`)
	session := fs.String("session", "", "the session to resume into (the agent's current session)")
	latest := fs.Bool("latest", false, "resume the session of the most recent event in the workspace, as a new session does (implies --include-current)")
	q := fs.String("query", "", "what the agent is about to do: steers the selection")
	budget := fs.Int("budget", engine.DefaultBudget, "most tokens of the whole text")
	includeCurrent := fs.Bool("include-current", false, "also offer the exchanges after the session's latest context reset (default: true with --latest, false with --session)")
	maxDepth := fs.Int("max-depth", engine.DefaultMaxDepth, "most session_resume links followed back")
	tokenizer := fs.String("tokenizer", engine.DefaultEncoding, "token counting: an encoding (cl100k_base, o200k_base, p50k_base, r50k_base) or a model name (gpt-4o, ...)")
	explain := fs.Bool("explain", false, `after the pack, say why each exchange is in it, cut or left out (with --json: the "explain" field)`)
	asJSON := fs.Bool("json", false, `print JSON: {"session_id", "chain", "budget", "tokens", "exchanges": [{"id", "session_id", "timestamp", "user", "ai", "truncated"}], "omitted", "files", "text", ...}`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return sessionArgs("resume", pos, *session != "" || *latest)
	case *latest && *session != "":
		return usageError("--session and --latest exclude each other")
	case !*latest && *session == "":
		return usageError("which session? give --session ID or --latest (see 'continuity sessions')")
	case *budget <= 0:
		return usageError("--budget %d: must be a positive number of tokens", *budget)
	case *maxDepth <= 0:
		return usageError("--max-depth %d: must be positive", *maxDepth)
	}
	// --latest means a new session resuming the latest one: its exchanges
	// are not in the caller's window (the same default as MCP's
	// resume_context).
	var asked *bool
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "include-current" {
			asked = includeCurrent
		}
	})
	*includeCurrent = engine.IncludeCurrent(*latest, asked)
	if err := engine.CheckTokenizer(*tokenizer); err != nil {
		return usageError("--tokenizer: %v", err)
	}
	c, err := e.client(nil)
	if err != nil {
		return err
	}
	// Through the daemon when one runs (it holds the search state), else
	// in-process on the index.
	pack, err := c.Resume(ctx, engine.ResumeRequest{
		Session: *session, Latest: *latest, Query: *q, Budget: *budget,
		IncludeCurrent: *includeCurrent, MaxDepth: *maxDepth, Tokenizer: *tokenizer,
		Explain: *explain,
	})
	if err != nil {
		return err
	}
	// The pack is for pasting, so notes about it go to stderr.
	if p := pack.Pending; p != nil {
		fmt.Fprintf(e.stderr, "continuity: note: %s\n", p.Note)
	}
	switch {
	case len(pack.Exchanges) > 0:
	case pack.Omitted > 0:
		// Exchanges were there, none fitted.
		fmt.Fprintf(e.stderr, "continuity: a budget of %d tokens shows no exchange (%d left out): the headers take %d, and no useful part of an exchange fits in the rest; give a larger --budget\n",
			pack.Budget, pack.Omitted, pack.Tokens)
	case pack.InContext > 0:
		// An agent in a new session that named the previous session with
		// --session.
		fmt.Fprintf(e.stderr, "continuity: the %d %s of %s since its latest context reset (all of them when it has none) %s as still in the agent's context; "+
			"--include-current includes them (for an agent that starts a new session; --latest does so by default)\n",
			pack.InContext, words.Plural(pack.InContext, "exchange", "exchanges"), pack.SessionID, words.Plural(pack.InContext, "counts", "count"))
	}
	if *asJSON {
		return printJSON(e.stdout, pack)
	}
	// Stored text shows its control characters escaped.
	out := engine.PrintableWriter{W: e.stdout}
	if _, err = fmt.Fprint(out, pack.Text); err != nil || pack.Explain == nil {
		return err
	}
	return printExplanation(out, &pack)
}

// printExplanation writes resume --explain's account of a pack: a summary,
// then each exchange listed, chronologically, with what happened to it
// and why.
func printExplanation(w io.Writer, pack *engine.ResumePack) error {
	x := pack.Explain
	c := x.Counts
	fmt.Fprintf(w, "\n--- why (resume --explain; not part of the pack) ---\n")
	fmt.Fprintf(w, "Budget %d tokens: the pack takes %d, %d left free.\n", pack.Budget, pack.Tokens, x.Free)
	in := c[engine.ReasonRecent] + c[engine.ReasonRelevant] + c[engine.ReasonChain]
	fmt.Fprintf(w, "In: %d (%s), %d of them cut.\n", in, countList(c, engine.ReasonChain, engine.ReasonRelevant, engine.ReasonRecent), x.Truncated)
	fmt.Fprintf(w, "Left out: %s.\n", countList(c, engine.ReasonNotReached, engine.ReasonNoRoom, engine.ReasonDuplicate, engine.ReasonDropped, engine.ReasonInContext))
	for _, d := range x.Decisions {
		mark := "-"
		if d.Included {
			mark = "+"
		}
		where := "this session"
		if d.Depth > 0 {
			where = fmt.Sprintf("%d %s back", d.Depth, words.Plural(d.Depth, "link", "links"))
		}
		fmt.Fprintf(w, "%s %s · %s (%s) · %s · %q\n    %s: %s\n", mark, d.Timestamp.UTC().Format("2006-01-02 15:04"),
			d.SessionID, where, d.ID, d.Preview, strings.ReplaceAll(d.Reason, "_", " "), d.Why)
	}
	if x.Unlisted > 0 {
		fmt.Fprintf(w, "(%d more not reached or still in context, not listed)\n", x.Unlisted)
	}
	return nil
}

// countList is "3 recent, 1 relevant" for the reasons with a count.
func countList(c map[string]int, reasons ...string) string {
	var parts []string
	for _, r := range reasons {
		if c[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[r], strings.ReplaceAll(r, "_", " ")))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
