package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
)

// The queries continuity answers are calls: a name, a JSON request and a
// JSON response, the daemon's wire format. The daemon serves them on its
// socket (it holds the vector space in memory); without a daemon the
// same code runs in-process on a read-only index (Client), called
// directly, without the JSON, so every interface gives the same answers.

// Search defaults and bounds, for the interfaces' flags and arguments.
const (
	DefaultLimit    = search.DefaultLimit
	MaxLimit        = search.MaxLimit
	DefaultMinScore = search.DefaultMinScore
	MaxContext      = search.MaxContext
)

// ResumeRequest asks for a resume pack (see resume.Options).
type ResumeRequest struct {
	Session        string `json:"session,omitempty"`
	Latest         bool   `json:"latest,omitempty"`
	Query          string `json:"query,omitempty"`
	Budget         int    `json:"budget,omitempty"`
	IncludeCurrent bool   `json:"include_current,omitempty"`
	MaxDepth       int    `json:"max_depth,omitempty"`
	Tokenizer      string `json:"tokenizer,omitempty"`
	// Explain adds the pack's "explain": why each exchange is in, cut
	// or left out (resume.Explanation).
	Explain bool `json:"explain,omitempty"`
}

// SearchRequest asks for a search (see search.Query). Times are RFC 3339
// or dates.
type SearchRequest struct {
	Query   string `json:"query"`
	Session string `json:"session,omitempty"`
	Chain   string `json:"chain,omitempty"`
	Since   string `json:"since,omitempty"`
	Until   string `json:"until,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Mode    string `json:"mode,omitempty"` // hybrid (default), bm25, vector
	// AsOf is when the query is asked, for its relative times ("two
	// weeks ago"); now when "". A date or a time without an offset is
	// read in the request's time zone.
	AsOf string `json:"as_of,omitempty"`
	// TimeZone (an IANA name) and UTCOffset (seconds east of UTC, used
	// when the name is unknown) are the asker's: calendar words in the
	// query ("yesterday", "last Wednesday") are read in them. Absent:
	// the answering process's zone. Client.Search fills them in.
	TimeZone  string `json:"time_zone,omitempty"`
	UTCOffset *int   `json:"utc_offset,omitempty"`
	// MinScore is the floor of the results' scores, 0 to 1; absent: the
	// default (search.DefaultMinScore; none in vector mode).
	MinScore *float64 `json:"min_score,omitempty"`
	// Context adds to each result up to this many exchanges of its
	// session before and after it (0 to search.MaxContext), as context.
	Context int `json:"context,omitempty"`
}

// SearchResponse is the answer of a search.
type SearchResponse struct {
	Query   string         `json:"query"`
	Results []SearchResult `json:"results"`
	// TimeSpan is the span the query named ("two weeks ago"), whose
	// exchanges ranked higher; absent when it named none.
	TimeSpan *TimeSpan `json:"time_span,omitempty"`
	// MinScore is the floor the results were held to.
	MinScore float64 `json:"min_score"`
	// VectorsMissing says why vectors took no part in a hybrid or vector
	// query (the space still loading, being built, no embedder, the
	// embedder failing for this hybrid query), read with the space the
	// search used; absent when they did, and for --mode bm25.
	VectorsMissing string `json:"vectors_missing,omitempty"`
	// TimeOnly: the query named nothing but a time (TimeSpan): the
	// results are that span's exchanges, newest first, each scoring 1.
	TimeOnly bool `json:"time_only,omitempty"`
	// SpanExchanges, for a TimeOnly query, is how many exchanges the span
	// holds (under the request's filters): the results are the newest of
	// them, at most the limit.
	SpanExchanges int64 `json:"span_exchanges,omitempty"`
	// Weak: no result reached the floor's gate; the results are the
	// closest matches (search.WeakMatches at most), each marked weak.
	Weak bool `json:"weak,omitempty"`
	// Pending says what was written to the logs before the search that it
	// could not see (not indexed yet, or without a vector yet); absent
	// when it saw everything (fresh.go).
	Pending *Pending `json:"pending,omitempty"`
	// EmptyWindow is there when nothing was found and the window of
	// since and until holds no exchange at all (whatever the words):
	// the window, not the query, is what to change.
	EmptyWindow *Window `json:"empty_window,omitempty"`
	// NoMatchInScope is there when nothing was found within the
	// request's filters (a window of since and until that holds
	// exchanges, a session, a chain): it says what the same search finds
	// without them, so that "not in this scope" is not read as "never
	// discussed".
	NoMatchInScope *ScopeMiss `json:"no_match_in_scope,omitempty"`
	// EmptyIndex is true when nothing was found because the index holds
	// no exchange at all (no log line indexed yet, or every session
	// forgotten): VectorsMissing is then empty, there is nothing to
	// embed.
	EmptyIndex bool `json:"empty_index,omitempty"`
	// Note says how the search was answered when it is not the usual
	// way (an embedder asked for that the daemon does not run).
	Note string `json:"note,omitempty"`
}

// Window is a search's time window as read: from Since (inclusive) to
// Until (exclusive), UTC; zero when unbounded on that side.
type Window struct {
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// String says the window in words: "from 2026-11-28 00:00 to 2026-11-29
// 00:00 UTC".
func (w Window) String() string {
	const layout = "2006-01-02 15:04"
	switch {
	case w.Since.IsZero():
		return "before " + w.Until.UTC().Format(layout) + " UTC"
	case w.Until.IsZero():
		return "from " + w.Since.UTC().Format(layout) + " UTC on"
	}
	return "from " + w.Since.UTC().Format(layout) + " to " + w.Until.UTC().Format(layout) + " UTC"
}

// ScopeMiss is a search's scope without a match: its filters (Window,
// zero when the time was not bounded; Session; Chain), whether they admit
// no exchange at all (Empty: a session outside the window, one with
// context resets only), and how many exchanges the same search finds
// without them (Outside, at most the search's limit; OutsideMore when it
// stopped at the limit). Weak matches are not counted.
type ScopeMiss struct {
	Window
	Session     string `json:"session,omitempty"`
	Chain       string `json:"chain,omitempty"`
	Empty       bool   `json:"empty,omitempty"`
	Outside     int    `json:"outside"`
	OutsideMore bool   `json:"outside_more,omitempty"`
}

// String says the scope in words: "session s1 and the time window from
// 2026-11-25 00:00 UTC on".
func (m ScopeMiss) String() string {
	var parts []string
	if m.Session != "" {
		parts = append(parts, "session "+m.Session)
	}
	if m.Chain != "" {
		parts = append(parts, "the chain of session "+m.Chain)
	}
	if !m.Since.IsZero() || !m.Until.IsZero() {
		parts = append(parts, "the time window "+m.Window.String())
	}
	return strings.Join(parts, " and ")
}

// TimeSpan is a search.TimeRef in JSON.
type TimeSpan struct {
	Phrase string    `json:"phrase"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
}

// SessionsResponse lists the sessions.
type SessionsResponse struct {
	Sessions []SessionRow `json:"sessions"`
}

// SessionRow is one session in `sessions`.
type SessionRow struct {
	ID        string    `json:"id"`
	First     time.Time `json:"first"`
	Last      time.Time `json:"last"`
	Exchanges int64     `json:"exchanges"`
	Resets    int64     `json:"resets"`
	Events    int64     `json:"events"`
	// Resumes are the sessions this one resumes (its session_resume links
	// back), newest link first; ResumedBy the sessions that resume it.
	Resumes   []string `json:"resumes"`
	ResumedBy []string `json:"resumed_by"`
	// Agent is the agent that wrote it, when its events say (an imported
	// session's metadata "source", a producer's "agent"); "" otherwise.
	Agent string `json:"agent,omitempty"`
	// Teammate is the role@machine of the teammate it was pulled from
	// (team memory, docs/share.md); "" for the workspace's own sessions.
	Teammate string `json:"teammate,omitempty"`
}

// answerer answers the calls on one index: the daemon's (with its bm25
// engine, live vector space and resume cache) or a one-off reader's.
type answerer struct {
	db       *index.DB
	searcher *search.Searcher
	// resumeCache keeps what resume needs between calls (chain links,
	// timelines and layouts, texts, token counts), checked against the
	// index before each pack; nil reads everything each time.
	resumeCache *resume.Cache
	// pending, before a search, waits for (the daemon) or reports (a
	// reader) what was written to the logs and is not searchable yet
	// (fresh.go); nil: nothing.
	pending func(ctx context.Context, mode search.Mode, what string) *Pending
}

// newAnswerer answers over db. space gives the current vector space (nil:
// BM25 only); lex, in the daemon, the bm25 engine that answers BM25
// queries of plain words when current (nil: FTS5 always).
func newAnswerer(db *index.DB, emb embed.Embedder, space func() *vectors.Space, lex search.LexicalEngine, opts search.Options, log *slog.Logger) (*answerer, error) {
	s, err := search.New(search.Config{DB: db, Embedder: emb, Vectors: space, Lexicon: lex, Options: opts, Logger: log})
	if err != nil {
		return nil, err
	}
	return &answerer{db: db, searcher: s}, nil
}

// handler answers one call on q.
type handler func(ctx context.Context, q *answerer, req json.RawMessage) (any, error)

// callsByName are the calls any index answers, each a handler by its
// call's name (forget, ping and the views' status are the daemon's:
// Engine.register).
var callsByName = map[string]handler{
	"search": func(ctx context.Context, q *answerer, raw json.RawMessage) (any, error) {
		var req SearchRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, badRequest(fmt.Sprintf("search request: %v", err))
		}
		return q.search(ctx, req)
	},
	"resume": func(ctx context.Context, q *answerer, raw json.RawMessage) (any, error) {
		var req ResumeRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, badRequest(fmt.Sprintf("resume request: %v", err))
		}
		return q.resume(ctx, req)
	},
	"sessions": func(ctx context.Context, q *answerer, _ json.RawMessage) (any, error) {
		return q.sessions(ctx)
	},
}

// register makes srv answer every call of callsByName on q.
func (q *answerer) register(srv *server.Server) {
	for name, h := range callsByName {
		srv.Handle(name, func(ctx context.Context, req json.RawMessage) (any, error) {
			out, err := h(ctx, q, req)
			return out, toWire(err)
		})
	}
}

// search answers a SearchRequest.
func (q *answerer) search(ctx context.Context, req SearchRequest) (SearchResponse, error) {
	sq, err := searchQuery(req)
	if err != nil {
		return SearchResponse{}, err
	}
	// The time the query names, read once for the search and the
	// answer's span.
	sq = search.ReadTime(sq)
	floor := q.searcher.Floor(sq)
	// An unknown session is an error, as for resume and export: an empty
	// result would read as "nothing relevant" when the id is mistyped.
	for _, id := range []string{req.Session, req.Chain} {
		if id == "" {
			continue
		}
		ok, err := q.db.SessionExists(ctx, id)
		if err != nil {
			return SearchResponse{}, err
		}
		if !ok {
			return SearchResponse{}, unknownSession(ctx, q.db, id)
		}
	}
	var pending *Pending
	if q.pending != nil {
		pending = q.pending(ctx, sq.Mode, "search")
	}
	ans, err := q.searcher.Answer(ctx, sq)
	if errors.Is(err, search.ErrEmptyQuery) {
		return SearchResponse{}, &Error{Code: CodeEmptyQuery, Field: "query"}
	}
	if err != nil {
		return SearchResponse{}, err
	}
	res := ans.Results
	// Why vectors took no part, read with the space the search used.
	resp := SearchResponse{Query: req.Query, Results: searchResults(res), MinScore: floor, Pending: pending, VectorsMissing: ans.VectorsMissing}
	if ref, ok := q.searcher.TimeOnly(sq); ok {
		resp.TimeSpan = &TimeSpan{Phrase: ref.Phrase, From: ref.From, To: ref.To}
		resp.TimeOnly = true
		if resp.SpanExchanges, _, err = q.searcher.SpanExchanges(ctx, sq); err != nil {
			return SearchResponse{}, err
		}
	} else if ref, ok := q.searcher.TimeSpan(sq); ok {
		resp.TimeSpan = &TimeSpan{Phrase: ref.Phrase, From: ref.From, To: ref.To}
	}
	resp.Weak = len(res) > 0 && res[0].Weak
	windowed := !sq.Since.IsZero() || !sq.Until.IsZero()
	switch {
	case len(res) > 0:
	case windowed || sq.Session != "" || sq.Chain != "":
		if windowed {
			window := sq
			window.Session, window.Chain = "", ""
			holds, err := q.searcher.ScopeHolds(ctx, window)
			if err != nil {
				return SearchResponse{}, err
			}
			if !holds {
				resp.EmptyWindow = &Window{Since: sq.Since, Until: sq.Until}
				break
			}
		}
		if !resp.TimeOnly {
			// Nothing within the filters matches: the same search
			// without them says whether the answer lies outside. A
			// second search, paid only when the first found nothing.
			miss, err := q.outsideScope(ctx, sq)
			if err != nil {
				return SearchResponse{}, err
			}
			resp.NoMatchInScope = &miss
		}
	default:
		has, err := q.db.HasExchange(ctx)
		if err != nil {
			return SearchResponse{}, err
		}
		if !has {
			resp.EmptyIndex = true
			resp.VectorsMissing = "" // not missing: nothing to embed
		}
	}
	return resp, nil
}

// outsideScope runs sq without its filters (time window, session,
// chain) and says what it finds.
func (q *answerer) outsideScope(ctx context.Context, sq search.Query) (ScopeMiss, error) {
	miss := ScopeMiss{Window: Window{Since: sq.Since, Until: sq.Until}, Session: sq.Session, Chain: sq.Chain}
	if sq.Session != "" || sq.Chain != "" {
		// A window alone was found to hold exchanges by the caller.
		holds, err := q.searcher.ScopeHolds(ctx, sq)
		if err != nil {
			return ScopeMiss{}, err
		}
		miss.Empty = !holds
	}
	outside := sq
	outside.Since, outside.Until, outside.Session, outside.Chain = time.Time{}, time.Time{}, "", ""
	other, err := q.searcher.Search(ctx, outside)
	if err != nil {
		return ScopeMiss{}, err
	}
	for _, r := range other {
		if !r.Weak {
			miss.Outside++
		}
	}
	limit := outside.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	miss.OutsideMore = miss.Outside > 0 && len(other) >= min(limit, search.MaxLimit)
	return miss, nil
}

// searchQuery reads and checks a SearchRequest; its errors are the
// caller's mistakes (*Error).
func searchQuery(req SearchRequest) (search.Query, error) {
	q := search.Query{Text: req.Query, Session: req.Session, Chain: req.Chain, Limit: req.Limit, Context: req.Context}
	if req.Context < 0 || req.Context > search.MaxContext {
		return q, badValue("context", "%d", req.Context, fmt.Sprintf("want 0 to %d exchanges on each side", search.MaxContext))
	}
	var err error
	loc := requestZone(req)
	if q.Now, err = parseAsOf(req.AsOf, loc); err != nil {
		return q, err
	}
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	q.Now = q.Now.In(loc)
	if q.Since, err = parseBound("since", req.Since, q.Now); err != nil {
		return q, err
	}
	if q.Until, err = parseBound("until", req.Until, q.Now); err != nil {
		return q, err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return q, &Error{Code: CodeEmptyWindow, Field: "since", Value: req.Since, Other: "until", OtherValue: req.Until}
	}
	if req.Mode != "" {
		if q.Mode, err = search.ParseMode(req.Mode); err != nil {
			// search's own words ("search: unknown mode ..."), as before.
			return q, badRequest(err.Error())
		}
	}
	if req.Limit < 0 || req.Limit > search.MaxLimit {
		return q, badValue("limit", "%d", req.Limit, fmt.Sprintf("want 1 to %d", search.MaxLimit))
	}
	if m := req.MinScore; m != nil {
		if math.IsNaN(*m) || *m < 0 || *m > 1 {
			return q, badValue("min_score", "%v", *m, "want 0 to 1 (scores are relevance estimates in [0, 1])")
		}
		q.MinScore = m
	}
	return q, nil
}

// parseAsOf reads --as-of: an RFC 3339 time, or a date or a time without
// an offset, read in loc; "" is the zero time (now).
func parseAsOf(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badValue("as_of", "%q", s, "want an RFC 3339 time (2026-11-22T10:00:00Z), a local time (2026-11-22T10:00) or a date (2026-11-22)")
}

// ParseTime reads an RFC 3339 time, a date (YYYY-MM-DD, UTC) or an age,
// that long before now (2d, 2w, 12h, as forget --older-than takes it: a
// user who keeps 30d types --since 7d); "" is the zero time (no bound).
// name is the request field, for the error (*Error).
func ParseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if d, err := ParseAge(s); err == nil {
		return time.Now().Add(-d).UTC(), nil
	}
	return time.Time{}, badValue(name, "%q", s, "want an RFC 3339 time (2026-11-22T10:00:00Z), a date (2026-11-22) or an age (7d, 2w, 12h: that long ago)")
}

// parseBound reads a search's since or until bound (name): what
// ParseTime and ParseUntil read, or a day or span in words, as a query
// names one ("yesterday", "last week", "3 days ago": search.ParseTimeRef,
// read against now, in now's location): since is its start, until its
// end (the span included, as for a date).
func parseBound(name, s string, now time.Time) (time.Time, error) {
	parse := ParseUntil
	if name == "since" {
		parse = func(s string) (time.Time, error) { return ParseTime(name, s) }
	}
	t, err := parse(s)
	if err == nil {
		return t, nil
	}
	words := strings.Join(strings.Fields(strings.ToLower(s)), " ")
	if ref, ok := search.ParseTimeRef(words, now); ok && ref.Phrase == words {
		if name == "since" {
			return ref.From.UTC(), nil
		}
		return ref.To.UTC(), nil
	}
	return time.Time{}, badValue(name, "%q", s, "want an RFC 3339 time (2026-11-22T10:00:00Z), a date (2026-11-22), an age (7d, 2w, 12h: that long ago) or a day or span in words (yesterday, last week, 3 days ago)")
}

// ParseUntil reads an until bound, exclusive: an RFC 3339 time as given;
// a date (YYYY-MM-DD, UTC) takes in that whole day (the bound is the
// next day's midnight), as the viewer and a reader of "--until
// 2026-11-28" expect; "" is the zero time (no bound).
func ParseUntil(s string) (time.Time, error) {
	t, err := ParseTime("until", s)
	if err != nil || len(s) != len("2006-01-02") {
		return t, err
	}
	return t.AddDate(0, 0, 1), nil
}

// resume answers a ResumeRequest. Like a search, it first waits (the
// daemon) for the lines just written to the logs, or says (a reader)
// that some are not indexed: "the latest session" must be the one just
// logged to (pack.Pending).
func (q *answerer) resume(ctx context.Context, req ResumeRequest) (ResumePack, error) {
	var pending *Pending
	if q.pending != nil {
		mode := search.ModeLexical // no query: no vector is read
		if req.Query != "" {
			mode = search.ModeHybrid
		}
		pending = q.pending(ctx, mode, "resume")
	}
	pack, err := resume.Build(ctx, q.resumeSource(), resume.Options{
		Session: req.Session, Latest: req.Latest, Query: req.Query, Budget: req.Budget,
		IncludeCurrent: req.IncludeCurrent, MaxDepth: req.MaxDepth, Encoding: req.Tokenizer,
		Explain: req.Explain,
	})
	var unknown *resume.UnknownSessionError
	switch {
	case errors.As(err, &unknown):
		return ResumePack{}, unknownSession(ctx, q.db, unknown.Session)
	case errors.Is(err, resume.ErrNoSessions):
		return ResumePack{}, &Error{Code: CodeNoSessions, Field: "latest"}
	case err != nil:
		return ResumePack{}, err
	}
	pack.Pending = pending
	return ResumePack{*pack}, nil
}

func (q *answerer) resumeSource() *resume.IndexSource {
	return &resume.IndexSource{DB: q.db, Ranker: resume.SearchRanker(q.searcher), Cache: q.resumeCache}
}

// UnknownSession is the error for a session the index does not know, the
// same for every command (exit code 2 on the command line).
func UnknownSession(id string) error {
	return &Error{Code: CodeUnknownSession, Field: "session", Value: fmt.Sprintf("%q", id)}
}

// unknownSession is UnknownSession, or, for a session forgotten
// ('continuity forget', retention, another machine's forget), says so:
// "unknown" read as a mistyped id to whoever had just forgotten it.
func unknownSession(ctx context.Context, db *index.DB, id string) error {
	if fs, err := db.Forgets(ctx); err == nil {
		if f, ok := fs[id]; ok {
			return &Error{Code: CodeForgottenSession, Field: "session", Value: fmt.Sprintf("%q", id), At: time.Unix(0, f.At).UTC()}
		}
	}
	return UnknownSession(id)
}

// sessions lists the sessions with their resume links, newest link first.
func (q *answerer) sessions(ctx context.Context) (SessionsResponse, error) {
	rows, err := sessionRows(ctx, q.db)
	return SessionsResponse{Sessions: rows}, err
}

// sessionRows are the sessions of db with their agents and resume links,
// newest link first.
func sessionRows(ctx context.Context, db *index.DB) ([]SessionRow, error) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	links, err := db.AllLinks(ctx)
	if err != nil {
		return nil, err
	}
	origins, err := db.SessionOrigins(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]SessionRow, 0, len(ss))
	byID := map[string]int{}
	for _, s := range ss {
		byID[s.ID] = len(rows)
		rows = append(rows, SessionRow{ID: s.ID, First: s.First, Last: s.Last, Exchanges: s.Exchanges,
			Resets: s.Resets, Events: s.Events, Resumes: []string{}, ResumedBy: []string{}, Agent: origins[s.ID].Agent,
			Teammate: origins[s.ID].Teammate})
	}
	// AllLinks is oldest first; list the newest link first.
	for i := len(links) - 1; i >= 0; i-- {
		l := links[i]
		if k, ok := byID[l.New]; ok {
			rows[k].Resumes = append(rows[k].Resumes, l.Previous)
		}
		if k, ok := byID[l.Previous]; ok {
			rows[k].ResumedBy = append(rows[k].ResumedBy, l.New)
		}
	}
	return rows, nil
}
