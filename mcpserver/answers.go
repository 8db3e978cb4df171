package mcpserver

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// MCP answers are read by a model, token by token: each tool's answer
// carries its payload once. A tool with structured output gets the JSON
// in structuredContent and, as the MCP specification asks for clients
// without structured output, the same JSON once as text; resume_context's
// markdown is the text content, and its structured content is only what
// the markdown does not say (ids, counts). Times are RFC 3339 UTC to the
// second, scores rounded.

// SearchText is what search_conversations says in words besides its
// JSON, "" when the JSON says it all: nothing found (and whether that
// may be because recent lines are not indexed yet), weak matches only,
// fewer exchanges of a time span than it holds, or lines not searchable
// yet.
func SearchText(query string, r *engine.SearchResponse) string {
	var b strings.Builder
	switch {
	case len(r.Results) == 0 && r.Pending != nil && (r.Pending.Bytes > 0 || r.Pending.NotInFullText > 0):
		fmt.Fprintf(&b, "Nothing found yet for %q, but recent lines are still being indexed (%s). Search again in a moment: do not conclude that it was not discussed.", query, r.Pending.Note)
	case len(r.Results) == 0 && r.EmptyIndex:
		fmt.Fprintf(&b, "Nothing found: this workspace's memory holds no exchange yet (none recorded, or every session forgotten), so nothing can match %q. Do not assume it was discussed.", query)
	case len(r.Results) == 0 && r.EmptyWindow != nil:
		fmt.Fprintf(&b, "Nothing found: the time window given (since/until: %s) holds no exchange at all in this workspace; widen it to search.", r.EmptyWindow)
	case len(r.Results) == 0 && r.NoMatchInScope != nil:
		m := r.NoMatchInScope
		if m.Empty {
			fmt.Fprintf(&b, "Nothing found: the filters given (%s) admit no exchange at all. ", m)
		} else {
			fmt.Fprintf(&b, "Nothing found within the filters given (%s): none of those exchanges matches %q. ", m, query)
		}
		if m.Outside == 0 {
			fmt.Fprintf(&b, "No exchange outside them matches %q either, by its words or its meaning: the history may not hold it; do not assume it was discussed.", query)
			break
		}
		more := ""
		if m.OutsideMore {
			more = " or more"
		}
		fmt.Fprintf(&b, "Without these filters the same search finds %d%s matching exchanges: call again without them, or with wider ones, to see them.", m.Outside, more)
	case len(r.Results) == 0 && r.TimeOnly && r.TimeSpan != nil:
		fmt.Fprintf(&b, "No exchange in this workspace is dated in %q, from %s to %s (UTC).", r.TimeSpan.Phrase, Time(r.TimeSpan.From), Time(r.TimeSpan.To))
	case len(r.Results) == 0 && r.VectorsMissing != "":
		// Its words were searched, its meaning was not.
		fmt.Fprintf(&b, "Nothing found by the words of %q; its meaning could not be searched (%s). "+
			"The history may hold it in other words: search again later, or with other words, before concluding that it was not discussed.", query, r.VectorsMissing)
		return b.String()
	case len(r.Results) == 0:
		fmt.Fprintf(&b, "Nothing found: no past exchange in this workspace matches %q, by its words or its meaning. "+
			"The history may not hold it: do not assume it was discussed.", query)
	case r.TimeOnly && r.TimeSpan != nil && r.SpanExchanges > int64(len(r.Results)):
		fmt.Fprintf(&b, "These are the newest %d of the %d exchanges dated in %q, from %s to %s (UTC). ",
			len(r.Results), r.SpanExchanges, r.TimeSpan.Phrase, Time(r.TimeSpan.From), Time(r.TimeSpan.To))
		if r.SpanExchanges <= engine.MaxLimit {
			fmt.Fprintf(&b, "Call again with limit %d to see all of them.", r.SpanExchanges)
		} else {
			fmt.Fprintf(&b, "Call again with limit %d to see more, or narrow the span with since and until.", engine.MaxLimit)
		}
	case r.Weak:
		fmt.Fprintf(&b, "Weak matches only: no past exchange matches %q with a score of %.2f or more. The closest ones follow, "+
			"with their scores; they are probably not about it: do not take them for the answer, and do not assume it was discussed.", query, r.MinScore)
	case r.Pending != nil:
		fmt.Fprintf(&b, "Note: %s.", r.Pending.Note)
	}
	if b.Len() > 0 && r.VectorsMissing != "" {
		b.WriteString(" Note: " + r.VectorsMissing + "; a search by meaning may find more later.")
	}
	return b.String()
}

// Time formats t for an MCP answer: UTC, to the second.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

type Hit struct {
	ID        string   `json:"id"`
	SessionID string   `json:"session_id,omitempty"`
	Timestamp string   `json:"timestamp"`
	User      string   `json:"user,omitempty"`
	AI        string   `json:"ai,omitempty"`
	Files     []string `json:"files,omitempty"`
	Score     float64  `json:"score"`
	// Weak: under the floor, one of the closest matches only.
	Weak bool `json:"weak,omitempty"`
	// SupersededBy: a later exchange asked the same question and
	// answered it differently; Supersedes: the earlier ones this one
	// answers anew.
	SupersededBy *Ref   `json:"superseded_by,omitempty"`
	Supersedes   []Ref  `json:"supersedes,omitempty"`
	File         string `json:"file"`
	Line         int64  `json:"line"`
	// Context: the exchanges of its session around it, when asked
	// (offset -1 just before, 1 just after); context, not matches.
	Context []ContextHit `json:"context,omitempty"`
}

// ContextHit is a neighbour of a hit in its session.
type ContextHit struct {
	Offset    int      `json:"offset"`
	ID        string   `json:"id"`
	Timestamp string   `json:"timestamp"`
	User      string   `json:"user,omitempty"`
	AI        string   `json:"ai,omitempty"`
	Files     []string `json:"files,omitempty"`
	File      string   `json:"file"`
	Line      int64    `json:"line"`
}

type Ref struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id,omitempty"`
	Timestamp string `json:"timestamp"`
}

type Span struct {
	Phrase string `json:"phrase"`
	From   string `json:"from"`
	To     string `json:"to"`
}

type SearchOut struct {
	Query    string `json:"query"`
	Results  []Hit  `json:"results"`
	TimeSpan *Span  `json:"time_span,omitempty"`
	// TimeOnly: the query named only a time; the results are that span's
	// exchanges, newest first.
	TimeOnly bool `json:"time_only,omitempty"`
	// SpanExchanges: for a TimeOnly query, how many exchanges its span
	// holds; the results are the newest of them.
	SpanExchanges int64 `json:"span_exchanges,omitempty"`
	// Weak: no result reached the floor; these are the closest matches.
	Weak bool `json:"weak,omitempty"`
	// Pending: what was written just before the search and is not
	// searchable yet.
	Pending string `json:"pending,omitempty"`
	// VectorsMissing: why the ranking was lexical only (vectors loading
	// or being built), absent when vectors took part.
	VectorsMissing string `json:"vectors_missing,omitempty"`
}

// mcpSearch is a search answer for MCP.
func Search(r *engine.SearchResponse) *SearchOut {
	out := &SearchOut{Query: r.Query, Results: []Hit{}, VectorsMissing: r.VectorsMissing, TimeOnly: r.TimeOnly, SpanExchanges: r.SpanExchanges, Weak: r.Weak}
	if r.Pending != nil {
		out.Pending = r.Pending.Note
	}
	ref := func(x engine.SearchRef) Ref {
		return Ref{ID: x.ID, SessionID: x.SessionID, Timestamp: Time(x.Timestamp)}
	}
	for _, h := range r.Results {
		hit := Hit{ID: h.ID, SessionID: h.SessionID, Timestamp: Time(h.Timestamp), User: h.User, AI: h.AI, Files: h.Files,
			Score: math.Round(h.Score*100) / 100, Weak: h.Weak, File: h.File, Line: h.Line}
		if h.SupersededBy != nil {
			sb := ref(*h.SupersededBy)
			hit.SupersededBy = &sb
		}
		for _, x := range h.Supersedes {
			hit.Supersedes = append(hit.Supersedes, ref(x))
		}
		for _, x := range h.Context {
			hit.Context = append(hit.Context, ContextHit{Offset: x.Offset, ID: x.ID, Timestamp: Time(x.Timestamp), User: x.User, AI: x.AI,
				Files: x.Files, File: x.File, Line: x.Line})
		}
		out.Results = append(out.Results, hit)
	}
	if s := r.TimeSpan; s != nil {
		out.TimeSpan = &Span{Phrase: s.Phrase, From: Time(s.From), To: Time(s.To)}
	}
	return out
}

type ExchangeRef struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Timestamp string `json:"timestamp"`
	Truncated bool   `json:"truncated,omitempty"`
}

// ResumeOut is a resume pack without its text (the text is the tool's
// content) and without the exchanges' texts (they are in it).
type ResumeOut struct {
	SessionID string        `json:"session_id"`
	Chain     []string      `json:"chain"`
	Tokens    int           `json:"tokens"`
	Budget    int           `json:"budget"`
	Exchanges []ExchangeRef `json:"exchanges"`
	Omitted   int           `json:"omitted"`
	InContext int           `json:"in_context"`
	Files     []string      `json:"files,omitempty"`
	// Pending: what was written just before the call and is not in the
	// pack yet (not indexed yet).
	Pending string `json:"pending,omitempty"`
}

func Resume(p *engine.ResumePack) *ResumeOut {
	out := &ResumeOut{SessionID: p.SessionID, Chain: p.Chain, Tokens: p.Tokens, Budget: p.Budget,
		Exchanges: []ExchangeRef{}, Omitted: p.Omitted, InContext: p.InContext, Files: p.Files}
	if p.Pending != nil {
		out.Pending = p.Pending.Note
	}
	if out.Chain == nil {
		out.Chain = []string{}
	}
	for _, x := range p.Exchanges {
		out.Exchanges = append(out.Exchanges, ExchangeRef{ID: x.ID, SessionID: x.SessionID, Timestamp: Time(x.Timestamp), Truncated: x.Truncated})
	}
	return out
}

type Session struct {
	ID        string   `json:"id"`
	First     string   `json:"first"`
	Last      string   `json:"last"`
	Exchanges int64    `json:"exchanges"`
	Resets    int64    `json:"resets,omitempty"`
	Resumes   []string `json:"resumes,omitempty"`
	ResumedBy []string `json:"resumed_by,omitempty"`
	// Teammate: the role@machine it was pulled from (team memory).
	Teammate string `json:"teammate,omitempty"`
}

type SessionsOut struct {
	Sessions []Session `json:"sessions"`
}

func Sessions(r *engine.SessionsResponse) *SessionsOut {
	out := &SessionsOut{Sessions: []Session{}}
	for _, s := range r.Sessions {
		out.Sessions = append(out.Sessions, Session{ID: s.ID, First: Time(s.First), Last: Time(s.Last),
			Exchanges: s.Exchanges, Resets: s.Resets, Resumes: s.Resumes, ResumedBy: s.ResumedBy, Teammate: s.Teammate})
	}
	return out
}

// phrasing names what the engine's errors refer to as the tools do: the
// time bounds and latest by their arguments, the sessions' list by its
// tool; the other fields keep their words ("limit 0: want 1 to 200").
var phrasing = engine.Phrasing{
	Field: func(f string) string {
		switch f {
		case "since", "until", "latest", "as_of":
			return "argument " + f
		}
		return engine.Neutral.Name(f)
	},
	Sessions: "list_sessions",
}

// Error says err for a tool call: the engine's structured errors
// (engine.Error) phrased for MCP, others as they are.
func Error(err error) error {
	if err == nil || engine.AsError(err) == nil {
		return err
	}
	return errors.New(engine.Phrase(err, phrasing))
}
