package ui

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// base is what every page's layout shows.
type base struct {
	Title     string
	Nav       string // the active tab
	Workspace string
	CSRF      string
}

func (s *Server) base(title, nav string) base {
	return base{Title: title, Nav: nav, Workspace: s.ws, CSRF: s.csrf}
}

// render writes the page name with data.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages[name].Execute(&buf, data); err != nil {
		s.log.Error("ui: render", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// errorView is the error page.
type errorView struct {
	base
	Message string
}

// fail shows err: a bad request (an unknown session, a bad filter) as
// 400 with its message, anything else as 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if isBadRequest(err) {
		code = http.StatusBadRequest
	} else if !errors.Is(err, context.Canceled) {
		s.log.Error("ui: request failed", "path", r.URL.Path, "err", err)
	}
	s.render(w, r, code, "error", errorView{base: s.base("Error", ""), Message: errorText(err)})
}

// sessions lists the sessions; on failure it has answered with the error
// page (ok false).
func (s *Server) sessions(w http.ResponseWriter, r *http.Request) (rows []engine.SessionRow, ok bool) {
	resp, err := s.b.Sessions(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return resp.Sessions, true
}

// ---- sessions ----

// sessionsPerPage is how many sessions a page of the list shows (a chain
// is never split across pages, so a page may show more).
const sessionsPerPage = 50

type sessionsView struct {
	base
	Agent, Since, Until, Q string
	Agents                 []string
	Chains                 []chainView
	Shown, Total           int
	Page, Pages            int
	Prev, Next             string
	SearchNote             string
}

// chainView is a group of sessions linked by session_resume, oldest first.
type chainView struct {
	Rows []sessionView
}

type sessionView struct {
	engine.SessionRow
	Hits   int    // search results of the text filter in it
	Opener string // the start of its first exchange, on one line
}

// openerRunes is how much of a session's first exchange the list shows.
const openerRunes = 160

// noAgent is the agent filter's value for sessions no agent is named for
// (lines written to the logs directly: the agent is unknown).
const noAgent = "(unknown)"

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	qv := r.URL.Query()
	v := sessionsView{base: s.base("Sessions", "sessions"), Agent: qv.Get("agent"), Since: qv.Get("since"), Until: qv.Get("until"), Q: strings.TrimSpace(qv.Get("q"))}
	all, ok := s.sessions(w, r)
	if !ok {
		return
	}
	since, until, err := timeRange(v.Since, v.Until)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hits := map[string]int{}
	if v.Q != "" {
		sr, err := s.b.Search(ctx, engine.SearchRequest{Query: v.Q, Limit: engine.MaxLimit, Mode: "bm25"})
		switch {
		case err == nil:
			for _, res := range sr.Results {
				hits[res.SessionID]++
			}
			v.SearchNote = "sessions whose id or agent holds the text, and those whose exchanges match it (full-text search, the best " + strconv.Itoa(engine.MaxLimit) + " exchanges)"
		case engine.IsBadRequest(err):
			v.SearchNote = "the text has no word to search for; matching session ids and agents only"
		default:
			s.fail(w, r, err)
			return
		}
	}
	agents := map[string]bool{}
	keep := map[string]bool{}
	for _, row := range all {
		agents[cmp.Or(row.Agent, noAgent)] = true
		if v.Agent != "" && cmp.Or(row.Agent, noAgent) != v.Agent {
			continue
		}
		if !since.IsZero() && row.Last.Before(since) || !until.IsZero() && row.First.After(until) {
			continue
		}
		if v.Q != "" && hits[row.ID] == 0 && !containsFold(row.ID, v.Q) && !containsFold(row.Agent, v.Q) {
			continue
		}
		keep[row.ID] = true
	}
	for a := range agents {
		v.Agents = append(v.Agents, a)
	}
	slices.Sort(v.Agents)
	chains := groupChains(all, keep, hits)
	v.Total = len(keep)
	v.Page = intParam(r, "page", 1, 1, 1<<30)
	// Pages hold whole chains, about sessionsPerPage sessions each.
	var pages [][]chainView
	n := 0
	for _, c := range chains {
		if len(pages) == 0 || n >= sessionsPerPage {
			pages = append(pages, nil)
			n = 0
		}
		pages[len(pages)-1] = append(pages[len(pages)-1], c)
		n += len(c.Rows)
	}
	v.Pages = max(1, len(pages))
	v.Page = min(v.Page, v.Pages)
	if len(pages) > 0 {
		v.Chains = pages[v.Page-1]
	}
	var ids []string
	for _, c := range v.Chains {
		v.Shown += len(c.Rows)
		for _, row := range c.Rows {
			ids = append(ids, row.ID)
		}
	}
	openers, err := s.b.SessionOpeners(ctx, ids[:min(len(ids), engine.MaxOpeners)], openerRunes)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, c := range v.Chains {
		for i := range c.Rows {
			c.Rows[i].Opener = strings.Join(strings.Fields(openers[c.Rows[i].ID]), " ")
		}
	}
	v.Prev, v.Next = pageLinks(r, v.Page, v.Pages)
	s.render(w, r, http.StatusOK, "sessions", v)
}

// groupChains groups the sessions kept into chains (sessions joined by
// resume links, in either direction), oldest first within a chain, the
// chain with the latest activity first.
func groupChains(all []engine.SessionRow, keep map[string]bool, hits map[string]int) []chainView {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			parent[x] = x
			return x
		}
		root := find(p)
		parent[x] = root
		return root
	}
	for _, row := range all {
		for _, prev := range row.Resumes {
			if keep[row.ID] && keep[prev] {
				parent[find(prev)] = find(row.ID)
			}
		}
	}
	groups := map[string]*chainView{}
	var order []*chainView
	for _, row := range all {
		if !keep[row.ID] {
			continue
		}
		root := find(row.ID)
		g := groups[root]
		if g == nil {
			g = &chainView{}
			groups[root] = g
			order = append(order, g)
		}
		g.Rows = append(g.Rows, sessionView{SessionRow: row, Hits: hits[row.ID]})
	}
	latest := func(c *chainView) time.Time {
		var t time.Time
		for _, r := range c.Rows {
			if r.Last.After(t) {
				t = r.Last
			}
		}
		return t
	}
	slices.SortStableFunc(order, func(a, b *chainView) int { return latest(b).Compare(latest(a)) })
	out := make([]chainView, len(order))
	for i, g := range order {
		slices.SortStableFunc(g.Rows, func(a, b sessionView) int {
			return cmp.Or(a.First.Compare(b.First), strings.Compare(a.ID, b.ID))
		})
		out[i] = *g
	}
	return out
}

func containsFold(s, sub string) bool {
	return sub != "" && strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// timeRange reads the since and until filters (dates or RFC 3339 times);
// a date as until means the end of that day.
func timeRange(since, until string) (from, to time.Time, err error) {
	if from, err = engine.ParseTime("since", since); err != nil {
		return from, to, badRequest(err)
	}
	if to, err = engine.ParseTime("until", until); err != nil {
		return from, to, badRequest(err)
	}
	if len(until) == len("2006-01-02") {
		to = to.Add(24*time.Hour - time.Nanosecond)
	}
	return from, to, nil
}

// pageLinks are the links to the previous and next pages ("" at the
// ends).
func pageLinks(r *http.Request, page, pages int) (prev, next string) {
	link := func(p int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		return r.URL.Path + "?" + q.Encode()
	}
	if page > 1 {
		prev = link(page - 1)
	}
	if page < pages {
		next = link(page + 1)
	}
	return prev, next
}

// ---- one session ----

// eventsPerPage is how many events a page of a session's timeline shows.
const eventsPerPage = 100

// chainDraw is how many sessions the chain drawing shows each way.
const chainDraw = 30

type sessionPageView struct {
	base
	S          engine.SessionRow
	Back, Fwd  [][]chainNode // columns of the chain: oldest first, newest last
	More       int           // sessions of the chain not drawn
	Items      []timelineItem
	Files      []engine.FileCount
	FilesTotal int
	Page       int
	Pages      int
	Prev, Next string
}

// chainNode is a session in the chain drawing.
type chainNode struct {
	ID, Agent string
	First     time.Time
	Exchanges int64
}

// timelineItem is one event of a session's timeline.
type timelineItem struct {
	Kind          string // exchange, context_reset, session_resume, other
	Ev            engine.Event
	User, AI      string // clipped
	Clipped       bool
	Previous, New string
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.URL.Query().Get("id")
	if id == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	all, ok := s.sessions(w, r)
	if !ok {
		return
	}
	page := intParam(r, "page", 1, 1, 1<<30)
	sp, err := s.b.SessionPage(ctx, id, (page-1)*eventsPerPage, eventsPerPage)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := sessionPageView{base: s.base("Session "+id, "sessions"), S: sp.Session, Files: sp.Files, FilesTotal: sp.FilesTotal, Page: page}
	v.Back, v.Fwd, v.More = chainColumns(all, id)
	v.Pages = max(1, int((sp.Session.Events+eventsPerPage-1)/eventsPerPage))
	v.Prev, v.Next = pageLinks(r, page, v.Pages)
	for _, ev := range sp.Events {
		v.Items = append(v.Items, newTimelineItem(ev))
	}
	s.render(w, r, http.StatusOK, "session", v)
}

func newTimelineItem(ev engine.Event) timelineItem {
	it := timelineItem{Kind: ev.Type, Ev: ev}
	switch ev.Type {
	case "exchange":
		var cu, ca bool
		it.User, cu = clip(ev.User, clipRunes)
		it.AI, ca = clip(ev.AI, clipRunes)
		it.Clipped = cu || ca
	case "context_reset":
	case "session_resume":
		it.Previous, it.New = ev.PreviousSession, ev.NewSession
	default:
		it.Kind = "other"
	}
	return it
}

// chainColumns lays out the chain around session id: the sessions it
// resumes, link by link back (Back, oldest column first), and those that
// resume it (Fwd, nearest first); each column a step of links. At most
// chainDraw sessions each way; More counts the rest.
func chainColumns(all []engine.SessionRow, id string) (back, fwd [][]chainNode, more int) {
	byID := map[string]engine.SessionRow{}
	for _, r := range all {
		byID[r.ID] = r
	}
	walk := func(next func(engine.SessionRow) []string) [][]chainNode {
		var cols [][]chainNode
		seen := map[string]bool{id: true}
		level := []string{id}
		drawn := 0
		for len(level) > 0 {
			var col []chainNode
			var nextLevel []string
			for _, s := range level {
				for _, n := range next(byID[s]) {
					if seen[n] {
						continue
					}
					seen[n] = true
					nextLevel = append(nextLevel, n)
					if drawn == chainDraw {
						more++
						continue
					}
					drawn++
					row := byID[n]
					col = append(col, chainNode{ID: n, Agent: row.Agent, First: row.First, Exchanges: row.Exchanges})
				}
			}
			if len(col) > 0 {
				cols = append(cols, col)
			}
			level = nextLevel
		}
		return cols
	}
	back = walk(func(r engine.SessionRow) []string { return r.Resumes })
	slices.Reverse(back)
	fwd = walk(func(r engine.SessionRow) []string { return r.ResumedBy })
	return back, fwd, more
}

// ---- one exchange ----

type exchangeView struct {
	base
	Ev       engine.Event
	Metadata string
}

func (s *Server) exchangePage(w http.ResponseWriter, r *http.Request) {
	ev, err := s.b.Event(r.Context(), r.URL.Query().Get("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := exchangeView{base: s.base("Exchange "+ev.EventID, "sessions"), Ev: ev}
	if len(ev.Metadata) > 0 {
		v.Metadata = string(ev.Metadata)
	}
	s.render(w, r, http.StatusOK, "exchange", v)
}

// ---- search ----

type searchView struct {
	base
	Q, Session, Chain, Since, Until, Mode string
	Limit                                 int
	Asked                                 bool
	Resp                                  engine.SearchResponse
	Results                               []resultView
	Error                                 string
	hl                                    map[string]bool
}

type resultView struct {
	ID, SessionID string
	Timestamp     time.Time
	Score         float64
	Weak          bool
	File          string
	Line          int64
	User, AI      string
	Clipped       bool
	Files         []string
	SupersededBy  *engine.SearchRef
	Supersedes    []engine.SearchRef
	HL            map[string]bool
}

// searchClip is how much of each text a search result shows.
const searchClip = 600

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := searchView{base: s.base("Search", "search"), Q: strings.TrimSpace(q.Get("q")), Session: q.Get("session"), Chain: q.Get("chain"),
		Since: q.Get("since"), Until: q.Get("until"), Mode: cmp.Or(q.Get("mode"), "hybrid"), Limit: intParam(r, "limit", 20, 1, engine.MaxLimit)}
	if v.Q != "" {
		v.Asked = true
		resp, err := s.b.Search(r.Context(), engine.SearchRequest{Query: v.Q, Session: v.Session, Chain: v.Chain,
			Since: v.Since, Until: v.Until, Mode: v.Mode, Limit: v.Limit})
		switch {
		case engine.IsBadRequest(err):
			v.Error = errorText(err)
		case err != nil:
			s.fail(w, r, err)
			return
		}
		v.Resp = resp
		hl := highlights(v.Q)
		for _, res := range resp.Results {
			u, cu := clip(res.User, searchClip)
			a, ca := clip(res.AI, searchClip)
			v.Results = append(v.Results, resultView{ID: res.ID, SessionID: res.SessionID, Timestamp: res.Timestamp, Score: res.Score,
				Weak: res.Weak, File: res.File, Line: res.Line, User: u, AI: a, Clipped: cu || ca, Files: res.Files,
				SupersededBy: res.SupersededBy, Supersedes: res.Supersedes, HL: hl})
		}
	}
	code := http.StatusOK
	if v.Error != "" {
		code = http.StatusBadRequest
	}
	s.render(w, r, code, "search", v)
}

// ---- resume preview ----

// Bounds of the resume preview's budget slider.
const (
	minBudget = 100
	maxBudget = 8000
)

type resumeView struct {
	base
	Session, Query string
	Budget         int
	IncludeCurrent bool
	MinBudget      int
	MaxBudget      int
	Sessions       []string
	Latest         []string // the sessions active last, offered when none is chosen
	Pack           *packView
	Error          string
}

type packView struct {
	Tokens, Budget int
	Text           string
	Chain          []string
	InPack         int
	Explain        []decisionView
	Counts         map[string]int
	Truncated      int
	Unlisted       int
	Free           int
}

type decisionView struct {
	ID, SessionID, Reason, Why, Preview string
	Timestamp                           time.Time
	Included, Truncated                 bool
	Depth, Rank, Tokens, Whole          int
}

func (s *Server) resumePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	v := resumeView{base: s.base("Resume preview", "resume"), Session: q.Get("session"), Query: q.Get("query"),
		Budget: intParam(r, "budget", 2000, minBudget, maxBudget), IncludeCurrent: q.Get("include_current") == "1",
		MinBudget: minBudget, MaxBudget: maxBudget}
	all, ok := s.sessions(w, r)
	if !ok {
		return
	}
	rows := slices.Clone(all)
	slices.SortStableFunc(rows, func(a, b engine.SessionRow) int { return b.Last.Compare(a.Last) })
	for _, row := range rows {
		v.Sessions = append(v.Sessions, row.ID)
	}
	v.Latest = v.Sessions[:min(len(v.Sessions), 8)]
	code := http.StatusOK
	if v.Session != "" {
		pack, err := s.b.Resume(ctx, engine.ResumeRequest{Session: v.Session, Query: v.Query, Budget: v.Budget,
			IncludeCurrent: v.IncludeCurrent, Explain: true})
		switch {
		case engine.IsBadRequest(err):
			v.Error, code = errorText(err), http.StatusBadRequest
		case err != nil:
			s.fail(w, r, err)
			return
		default:
			v.Pack = newPackView(&pack)
		}
	}
	s.render(w, r, code, "resume", v)
}

func newPackView(p *engine.ResumePack) *packView {
	pv := &packView{Tokens: p.Tokens, Budget: p.Budget, Text: p.Text, Chain: p.Chain, InPack: len(p.Exchanges)}
	if x := p.Explain; x != nil {
		pv.Counts, pv.Truncated, pv.Unlisted, pv.Free = x.Counts, x.Truncated, x.Unlisted, x.Free
		for _, d := range x.Decisions {
			pv.Explain = append(pv.Explain, decisionView{ID: d.ID, SessionID: d.SessionID, Reason: d.Reason, Why: d.Why,
				Preview: d.Preview, Timestamp: d.Timestamp, Included: d.Included, Truncated: d.Truncated,
				Depth: d.Depth, Rank: d.Rank, Tokens: d.Tokens, Whole: d.Whole})
		}
	}
	return pv
}

// ---- health ----

// rejectsShown is how many of the latest rejects the health page lists.
const rejectsShown = 100

type healthView struct {
	base
	St         engine.StatusReport
	Rejects    []engine.Reject
	RejectsCut bool // more rejects than listed
}

func (s *Server) healthPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st, err := s.b.Status(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rej, err := s.b.Rejects(ctx, rejectsShown)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	slices.Reverse(rej) // newest first
	s.render(w, r, http.StatusOK, "health", healthView{base: s.base("Health", "health"), St: st, Rejects: rej, RejectsCut: st.Rejects > int64(len(rej))})
}

type doctorView struct {
	base
	Doc  engine.DoctorReport
	Took time.Duration
}

// doctorPage runs `continuity doctor`'s checks: apart from the health
// page, which loads it after showing (app.js), because checking the
// index's integrity reads all of it (seconds at 100k exchanges).
func (s *Server) doctorPage(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	doc := s.b.Doctor(r.Context())
	s.render(w, r, http.StatusOK, "doctor", doctorView{base: s.base("Doctor", "health"), Doc: doc, Took: time.Since(start).Round(time.Millisecond)})
}

// ---- forget ----

type forgetView struct {
	base
	Session string
	Chain   bool
	Plan    engine.ForgetResponse
	Rows    []engine.SessionRow
}

func (s *Server) forgetConfirm(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	req, err := forgetRequest(r.URL.Query().Get)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	plan, err := s.b.PlanForget(ctx, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	all, ok := s.sessions(w, r)
	if !ok {
		return
	}
	v := forgetView{base: s.base("Forget "+req.Session, "sessions"), Session: req.Session, Chain: req.Chain, Plan: plan}
	for _, row := range all {
		if slices.Contains(plan.Sessions, row.ID) {
			v.Rows = append(v.Rows, row)
		}
	}
	s.render(w, r, http.StatusOK, "forget", v)
}

// forgetRequest reads what to forget from a form or the query.
func forgetRequest(get func(string) string) (engine.ForgetRequest, error) {
	req := engine.ForgetRequest{Session: get("session"), Chain: get("chain") == "1"}
	if req.Session == "" {
		return req, badRequest(errors.New("which session? open a session and choose Forget"))
	}
	return req, nil
}

func (s *Server) forgetDo(w http.ResponseWriter, r *http.Request) {
	req, err := forgetRequest(r.PostFormValue)
	if err == nil && r.PostFormValue("confirm") != "1" {
		err = badRequest(errors.New("not confirmed: nothing was forgotten; tick the confirmation first"))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.b.Forget(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "forgot", forgetView{base: s.base("Forgotten", "sessions"), Session: req.Session, Chain: req.Chain, Plan: resp})
}

// badRequestError is a viewer's own bad request (engine.IsBadRequest
// does not know it).
type badRequestError struct{ error }

func badRequest(err error) error { return badRequestError{err} }

// viewerPhrasing names what the engine's errors refer to as the viewer
// shows it: the fields by the names of its forms' fields (since, until,
// session), the sessions by the page that lists them.
var viewerPhrasing = engine.Phrasing{Sessions: "the Sessions page"}

// errorText is err as the viewer says it: the engine's structured errors
// phrased for the viewer, others as they are.
func errorText(err error) string { return engine.Phrase(err, viewerPhrasing) }

// isBadRequest reports whether err is the user's mistake: 400, not 500.
func isBadRequest(err error) bool {
	var b badRequestError
	return engine.IsBadRequest(err) || errors.As(err, &b)
}

// urlFor builds a link with query parameters.
func urlFor(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
