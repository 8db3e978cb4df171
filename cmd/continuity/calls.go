package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
)

// The queries continuity answers are "calls": a name, a JSON request and a
// JSON response. The daemon serves them on its socket (it holds the vector
// collection in memory); without a daemon the same handlers run in-process
// on a read-only index. Both ways go through handlers below, so the CLI, the
// MCP server and the daemon give the same answers.

// resumeRequest asks for a resume pack (see resume.Options).
type resumeRequest struct {
	Session        string `json:"session,omitempty"`
	Latest         bool   `json:"latest,omitempty"`
	Query          string `json:"query,omitempty"`
	Budget         int    `json:"budget,omitempty"`
	IncludeCurrent bool   `json:"include_current,omitempty"`
	MaxDepth       int    `json:"max_depth,omitempty"`
	Tokenizer      string `json:"tokenizer,omitempty"`
}

// searchRequest asks for a search (see search.Query). Times are RFC 3339.
type searchRequest struct {
	Query   string `json:"query"`
	Session string `json:"session,omitempty"`
	Chain   string `json:"chain,omitempty"`
	Since   string `json:"since,omitempty"`
	Until   string `json:"until,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Mode    string `json:"mode,omitempty"` // hybrid (default), bm25, vector
	// AsOf is when the query is asked, for its relative times ("two
	// weeks ago"); now when "".
	AsOf string `json:"as_of,omitempty"`
	// MinScore is the floor of the results' scores, 0 to 1; absent: the
	// default (search.DefaultMinScore; none in vector mode).
	MinScore *float64 `json:"min_score,omitempty"`
}

// searchResponse is the answer of a search.
type searchResponse struct {
	Query   string          `json:"query"`
	Results []search.Result `json:"results"`
	// TimeSpan is the span the query named ("two weeks ago"), whose
	// exchanges ranked higher; absent when it named none.
	TimeSpan *timeSpan `json:"time_span,omitempty"`
	// MinScore is the floor the results were held to.
	MinScore float64 `json:"min_score"`
	// VectorsMissing says why vectors took no part in a hybrid or vector
	// query (the space still loading, being built, no embedder); absent
	// when they did, and for --mode bm25.
	VectorsMissing string `json:"vectors_missing,omitempty"`
}

// timeSpan is a search.TimeRef in JSON.
type timeSpan struct {
	Phrase string    `json:"phrase"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
}

// sessionsResponse lists the sessions.
type sessionsResponse struct {
	Sessions []sessionRow `json:"sessions"`
}

// handler answers one call on an engine.
type handler func(ctx context.Context, eng *engine, req json.RawMessage) (any, error)

// handlers are every call, by name.
var handlers = map[string]handler{
	"search":   handleSearch,
	"resume":   handleResume,
	"sessions": handleSessions,
}

func handleSearch(ctx context.Context, eng *engine, raw json.RawMessage) (any, error) {
	var req searchRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, server.BadRequest(fmt.Errorf("search request: %w", err))
	}
	q := search.Query{Text: req.Query, Session: req.Session, Chain: req.Chain, Limit: req.Limit}
	var err error
	if q.Since, err = parseTime("since", req.Since); err != nil {
		return nil, server.BadRequest(err)
	}
	if q.Until, err = parseTime("until", req.Until); err != nil {
		return nil, server.BadRequest(err)
	}
	if q.Now, err = parseTime("as-of", req.AsOf); err != nil {
		return nil, server.BadRequest(err)
	}
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	if req.Mode != "" {
		if q.Mode, err = search.ParseMode(req.Mode); err != nil {
			return nil, server.BadRequest(err)
		}
	}
	if req.Limit < 0 || req.Limit > search.MaxLimit {
		return nil, server.BadRequest(fmt.Errorf("limit %d: want 1 to %d", req.Limit, search.MaxLimit))
	}
	if m := req.MinScore; m != nil {
		if math.IsNaN(*m) || *m < 0 || *m > 1 {
			return nil, server.BadRequest(fmt.Errorf("min score %v: want 0 to 1 (scores are relevance estimates in [0, 1])", *m))
		}
		q.MinScore = m
	}
	floor := eng.searcher.Floor(q)
	// An unknown session is an error, as for resume and export: an empty
	// result would read as "nothing relevant" when the id is mistyped.
	for _, id := range []string{req.Session, req.Chain} {
		if id == "" {
			continue
		}
		ok, err := eng.db.SessionExists(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, server.BadRequest(unknownSession(id))
		}
	}
	res, err := eng.searcher.Search(ctx, q)
	if errors.Is(err, search.ErrEmptyQuery) {
		return nil, server.BadRequest(errors.New("empty query: give words to search for"))
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = []search.Result{}
	}
	resp := searchResponse{Query: req.Query, Results: res, MinScore: floor}
	if q.Mode != search.ModeLexical {
		resp.VectorsMissing = eng.searcher.VectorsMissing()
	}
	if ref, ok := eng.searcher.TimeSpan(q); ok {
		resp.TimeSpan = &timeSpan{Phrase: ref.Phrase, From: ref.From, To: ref.To}
	}
	return resp, nil
}

// parseTime reads an RFC 3339 time or a date (YYYY-MM-DD, UTC); "" is the
// zero time (no bound).
func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time (2026-11-22T10:00:00Z) or a date (2026-11-22)", name, s)
}

func handleResume(ctx context.Context, eng *engine, raw json.RawMessage) (any, error) {
	var req resumeRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, server.BadRequest(fmt.Errorf("resume request: %w", err))
	}
	pack, err := resume.Build(ctx, eng.resumeSource(), resume.Options{
		Session: req.Session, Latest: req.Latest, Query: req.Query, Budget: req.Budget,
		IncludeCurrent: req.IncludeCurrent, MaxDepth: req.MaxDepth, Encoding: req.Tokenizer,
	})
	switch {
	case errors.Is(err, resume.ErrUnknownSession):
		return nil, server.BadRequest(unknownSession(req.Session))
	case errors.Is(err, resume.ErrNoSessions):
		return nil, server.BadRequest(err)
	case err != nil:
		return nil, err
	}
	return pack, nil
}

// unknownSession is the error for a session the index does not know, the
// same for every command (exit code 2 on the command line).
func unknownSession(id string) error {
	return fmt.Errorf("unknown session %q (see 'continuity sessions')", id)
}

// latestIncludesCurrent is the one meaning of resume's include-current,
// for the command line and MCP alike: as asked when asked; else true with
// latest (the caller starts a new session: none of the latest session's
// exchanges are in its window), false with a session id (the caller's own
// session, whose exchanges since its latest reset are).
func latestIncludesCurrent(latest bool, asked *bool) bool {
	if asked != nil {
		return *asked
	}
	return latest
}

func handleSessions(ctx context.Context, eng *engine, _ json.RawMessage) (any, error) {
	rows, err := listSessions(ctx, eng.db)
	if err != nil {
		return nil, err
	}
	return sessionsResponse{Sessions: rows}, nil
}

// engine is what answers calls: the index and the searcher, whose vector
// space lives in memory (kept up to date by the daemon's embed worker, or
// loaded once for an in-process answer).
type engine struct {
	db       *index.DB
	searcher *search.Searcher
	// resumeCache keeps what resume needs between calls (chain links,
	// timelines and layouts, texts, token counts), checked against the
	// index before each pack; nil reads everything each time. The daemon
	// sets it; a one-off command has nothing to keep.
	resumeCache *resume.Cache
}

// newEngine builds the engine over db. vectors gives the current vector
// space (nil: BM25 only); lex, in the daemon, the bm25 engine that answers
// BM25 queries of plain words when current (nil: FTS5 always).
func newEngine(db *index.DB, emb embed.Embedder, vectors func() *vectors.Space, lex *search.Lexicon, log *slog.Logger) (*engine, error) {
	s, err := search.New(search.Config{DB: db, Embedder: emb, Vectors: vectors, Lexicon: lex, Logger: log})
	if err != nil {
		return nil, err
	}
	return &engine{db: db, searcher: s}, nil
}

func (eng *engine) resumeSource() *resume.IndexSource {
	return &resume.IndexSource{DB: eng.db, Ranker: resume.SearchRanker(eng.searcher), Cache: eng.resumeCache}
}

// dispatch runs a call in-process: the same JSON round trip as through the
// socket, so both ways answer alike.
func (eng *engine) dispatch(ctx context.Context, name string, req, resp any) error {
	h := handlers[name]
	if h == nil {
		return fmt.Errorf("no call named %q", name)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := h(ctx, eng, raw)
	if err != nil {
		var se *server.Error
		if errors.As(err, &se) && se.Code == 2 {
			return &exitError{code: 2, err: err}
		}
		return err
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, resp)
}

// register makes the daemon's server answer every call on eng.
func (eng *engine) register(srv *server.Server) {
	for name, h := range handlers {
		srv.Handle(name, func(ctx context.Context, req json.RawMessage) (any, error) { return h(ctx, eng, req) })
	}
}

// query answers a call through the workspace's daemon when one runs, else
// in-process on the index opened read-only, with the embedder the
// environment configures.
func query(ctx context.Context, p paths, name string, req, resp any) error {
	var ef embedFlags
	ef.cfg, ef.err = embed.ConfigFromEnv()
	return queryWith(ctx, p, ef, name, req, resp)
}

// queryWith is query with the embedder given by flags.
func queryWith(ctx context.Context, p paths, ef embedFlags, name string, req, resp any) error {
	c := server.NewClient(server.SocketPath(p.cache))
	// A stopped or stuck daemon still accepts connections (the kernel
	// queues them) but never answers: ping it with a short deadline first
	// and answer locally if it does not.
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	var pong pingReply
	perr := c.Call(pctx, "ping", struct{}{}, &pong)
	cancel()
	err := perr
	if perr == nil {
		err = c.Call(ctx, name, req, resp)
	} else if !errors.Is(perr, server.ErrNoDaemon) {
		fmt.Fprintf(os.Stderr, "continuity: the daemon does not answer (%v); answering from the index directly\n", perr)
		err = server.ErrNoDaemon
	}
	var se *server.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &exitError{code: max(se.Code, 1), err: se}
	case !errors.Is(err, server.ErrNoDaemon):
		return err
	}
	db, err := openReader(p)
	if err != nil {
		return err
	}
	defer db.Close()
	eng, err := localEngine(ctx, db, ef)
	if err != nil {
		return err
	}
	return eng.dispatch(ctx, name, req, resp)
}

// localEngine answers in-process: the vectors already stored for the
// configured embedder are loaded (nothing is embedded; a remote embedder
// is only asked to embed the query, and BM25 answers alone if it cannot).
func localEngine(ctx context.Context, db *index.DB, ef embedFlags) (*engine, error) {
	emb, err := ef.embedder()
	if err != nil {
		return nil, err
	}
	var vecs *vectors.Space
	if id, ok := knownIdentity(emb); ok {
		if vecs, err = vectors.Load(ctx, db, id); err != nil {
			return nil, err
		}
	}
	return newEngine(db, emb, func() *vectors.Space { return vecs }, nil, nil)
}

// knownIdentity is the vector space of emb when it is known without asking
// a server: always for builtin, for remote embedders when the dimension is
// configured.
func knownIdentity(emb embed.Embedder) (string, bool) {
	if emb.Dimension() == 0 {
		return "", false
	}
	return vectors.SpaceIdentity(emb), true
}

// listSessions lists the sessions with their resume links, newest link
// first.
func listSessions(ctx context.Context, db *index.DB) ([]sessionRow, error) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	links, err := db.AllLinks(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]sessionRow, 0, len(ss))
	byID := map[string]int{}
	for _, s := range ss {
		byID[s.ID] = len(rows)
		rows = append(rows, sessionRow{ID: s.ID, First: s.First, Last: s.Last, Exchanges: s.Exchanges,
			Resets: s.Resets, Events: s.Events, Resumes: []string{}, ResumedBy: []string{}})
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
